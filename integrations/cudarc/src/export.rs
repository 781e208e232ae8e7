//! `CudaSlice` → DLPack tensor and Arrow device array, without copying, stream-ordered.
#![allow(unsafe_code)]

use ::cudarc::driver::{CudaSlice, DevicePtr};
use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::{CudaError, CudaOrder};
use dlpack_abi::arrow::{DeviceArray, SchemaDef};
use dlpack_abi::dlpack::{
    ConsumerStream, Element, StreamOrder, TensorDescription, TensorOwner, VersionedTensor,
};
use dlpack_abi::raw::{kDLCUDA, DLDevice, DLPackFlags};

/// The slice an export holds: its own (writable) or shared (read-only).
#[derive(Debug)]
enum Source<T> {
    Owned(CudaSlice<T>),
    Shared(Arc<CudaSlice<T>>),
}

impl<T> Source<T> {
    fn slice(&self) -> &CudaSlice<T> {
        match self {
            Self::Owned(slice) => slice,
            Self::Shared(slice) => slice,
        }
    }
}

/// Exports `slice`, which the export then owns: consumers may write it. The builder's
/// [`finish`](CudaExport::finish) gives the DLPack tensor (after [`shape`](CudaExport::shape),
/// [`strides`](CudaExport::strides) and [`first_element`](CudaExport::first_element), if any);
/// [`into_device_array`](CudaExport::into_device_array) an Arrow device array.
///
/// ```no_run
/// use dlpack_abi::raw::DLPackFlags;
///
/// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let tensor = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<f32>(1024)?).finish()?;
/// assert!(!tensor.view().flags().contains(DLPackFlags::READ_ONLY)); // consumers may write it
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_slice<T: Element>(slice: CudaSlice<T>) -> CudaExport<T> {
    CudaExport::with(Source::Owned(slice))
}

/// Exports a shared slice, read-only (the `Arc` is kept until the deleter runs). The builder
/// is [`export_slice`]'s.
///
/// ```no_run
/// use std::sync::Arc;
/// use dlpack_abi::raw::DLPackFlags;
///
/// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let weights = Arc::new(stream.clone_htod(&[0.1f32, 0.2, 0.3])?);
/// let tensor = dlpack_abi_cudarc::export_shared_slice(Arc::clone(&weights)).finish()?;
/// assert!(tensor.view().flags().contains(DLPackFlags::READ_ONLY));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_shared_slice<T: Element>(slice: Arc<CudaSlice<T>>) -> CudaExport<T> {
    CudaExport::with(Source::Shared(slice))
}

/// A `CudaSlice<T>`, or a strided part of one, on its way to a DLPack tensor or an Arrow device
/// array: zero-copy, with the slice's stream as the producer's work stream ([`order`](Self::order)).
///
/// A slice moved in ([`export_slice`]) is exported writable and freed by the deleter, on its
/// stream (after the work cudarc tracked on it); an `Arc` ([`export_shared_slice`]) is exported
/// `READ_ONLY`. The shape defaults to one dimension over the elements from
/// [`first_element`](Self::first_element) to the end; every byte a shape and strides reach is
/// checked against the slice.
///
/// The consumer frees the memory by calling the deleter: it does so once its own work on the
/// memory is complete (or ordered before the slice's stream), as DLPack expects of consumers.
///
/// ```no_run
/// use std::sync::Arc;
///
/// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let matrix = Arc::new(stream.clone_htod(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?);
/// // The second column of a 3 x 2 row-major matrix, as a read-only 1-D tensor.
/// let column = dlpack_abi_cudarc::export_shared_slice(matrix).first_element(1).shape(&[3]).strides(&[2]).finish()?;
/// assert_eq!(column.view().shape(), [3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct CudaExport<T> {
    source: Source<T>,
    first_element: usize,
    shape: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
}

impl<T: Element> CudaExport<T> {
    fn with(source: Source<T>) -> Self {
        Self {
            source,
            first_element: 0,
            shape: None,
            strides: None,
        }
    }

