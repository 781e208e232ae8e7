//! Stream ordering: the consumer's stream (what `__dlpack__(stream=...)` asks a producer to make
//! its data ready on, parsed once by the array API's table for the tensor's device), and the
//! producer's hook that makes it so ([`StreamOrder`]), with no device runtime linked.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::fmt;
use core::ptr::NonNull;

use crate::raw::{kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLROCM, kDLROCMHost, DLDevice};

/// The stream on which a consumer will use a tensor, as the producer's ordering hook receives
/// it: the producer makes its data ready there (for example, an event recorded on its own
/// stream and waited on by this one) before it hands the tensor over, or refuses.
///
/// The array API's `stream` values mean different things per device; [`parse`](Self::parse)
/// applies its table once, so that a hook matches on meanings, not integers:
///
/// | device | `None` | `-1` | `0` | `1` | `2` | other |
/// |---|---|---|---|---|---|---|
/// | CPU | [`Unspecified`](Self::Unspecified) | refused | refused | refused | refused | refused |
/// | CUDA, CUDA managed, CUDA pinned host | [`Unspecified`](Self::Unspecified) (legacy default) | [`NoSync`](Self::NoSync) | refused (ambiguous) | [`LegacyDefault`](Self::LegacyDefault) | [`PerThreadDefault`](Self::PerThreadDefault) | [`Handle`](Self::Handle) |
/// | ROCm, ROCm pinned host | [`Unspecified`](Self::Unspecified) (legacy default) | [`NoSync`](Self::NoSync) | [`LegacyDefault`](Self::LegacyDefault) | refused | refused | [`Handle`](Self::Handle) |
/// | any other | [`Unspecified`](Self::Unspecified) | [`NoSync`](Self::NoSync) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) |
///
/// Pinned host memory (`kDLCUDAHost`, `kDLROCMHost`) is its runtime's: its producer's work runs
/// on that runtime's streams, so the stream values mean what they mean on its device.
///
/// Values below -1, and handles that do not fit a pointer, are refused on every device.
///
/// ```
/// use dlpack_abi::dlpack::{ConsumerStream, ConsumerStreamError};
/// use dlpack_abi::raw::{kDLCPU, kDLCUDA, DLDevice};
///
/// let cuda = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// assert_eq!(ConsumerStream::parse(cuda, Some(2)), Ok(ConsumerStream::PerThreadDefault));
/// assert_eq!(ConsumerStream::parse(cuda, Some(0)), Err(ConsumerStreamError::Ambiguous));
/// let cpu = DLDevice { device_type: kDLCPU, device_id: 0 };
/// assert_eq!(ConsumerStream::parse(cpu, None), Ok(ConsumerStream::Unspecified));
/// assert_eq!(ConsumerStream::parse(cpu, Some(-1)), Err(ConsumerStreamError::NoStreams));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConsumerStream {
    /// No stream given (`None`): the data must be ready for any use when the export returns
    /// (CUDA and ROCm producers assume the legacy default stream).
    Unspecified,
    /// `-1`: the consumer orders the work itself; the producer must not synchronise.
    NoSync,
    /// The device's legacy default stream (CUDA `1`, ROCm `0`).
    LegacyDefault,
    /// CUDA's per-thread default stream (`2`).
    PerThreadDefault,
    /// A stream handle of the consumer's (`cudaStream_t`, `hipStream_t`, ... as an integer). It
    /// stays the consumer's: the producer may enqueue on it but never destroys it.
    Handle(usize),
    /// No stream: the host reads the data (a copy to the CPU for `dl_device`, an Arrow export
    /// without a `sync_event`). The producer waits until its work is complete and visible to
    /// the host. [`parse`](Self::parse) never returns it; the glue asks for it.
    Host,
}

/// Why a `stream` value is refused for a device ([`ConsumerStream::parse`]).
///
/// ```
/// use dlpack_abi::dlpack::{ConsumerStream, ConsumerStreamError};
/// use dlpack_abi::raw::{kDLROCM, DLDevice};
///
/// let rocm = DLDevice { device_type: kDLROCM, device_id: 0 };
/// let error = ConsumerStream::parse(rocm, Some(2)).unwrap_err();
/// assert_eq!(error, ConsumerStreamError::Unsupported { value: 2 });
/// assert_eq!(error.to_string(), "stream 2 is not supported on this device");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConsumerStreamError {
    /// A stream was given for a device that has none (the CPU): only `None` is allowed.
    NoStreams,
    /// CUDA `0`, which could mean either default stream.
    Ambiguous,
    /// A value the device's table leaves out (ROCm `1` and `2`).
    Unsupported {
        /// The value given.
        value: i64,
    },
    /// Below -1, or a handle wider than a pointer on this target.
    Invalid {
        /// The value given.
        value: i64,
    },
}

