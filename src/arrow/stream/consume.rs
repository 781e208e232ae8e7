//! `ArrowArrayStream` and `ArrowDeviceArrayStream`, consumed as Rust iterators: [`ArrayStream`]
//! and [`DeviceArrayStream`].
#![allow(unsafe_code)]

use core::ffi::{c_char, c_int};

use crate::arrow::device::check_stream_device;
use crate::arrow::owned::{sealed::Base, Owned};
use crate::arrow::{
    Array, DeviceArray, ProducerError, Schema, SchemaRef, StreamError, ValidationError,
};
use crate::raw::{
    ArrowArray, ArrowArrayStream, ArrowDeviceArray, ArrowDeviceArrayStream, ArrowDeviceType,
    ArrowSchema, ARROW_DEVICE_CPU,
};

pub(crate) mod sealed {
    use super::*;

    /// A stream's item: [`Array`] (CPU) or [`DeviceArray`].
    pub trait Item: Sized {
        /// The raw struct `get_next` fills.
        type Raw: Base + bytemuck::Zeroable;
        /// The device type of the buffers.
        fn device(&self) -> ArrowDeviceType;
        /// Checks the item against a schema (see [`Array::view`]).
        fn check(&self, schema: SchemaRef<'_>) -> Result<(), ValidationError>;
        /// Imports one item.
        ///
        /// # Safety
        /// As for `Array::from_raw` (or `DeviceArray::from_raw`).
        unsafe fn import(
            raw: *mut Self::Raw,
            schema: SchemaRef<'_>,
        ) -> Result<Self, ValidationError>;
        /// Moves the item into a consumer's struct.
        ///
        /// # Safety
        /// `out` is valid for writes.
        unsafe fn export(self, out: *mut Self::Raw);
    }

    /// The raw struct of a stream kind: its callbacks, its device type, and how to build one.
    pub trait RawStream: Base + Sized {
        /// What `get_next` yields.
        type Item: Item;
        /// `get_schema`.
        fn get_schema(&self) -> Option<unsafe extern "C" fn(*mut Self, *mut ArrowSchema) -> c_int>;
        /// `get_next`.
        #[allow(clippy::type_complexity)]
        fn get_next(&self) -> Option<unsafe extern "C" fn(*mut Self, *mut RawItem<Self>) -> c_int>;
        /// `get_last_error`.
        fn get_last_error(&self) -> Option<unsafe extern "C" fn(*mut Self) -> *const c_char>;
        /// The device type of every item (the CPU for `ArrowArrayStream`).
        fn device_type(&self) -> ArrowDeviceType;
        /// A stream struct with these callbacks (the device type is ignored by CPU streams).
        #[cfg(feature = "alloc")]
        fn assemble(
            device_type: ArrowDeviceType,
            get_schema: unsafe extern "C" fn(*mut Self, *mut ArrowSchema) -> c_int,
            get_next: unsafe extern "C" fn(*mut Self, *mut RawItem<Self>) -> c_int,
            get_last_error: unsafe extern "C" fn(*mut Self) -> *const c_char,
            release: unsafe extern "C" fn(*mut Self),
            private_data: *mut core::ffi::c_void,
        ) -> Self;
    }