    /// Starts the tensor at element `index` of the slice (its `byte_offset`).
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// // Elements 2.. of the slice: byte_offset 8 for u32.
    /// let tail = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[1u32, 2, 3, 4])?).first_element(2).finish()?;
    /// assert_eq!((tail.view().shape(), tail.view().raw().byte_offset), (&[2i64][..], 8));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn first_element(mut self, index: usize) -> Self {
        self.first_element = index;
        self
    }

    /// The extents (default: one dimension over the elements from the first to the end).
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let image = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<u8>(480 * 640 * 3)?).shape(&[480, 640, 3]).finish()?;
    /// assert_eq!(image.view().strides(), [640 * 3, 3, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shape(mut self, shape: &[i64]) -> Self {
        self.shape = Some(shape.to_vec());
        self
    }

    /// The strides, in elements (default: row-major).
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// // A 2 x 3 row-major matrix, exported transposed (3 x 2, column-major strides).
    /// let matrix = stream.clone_htod(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let transposed = dlpack_abi_cudarc::export_slice(matrix).shape(&[3, 2]).strides(&[1, 3]).finish()?;
    /// assert!(transposed.view().is_f_contiguous());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn strides(mut self, strides: &[i64]) -> Self {
        self.strides = Some(strides.to_vec());
        self
    }

    /// The ordering hook of the slice's stream, where the producer's work is.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use dlpack_abi::dlpack::{ConsumerStream, StreamOrder};
    ///
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let export = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<f32>(16)?);
    /// let order = export.order();
    /// assert!(Arc::ptr_eq(order.stream(), &stream));
    /// let tensor = export.finish()?;
    /// // What `__dlpack__(stream=...)` does with the hook: the host here.
    /// order.ready_on(tensor.view().device(), ConsumerStream::Host)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn order(&self) -> CudaOrder {
        CudaOrder::new(Arc::clone(self.source.slice().stream()))
    }

    /// The tensor, for a consumer that orders the work itself (DLPack's `stream=-1`).
    ///
    /// # Errors
    /// [`CudaError::Export`] for a shape or strides that reach outside the slice, and what
    /// else the export's checks refuse; the slice is dropped then.
    ///
    /// ```no_run
    /// use dlpack_abi_cudarc::CudaError;
    ///
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let tensor = dlpack_abi_cudarc::export_slice(stream.clone_htod(&[1i32, 2, 3])?).finish()?;
    /// assert_eq!(tensor.view().device().to_string(), "cuda:0");
    /// // A shape that reaches past the slice is refused.
    /// let too_big = dlpack_abi_cudarc::export_slice(stream.alloc_zeros::<i32>(3)?).shape(&[4]).finish();
    /// assert!(matches!(too_big, Err(CudaError::Export(_))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(self) -> Result<VersionedTensor, CudaError> {
        let ordinal = self.source.slice().ordinal();
        let device_id = i32::try_from(ordinal).map_err(|_| CudaError::OtherDevice {
            device_id: -1,
            ordinal,
        })?;
        let elements = self.source.slice().len();
        let shape = match self.shape {
            Some(shape) => shape,
            // An element count always fits i64 (it fits isize).
            None => {
                let rest = elements.saturating_sub(self.first_element);
                alloc::vec![i64::try_from(rest).unwrap_or(i64::MAX)]
            }
        };
        let slice = self.source.slice();
        // Orders the slice's stream after writes cudarc tracked on other streams, and marks it
        // read there (when the record is dropped, at once).
        let address = slice.device_ptr(slice.stream()).0;
        let owner = CudaOwner {
            address,
            elements,
            first_element: self.first_element,
            device: DLDevice {
                device_type: kDLCUDA,
                device_id,
            },
            read_only: matches!(self.source, Source::Shared(_)),
            shape,
            strides: self.strides,
            _source: self.source,
        };
        Ok(VersionedTensor::from_owner(owner)?)
    }

    /// The tensor, ready for use on `stream` (the hook runs first, as `__dlpack__` runs it).
    ///
    /// # Errors
    /// [`CudaError::Order`] when the hook fails; those of [`finish`](Self::finish).
    ///
    /// ```no_run
    /// use dlpack_abi::dlpack::ConsumerStream;
    ///
    /// let context = cudarc::driver::CudaContext::new(0)?;
    /// let (producer, consumer) = (context.new_stream()?, context.new_stream()?);
    /// let values = producer.clone_htod(&[1.0f32, 2.0])?;
    /// // `consumer` waits for the copy on `producer`; the host does not.
    /// let tensor = dlpack_abi_cudarc::export_slice(values).finish_on(ConsumerStream::Handle(consumer.cu_stream() as usize))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_on(self, stream: ConsumerStream) -> Result<VersionedTensor, CudaError> {
        let order = self.order();
        let tensor = self.finish()?;
        order.ready_on(tensor.view().device(), stream)?;
        Ok(tensor)
    }

    /// An Arrow device array of the tensor (one dimension: a primitive array; more: an
    /// `arrow.fixed_shape_tensor`), whose `sync_event` is an event recorded on the slice's
    /// stream and owned until release.
    ///
    /// # Errors
    /// [`CudaError::Bridge`] for what Arrow cannot describe (strides, types without an Arrow
    /// primitive), [`CudaError::Order`] when the event cannot be recorded; those of
    /// [`finish`](Self::finish).
    ///
    /// ```no_run
    /// let stream = cudarc::driver::CudaContext::new(0)?.new_stream()?;
    /// let values = stream.clone_htod(&[1i64, 2, 3])?;
    /// let (schema, array) = dlpack_abi_cudarc::export_slice(values).into_device_array()?;
    /// assert!(array.sync_event().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_device_array(self) -> Result<(SchemaDef, DeviceArray), CudaError> {
        let order = self.order();
        let tensor = self.finish()?;
        let device = tensor.view().device();
        let (schema, array) = DeviceArray::from_tensor(tensor)?;
        let array = match order.record_event(device)? {
            Some(event) => array.with_event(event)?,
            None => array,
        };
        Ok((schema, array))
    }

    /// Whether the slice was moved in (and consumers may write it).
    #[cfg(feature = "pyo3")]
    pub(crate) fn is_owned(&self) -> bool {
        matches!(self.source, Source::Owned(_))
    }
}