impl ConsumerStream {
    /// Applies the array API's `stream` table for `device` to a consumer's value (`None` when
    /// the consumer gave none).
    ///
    /// # Errors
    /// [`ConsumerStreamError`] for the values the table refuses for `device`, and for values no device
    /// allows.
    ///
    /// ```
    /// use dlpack_abi::dlpack::ConsumerStream;
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// let cuda = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// let stream = ConsumerStream::parse(cuda, Some(0x5555_0000))?;
    /// assert_eq!(stream, ConsumerStream::Handle(0x5555_0000));
    /// # Ok::<(), dlpack_abi::dlpack::ConsumerStreamError>(())
    /// ```
    pub fn parse(device: DLDevice, stream: Option<i64>) -> Result<Self, ConsumerStreamError> {
        let Some(value) = stream else {
            return Ok(Self::Unspecified);
        };
        if device.device_type == kDLCPU {
            return Err(ConsumerStreamError::NoStreams);
        }
        let handle = || {
            usize::try_from(value)
                .map(Self::Handle)
                .map_err(|_| ConsumerStreamError::Invalid { value })
        };
        let family = StreamFamily::of(device);
        match value {
            -1 => Ok(Self::NoSync),
            0 if family == StreamFamily::Cuda => Err(ConsumerStreamError::Ambiguous),
            1 if family == StreamFamily::Cuda => Ok(Self::LegacyDefault),
            2 if family == StreamFamily::Cuda => Ok(Self::PerThreadDefault),
            0 if family == StreamFamily::Rocm => Ok(Self::LegacyDefault),
            1 | 2 if family == StreamFamily::Rocm => {
                Err(ConsumerStreamError::Unsupported { value })
            }
            _ => handle(),
        }
    }
}

/// Which row of the array API's `stream` table a device reads: the one home of that rule
/// ([`ConsumerStream::parse`], [`canonical_stream`](super::canonical_stream)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StreamFamily {
    /// CUDA device, managed and pinned host memory.
    Cuda,
    /// ROCm device and pinned host memory.
    Rocm,
    /// Any other device (and the CPU, whose streams `parse` refuses before asking).
    Other,
}

impl StreamFamily {
    pub(crate) fn of(device: DLDevice) -> Self {
        if [kDLCUDA, kDLCUDAManaged, kDLCUDAHost].contains(&device.device_type) {
            Self::Cuda
        } else if [kDLROCM, kDLROCMHost].contains(&device.device_type) {
            Self::Rocm
        } else {
            Self::Other
        }
    }
}

impl ConsumerStream {
    /// The CUDA stream handle this stream is, for a CUDA hook's `cuStreamWaitEvent`:
    /// [`Unspecified`](Self::Unspecified) and [`LegacyDefault`](Self::LegacyDefault) are
    /// `CU_STREAM_LEGACY` (1), [`PerThreadDefault`](Self::PerThreadDefault) is
    /// `CU_STREAM_PER_THREAD` (2), the driver API's own values for them, and a
    /// [`Handle`](Self::Handle) is itself; [`NoSync`](Self::NoSync) and [`Host`](Self::Host)
    /// name no stream (`None`).
    ///
    /// ```
    /// use dlpack_abi::dlpack::ConsumerStream;
    ///
    /// assert_eq!(ConsumerStream::Unspecified.cuda_handle(), Some(1));
    /// assert_eq!(ConsumerStream::PerThreadDefault.cuda_handle(), Some(2));
    /// assert_eq!(ConsumerStream::Handle(0x7f00).cuda_handle(), Some(0x7f00));
    /// assert_eq!(ConsumerStream::NoSync.cuda_handle(), None);
    /// ```
    pub fn cuda_handle(self) -> Option<usize> {
        match self {
            Self::Unspecified | Self::LegacyDefault => Some(1),
            Self::PerThreadDefault => Some(2),
            Self::Handle(handle) => Some(handle),
            Self::NoSync | Self::Host => None,
        }
    }
}