    /// The raw struct of a stream's items.
    pub type RawItem<S> = <<S as RawStream>::Item as Item>::Raw;
}
pub(crate) use sealed::{Item, RawItem, RawStream};

/// The two stream structs a producer hands over: [`ArrowArrayStream`] (items are [`Array`]s)
/// and [`ArrowDeviceArrayStream`] (items are [`DeviceArray`]s). Sealed; for code generic over
/// both kinds of [`Stream`].
///
/// ```
/// use dlpack_abi::arrow::{Stream, StreamStruct};
/// use dlpack_abi::raw::{ArrowArrayStream, ArrowDeviceArrayStream};
///
/// fn is_done<S: StreamStruct>(stream: &mut Stream<S>) -> bool {
///     stream.next().is_none()
/// }
/// fn either<S: StreamStruct>() {}
/// either::<ArrowArrayStream>();
/// either::<ArrowDeviceArrayStream>();
/// ```
pub trait StreamStruct: RawStream {}
impl StreamStruct for ArrowArrayStream {}
impl StreamStruct for ArrowDeviceArrayStream {}

macro_rules! item {
    ($item:ty, $raw:ty, |$this:ident| $device:expr) => {
        impl Item for $item {
            type Raw = $raw;
            fn device(&self) -> ArrowDeviceType {
                let $this = self;
                $device
            }
            fn check(&self, schema: SchemaRef<'_>) -> Result<(), ValidationError> {
                self.view(schema).map(drop)
            }
            unsafe fn import(
                raw: *mut $raw,
                schema: SchemaRef<'_>,
            ) -> Result<Self, ValidationError> {
                // SAFETY: forwarded from the caller.
                unsafe { <$item>::from_raw(raw, schema) }
            }
            unsafe fn export(self, out: *mut $raw) {
                // SAFETY: forwarded from the caller.
                unsafe { self.export_to(out) }
            }
        }
    };
}
item!(Array, ArrowArray, |_array| ARROW_DEVICE_CPU);
item!(DeviceArray, ArrowDeviceArray, |array| array.device_type());

macro_rules! raw_stream {
    ($stream:ty, $item:ty $(, $device:ident)?) => {
        impl RawStream for $stream {
            type Item = $item;
            fn get_schema(
                &self,
            ) -> Option<unsafe extern "C" fn(*mut Self, *mut ArrowSchema) -> c_int> {
                self.get_schema
            }
            fn get_next(
                &self,
            ) -> Option<unsafe extern "C" fn(*mut Self, *mut RawItem<Self>) -> c_int> {
                self.get_next
            }
            fn get_last_error(&self) -> Option<unsafe extern "C" fn(*mut Self) -> *const c_char> {
                self.get_last_error
            }
            fn device_type(&self) -> ArrowDeviceType {
                raw_stream!(@device self $($device)?)
            }
            #[cfg(feature = "alloc")]
            fn assemble(
                device_type: ArrowDeviceType,
                get_schema: unsafe extern "C" fn(*mut Self, *mut ArrowSchema) -> c_int,
                get_next: unsafe extern "C" fn(*mut Self, *mut RawItem<Self>) -> c_int,
                get_last_error: unsafe extern "C" fn(*mut Self) -> *const c_char,
                release: unsafe extern "C" fn(*mut Self),
                private_data: *mut core::ffi::c_void,
            ) -> Self {
                let _ = device_type;
                Self {
                    $($device: device_type,)?
                    get_schema: Some(get_schema),
                    get_next: Some(get_next),
                    get_last_error: Some(get_last_error),
                    release: Some(release),
                    private_data,
                }
            }
        }
    };
    (@device $this:ident) => { ARROW_DEVICE_CPU };
    (@device $this:ident $field:ident) => { $this.$field };
}
raw_stream!(ArrowArrayStream, Array);
raw_stream!(ArrowDeviceArrayStream, DeviceArray, device_type);

/// A stream this crate owns, released exactly once on drop. Arrays already pulled stay alive
/// after the stream is gone.
///
/// It is an `Iterator` of `Result<item, StreamError>`: each item is imported and validated
/// against the stream's schema (fetched with `get_schema` on first use and kept); a device
/// stream's arrays must be on the stream's device type ([`ValidationError::DeviceMismatch`]).
/// End of stream is `None`. A producer error (non-zero code) yields `Err(StreamError::Producer)` with the
/// code and the `get_last_error` message, copied at once (a NULL message is `None`); after any
/// error the iterator is fused and yields `None`.
///
/// Not `Sync`: stream calls must be serialised, which `&mut self` guarantees.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
///
/// let batches: Vec<Result<Array, ProducerError>> = vec![Ok(Array::from_vec(vec![1i64, 2])?), Ok(Array::from_vec(vec![3i64])?)];
/// let mut c_stream = ArrayStream::from_iter(SchemaDef::new("l")?, batches)?.into_raw();
/// // A consumer takes the C struct and iterates: each array is validated against the schema.
/// // SAFETY: the caller owns `c_stream`; `from_raw` moves it out.
/// let mut stream = unsafe { ArrayStream::from_raw(&mut c_stream) }?;
/// let mut total = 0;
/// while let Some(array) = stream.next() {
///     let array = array?;
///     total += array.view(stream.schema()?)?.values::<i64>()?.iter().sum::<i64>();
/// }
/// assert_eq!(total, 6);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Stream<S: RawStream> {
    inner: Owned<S>,
    schema: Option<Schema>,
    done: bool,
}

