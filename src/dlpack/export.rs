//! Export of Rust-owned memory as DLPack tensors, without copying the data.
//!
//! The owner of the memory (any [`TensorOwner`]; `Vec`, `Box<[T]>` and `Arc<[T]>` through
//! [`Export`](super::Export)) is moved into one heap allocation together with the managed struct
//! and the `shape`/`strides` arrays. The deleter drops the owner in place and frees that
//! allocation: one allocation per export, whatever the size of the data.
#![allow(unsafe_code)]

use alloc::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem;
use core::ptr::{self, NonNull};

use super::validate::{self, Meta};
use super::{ManagedStruct, ManagedTensor, TensorError, MAX_NDIM};
use crate::raw::{DLDataType, DLDevice, DLPackFlags, DLTensor};

/// What a DLPack tensor says about its memory, as an owner describes it for export.
///
/// `strides` `None` means compact row-major; export then writes those strides (DLPack 1.3
/// producers send strides whenever `ndim > 0`). `data` may be anything for an empty tensor:
/// export sends NULL (and `byte_offset` 0) whenever an extent is 0.
///
/// ```
/// use dlpack_abi::dlpack::TensorDescription;
/// use dlpack_abi::raw::{kDLCPU, kDLFloat, DLDataType, DLDevice, DLPackFlags};
///
/// let mut data = [0f32; 6];
/// let description = TensorDescription::new(
///     data.as_mut_ptr().cast(),
///     DLDevice { device_type: kDLCPU, device_id: 0 },
///     DLDataType { code: kDLFloat, bits: 32, lanes: 1 },
///     &[3, 2],
/// )
/// .with_strides(&[1, 3])
/// .with_flags(DLPackFlags::READ_ONLY);
/// assert_eq!(description.strides, Some(&[1, 3][..]));
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct TensorDescription<'a> {
    /// The memory's base address on `device` (or an opaque handle, for devices that use one).
    pub data: *mut c_void,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
    /// Where the memory lives.
    pub device: DLDevice,
    /// The element type.
    pub dtype: DLDataType,
    /// The extents; copied into the export's allocation.
    pub shape: &'a [i64],
    /// The strides in elements, one per dimension; `None` for compact row-major. Copied.
    pub strides: Option<&'a [i64]>,
    /// `READ_ONLY`, `IS_COPIED`, `IS_SUBBYTE_TYPE_PADDED`, as they apply.
    pub flags: DLPackFlags,
}

impl<'a> TensorDescription<'a> {
    /// A compact row-major tensor at `data`, with `byte_offset` 0 and no flags.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription};
    /// use dlpack_abi::raw::{kDLCPU, DLDevice, DLPackFlags};
    ///
    /// let mut data = vec![1u8, 2, 3];
    /// let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let description = TensorDescription::new(data.as_mut_ptr().cast(), cpu, u8::DTYPE, &[3]);
    /// assert_eq!((description.byte_offset, description.strides), (0, None));
    /// assert_eq!(description.flags, DLPackFlags::empty());
    /// ```
    pub fn new(data: *mut c_void, device: DLDevice, dtype: DLDataType, shape: &'a [i64]) -> Self {
        Self {
            data,
            byte_offset: 0,
            device,
            dtype,
            shape,
            strides: None,
            flags: DLPackFlags::empty(),
        }
    }

    /// Sets the strides, in elements.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{Element, TensorDescription};
    /// # use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// # let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let d = TensorDescription::new(core::ptr::null_mut(), cpu, u8::DTYPE, &[0, 2]).with_strides(&[1, 0]);
    /// assert_eq!(d.strides, Some(&[1, 0][..]));
    /// ```
    pub fn with_strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(strides);
        self
    }

    /// Sets the byte offset from `data` to the first element.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{Element, TensorDescription};
    /// # use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// # let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let d = TensorDescription::new(core::ptr::null_mut(), cpu, u8::DTYPE, &[0]).with_byte_offset(16);
    /// assert_eq!(d.byte_offset, 16);
    /// ```
    pub fn with_byte_offset(mut self, byte_offset: u64) -> Self {
        self.byte_offset = byte_offset;
        self
    }

    /// Sets the flags.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{Element, TensorDescription};
    /// # use dlpack_abi::raw::{kDLCPU, DLDevice, DLPackFlags};
    /// # let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    /// let d = TensorDescription::new(core::ptr::null_mut(), cpu, u8::DTYPE, &[0])
    ///     .with_flags(DLPackFlags::READ_ONLY | DLPackFlags::IS_COPIED);
    /// assert!(d.flags.contains(DLPackFlags::READ_ONLY));
    /// ```
    pub fn with_flags(mut self, flags: DLPackFlags) -> Self {
        self.flags = flags;
        self
    }
}

