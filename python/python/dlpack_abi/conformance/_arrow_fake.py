"""Arrow C structs built with ctypes: a schema capsule of any format tree (for
``requested_schema``), and an int64 array with nulls and an offset for the consumer check, each
counting its ``release`` calls.

(A stream is not built here: consumers may release a stream while a Python exception is pending,
which a ctypes callback cannot survive. The failing stream of the consumer check is
``dlpack_abi.int64_stream``, whose callbacks are Rust.)"""
import ctypes

from . import _c
from ._fake import _raw_name, _raw_pointer

EIO = 5


class Keeper:
    """Keeps ctypes objects alive and counts releases."""

    def __init__(self):
        self.keep = _c.KEEP
        self.releases = 0


def schema(keeper, fmt, children=(), name=None):
    """An ArrowSchema (released by a counting callback that marks it released)."""
    kids = [schema(keeper, *c) if isinstance(c, tuple) else schema(keeper, c) for c in children]
    array = (ctypes.POINTER(_c.ArrowSchema) * max(len(kids), 1))(*[ctypes.pointer(k) for k in kids])

    def release(pointer):
        keeper.releases += 1
        node = pointer.contents
        for i in range(node.n_children):
            child = node.children[i].contents
            if child.release:
                child.release(node.children[i])
        node.release = _c.SCHEMA_RELEASE()

    callback = _c.SCHEMA_RELEASE(release)
    node = _c.ArrowSchema(format=fmt.encode(), name=name.encode() if name else None,
                          metadata=None, flags=2, n_children=len(kids),
                          children=ctypes.cast(array, ctypes.POINTER(ctypes.POINTER(_c.ArrowSchema))),
                          dictionary=None, release=callback, private_data=None)
    keeper.keep += [kids, array, callback, node]
    return node


def _capsule(keeper, struct, name, release_field="release"):
    def destructor(capsule):
        pointer = ctypes.cast(_raw_pointer(capsule, _raw_name(capsule)), ctypes.POINTER(type(struct)))
        target = pointer.contents.array if release_field == "array" else pointer.contents
        if target.release:
            target.release(ctypes.pointer(target))

    keeper.keep += [struct]  # (`new_capsule` keeps `destructor`)
    return _c.new_capsule(ctypes.addressof(struct), name, destructor)


def schema_capsule(keeper, fmt, children=()):
    return _capsule(keeper, schema(keeper, fmt, children), b"arrow_schema")


def int64_array(keeper, values, offset=0):
    """An int64 ArrowArray of ``values`` (``None`` is null) starting ``offset`` values into its
    buffers (whose first ``offset`` slots are padding)."""
    full = [0] * offset + list(values)
    data = (ctypes.c_int64 * max(len(full), 1))(*[v or 0 for v in full])
    bits = bytearray((len(full) + 7) // 8 or 1)
    for i, v in enumerate(full):
        if v is not None:
            bits[i // 8] |= 1 << (i % 8)
    validity = (ctypes.c_uint8 * len(bits))(*bits)
    buffers = (ctypes.c_void_p * 2)(ctypes.addressof(validity), ctypes.addressof(data))

    def release(pointer):
        keeper.releases += 1
        pointer.contents.release = _c.ARRAY_RELEASE()

    callback = _c.ARRAY_RELEASE(release)
    array = _c.ArrowArray(length=len(values), null_count=sum(v is None for v in values), offset=offset,
                          n_buffers=2, n_children=0, buffers=buffers, children=None, dictionary=None,
                          release=callback, private_data=None)
    keeper.keep += [data, validity, buffers, callback, array]
    return array


class Int64Array:
    """An Arrow producer of one int64 array with nulls and an offset."""

    def __init__(self, values=(1, None, 3, 4), offset=2):
        self.values, self.offset = list(values), offset
        self.keeper = Keeper()

    def __arrow_c_schema__(self):
        return schema_capsule(self.keeper, "l")

    def __arrow_c_array__(self, requested_schema=None):
        return (schema_capsule(self.keeper, "l"),
                _capsule(self.keeper, int64_array(self.keeper, self.values, self.offset), b"arrow_array"))