/// A consumed `ArrowArrayStream`, yielding [`Array`]s.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
///
/// let batches: Vec<Result<Array, ProducerError>> = vec![Ok(Array::from_vec(vec![0.5f32])?)];
/// let stream = ArrayStream::from_iter(SchemaDef::new("f")?, batches)?;
/// let lengths: Vec<usize> = stream.map(|array| array.map(|a| a.len())).collect::<Result<_, _>>()?;
/// assert_eq!(lengths, [1]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type ArrayStream = Stream<ArrowArrayStream>;
/// A consumed `ArrowDeviceArrayStream`, yielding [`DeviceArray`]s.
///
/// ```
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::arrow::{Array, DeviceArray, DeviceArrayStream, ProducerError, SchemaDef};
/// use dlpack_abi::raw::ARROW_DEVICE_CPU;
///
/// let arrays: Vec<Result<DeviceArray, ProducerError>> =
///     vec![Ok(DeviceArray::from_cpu(Array::from_vec(vec![1u8, 2])?))];
/// let mut stream = DeviceArrayStream::from_iter(SchemaDef::new("C")?, ARROW_DEVICE_CPU, arrays)?;
/// assert_eq!(stream.device_type(), ARROW_DEVICE_CPU);
/// let array = stream.next().unwrap()?;
/// assert_eq!(array.device_type(), ARROW_DEVICE_CPU);
/// assert!(stream.next().is_none());
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type DeviceArrayStream = Stream<ArrowDeviceArrayStream>;

// SAFETY: a stream may be moved between threads as long as calls are serialised (the C Stream
// Interface's only rule), which `&mut self` enforces.
unsafe impl<S: RawStream> Send for Stream<S> {}