/// Anything that keeps tensor memory alive and can describe it: an `ndarray` array, a GPU buffer
/// handle, a memory-mapped file, an imported tensor viewed differently.
/// [`ManagedTensor::from_owner`] moves it into the export's allocation; the deleter drops it.
///
/// Owners are `Send` because the consumer may call the deleter on any thread, and `'static`
/// because nothing ties the deleter call to a Rust lifetime.
///
/// # Safety
/// The export uses the description [`describe`](Self::describe) returns once the owner has been
/// moved to the place where it stays until the deleter drops it (the default
/// [`ndim`](Self::ndim) also calls it before that move, and uses only the shape's length). That
/// description must stay true until the deleter runs:
/// every element reachable from `data + byte_offset` through `shape` and `strides` lies in memory
/// on `device` that the owner keeps allocated and initialised; the consumer may read it, and,
/// unless `flags` has `READ_ONLY`, write it, while nobody else accesses it. For a host-accessible
/// device, `data + byte_offset` is aligned for `dtype`. Everything else (ndim, extents, strides,
/// overflow, NULL data) is checked by the export.
///
/// ```
/// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, VersionedTensor};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
///
/// /// A column-major matrix.
/// struct Matrix { values: Vec<f64>, shape: [i64; 2], strides: [i64; 2] }
///
/// // SAFETY: the description covers exactly `values`, which the matrix owns and nobody else
/// // touches; `Vec` keeps its elements aligned.
/// unsafe impl TensorOwner for Matrix {
///     fn describe(&mut self) -> TensorDescription<'_> {
///         let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
///         TensorDescription::new(self.values.as_mut_ptr().cast(), cpu, f64::DTYPE, &self.shape)
///             .with_strides(&self.strides)
///     }
///     fn ndim(&mut self) -> usize { 2 }
/// }
///
/// let matrix = Matrix { values: vec![1.0, 2.0, 3.0, 4.0], shape: [2, 2], strides: [1, 2] };
/// let tensor = VersionedTensor::from_owner(matrix)?;
/// assert!(tensor.view().is_f_contiguous());
/// assert_eq!(tensor.view().get::<f64>(&[0, 1])?, 3.0);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub unsafe trait TensorOwner: Send + 'static {
    /// Describes the memory. The export uses the call made once the owner is in its final place.
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner};
    /// # use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// struct Scalar(Box<i32>);
    /// // SAFETY: the description covers the boxed value only.
    /// unsafe impl TensorOwner for Scalar {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    ///         TensorDescription::new((&mut *self.0 as *mut i32).cast(), cpu, i32::DTYPE, &[])
    ///     }
    /// }
    /// assert_eq!(Scalar(Box::new(7)).describe().shape, [0i64; 0]);
    /// ```
    fn describe(&mut self) -> TensorDescription<'_>;

    /// The number of dimensions `describe` will report, to size the allocation before the owner
    /// is moved into it. The default calls `describe`; override it when that is costly. A
    /// mismatch is refused with [`TensorError::NdimChanged`].
    ///
    /// ```
    /// # use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner};
    /// # use dlpack_abi::raw::{kDLCPU, DLDevice};
    /// struct Row(Vec<u8>, [i64; 1]);
    /// // SAFETY: the description covers the vector's elements only.
    /// unsafe impl TensorOwner for Row {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
    ///         TensorDescription::new(self.0.as_mut_ptr().cast(), cpu, u8::DTYPE, &self.1)
    ///     }
    /// }
    /// assert_eq!(Row(vec![1, 2], [2]).ndim(), 1);
    /// ```
    fn ndim(&mut self) -> usize {
        self.describe().shape.len()
    }
}

impl<M: ManagedStruct> ManagedTensor<M> {
    /// Exports memory held by a custom [`TensorOwner`] (use [`Export`](super::Export) for `Vec`, `Box<[T]>` and
    /// `Arc<[T]>`). The owner is dropped by the deleter; on error, before this returns.
    ///
    /// The description is checked as an import would check it, and refused with the same
    /// errors; a legacy export also refuses flags it cannot carry.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Element, TensorDescription, TensorOwner, LegacyTensor};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// A device allocation this program manages (here only an address).
    /// struct DeviceBuffer { address: usize, shape: [i64; 1] }
    /// // SAFETY: stands for a real allocation of `shape[0]` f32s on CUDA device 0.
    /// unsafe impl TensorOwner for DeviceBuffer {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    ///         let data = core::ptr::null_mut::<u8>().wrapping_add(self.address).cast();
    ///         TensorDescription::new(data, gpu, f32::DTYPE, &self.shape)
    ///     }
    /// }
    ///
    /// let tensor = LegacyTensor::from_owner(DeviceBuffer { address: 0x7000_0000, shape: [256] })?;
    /// assert_eq!(tensor.view().device().device_type, kDLCUDA);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn from_owner<O: TensorOwner>(mut owner: O) -> Result<Self, TensorError> {
        let ndim = checked_ndim(owner.ndim())?;
        let placed = Placed::<M, O>::new(owner, ndim);
        // SAFETY: the owner stays in place until `placed` is dropped or finished, and the
        // description borrowed from it is last used by `finish`, before either.
        let description = unsafe { placed.owner() }.describe();
        placed.finish(&description)
    }
}

