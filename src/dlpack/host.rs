//! Export of host buffers (`Vec<T>`, `Box<[T]>`, `Arc<[T]>`, ...) through the [`Export`] builder.
#![allow(unsafe_code)]

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::description::{checked_ndim, host_slice};
#[cfg(feature = "fast-path")]
use super::placed::ElementRange;
use super::placed::Placed;
use super::validate::ElementStorage;
use super::{Element, ExportError, ManagedStruct, ManagedTensor};
use crate::raw::DLPackFlags;

/// Host memory holding `len` elements of one [`Element`] type: what [`Export`] needs from a
/// buffer. Implemented for `Vec<T>`, `Box<[T]>`, `Arc<[T]>`, [`AlignedVec<T>`](super::AlignedVec)
/// and `Arc<AlignedVec<T>>`.
///
/// # Safety
/// [`memory`](Self::memory) is called once, after the buffer has been moved to the place where it
/// stays until the deleter drops it. The memory it reports must stay true until then: `start` is
/// aligned and points to `len` initialised elements (or `len` is 0) that the buffer keeps
/// allocated; the consumer may read them, and, unless `read_only`, write them through `start`,
/// while nobody else accesses them.
///
/// ```
/// use dlpack_abi::dlpack::{Export, HostBuffer, HostMemory};
///
/// /// A buffer that counts its drops.
/// struct Counted(Vec<u16>);
/// impl Drop for Counted {
///     fn drop(&mut self) { println!("buffer dropped") }
/// }
/// // SAFETY: reports the vector's own elements, which only the buffer holds.
/// unsafe impl HostBuffer for Counted {
///     type Element = u16;
///     fn memory(&mut self) -> HostMemory<u16> { self.0.memory() }
/// }
///
/// let tensor = Export::new(Counted(vec![1, 2, 3, 4]), &[2, 2]).finish()?;
/// assert_eq!(tensor.view().as_slice::<u16>()?, [1, 2, 3, 4]);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub unsafe trait HostBuffer: Send + 'static {
    /// The element type.
    type Element: Element;

    /// The elements, and whether others may read them meanwhile.
    ///
    /// ```
    /// use dlpack_abi::dlpack::HostBuffer;
    /// use std::sync::Arc;
    ///
    /// let mut shared: Arc<[f32]> = Arc::from(vec![1.0, 2.0]);
    /// let other = Arc::clone(&shared);
    /// assert!(shared.memory().read_only);
    /// drop(other);
    /// assert!(!shared.memory().read_only);
    /// ```
    fn memory(&mut self) -> HostMemory<Self::Element>;
}

/// Where a [`HostBuffer`]'s elements are.
///
/// ```
/// use dlpack_abi::dlpack::HostBuffer;
///
/// let mut values = vec![1i64, 2, 3];
/// let memory = values.memory();
/// assert_eq!((memory.start, memory.len, memory.read_only), (values.as_mut_ptr(), 3, false));
/// ```
#[derive(Debug)]
pub struct HostMemory<T> {
    /// The first element.
    pub start: *mut T,
    /// The number of elements.
    pub len: usize,
    /// Others may read the elements: the export is marked `READ_ONLY`.
    pub read_only: bool,
}

/// Elements borrowed mutably: writable through their pointer.
fn writable<T>(elements: &mut [T]) -> HostMemory<T> {
    HostMemory {
        start: elements.as_mut_ptr(),
        len: elements.len(),
        read_only: false,
    }
}

// SAFETY: `as_mut_ptr` of a `&mut Vec` may be written through and stays valid while the vector
// is not reallocated or dropped; the vector is owned by the export and never touched again.
unsafe impl<T: Element + Send> HostBuffer for Vec<T> {
    type Element = T;
    fn memory(&mut self) -> HostMemory<T> {
        writable(self)
    }
}

// SAFETY: as for `Vec`; a boxed slice is never reallocated.
unsafe impl<T: Element + Send> HostBuffer for Box<[T]> {
    type Element = T;
    fn memory(&mut self) -> HostMemory<T> {
        writable(self)
    }
}

// SAFETY: a unique `Arc` (no other strong or weak holder) gives `&mut [T]`, which may be written;
// once owned by the export it cannot gain holders. A shared one is reported read-only, and the
// pointer from `Arc::as_ptr` is only read.
unsafe impl<T: Element + Send + Sync> HostBuffer for Arc<[T]> {
    type Element = T;
    fn memory(&mut self) -> HostMemory<T> {
        let len = self.len();
        match Arc::get_mut(self) {
            Some(unique) => writable(unique),
            None => HostMemory {
                start: Arc::as_ptr(self).cast::<T>().cast_mut(),
                len,
                read_only: true,
            },
        }
    }
}