impl<S: RawStream> Stream<S> {
    /// Takes ownership of a producer's stream (moving it: the source's `release` is set to
    /// NULL). Nothing is called yet.
    ///
    /// On [`ValidationError::NullCallback`] the stream has been released when this returns.
    ///
    /// # Safety
    /// `ptr` is NULL or points to a stream the caller owns, which follows the C Stream
    /// Interface: the schema and arrays it produces follow the C Data Interface (see
    /// [`Schema::from_raw`], [`Array::from_raw`], [`DeviceArray::from_raw`]).
    ///
    /// # Errors
    /// [`ValidationError::NullPointer`] or [`ValidationError::Released`] for a NULL or released
    /// stream, [`ValidationError::NullCallback`] when `get_schema` or `get_next` is NULL.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef, ValidationError};
    ///
    /// let none: Vec<Result<Array, ProducerError>> = Vec::new();
    /// let mut c_stream = ArrayStream::from_iter(SchemaDef::new("i")?, none)?.into_raw();
    /// // SAFETY: the caller owns `c_stream`; `from_raw` moves it out.
    /// let stream = unsafe { ArrayStream::from_raw(&mut c_stream) }?;
    /// assert!(c_stream.release.is_none()); // moved
    /// // Taking it again finds the source released.
    /// assert_eq!(unsafe { ArrayStream::from_raw(&mut c_stream) }.unwrap_err(), ValidationError::Released);
    /// drop(stream);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn from_raw(ptr: *mut S) -> Result<Self, ValidationError> {
        // SAFETY: forwarded from the caller.
        let inner = unsafe { Owned::take(ptr) }?;
        let raw = inner.raw();
        for (name, set) in [
            ("get_schema", raw.get_schema().is_some()),
            ("get_next", raw.get_next().is_some()),
        ] {
            if !set {
                return Err(ValidationError::NullCallback { name });
            }
        }
        Ok(Self::from_owned(inner))
    }

    pub(crate) fn from_owned(inner: Owned<S>) -> Self {
        Self {
            inner,
            schema: None,
            done: false,
        }
    }

    /// The producer's error after a non-zero `code`: the code and a copy of the message.
    fn producer_error(&mut self, code: c_int) -> StreamError {
        #[cfg(feature = "alloc")]
        {
            let raw: *mut S = self.inner.raw_mut();
            let message = match self.inner.raw().get_last_error() {
                // SAFETY: called right after a non-zero return, on the live stream, as the C
                // Stream Interface allows.
                Some(get_last_error) => unsafe { get_last_error(raw) },
                None => core::ptr::null(),
            };
            let message = (!message.is_null()).then(|| {
                // SAFETY: a non-NULL message is a NUL-terminated string valid until the next
                // call on the stream; it is copied before any.
                let bytes = unsafe { core::ffi::CStr::from_ptr(message) }.to_bytes();
                alloc::string::String::from_utf8_lossy(bytes)
            });
            StreamError::Producer(ProducerError::new(code, message.as_deref()))
        }
        #[cfg(not(feature = "alloc"))]
        StreamError::Producer(ProducerError::code_only(code))
    }

    /// The stream's schema, fetched with `get_schema` on first use and validated.
    ///
    /// A producer error is returned as is (and asked again next time); a schema that fails
    /// validation has been released, and fuses the iterator.
    ///
    /// # Errors
    /// [`StreamError::Producer`] when `get_schema` fails (asked again next time),
    /// [`StreamError::Invalid`] for a schema that fails validation.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayStream, DataType, ProducerError, SchemaDef};
    ///
    /// let none: Vec<Result<Array, ProducerError>> = Vec::new();
    /// let mut stream = ArrayStream::from_iter(SchemaDef::new("tdm")?.with_name("day"), none)?;
    /// let schema = stream.schema()?;
    /// assert_eq!(schema.data_type(), DataType::Date64);
    /// assert_eq!(schema.name(), Some("day"));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn schema(&mut self) -> Result<SchemaRef<'_>, StreamError> {
        let schema = self.take_schema()?;
        Ok(self.schema.insert(schema).view())
    }

    /// The cached schema, taken out of `self` (fetched first if there is none yet).
    fn take_schema(&mut self) -> Result<Schema, StreamError> {
        if let Some(schema) = self.schema.take() {
            return Ok(schema);
        }
        let get_schema = self
            .inner
            .raw()
            .get_schema()
            .ok_or(ValidationError::NullCallback { name: "get_schema" })?;
        let mut out: ArrowSchema = bytemuck::Zeroable::zeroed();
        let raw: *mut S = self.inner.raw_mut();
        // SAFETY: the stream is live and not released (we own it); `out` is a zeroed struct the
        // producer fills (C Stream Interface).
        let code = unsafe { get_schema(raw, &mut out) };
        if code != 0 {
            return Err(self.producer_error(code));
        }
        // SAFETY: on success `out` is a schema we own (C Stream Interface, caller's contract at
        // `from_raw`).
        unsafe { Schema::from_raw(&mut out) }.map_err(|error| {
            self.done = true;
            error.into()
        })
    }

    /// Releases the stream and returns its schema (fetched first if needed): the schema that
    /// arrays already pulled are read with.
    ///
    /// # Errors
    /// As [`schema`](Self::schema).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
    ///
    /// let batches: Vec<Result<Array, ProducerError>> = vec![Ok(Array::from_vec(vec![9u16])?)];
    /// let mut stream = ArrayStream::from_iter(SchemaDef::new("S")?, batches)?;
    /// let array = stream.next().unwrap()?;
    /// // The stream is released; its schema lives on to read the arrays already pulled.
    /// let schema = stream.into_schema()?;
    /// assert_eq!(array.view(schema.view())?.values::<u16>()?, [9]);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_schema(mut self) -> Result<Schema, StreamError> {
        self.take_schema()
    }

    /// Pulls the next item, checked against the stream's schema.
    fn pull(&mut self) -> Result<Option<S::Item>, StreamError> {
        let schema = self.take_schema()?;
        let item = self.pull_with(schema.view());
        self.schema = Some(schema);
        item
    }

    fn pull_with(&mut self, schema: SchemaRef<'_>) -> Result<Option<S::Item>, StreamError> {
        let get_next = self
            .inner
            .raw()
            .get_next()
            .ok_or(ValidationError::NullCallback { name: "get_next" })?;
        let mut out: RawItem<S> = bytemuck::Zeroable::zeroed();
        let raw: *mut S = self.inner.raw_mut();
        // SAFETY: the stream is live (we own it); `out` is zeroed (released) for the producer.
        let code = unsafe { get_next(raw, &mut out) };
        if code != 0 {
            return Err(self.producer_error(code));
        }
        if out.is_released() {
            return Ok(None); // end of stream
        }
        // SAFETY: on success `out` is an item we own, following the C Data Interface for the
        // stream's schema (contract at `from_raw`).
        let item = unsafe { S::Item::import(&mut out, schema) }?;
        // The schema was checked by the import; the device type is the stream's to check. On
        // error the item is dropped: released once.
        check_stream_device(self.inner.raw().device_type(), item.device())?;
        Ok(Some(item))
    }

    /// The struct, for reading raw fields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
    ///
    /// let none: Vec<Result<Array, ProducerError>> = Vec::new();
    /// let stream = ArrayStream::from_iter(SchemaDef::new("i")?, none)?;
    /// assert!(stream.as_raw().get_last_error.is_some());
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_raw(&self) -> &S {
        self.inner.raw()
    }

    /// Gives the stream away unreleased (a schema fetched already is released).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
    ///
    /// let none: Vec<Result<Array, ProducerError>> = Vec::new();
    /// let mut c_stream = ArrayStream::from_iter(SchemaDef::new("i")?, none)?.into_raw();
    /// // Whoever holds the struct releases it, exactly once.
    /// // SAFETY: live and owned here.
    /// unsafe { c_stream.release.expect("live")(&mut c_stream) };
    /// assert!(c_stream.release.is_none());
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_raw(self) -> S {
        self.inner.into_raw()
    }

    /// Moves the stream into a consumer's struct (`ptr::write`). The consumer then owns it.
    ///
    /// # Safety
    /// `out` is valid for writes of the stream struct.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use core::mem::MaybeUninit;
    /// use dlpack_abi::arrow::{Array, ArrayStream, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::ArrowArrayStream;
    ///
    /// let none: Vec<Result<Array, ProducerError>> = Vec::new();
    /// // A consumer's struct, as `__arrow_c_stream__` or a C caller hands it over.
    /// let mut out = MaybeUninit::<ArrowArrayStream>::uninit();
    /// // SAFETY: `out` is valid for writes.
    /// unsafe { ArrayStream::from_iter(SchemaDef::new("i")?, none)?.export_to(out.as_mut_ptr()) };
    /// // SAFETY: initialised by `export_to`; the consumer owns it now.
    /// let mut c_stream = unsafe { out.assume_init() };
    /// let mut stream = unsafe { ArrayStream::from_raw(&mut c_stream) }?;
    /// assert!(stream.next().is_none());
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn export_to(self, out: *mut S) {
        // SAFETY: forwarded from the caller.
        unsafe { self.inner.export_to(out) }
    }
}

impl DeviceArrayStream {
    /// The device type of every array the stream yields.
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::arrow::{DeviceArray, DeviceArrayStream, ProducerError, SchemaDef};
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA;
    ///
    /// let none: Vec<Result<DeviceArray, ProducerError>> = Vec::new();
    /// let stream = DeviceArrayStream::from_iter(SchemaDef::new("f")?, ARROW_DEVICE_CUDA, none)?;
    /// assert_eq!(stream.device_type(), ARROW_DEVICE_CUDA);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn device_type(&self) -> crate::raw::ArrowDeviceType {
        self.inner.raw().device_type
    }
}

impl<S: RawStream> Iterator for Stream<S> {
    type Item = Result<S::Item, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.pull().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

impl<S: RawStream> core::fmt::Debug for Stream<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stream")
            .field("schema", &self.schema)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