impl fmt::Display for ConsumerStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unspecified => f.write_str("no stream (None)"),
            Self::NoSync => f.write_str("-1 (no synchronisation)"),
            Self::LegacyDefault => f.write_str("the legacy default stream"),
            Self::PerThreadDefault => f.write_str("the per-thread default stream"),
            Self::Handle(handle) => write!(f, "stream {handle:#x}"),
            Self::Host => f.write_str("the host"),
        }
    }
}

/// A producer's part in stream ordering: the hook a device owner implements so that every
/// export of its data is ready where the consumer uses it. The Python glue calls it for each
/// `__dlpack__` (with the consumer's parsed `stream`), for copies to the CPU and Arrow exports
/// ([`ConsumerStream::Host`]), and for Arrow device exports ([`record_event`](Self::record_event));
/// a CUDA owner implements it with an event recorded on its work stream and
/// `cuStreamWaitEvent` on the consumer's ([`ConsumerStream::cuda_handle`]).
///
/// This crate links no device runtime: the hook is the owner's.
///
/// # Safety
/// [`ready_on`](Self::ready_on) returns `Ok` only once every write of the producer's to the data
/// is ordered before any work the consumer enqueues on `stream` afterwards (for
/// [`ConsumerStream::Host`]: complete and visible to the host), and it never synchronises for
/// [`ConsumerStream::NoSync`]. Consumers read the data on that promise; with host-accessible
/// memory, so does Rust.
///
/// ```
/// use std::sync::Mutex;
/// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamOrder};
/// use dlpack_abi::raw::{kDLCUDA, DLDevice};
///
/// /// Stands for a CUDA owner: records which streams it was asked to order on.
/// #[derive(Default)]
/// struct Recorder(Mutex<Vec<ConsumerStream>>);
///
/// // SAFETY: this owner has no device work, so its data is always ready.
/// unsafe impl StreamOrder for Recorder {
///     fn ready_on(&self, _: DLDevice, stream: ConsumerStream) -> Result<(), OrderError> {
///         if stream == ConsumerStream::PerThreadDefault {
///             return Err(OrderError::Unsupported { stream });
///         }
///         self.0.lock().unwrap().push(stream);
///         Ok(())
///     }
/// }
///
/// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
/// let owner = Recorder::default();
/// owner.ready_on(gpu, ConsumerStream::parse(gpu, Some(0x5000))?)?;
/// assert!(owner.ready_on(gpu, ConsumerStream::parse(gpu, Some(2))?).is_err());
/// assert_eq!(*owner.0.lock().unwrap(), [ConsumerStream::Handle(0x5000)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub unsafe trait StreamOrder: Send + Sync {
    /// Makes the data on `device` ready for use on `stream` (for example: records an event on
    /// the producer's work stream and makes `stream` wait on it), or refuses.
    ///
    /// # Errors
    /// [`OrderError::Unsupported`] for a stream this producer cannot order on,
    /// [`OrderError::Runtime`] when the device runtime fails.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamOrder};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// A producer whose device work runs on the legacy default stream only.
    /// struct DefaultStreamOnly;
    /// // SAFETY: `ready_on` returns `Ok` only for the stream the work already runs on.
    /// unsafe impl StreamOrder for DefaultStreamOnly {
    ///     fn ready_on(&self, _: DLDevice, stream: ConsumerStream) -> Result<(), OrderError> {
    ///         match stream {
    ///             ConsumerStream::LegacyDefault | ConsumerStream::NoSync => Ok(()),
    ///             other => Err(OrderError::Unsupported { stream: other }),
    ///         }
    ///     }
    /// }
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// assert!(DefaultStreamOnly.ready_on(gpu, ConsumerStream::parse(gpu, Some(1))?).is_ok());
    /// assert!(DefaultStreamOnly.ready_on(gpu, ConsumerStream::parse(gpu, Some(0x5000))?).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn ready_on(&self, device: DLDevice, stream: ConsumerStream) -> Result<(), OrderError>;

    /// An event recorded after the producer's pending writes to the data on `device`, for an
    /// Arrow device export's `sync_event` (the consumer waits on it); `None` when the data is
    /// ready for any use. The default waits for the work on the host
    /// ([`ready_on`](Self::ready_on) with [`ConsumerStream::Host`]) and gives no event.
    ///
    /// # Errors
    /// As for [`ready_on`](Self::ready_on).
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ConsumerStream, OrderError, StreamOrder};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// struct Idle;
    /// // SAFETY: no device work, ever.
    /// unsafe impl StreamOrder for Idle {
    ///     fn ready_on(&self, _: DLDevice, _: ConsumerStream) -> Result<(), OrderError> { Ok(()) }
    /// }
    /// let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    /// assert!(Idle.record_event(gpu)?.is_none());
    /// # Ok::<(), OrderError>(())
    /// ```
    #[cfg(feature = "alloc")]
    fn record_event(
        &self,
        device: DLDevice,
    ) -> Result<Option<alloc::boxed::Box<dyn DeviceEvent>>, OrderError> {
        self.ready_on(device, ConsumerStream::Host).map(|()| None)
    }
}