/// `ndim`, refused above [`MAX_NDIM`].
#[inline]
pub(super) fn checked_ndim(ndim: usize) -> Result<usize, TensorError> {
    if ndim > MAX_NDIM {
        return Err(TensorError::TooManyDims {
            ndim: i32::try_from(ndim).unwrap_or(i32::MAX),
        });
    }
    Ok(ndim)
}

/// The one allocation of an export: the managed struct first (so that a pointer to it is a
/// pointer to the context), then the owner, then `2 * ndim` `i64`s (shape, then strides).
#[repr(C)]
struct Context<M, O> {
    header: M,
    /// The allocation's layout, for the deleter.
    layout: Layout,
    owner: O,
}

/// An allocated context whose owner is in place and whose header is not written yet. Dropping
/// it drops the owner and frees the allocation.
pub(super) struct Placed<M: ManagedStruct, O> {
    ctx: NonNull<Context<M, O>>,
    ndim: usize,
    dims_offset: usize,
    _owns: PhantomData<O>,
}

impl<M: ManagedStruct, O: Send + 'static> Placed<M, O> {
    /// Allocates the context for `ndim <= MAX_NDIM` dimensions and moves `owner` into it. An
    /// allocation failure goes to [`handle_alloc_error`], as for `Box` and `Vec`.
    pub(super) fn new(owner: O, ndim: usize) -> Self {
        debug_assert!(ndim <= MAX_NDIM);
        let head = Layout::new::<Context<M, O>>();
        let Some((layout, dims_offset)) = Layout::array::<i64>(2 * ndim)
            .ok()
            .and_then(|dims| head.extend(dims).ok())
        else {
            // Only an owner within a few KiB of `isize::MAX` bytes gets here.
            handle_alloc_error(head)
        };
        let layout = layout.pad_to_align();
        // SAFETY: `layout` has a non-zero size (it holds the header).
        let raw = unsafe { alloc(layout) }.cast::<Context<M, O>>();
        let Some(ctx) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        // SAFETY: `ctx` is a fresh allocation of `layout`, which starts with a
        // `Context<M, O>`; the fields are written in place, without references to the
        // uninitialised header.
        unsafe {
            ptr::addr_of_mut!((*raw).layout).write(layout);
            ptr::addr_of_mut!((*raw).owner).write(owner);
        }
        Self {
            ctx,
            ndim,
            dims_offset,
            _owns: PhantomData,
        }
    }

    /// The owner, in its final place.
    ///
    /// # Safety
    /// The returned reference, and anything borrowed from it, must not be used after `self` is
    /// dropped or finished.
    pub(super) unsafe fn owner<'o>(&self) -> &'o mut O {
        // SAFETY: `new` initialised the owner; it stays there until `self` is dropped or the
        // deleter runs (the caller's contract), and only this reference accesses it.
        unsafe { &mut *ptr::addr_of_mut!((*self.ctx.as_ptr()).owner) }
    }

    /// The first of the `2 * ndim` `i64`s after the context.
    fn dims(&self) -> *mut i64 {
        // SAFETY: `dims_offset` is inside the allocation (`Layout::extend` placed the array
        // there), and the pointer keeps the allocation's provenance.
        unsafe { self.ctx.as_ptr().cast::<u8>().add(self.dims_offset).cast() }
    }

    /// Checks `description`, writes the header and the dims, and validates the result as an
    /// import would. On error the owner has been dropped and the allocation freed.
    pub(super) fn finish(
        self,
        description: &TensorDescription<'_>,
    ) -> Result<ManagedTensor<M>, TensorError> {
        let header = self.write(description)?;
        // SAFETY: we own the struct just built; its `shape` and `strides` point into our
        // allocation, which lives until the deleter. On error the deleter (which drops the
        // owner and frees everything) has run.
        unsafe { ManagedTensor::from_raw(header.as_ptr()) }
    }

    /// Like [`finish`](Self::finish) for a description known to be valid, with its `meta`.
    ///
    /// # Safety
    /// `description` would pass import validation with `meta` as the result, and its flags are
    /// representable in `M`.
    pub(super) unsafe fn finish_validated(
        self,
        description: &TensorDescription<'_>,
        meta: Meta,
    ) -> ManagedTensor<M> {
        let header = self.write_unchecked(description);
        // SAFETY: as in `finish`, and the caller vouches for `meta`.
        unsafe { ManagedTensor::from_validated(header, meta) }
    }

    /// Checks what the header cannot express, then writes it. Dropping `self` on error.
    fn write(self, description: &TensorDescription<'_>) -> Result<NonNull<M>, TensorError> {
        if description.shape.len() != self.ndim {
            return Err(TensorError::NdimChanged {
                announced: self.ndim,
                described: description.shape.len(),
            });
        }
        if let Some(strides) = description.strides {
            if strides.len() != self.ndim {
                return Err(TensorError::StridesLength {
                    ndim: self.ndim,
                    strides: strides.len(),
                });
            }
        }
        M::representable(description.flags)?;
        Ok(self.write_unchecked(description))
    }

    /// Writes the dims and the header and hands the context over to the deleter.
    fn write_unchecked(self, description: &TensorDescription<'_>) -> NonNull<M> {
        let n = self.ndim;
        let shape = self.dims();
        // SAFETY: `dims` has room for `2 * n` values (see `new`); `strides` follows `shape`.
        let strides = unsafe { shape.add(n) };
        for dim in 0..n {
            let stride = match description.strides {
                Some(given) => given[dim],
                None => validate::compact_stride(description.shape, dim),
            };
            // SAFETY: `dim < n`: both writes are inside the dims array.
            unsafe {
                shape.add(dim).write(description.shape[dim]);
                strides.add(dim).write(stride);
            }
        }
        let empty = description.shape.contains(&0);
        let dl_tensor = DLTensor {
            data: if empty {
                ptr::null_mut()
            } else {
                description.data
            },
            device: description.device,
            // `n <= MAX_NDIM`.
            ndim: n as i32,
            dtype: description.dtype,
            shape,
            strides,
            byte_offset: if empty { 0 } else { description.byte_offset },
        };
        let ctx = self.ctx.as_ptr();
        let header = M::header(dl_tensor, ctx.cast(), delete::<M, O>, description.flags);
        // SAFETY: the header is the context's first field, not yet initialised; from here on
        // the deleter owns the context.
        unsafe { ptr::addr_of_mut!((*ctx).header).write(header) };
        mem::forget(self);
        header_of(ctx)
    }
}

