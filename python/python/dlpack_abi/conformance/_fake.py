"""A DLPack producer written with ctypes, every field and behaviour of which can be chosen: the
odd-but-legal producers of the consumer check (negative strides, ``byte_offset``, versioned-only,
legacy-only, sub-byte types, a producer that raises) and the deliberately broken ones that show
each producer rule able to fail.

It counts its deleter calls, so a check can tell that a consumer ran the deleter exactly once,
and records the ``stream`` of every ``__dlpack__`` call. It can describe its host memory as lying
on a device (``device=(2, 0)``: the CI's stand-in for CUDA, with a copy to the CPU as real device
producers have), or describe real device memory an adapter provides (``place``)."""
import ctypes

from . import _c

# The raw capsule calls a destructor needs: it receives a ``PyObject*``, not an object.
_raw_name = _c.api["PyCapsule_GetName"]
_raw_name.restype = ctypes.c_char_p
_raw_name.argtypes = [ctypes.c_void_p]
_raw_pointer = _c.api["PyCapsule_GetPointer"]
_raw_pointer.restype = ctypes.c_void_p
_raw_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


class FakeProducer:
    """A tensor with ``__dlpack__`` and ``__dlpack_device__``; see the keywords below.

    ``data`` (bytes) is the buffer, ``dtype`` DLPack's ``(code, bits, lanes)``, ``shape`` and
    ``strides`` (elements; ``None`` writes NULL) the description, ``byte_offset`` the offset of the
    first element from ``data``'s start; ``flags``, ``version`` and ``device`` go into the struct
    as given; with ``place`` (a function of the bytes returning ``(address, device, keep)``, see
    ``device_memory`` in ``libraries``) the data lives in that memory instead, on that device.
    ``kind`` is ``"both"`` (versioned for ``max_version`` 1.x, legacy otherwise),
    ``"versioned"`` (``BufferError`` without ``max_version``) or ``"legacy"`` (no keywords at all:
    ``TypeError``). ``raises`` makes ``__dlpack__`` raise it. The ``break_*`` keywords break one
    rule each (see ``FAKES`` in the producer check)."""

    def __init__(self, data=b"\0" * 24, dtype=(2, 32, 1), shape=(2, 3), strides=(3, 1),
                 byte_offset=0, flags=0, version=(1, 3), device=(1, 0), kind="both",
                 raises=None, readonly_source=False, place=None, **breaks):
        self.buffer = ctypes.create_string_buffer(bytes(data), max(len(data), 1))
        self.placed = None
        if place is not None:
            address, device, keep = place(bytes(data))
            self.placed = (address, max(len(data), 1), keep)
            device = tuple(device)
        self.dtype, self.shape, self.strides = dtype, tuple(shape), strides
        self.byte_offset, self.flags, self.version = byte_offset, flags, version
        self.device, self.kind, self.raises = tuple(device), kind, raises
        self.readonly_source = readonly_source
        self.breaks = breaks
        unknown = set(breaks) - BREAKS
        if unknown:
            raise TypeError(f"unknown breaks: {sorted(unknown)}")
        self.deleter_calls = 0
        #: The ``stream`` of every ``__dlpack__`` call (``None`` when not passed).
        self.streams = []
        self.keep = _c.KEEP  # structs, arrays and callbacks alive until the process ends

    # --- the protocol -----------------------------------------------------------------------

    def __dlpack_device__(self):
        if self.breaks.get("wrong_device"):
            return (2, 0)
        return self.device

    def __dlpack__(self, **keywords):
        stream, max_version = keywords.get("stream"), keywords.get("max_version")
        dl_device, copy = keywords.get("dl_device"), keywords.get("copy")
        self.streams.append(stream)
        if self.raises is not None:
            raise self.raises
        if set(keywords) - {"stream", "max_version", "dl_device", "copy"}:
            raise TypeError(f"unexpected keywords {sorted(keywords)}")
        if self.kind == "legacy" and (max_version, dl_device, copy) != (None, None, None):
            raise TypeError("__dlpack__() got an unexpected keyword argument")
        if "stream" in keywords and self.breaks.get("no_stream_keyword"):
            raise TypeError("__dlpack__() got an unexpected keyword argument 'stream'")
        if stream is not None and self.breaks.get("crash_on_stream"):
            ctypes.string_at(0)  # a segfault, as a buggy C producer would
        if copy is True and self.breaks.get("refuse_copy"):
            raise BufferError("copy=True is not supported")
        versioned = max_version is not None and max_version[0] >= 1 and self.kind != "legacy"
        if max_version is not None and tuple(max_version) >= (2, 0) and self.breaks.get("refuse_newer"):
            raise BufferError("max_version (2, 0) is not supported")
        if not versioned and self.kind == "versioned":
            raise BufferError("this producer exports versioned tensors only")
        if not versioned and self.readonly_source and not self.breaks.get("legacy_readonly"):
            raise BufferError("a read-only tensor cannot be exported as a legacy capsule")
        if dl_device is not None and tuple(dl_device) != tuple(self.device):
            return self._capsule(versioned, *self._to_host(tuple(dl_device), copy))
        copied = copy is True and not self.breaks.get("ignore_copy")
        data = self._data()
        if copied or (dl_device is not None and self.breaks.get("copy_on_dl_device")):
            if self.placed is not None:
                raise BufferError("this producer cannot copy device memory")
            data = ctypes.create_string_buffer(self.buffer.raw, len(self.buffer))
            self.keep.append(data)
        return self._capsule(versioned, data, copied)

    def _data(self):
        """The address of the first byte of the data: the buffer's, or the placed memory's."""
        return self.placed[0] if self.placed is not None else ctypes.addressof(self.buffer)

    def _to_host(self, dl_device, copy):
        """The copy to the CPU a device producer makes for ``dl_device=(1, 0)``: (data, copied,
        device)."""
        if dl_device != (1, 0) or copy is False or self.placed is not None:
            raise BufferError(f"cannot export to device {dl_device} (copy={copy})")
        if self.breaks.get("refuse_host_copy"):
            raise BufferError("copy to the CPU is not supported")
        raw = bytearray(self.buffer.raw)
        if self.breaks.get("wrong_host_copy"):
            raw[self.byte_offset] ^= 0xFF
        data = ctypes.create_string_buffer(bytes(raw), len(raw))
        self.keep.append(data)
        device = self.device if self.breaks.get("host_copy_on_device") else (1, 0)
        return data, True, device

    # --- the structs ------------------------------------------------------------------------

    def _tensor(self, data, device):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = None
        if self.strides is not None and not self.breaks.get("null_strides"):
            strides = (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        self.keep += [shape, strides]
        address = data if isinstance(data, int) else ctypes.addressof(data)
        if self.breaks.get("null_data"):
            address = None
        return _c.DLTensor(
            data=address,
            device=_c.DLDevice(*device),
            ndim=-1 if self.breaks.get("negative_ndim") else ndim,
            dtype=_c.DLDataType(*self.dtype),
            shape=ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
            strides=None if strides is None else ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)),
            byte_offset=self.byte_offset,
        )

    def _capsule(self, versioned, data, copied, device=None):
        if versioned:
            prototype, struct, name = _c.VERSIONED_DELETER, _c.DLManagedTensorVersioned, b"dltensor_versioned"
        else:
            prototype, struct, name = _c.LEGACY_DELETER, _c.DLManagedTensor, b"dltensor"
        if self.breaks.get("wrong_name"):
            name = b"dltensor_v" if versioned else b"tensor"
        used = b"used_" + name

        def deleter(_pointer):
            self.deleter_calls += 1

        callback = prototype(deleter)
        managed = struct(dl_tensor=self._tensor(data, device or self.device), manager_ctx=None,
                         deleter=prototype() if self.breaks.get("no_deleter") else callback)
        if versioned:
            major, minor = self.version
            if self.breaks.get("wrong_major"):
                major = 0
            managed.version = _c.DLPackVersion(major, minor)
            flags = self.flags
            if copied:
                flags |= _c.IS_COPIED
            if self.readonly_source:
                flags |= _c.READ_ONLY
            if self.breaks.get("drop_read_only"):
                flags &= ~_c.READ_ONLY
            if self.breaks.get("always_copied"):
                flags |= _c.IS_COPIED
            if self.breaks.get("unknown_flag"):
                flags |= 1 << 40
            managed.flags = flags

        def destructor(capsule):
            got = _raw_name(capsule)
            if got == used and not self.breaks.get("ignore_used"):
                return
            if self.breaks.get("leak_unconsumed"):
                return
            pointer = ctypes.cast(_raw_pointer(capsule, got), ctypes.POINTER(struct))
            for _ in range(2 if self.breaks.get("double_delete") else 1):
                if pointer.contents.deleter:
                    pointer.contents.deleter(pointer)

        self.keep += [callback, managed]  # (`new_capsule` keeps `destructor`)
        return _c.new_capsule(ctypes.addressof(managed), name, destructor)


#: The rule-breaking switches of ``FakeProducer``.
BREAKS = {
    "wrong_device", "crash_on_stream", "ignore_copy", "refuse_copy", "refuse_newer",
    "legacy_readonly", "null_strides", "null_data", "negative_ndim", "wrong_name", "no_deleter",
    "wrong_major", "drop_read_only", "always_copied", "unknown_flag", "ignore_used",
    "leak_unconsumed", "no_stream_keyword", "copy_on_dl_device", "double_delete",
    "refuse_host_copy", "wrong_host_copy", "host_copy_on_device",
}
