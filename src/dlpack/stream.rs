//! The consumer's stream: what `__dlpack__(stream=...)` asks a producer to make its data ready
//! on, parsed once by the array API's table for the tensor's device.

use core::fmt;

use crate::raw::{kDLCPU, kDLCUDA, kDLCUDAManaged, kDLROCM, DLDevice};

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
/// | CUDA, CUDA managed | [`Unspecified`](Self::Unspecified) (legacy default) | [`NoSync`](Self::NoSync) | refused (ambiguous) | [`LegacyDefault`](Self::LegacyDefault) | [`PerThreadDefault`](Self::PerThreadDefault) | [`Handle`](Self::Handle) |
/// | ROCm | [`Unspecified`](Self::Unspecified) (legacy default) | [`NoSync`](Self::NoSync) | [`LegacyDefault`](Self::LegacyDefault) | refused | refused | [`Handle`](Self::Handle) |
/// | any other | [`Unspecified`](Self::Unspecified) | [`NoSync`](Self::NoSync) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) | [`Handle`](Self::Handle) |
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
        let cuda = device.device_type == kDLCUDA || device.device_type == kDLCUDAManaged;
        match value {
            -1 => Ok(Self::NoSync),
            0 if cuda => Err(ConsumerStreamError::Ambiguous),
            1 if cuda => Ok(Self::LegacyDefault),
            2 if cuda => Ok(Self::PerThreadDefault),
            0 if device.device_type == kDLROCM => Ok(Self::LegacyDefault),
            1 | 2 if device.device_type == kDLROCM => {
                Err(ConsumerStreamError::Unsupported { value })
            }
            _ => handle(),
        }
    }
}

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