/// The header of a context, as the pointer handed to consumers.
fn header_of<M, O>(ctx: *mut Context<M, O>) -> NonNull<M> {
    // SAFETY: `ctx` came from a successful allocation (`Placed::new`), so it is non-NULL; the
    // header is at offset 0 (`repr(C)`), and the cast keeps the whole allocation's provenance,
    // which the deleter needs to free it.
    unsafe { NonNull::new_unchecked(ctx.cast::<M>()) }
}

impl<M: ManagedStruct, O> Drop for Placed<M, O> {
    fn drop(&mut self) {
        // SAFETY: the owner and the layout were written in `new`; the header was never
        // finished (finishing forgets `self`), so this is the only owner of the allocation.
        unsafe { destroy(self.ctx.as_ptr()) }
    }
}

/// The deleter of every export: drops the owner in place and frees the one allocation.
///
/// A panic in the owner's `Drop` cannot unwind into the C caller: it would leave an
/// `extern "C"` function, so the process aborts instead (Rust 1.81 and later).
///
/// # Safety
/// `header` is NULL (nothing happens) or a pointer this crate's export handed out, and this is
/// the only call for it.
unsafe extern "C" fn delete<M, O>(header: *mut M) {
    if header.is_null() {
        return;
    }
    // SAFETY: by the DLPack contract the consumer passes back the pointer we handed out, once;
    // it points to a context built by `Placed` whose provenance covers the whole allocation.
    unsafe { destroy(header.cast::<Context<M, O>>()) }
}

/// Drops the owner in place and frees the context's allocation.
///
/// # Safety
/// `ctx` points to a context allocated by [`Placed::new`] (layout and owner initialised), with
/// the whole allocation's provenance, and nothing uses it afterwards.
unsafe fn destroy<M, O>(ctx: *mut Context<M, O>) {
    // SAFETY: the caller's contract; the layout is read before the block is freed.
    unsafe {
        let layout = ptr::addr_of!((*ctx).layout).read();
        ptr::drop_in_place(ptr::addr_of_mut!((*ctx).owner));
        dealloc(ctx.cast(), layout);
    }
}
