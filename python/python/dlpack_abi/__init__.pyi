"""Type stubs for ``dlpack_abi``: zero-copy DLPack and Arrow PyCapsule exchange, built on the
dlpack-abi Rust crate. Checked against the built module by ``mypy.stubtest`` in the test command."""

import os
from collections.abc import Iterator, Sequence
from typing import Any, final

from typing_extensions import CapsuleType

from . import safetensors as safetensors

__all__ = [
    "Tensor",
    "ArrowArray",
    "ArrowStream",
    "ArrowSchema",
    "from_dlpack",
    "ramp",
    "scale",
    "arrow_passthrough",
    "count_rows",
    "total",
    "sum_int64",
    "int64_stream",
    "counts",
    "Image",
    "SafeTensors",
]

_Dtype = tuple[int, int, int]
"""A DLPack dtype: ``(code, bits, lanes)``, e.g. ``(2, 32, 1)`` for float32."""

@final
class Tensor:
    """A DLPack tensor: shares its memory with every consumer (NumPy, pyarrow, JAX, tvm-ffi, ...);
    one allocation per export, no copy unless asked for."""

    __dlpack_c_exchange_api__: CapsuleType
    """The DLPack C exchange API table of this type (a ``dlpack_exchange_api`` capsule)."""

    @staticmethod
    def from_dlpack(
        source: Any,
        /,
        *,
        stream: int | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Tensor:
        """Imports any DLPack producer (or a capsule, consumed once), validated before use."""

    @staticmethod
    def from_bytes(
        data: bytes,
        dtype: _Dtype,
        shape: Sequence[int],
        *,
        strides: Sequence[int] | None = None,
        readonly: bool = False,
    ) -> Tensor:
        """A copy of ``data`` (64-byte aligned) as a CPU tensor; strides are in elements, and every
        byte the shape and strides reach must lie in ``data`` (``ValueError`` otherwise)."""

    @staticmethod
    def from_arrow(source: Any) -> Tensor:
        """A primitive or ``arrow.fixed_shape_tensor`` Arrow array without nulls, zero-copy."""

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> CapsuleType: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[CapsuleType, CapsuleType]: ...
    def __arrow_c_device_array__(
        self, requested_schema: object | None = None, **kwargs: Any
    ) -> tuple[CapsuleType, CapsuleType]: ...
    @property
    def shape(self) -> tuple[int, ...]:
        """The extents."""
    @property
    def strides(self) -> tuple[int, ...]:
        """The strides, in elements."""
    @property
    def dtype(self) -> _Dtype:
        """DLPack's ``(code, bits, lanes)``: ``(2, 32, 1)`` is float32."""
    @property
    def data_ptr(self) -> int:
        """The address of the first element (``data + byte_offset``)."""
    @property
    def readonly(self) -> bool:
        """Whether consumers get read-only views."""
    @property
    def flags(self) -> int:
        """The DLPack flags word."""
    @property
    def nbytes(self) -> int:
        """Bytes the elements occupy stored compactly."""
    def tobytes(self) -> bytes:
        """The elements in row-major order (a copy)."""

@final
class ArrowArray:
    """An Arrow array and its schema, shared with every consumer of its capsules."""

    @staticmethod
    def from_arrow(source: Any) -> ArrowArray:
        """Imports any object with ``__arrow_c_device_array__`` or ``__arrow_c_array__``."""
    def __arrow_c_schema__(self) -> CapsuleType: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[CapsuleType, CapsuleType]: ...
    def __arrow_c_device_array__(
        self, requested_schema: object | None = None, **kwargs: Any
    ) -> tuple[CapsuleType, CapsuleType]: ...
    @property
    def device(self) -> tuple[int, int]:
        """Arrow's ``(device_type, device_id)``: ``(1, 0)`` for the CPU."""
    @property
    def format(self) -> str:
        """The root's Arrow format string."""
    def to_tensor(self) -> Tensor:
        """The array as a DLPack tensor, zero-copy (primitive or fixed_shape_tensor, no nulls)."""

@final
class ArrowSchema:
    """An Arrow schema (a type, a field, or a table's struct of fields)."""

    @staticmethod
    def from_arrow(source: Any) -> ArrowSchema:
        """Imports the schema of any object with ``__arrow_c_schema__`` (or a capsule)."""
    def __arrow_c_schema__(self) -> CapsuleType: ...
    @property
    def format(self) -> str:
        """The root's Arrow format string (``"+s"`` for a table's schema)."""
    @property
    def name(self) -> str | None:
        """The root's name."""

@final
class ArrowStream:
    """An Arrow stream: one consumer; the first export moves it out."""

    @staticmethod
    def from_arrow(source: Any) -> ArrowStream:
        """Imports any object with ``__arrow_c_stream__`` (nothing is read yet)."""
    def __arrow_c_schema__(self) -> CapsuleType:
        """The stream's schema, without consuming the stream."""
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> CapsuleType: ...
    def __arrow_c_device_stream__(self, requested_schema: object | None = None, **kwargs: Any) -> CapsuleType: ...

@final
class Image:
    """An 8-bit grayscale image that exports itself through DLPack and Arrow (an example of a class
    of one's own with the ``DlpackExporter`` trait and ``dlpack_pymethods!``)."""

    __dlpack_c_exchange_api__: CapsuleType
    """The DLPack C exchange API table of this class."""

    def __new__(cls, height: int, width: int) -> Image: ...
    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> CapsuleType: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __arrow_c_device_array__(
        self, requested_schema: object | None = None, **kwargs: Any
    ) -> tuple[CapsuleType, CapsuleType]: ...
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[CapsuleType, CapsuleType]: ...

def from_dlpack(
    source: Any,
    /,
    *,
    stream: int | None = None,
    dl_device: tuple[int, int] | None = None,
    copy: bool | None = None,
) -> Tensor:
    """``Tensor.from_dlpack``."""

def scale(x: Any, k: float) -> Tensor:
    """``k * x`` for a float64 array from any DLPack producer, as a new writable tensor."""

def arrow_passthrough(x: Any) -> ArrowArray:
    """Any Arrow array (``__arrow_c_device_array__`` or ``__arrow_c_array__``), returned as ours."""

def count_rows(stream: Any) -> int:
    """The number of rows of any Arrow stream; a producer's error is raised as ``OSError``."""

def ramp(n: int) -> Tensor:
    """``[0.0, 1.0, ..., n - 1]`` as a read-only float32 tensor owned by Rust."""

def total(array: Any) -> float:
    """The sum of a contiguous float64 array from any DLPack producer."""

def sum_int64(array: Any) -> int:
    """The sum of an int64 Arrow array, nulls skipped."""

def int64_stream(batches: Sequence[Sequence[int]], error: str | None = None) -> ArrowStream:
    """A stream of int64 arrays, one per batch, failing with EIO and ``error`` after them."""

def counts() -> dict[str, int]:
    """The glue's process-wide counters (live exports and imports, allocations, ...); only in
    builds with the ``counters`` feature (the test builds), not in release wheels."""

@final
class SafeTensors:
    """A safetensors file, memory-mapped: each tensor is a read-only ``Tensor`` over the mapping,
    shared by every consumer without a copy (``dlpack_abi.safetensors.open``)."""

    def __new__(cls, path: str | os.PathLike[str]) -> SafeTensors: ...
    def keys(self) -> list[str]:
        """The tensors' names, in the order of their data in the file."""
    @property
    def metadata(self) -> dict[str, str]:
        """The header's ``__metadata__`` strings (empty when it has none)."""
    def describe(self, name: str) -> tuple[_Dtype, tuple[int, ...]]:
        """``(dtype, shape)`` of tensor ``name`` without taking it (the shape a tuple, as
        ``Tensor.shape`` is)."""
    def __getitem__(self, key: str, /) -> Tensor: ...
    def __contains__(self, key: str, /) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