/// Exports a [`HostBuffer`] (`Vec<T>`, `Box<[T]>`, `Arc<[T]>`, ...) as a CPU tensor, without
/// copying it.
///
/// The shape is row-major unless [`strides`](Self::strides) are given; [`first_element`](Self::first_element)
/// starts the tensor at a later element (written as `byte_offset`, with `data` the buffer's
/// start). Every element the shape, strides and first element reach must lie in the buffer.
///
/// The tensor is `READ_ONLY` when the buffer is shared (an `Arc` with other holders) or
/// [`read_only`](Self::read_only) asks for it; `IS_COPIED` only from [`copy_of`](Self::copy_of).
/// On error the buffer has been dropped.
///
/// ```
/// use dlpack_abi::dlpack::{Export, VersionedTensor};
///
/// let tensor = Export::new(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).finish()?;
/// assert_eq!(tensor.view().strides(), [3, 1]);
/// let raw = tensor.into_raw(); // a `DLManagedTensorVersioned*` for C; its deleter frees all
/// // What a consumer does: take it back (validated), and the deleter runs on drop.
/// // SAFETY: `raw` is live and its deleter has not run.
/// let tensor = unsafe { VersionedTensor::from_raw(raw) }?;
/// assert_eq!(tensor.view().shape(), [2, 3]);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
#[must_use = "an export does nothing until `finish` or `finish_legacy`"]
pub struct Export<'a, B: HostBuffer> {
    buffer: B,
    shape: &'a [i64],
    strides: Option<&'a [i64]>,
    /// The index of the tensor's first element in the buffer, in elements.
    first_element: usize,
    flags: DLPackFlags,
}

impl<'a, B: HostBuffer> Export<'a, B> {
    /// Exports `buffer` with this shape, row-major from the first element.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(Box::from([1u8, 2, 3]), &[3]).finish()?;
    /// assert_eq!(tensor.view().as_slice::<u8>()?, [1, 2, 3]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn new(buffer: B, shape: &'a [i64]) -> Self {
        Self {
            buffer,
            shape,
            strides: None,
            first_element: 0,
            flags: DLPackFlags::empty(),
        }
    }

    /// Strides in elements, one per dimension; negative and zero strides are allowed.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // The transpose of a 2 x 3 row-major buffer.
    /// let tensor = Export::new(vec![0i32, 1, 2, 3, 4, 5], &[3, 2]).strides(&[1, 3]).finish()?;
    /// assert_eq!(tensor.view().iter::<i32>()?.collect::<Vec<_>>(), [0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn strides(mut self, strides: &'a [i64]) -> Self {
        self.strides = Some(strides);
        self
    }

    /// The index, in elements, of the tensor's first element in the buffer (default 0); it is
    /// written as `byte_offset`, in bytes, with `data` the buffer's start.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // The last row of a 3 x 2 buffer, read backwards.
    /// let tensor = Export::new(vec![0u8, 1, 2, 3, 4, 5], &[2]).first_element(5).strides(&[-1]).finish()?;
    /// assert_eq!(tensor.as_raw().dl_tensor.byte_offset, 5);
    /// assert_eq!(tensor.view().iter::<u8>()?.collect::<Vec<_>>(), [5, 4]);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn first_element(mut self, index: usize) -> Self {
        self.first_element = index;
        self
    }

    /// Marks the tensor `READ_ONLY`: consumers must not write it.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, Export};
    ///
    /// let mut tensor = Export::new(vec![1u32], &[1]).read_only().finish()?;
    /// assert_eq!(tensor.as_mut_slice::<u32>(), Err(AccessError::ReadOnly));
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn read_only(mut self) -> Self {
        self.flags |= DLPackFlags::READ_ONLY;
        self
    }

    /// Builds the [`DLManagedTensorVersioned`](crate::raw::DLManagedTensorVersioned) (version
    /// 1.3).
    ///
    /// # Errors
    /// [`ExportError::Invalid`] for a shape or strides an import would refuse,
    /// [`ExportError::OutsideBuffer`] when they reach past the buffer.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{Export, ExportError};
    ///
    /// let error = Export::new(vec![1u8, 2, 3], &[2, 2]).finish().unwrap_err();
    /// assert_eq!(error, ExportError::OutsideBuffer { first: 0, end: 4, len: 3 });
    /// ```
    pub fn finish(self) -> Result<super::VersionedTensor, ExportError> {
        self.finish_as()
    }

    /// Builds a legacy [`DLManagedTensor`](crate::raw::DLManagedTensor), for consumers that
    /// speak nothing else. Refuses [`read_only`](Self::read_only) and shared buffers: legacy
    /// tensors cannot say so ([`ExportError::FlagsNotRepresentable`]). `IS_COPIED` is dropped.
    ///
    /// # Errors
    /// As [`finish`](Self::finish), and [`ExportError::FlagsNotRepresentable`] for read-only
    /// exports.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![1i16, 2], &[2]).finish_legacy()?;
    /// assert_eq!(tensor.view().version(), None);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn finish_legacy(self) -> Result<super::LegacyTensor, ExportError> {
        self.finish_as()
    }

    #[inline(always)]
    fn finish_as<M: ManagedStruct>(self) -> Result<ManagedTensor<M>, ExportError> {
        super::element::assert_size_matches::<B::Element>();
        let Self {
            buffer,
            shape,
            strides,
            first_element,
            flags,
        } = self;
        let ndim = checked_ndim(shape.len())?;
        let placed = Placed::<M, B>::new(buffer, ndim);
        // SAFETY: the buffer stays in place until `placed` is dropped or finished; the borrow
        // ends with `memory`, which copies the pointer out.
        let memory = unsafe { placed.owner() }.memory();
        let flags = if memory.read_only {
            flags | DLPackFlags::READ_ONLY
        } else {
            flags
        };
        let description =
            host_slice(memory.start, memory.len, shape, strides, first_element).with_flags(flags);
        if strides.is_some() {
            let mut tensor = placed.finish(&description)?;
            // The buffer is the export's alone unless shared (then `READ_ONLY`).
            tensor.set_exclusive(!flags.contains(DLPackFlags::READ_ONLY));
            return Ok(tensor);
        }
        // Row-major: the shape alone decides, so validation is computed while the dims are
        // written, not re-read.
        #[cfg(feature = "fast-path")]
        let placed = {
            // The buffer is the export's alone unless shared (then `READ_ONLY`).
            let exclusive = !flags.contains(DLPackFlags::READ_ONLY);
            let buffer = ElementRange {
                first: first_element,
                len: memory.len,
            };
            // SAFETY: as for `finish_row_major` below; `buffer` is the description's buffer
            // (`host_slice`) in elements of the element's storage (the element's size, which
            // `assert_size_matches` ties to its dtype), memory that the buffer holds (its
            // `HostBuffer` promise), so its bytes fit `usize`.
            match unsafe {
                placed.try_finish_compact(
                    &description,
                    shape,
                    ElementStorage::<B::Element>::STORAGE,
                    exclusive,
                    buffer,
                )
            } {
                Ok(tensor) => return Ok(tensor),
                Err(placed) => placed,
            }
        };
        // SAFETY: `placed` has room for `shape.len()` dims (`Placed::new` above); `start` and
        // `len` are the owner's memory, just reported; `flags` has `READ_ONLY` where the memory
        // is shared.
        unsafe {
            finish_row_major(
                placed,
                memory.start,
                memory.len,
                shape,
                first_element,
                flags,
            )
        }
    }
}