/// What the deleter drops: the slice (or its `Arc`) and the description's storage.
struct CudaOwner<T> {
    /// Kept alive until the deleter runs.
    _source: Source<T>,
    address: u64,
    elements: usize,
    first_element: usize,
    device: DLDevice,
    read_only: bool,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

// SAFETY: `address` and `bytes` are the slice's own allocation on `device`, which the owner keeps
// alive (the slice, or an `Arc` of it) until the deleter drops it; a shared slice is exported
// `READ_ONLY`, and a slice moved in is reachable through this export alone (cudarc gives no
// other handle to it without the slice), so consumers may write it; never `IS_COPIED`.
unsafe impl<T: Element> TensorOwner for CudaOwner<T> {
    fn describe(&mut self) -> TensorDescription<'_> {
        // A device address fits the host's pointers wherever CUDA runs (64-bit).
        let start = crate::runtime::address(usize::try_from(self.address).unwrap_or(0));
        let flags = if self.read_only {
            DLPackFlags::READ_ONLY
        } else {
            DLPackFlags::empty()
        };
        let description = TensorDescription::elements::<T>(
            start,
            self.elements,
            self.device,
            &self.shape,
            self.first_element,
        )
        .with_flags(flags);
        match &self.strides {
            Some(strides) => description.with_strides(strides),
            None => description,
        }
    }

    fn ndim(&mut self) -> usize {
        self.shape.len()
    }
}
