//! `bytemuck` implementations for the raw types (and [`Bool8`](crate::dlpack::Bool8), a byte):
//! the crate's only `unsafe` code in this release.
//!
//! Plain value types are [`Pod`]; structs holding pointers or callbacks are only [`Zeroable`]
//! (all-zero is NULL pointers and `None` callbacks, i.e. an empty or released struct).
#![allow(unsafe_code)]

use bytemuck::{Pod, Zeroable};
use static_assertions::assert_not_impl_any;

use crate::raw::*;

/// Implements `Zeroable` and `Pod` for `#[repr(C)]`/`#[repr(transparent)]` value types.
macro_rules! impl_pod {
    ($($ty:ty),+ $(,)?) => {$(
        // SAFETY: `Zeroable`: every field is an integer (or a newtype of one), for which the
        // all-zero pattern is valid.
        unsafe impl Zeroable for $ty {}
        // SAFETY: `Pod`: the type is `#[repr(C)]` or `#[repr(transparent)]` over integers only,
        // has no padding (sizes are the sum of the fields, asserted in `raw::layout`), accepts
        // every bit pattern (open enums are integer newtypes), and is `Copy + 'static`.
        unsafe impl Pod for $ty {}
    )+};
}

impl_pod!(
    DLPackVersion,
    DLDeviceType,
    DLDevice,
    DLDataTypeCode,
    DLDataType,
    ArrowDeviceType,
    crate::dlpack::Bool8
);

/// Implements `Zeroable` for structs of integers, raw pointers and optional callbacks.
macro_rules! impl_zeroable {
    ($($ty:ty),+ $(,)?) => {$(
        // SAFETY: `Zeroable`: every field is an integer, a raw pointer (zero is NULL), an
        // `Option<extern "C" fn>` (zero is `None`, guaranteed by the nullable-pointer
        // optimisation), an array of those, or a struct of those.
        unsafe impl Zeroable for $ty {}
    )+};
}

impl_zeroable!(
    DLTensor,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLPackExchangeAPIHeader,
    DLPackExchangeAPI,
    ArrowSchema,
    ArrowArray,
    ArrowDeviceArray,
    ArrowArrayStream,
    ArrowDeviceArrayStream,
    ArrowAsyncTask,
    ArrowAsyncProducer,
    ArrowAsyncDeviceStreamHandler,
);

// Pointers are not plain data: none of these may be cast from arbitrary bytes.
assert_not_impl_any!(DLTensor: Pod);
assert_not_impl_any!(DLManagedTensorVersioned: Pod);
assert_not_impl_any!(ArrowDeviceArray: Pod);

// `DLPackFlags` is a transparent `u64` with every bit defined, so it is `Pod` as well.
// SAFETY: `Zeroable`: a `#[repr(transparent)]` wrapper of a `u64`; zero is the empty set.
unsafe impl Zeroable for DLPackFlags {}
// SAFETY: `Pod`: `#[repr(transparent)]` over `u64` (via bitflags' own transparent inner type),
// no padding, every bit pattern is a valid set (`const _ = !0`), `Copy + 'static`.
unsafe impl Pod for DLPackFlags {}