/// The row-major export of `len` elements at `start` in full: what the fast path leaves (a zero
/// extent, a refusal, a buffer too short), out of line where there is one, and given the
/// description's parts, so that the fast path keeps none of it in memory.
///
/// # Safety
/// `placed` has room for `shape.len()` dims; `start` and `len` are what its owner's
/// [`HostBuffer::memory`] reported (so `start` is non-NULL and the memory lives with the owner);
/// `flags` has `READ_ONLY` if that memory is shared (the export is then not exclusive).
#[cfg_attr(feature = "fast-path", cold, inline(never))]
#[cfg_attr(not(feature = "fast-path"), inline(always))]
unsafe fn finish_row_major<M: ManagedStruct, B: HostBuffer>(
    placed: Placed<M, B>,
    start: *mut B::Element,
    len: usize,
    shape: &[i64],
    first_element: usize,
    flags: DLPackFlags,
) -> Result<ManagedTensor<M>, ExportError> {
    let description = host_slice(start, len, shape, None, first_element).with_flags(flags);
    // SAFETY: no strides, and the dims have room for the shape (caller); the dtype is the
    // element's, stored as `ElementStorage` says; `data` is non-NULL (a `HostBuffer` promise,
    // caller). Exclusive: the buffer is the export's alone unless shared (then `READ_ONLY`,
    // caller).
    unsafe {
        placed.finish_compact(
            &description,
            shape,
            ElementStorage::<B::Element>::STORAGE,
            !flags.contains(DLPackFlags::READ_ONLY),
        )
    }
}

impl<'a, T: Element + Send> Export<'a, Vec<T>> {
    /// Exports a copy of `data`, marked `IS_COPIED`: the consumer owns it outright.
    ///
    /// ```
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi::raw::DLPackFlags;
    ///
    /// let borrowed = [1.5f64, 2.5];
    /// let tensor = Export::copy_of(&borrowed, &[2]).finish()?;
    /// assert_eq!(tensor.view().flags(), DLPackFlags::IS_COPIED);
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn copy_of(data: &[T], shape: &'a [i64]) -> Self {
        let mut export = Self::new(data.to_vec(), shape);
        export.flags = DLPackFlags::IS_COPIED;
        export
    }
}

impl<B: HostBuffer> core::fmt::Debug for Export<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Export")
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("first_element", &self.first_element)
            .field("flags", &self.flags)
            .finish_non_exhaustive()
    }
}