/// A device event object that an Arrow device array's `sync_event` points to (a `CUevent`,
/// `hipEvent_t`, ...), owned by the array until its release: what
/// [`StreamOrder::record_event`] returns and
/// [`DeviceArray::with_event`](crate::arrow::DeviceArray::with_event) attaches.
///
/// # Safety
/// [`event_ptr`](Self::event_ptr), called once the event is in its final place (it is boxed
/// first), points to the device's event object (to the `CUevent` handle, not the handle
/// itself: the Arrow spec's `cudaEvent_t*`), which stays valid and unchanged until `self` is
/// dropped; the event is recorded after every write of the producer's to the data.
///
/// ```
/// use core::ffi::c_void;
/// use core::ptr::NonNull;
/// use dlpack_abi::dlpack::DeviceEvent;
///
/// /// Stands for a recorded CUDA event (a `CUevent` is a pointer-sized handle).
/// struct Recorded { handle: usize }
///
/// // SAFETY: points to the handle, which lives as long as `self` (it is boxed before use).
/// unsafe impl DeviceEvent for Recorded {
///     fn event_ptr(&self) -> NonNull<c_void> {
///         NonNull::from(&self.handle).cast()
///     }
/// }
/// ```
pub unsafe trait DeviceEvent: Send + 'static {
    /// The pointer `sync_event` carries: to the event object.
    ///
    /// ```
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::dlpack::DeviceEvent;
    ///
    /// /// Stands for a recorded event; `sync_event` points to the handle.
    /// struct Recorded { handle: usize }
    /// // SAFETY: points to the handle, which lives as long as `self` (boxed before use).
    /// unsafe impl DeviceEvent for Recorded {
    ///     fn event_ptr(&self) -> NonNull<c_void> {
    ///         NonNull::from(&self.handle).cast()
    ///     }
    /// }
    /// let event = Box::new(Recorded { handle: 0x1234 });
    /// // What a consumer reads behind `sync_event`: the handle.
    /// // SAFETY: the pointer is to the live `usize` handle.
    /// assert_eq!(unsafe { *event.event_ptr().cast::<usize>().as_ptr() }, 0x1234);
    /// ```
    fn event_ptr(&self) -> NonNull<c_void>;
}

/// Why a producer could not make its data ready on a consumer's stream
/// ([`StreamOrder::ready_on`]).
///
/// ```
/// use dlpack_abi::dlpack::{ConsumerStream, OrderError};
///
/// let error = OrderError::Runtime { call: "cuStreamWaitEvent", code: 400 };
/// assert_eq!(error.to_string(), "cuStreamWaitEvent failed with error 400");
/// let error = OrderError::Unsupported { stream: ConsumerStream::PerThreadDefault };
/// assert_eq!(error.to_string(), "this producer cannot order its data on the per-thread default stream");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OrderError {
    /// The producer cannot order its work on this stream (a stream of another device or
    /// runtime, a default stream its runtime lacks, ...).
    Unsupported {
        /// The stream asked for.
        stream: ConsumerStream,
    },
    /// The data is ready on one stream only, and no device runtime can order it before the
    /// stream (or the host) that asks for it ([`StreamReady`](super::StreamReady) without a
    /// [`StreamRuntime`](super::StreamRuntime) for the device).
    NotOrdered {
        /// The stream the data is ready on.
        ready_on: ConsumerStream,
        /// The stream, or [`ConsumerStream::Host`], that asked for it.
        requested: ConsumerStream,
    },
    /// The data is ready on one stream only, and no device runtime can record the event an
    /// Arrow device export must carry as its `sync_event`.
    NoEvent {
        /// The stream the data is ready on.
        ready_on: ConsumerStream,
    },
    /// The device runtime failed.
    Runtime {
        /// The runtime function that failed (e.g. `"cuEventRecord"`).
        call: &'static str,
        /// Its error code (a `CUresult`, `hipError_t`, ...).
        code: i64,
    },
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported { stream } => {
                write!(f, "this producer cannot order its data on {stream}")
            }
            Self::NotOrdered {
                ready_on: ConsumerStream::NoSync,
                requested,
            } => write!(
                f,
                "the data was imported with stream=-1, which leaves its ordering to the importer: \
                 it cannot be handed to {requested}; import it with a stream"
            ),
            Self::NoEvent {
                ready_on: ConsumerStream::NoSync,
            } => f.write_str(
                "the data was imported with stream=-1, which leaves its ordering to the importer: \
                 no sync_event can cover it; import it with a stream",
            ),
            Self::NotOrdered {
                ready_on,
                requested,
            } => write!(
                f,
                "the data is ready on {ready_on} only, and no device runtime is available to \
                 order it before {requested}"
            ),
            Self::NoEvent { ready_on } => write!(
                f,
                "the data is ready on {ready_on} only, and no device runtime is available to \
                 record a sync_event for it"
            ),
            Self::Runtime { call, code } => write!(f, "{call} failed with error {code}"),
        }
    }
}

impl core::error::Error for OrderError {}

impl fmt::Display for ConsumerStreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoStreams => f.write_str("stream must be None for CPU tensors"),
            Self::Ambiguous => f.write_str(
                "stream 0 is ambiguous on CUDA; use 1 (legacy default) or 2 (per-thread default)",
            ),
            Self::Unsupported { value } => {
                write!(f, "stream {value} is not supported on this device")
            }
            Self::Invalid { value } => write!(
                f,
                "stream {value} is neither -1 (no synchronisation) nor a stream handle"
            ),
        }
    }
}

impl core::error::Error for ConsumerStreamError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::{kDLOneAPI, DLDeviceType};

    fn on(device_type: DLDeviceType) -> DLDevice {
        DLDevice {
            device_type,
            device_id: 0,
        }
    }

    #[test]
    fn every_row_of_the_table() {
        let cases: &[(
            DLDeviceType,
            Option<i64>,
            Result<ConsumerStream, ConsumerStreamError>,
        )] = &[
            (kDLCPU, None, Ok(ConsumerStream::Unspecified)),
            (kDLCPU, Some(-1), Err(ConsumerStreamError::NoStreams)),
            (kDLCPU, Some(7), Err(ConsumerStreamError::NoStreams)),
            (kDLCUDA, None, Ok(ConsumerStream::Unspecified)),
            (kDLCUDA, Some(-1), Ok(ConsumerStream::NoSync)),
            (kDLCUDA, Some(0), Err(ConsumerStreamError::Ambiguous)),
            (kDLCUDA, Some(1), Ok(ConsumerStream::LegacyDefault)),
            (kDLCUDA, Some(2), Ok(ConsumerStream::PerThreadDefault)),
            (kDLCUDA, Some(3), Ok(ConsumerStream::Handle(3))),
            (kDLCUDAManaged, Some(0), Err(ConsumerStreamError::Ambiguous)),
            (kDLROCM, Some(0), Ok(ConsumerStream::LegacyDefault)),
            (
                kDLROCM,
                Some(1),
                Err(ConsumerStreamError::Unsupported { value: 1 }),
            ),
            (
                kDLROCM,
                Some(2),
                Err(ConsumerStreamError::Unsupported { value: 2 }),
            ),
            (kDLROCM, Some(9), Ok(ConsumerStream::Handle(9))),
            (kDLOneAPI, Some(0), Ok(ConsumerStream::Handle(0))),
            (
                kDLOneAPI,
                Some(-2),
                Err(ConsumerStreamError::Invalid { value: -2 }),
            ),
            (
                kDLCUDA,
                Some(i64::MIN),
                Err(ConsumerStreamError::Invalid { value: i64::MIN }),
            ),
        ];
        for &(device_type, value, expected) in cases {
            assert_eq!(
                ConsumerStream::parse(on(device_type), value),
                expected,
                "{device_type:?} {value:?}"
            );
        }
    }

    #[test]
    fn handles_wider_than_a_pointer_are_refused() {
        let wide = i64::MAX;
        let parsed = ConsumerStream::parse(on(kDLCUDA), Some(wide));
        if usize::BITS < 64 {
            assert_eq!(parsed, Err(ConsumerStreamError::Invalid { value: wide }));
        } else {
            assert_eq!(
                parsed,
                Ok(ConsumerStream::Handle(usize::try_from(wide).unwrap()))
            );
        }
    }
}
