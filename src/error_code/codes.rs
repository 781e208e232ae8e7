//! Each error type's `code()`: one home for the mapping of every variant to its [`ErrorCode`].
//! The matches are exhaustive, so a new variant does not compile until it has a code; the test
//! in this module checks that no two variants share one and that every code is used.

use super::{ErrorCode, HasErrorCode};
use crate::arrow::{
    ArrowError, BridgeError, MetadataError, ProducerError, ReadError, StreamError, ValidationError,
};
use crate::dlpack::{
    AccessError, ConsumerStreamError, ExportError, HookInstalled, ImportError, OrderError,
    TensorError,
};

/// `code()` and [`HasErrorCode`] for an error type: the first variants have their own code,
/// `same` ones the code of another type's variant of the same contract (an integration's copy
/// of an [`AccessError`]), and `wraps` ones the code of the error they hold. `LEAF_CODES` lists
/// the first group's codes, for the test.
macro_rules! codes {
    (
        $(#[$doc:meta])*
        $ty:ident {
            $($leaf:pat => $code:ident,)*
        }
        $(same { $($alias:pat => $same:ident,)* })?
        $(wraps { $($wrap:pat => $inner:ident,)* })?
    ) => {
        impl $ty {
            $(#[$doc])*
            pub const fn code(&self) -> ErrorCode {
                match self {
                    $($leaf => ErrorCode::$code,)*
                    $($($alias => ErrorCode::$same,)*)?
                    $($($wrap => $inner.code(),)*)?
                }
            }

            #[cfg(test)]
            pub(crate) const LEAF_CODES: &'static [ErrorCode] = &[$(ErrorCode::$code),*];
        }

        impl HasErrorCode for $ty {
            fn error_code(&self) -> ErrorCode {
                self.code()
            }
        }
    };
}

codes! {
    /// This error's stable [`ErrorCode`] (1xx, `DLPACK_ABI_IMPORT_*` in C).
    ///
    /// ```
    /// use dlpack_abi::dlpack::ImportError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(ImportError::NegativeNdim { ndim: -1 }.code(), ErrorCode::IMPORT_NEGATIVE_NDIM);
    /// assert_eq!(ImportError::NegativeNdim { ndim: -1 }.code().0, 103);
    /// ```
    ImportError {
        Self::NullTensor => IMPORT_NULL_TENSOR,
        Self::UnsupportedVersion { .. } => IMPORT_UNSUPPORTED_VERSION,
        Self::NegativeNdim { .. } => IMPORT_NEGATIVE_NDIM,
        Self::TooManyDims { .. } => IMPORT_TOO_MANY_DIMS,
        Self::ZeroLanes { .. } => IMPORT_ZERO_LANES,
        Self::ZeroBits { .. } => IMPORT_ZERO_BITS,
        Self::SubByteBits { .. } => IMPORT_SUB_BYTE_BITS,
        Self::NullShape { .. } => IMPORT_NULL_SHAPE,
        Self::NegativeExtent { .. } => IMPORT_NEGATIVE_EXTENT,
        Self::SizeOverflow { .. } => IMPORT_SIZE_OVERFLOW,
        Self::NullStrides { .. } => IMPORT_NULL_STRIDES,
        Self::ByteOffsetOverflow { .. } => IMPORT_BYTE_OFFSET_OVERFLOW,
        Self::NullData { .. } => IMPORT_NULL_DATA,
        Self::StridesOverflow { .. } => IMPORT_STRIDES_OVERFLOW,
        Self::AddressOverflow { .. } => IMPORT_ADDRESS_OVERFLOW,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (2xx, `DLPACK_ABI_ACCESS_*` in C).
    ///
    /// ```
    /// use dlpack_abi::dlpack::AccessError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(AccessError::ReadOnly.code(), ErrorCode::ACCESS_READ_ONLY);
    /// assert_eq!(AccessError::NotExclusive.code().0, 208);
    /// ```
    AccessError {
        Self::NotHostAccessible { .. } => ACCESS_NOT_HOST_ACCESSIBLE,
        Self::NotAddressable { .. } => ACCESS_NOT_ADDRESSABLE,
        Self::UnknownFlags { .. } => ACCESS_UNKNOWN_FLAGS,
        Self::DtypeMismatch { .. } => ACCESS_DTYPE_MISMATCH,
        Self::Misaligned { .. } => ACCESS_MISALIGNED,
        Self::NotContiguous => ACCESS_NOT_CONTIGUOUS,
        Self::ReadOnly => ACCESS_READ_ONLY,
        Self::NotExclusive => ACCESS_NOT_EXCLUSIVE,
        Self::IndexRank { .. } => ACCESS_INDEX_RANK,
        Self::DimensionMismatch { .. } => ACCESS_DIMENSION_MISMATCH,
        Self::Overlapping => ACCESS_OVERLAPPING,
        Self::IndexOutOfBounds { .. } => ACCESS_INDEX_OUT_OF_BOUNDS,
        Self::UnsupportedDtype { .. } => ACCESS_UNSUPPORTED_DTYPE,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (3xx, `DLPACK_ABI_EXPORT_*` in C); for
    /// [`Invalid`](Self::Invalid), the code of the [`ImportError`] it holds.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{ExportError, ImportError};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = ExportError::Capacity { ndim: 9, capacity: 8 };
    /// assert_eq!(error.code(), ErrorCode::EXPORT_CAPACITY);
    /// let invalid = ExportError::Invalid(ImportError::NullData { elements: 4 });
    /// assert_eq!(invalid.code(), ErrorCode::IMPORT_NULL_DATA);
    /// ```
    ExportError {
        Self::StridesLength { .. } => EXPORT_STRIDES_LENGTH,
        Self::OutsideBuffer { .. } => EXPORT_OUTSIDE_BUFFER,
        Self::FlagsNotRepresentable { .. } => EXPORT_FLAGS_NOT_REPRESENTABLE,
        Self::NdimChanged { .. } => EXPORT_NDIM_CHANGED,
        Self::Capacity { .. } => EXPORT_CAPACITY,
    }
    wraps {
        Self::Invalid(error) => error,
    }
}

codes! {
    /// The stable [`ErrorCode`] of the error this one holds.
    ///
    /// ```
    /// use dlpack_abi::dlpack::{AccessError, TensorError};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = TensorError::from(AccessError::ReadOnly);
    /// assert_eq!(error.code(), ErrorCode::ACCESS_READ_ONLY);
    /// ```
    TensorError {}
    wraps {
        Self::Import(error) => error,
        Self::Access(error) => error,
        Self::Export(error) => error,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (401-404, `DLPACK_ABI_STREAM_*` in C).
    ///
    /// ```
    /// use dlpack_abi::dlpack::ConsumerStreamError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(ConsumerStreamError::Ambiguous.code(), ErrorCode::STREAM_AMBIGUOUS);
    /// ```
    ConsumerStreamError {
        Self::NoStreams => STREAM_NO_STREAMS,
        Self::Ambiguous => STREAM_AMBIGUOUS,
        Self::Unsupported { .. } => STREAM_UNSUPPORTED,
        Self::Invalid { .. } => STREAM_INVALID,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (411-414, `DLPACK_ABI_ORDER_*` in C).
    ///
    /// ```
    /// use dlpack_abi::dlpack::OrderError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = OrderError::Runtime { call: "cuEventRecord", code: 700 };
    /// assert_eq!(error.code(), ErrorCode::ORDER_RUNTIME);
    /// ```
    OrderError {
        Self::Unsupported { .. } => ORDER_UNSUPPORTED,
        Self::NotOrdered { .. } => ORDER_NOT_ORDERED,
        Self::NoEvent { .. } => ORDER_NO_EVENT,
        Self::Runtime { .. } => ORDER_RUNTIME,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (5xx, `DLPACK_ABI_METADATA_*` in C).
    ///
    /// ```
    /// use dlpack_abi::arrow::MetadataError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = MetadataError::NegativeCount { count: -1 };
    /// assert_eq!(error.code(), ErrorCode::METADATA_NEGATIVE_COUNT);
    /// ```
    MetadataError {
        Self::Truncated { .. } => METADATA_TRUNCATED,
        Self::NegativeCount { .. } => METADATA_NEGATIVE_COUNT,
        Self::NegativeLength { .. } => METADATA_NEGATIVE_LENGTH,
        Self::KeyNotUtf8 { .. } => METADATA_KEY_NOT_UTF8,
        Self::TooLarge => METADATA_TOO_LARGE,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (6xx, `DLPACK_ABI_ARROW_*` in C); for
    /// [`Metadata`](Self::Metadata), the code of the [`MetadataError`] it holds.
    ///
    /// ```
    /// use dlpack_abi::arrow::{MetadataError, ValidationError};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(ValidationError::Released.code(), ErrorCode::ARROW_RELEASED);
    /// let error = ValidationError::Metadata(MetadataError::TooLarge);
    /// assert_eq!(error.code(), ErrorCode::METADATA_TOO_LARGE);
    /// ```
    ValidationError {
        Self::NullPointer => ARROW_NULL_POINTER,
        Self::Released => ARROW_RELEASED,
        Self::TooDeep => ARROW_TOO_DEEP,
        Self::TooManyNodes => ARROW_TOO_MANY_NODES,
        Self::NullCallback { .. } => ARROW_NULL_CALLBACK,
        Self::NullFormat => ARROW_NULL_FORMAT,
        Self::InvalidFormat { .. } => ARROW_INVALID_FORMAT,
        Self::NameNotUtf8 => ARROW_NAME_NOT_UTF8,
        Self::DictionaryIndex { .. } => ARROW_DICTIONARY_INDEX,
        Self::NegativeChildren { .. } => ARROW_NEGATIVE_CHILDREN,
        Self::NullChildren => ARROW_NULL_CHILDREN,
        Self::NullChild { .. } => ARROW_NULL_CHILD,
        Self::ReleasedChild { .. } => ARROW_RELEASED_CHILD,
        Self::ReleasedDictionary => ARROW_RELEASED_DICTIONARY,
        Self::ChildCount { .. } => ARROW_CHILD_COUNT,
        Self::ExtensionMetadata { .. } => ARROW_EXTENSION_METADATA,
        Self::TensorJson { .. } => ARROW_TENSOR_JSON,
        Self::TensorParameterMissing { .. } => ARROW_TENSOR_PARAMETER_MISSING,
        Self::TensorParameter { .. } => ARROW_TENSOR_PARAMETER,
        Self::NegativeLength { .. } => ARROW_NEGATIVE_LENGTH,
        Self::NegativeOffset { .. } => ARROW_NEGATIVE_OFFSET,
        Self::InvalidNullCount { .. } => ARROW_INVALID_NULL_COUNT,
        Self::BufferCount { .. } => ARROW_BUFFER_COUNT,
        Self::TooManyBuffers { .. } => ARROW_TOO_MANY_BUFFERS,
        Self::NullBuffers => ARROW_NULL_BUFFERS,
        Self::NullBuffer { .. } => ARROW_NULL_BUFFER,
        Self::SizeOverflow => ARROW_SIZE_OVERFLOW,
        Self::ChildTooShort { .. } => ARROW_CHILD_TOO_SHORT,
        Self::DictionaryMismatch => ARROW_DICTIONARY_MISMATCH,
        Self::SchemaMismatch => ARROW_SCHEMA_MISMATCH,
        Self::InvalidSource { .. } => ARROW_INVALID_SOURCE,
        Self::DeviceMismatch { .. } => ARROW_DEVICE_MISMATCH,
    }
    wraps {
        Self::Metadata(error) => error,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (7xx, `DLPACK_ABI_READ_*` in C).
    ///
    /// ```
    /// use dlpack_abi::arrow::ReadError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(ReadError::Misaligned { index: 1 }.code(), ErrorCode::READ_MISALIGNED);
    /// ```
    ReadError {
        Self::NotHostAccessible { .. } => READ_NOT_HOST_ACCESSIBLE,
        Self::TypeMismatch { .. } => READ_TYPE_MISMATCH,
        Self::Misaligned { .. } => READ_MISALIGNED,
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (8xx, `DLPACK_ABI_BRIDGE_*` in C); for
    /// [`Arrow`](Self::Arrow) and [`Tensor`](Self::Tensor), the code of the error they hold.
    ///
    /// ```
    /// use dlpack_abi::arrow::BridgeError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// assert_eq!(BridgeError::ZeroDims.code(), ErrorCode::BRIDGE_ZERO_DIMS);
    /// ```
    BridgeError {
        Self::NullsPresent { .. } => BRIDGE_NULLS_PRESENT,
        Self::DictionaryEncoded => BRIDGE_DICTIONARY_ENCODED,
        Self::UnsupportedType { .. } => BRIDGE_UNSUPPORTED_TYPE,
        Self::UnsupportedDtype { .. } => BRIDGE_UNSUPPORTED_DTYPE,
        Self::NotContiguous => BRIDGE_NOT_CONTIGUOUS,
        Self::ZeroDims => BRIDGE_ZERO_DIMS,
        Self::OffsetNotRepresentable { .. } => BRIDGE_OFFSET_NOT_REPRESENTABLE,
        Self::Misaligned => BRIDGE_MISALIGNED,
        Self::PendingEvent => BRIDGE_PENDING_EVENT,
        Self::EventNotAttachable => BRIDGE_EVENT_NOT_ATTACHABLE,
        Self::DeviceNotInArrow { .. } => BRIDGE_DEVICE_NOT_IN_ARROW,
        Self::DeviceIdOutOfRange { .. } => BRIDGE_DEVICE_ID_OUT_OF_RANGE,
    }
    wraps {
        Self::Arrow(error) => error,
        Self::Tensor(error) => error,
    }
}

codes! {
    /// The stable [`ErrorCode`] of the error this one holds.
    ///
    /// ```
    /// use dlpack_abi::arrow::{ArrowError, ReadError};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = ArrowError::from(ReadError::Misaligned { index: 1 });
    /// assert_eq!(error.code(), ErrorCode::READ_MISALIGNED);
    /// ```
    ArrowError {}
    wraps {
        Self::Validation(error) => error,
        Self::Read(error) => error,
        Self::Bridge(error) => error,
    }
}

codes! {
    /// This error's stable [`ErrorCode`]: [`STREAM_PRODUCER`](ErrorCode::STREAM_PRODUCER)
    /// for the producer's error (its errno is in the [`ProducerError`]), else the code of the
    /// [`ValidationError`].
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError, StreamError};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = StreamError::Producer(ProducerError::code_only(errno::EIO));
    /// assert_eq!(error.code(), ErrorCode::STREAM_PRODUCER);
    /// ```
    StreamError {
        Self::Producer(_) => STREAM_PRODUCER,
    }
    wraps {
        Self::Invalid(error) => error,
    }
}

impl HasErrorCode for ProducerError {
    /// Always [`ErrorCode::STREAM_PRODUCER`]: the producer's own code is an errno
    /// ([`ProducerError::code`]).
    ///
    /// ```
    /// use dlpack_abi::arrow::{errno, ProducerError};
    /// use dlpack_abi::error_code::{ErrorCode, HasErrorCode};
    ///
    /// let error = ProducerError::code_only(errno::ENOMEM);
    /// assert_eq!(error.error_code(), ErrorCode::STREAM_PRODUCER);
    /// assert_eq!(error.code(), errno::ENOMEM);
    /// ```
    fn error_code(&self) -> ErrorCode {
        ErrorCode::STREAM_PRODUCER
    }
}

codes! {
    /// This error's stable [`ErrorCode`] (C `DLPACK_ABI_ACCESS_HOOK_INSTALLED`).
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{Export, ReleaseHook};
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// static FIRST: ReleaseHook = ReleaseHook { released: |_| {} };
    /// static SECOND: ReleaseHook = ReleaseHook { released: |_| {} };
    /// let mut a = Export::new(vec![1u8], &[1]).finish().unwrap();
    /// a.track(&FIRST).unwrap();
    /// let mut b = Export::new(vec![2u8], &[1]).finish().unwrap();
    /// assert_eq!(b.track(&SECOND).unwrap_err().code(), ErrorCode::ACCESS_HOOK_INSTALLED);
    /// # }
    /// ```
    HookInstalled {
        Self { .. } => ACCESS_HOOK_INSTALLED,
    }
}

#[cfg(feature = "alloc")]
impl crate::dlpack::IntoLegacyError {
    /// The stable [`ErrorCode`] of [`error`](Self::error), why the tensor cannot be legacy.
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// use dlpack_abi::dlpack::Export;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let frozen = Export::new(vec![0u8], &[1]).read_only().finish()?;
    /// let refused = frozen.into_legacy().unwrap_err();
    /// assert_eq!(refused.code(), ErrorCode::EXPORT_FLAGS_NOT_REPRESENTABLE);
    /// # Ok(()) }
    /// ```
    pub fn code(&self) -> ErrorCode {
        self.error().code()
    }
}

#[cfg(feature = "alloc")]
impl HasErrorCode for crate::dlpack::IntoLegacyError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

#[cfg(feature = "std")]
impl crate::arrow::AsyncStreamError {
    /// This error's stable [`ErrorCode`]: [`STREAM_PRODUCER`](ErrorCode::STREAM_PRODUCER) for
    /// the producer's error, [`STREAM_PROTOCOL`](ErrorCode::STREAM_PROTOCOL) for a broken
    /// protocol, else the code of the [`ValidationError`].
    ///
    /// ```
    /// use dlpack_abi::arrow::AsyncStreamError;
    /// use dlpack_abi::error_code::ErrorCode;
    ///
    /// let error = AsyncStreamError::Protocol("on_next_task after on_error");
    /// assert_eq!(error.code(), ErrorCode::STREAM_PROTOCOL);
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::Producer(_) => ErrorCode::STREAM_PRODUCER,
            Self::Invalid(error) => error.code(),
            Self::Protocol(_) => ErrorCode::STREAM_PROTOCOL,
        }
    }
}

#[cfg(feature = "std")]
impl HasErrorCode for crate::arrow::AsyncStreamError {
    fn error_code(&self) -> ErrorCode {
        self.code()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No two variants share a code (the wrapping ones have their inner error's), and every
    /// code but `OK` belongs to a variant.
    #[test]
    fn every_variant_has_its_own_code() {
        let mut leaves: alloc::vec::Vec<ErrorCode> = [
            ImportError::LEAF_CODES,
            AccessError::LEAF_CODES,
            HookInstalled::LEAF_CODES,
            ExportError::LEAF_CODES,
            TensorError::LEAF_CODES,
            ConsumerStreamError::LEAF_CODES,
            OrderError::LEAF_CODES,
            MetadataError::LEAF_CODES,
            ValidationError::LEAF_CODES,
            ReadError::LEAF_CODES,
            BridgeError::LEAF_CODES,
            ArrowError::LEAF_CODES,
            StreamError::LEAF_CODES,
            // AsyncStreamError::Protocol (AsyncStreamError is behind `std`).
            &[ErrorCode::STREAM_PROTOCOL],
        ]
        .concat();
        let count = leaves.len();
        leaves.sort();
        leaves.dedup();
        assert_eq!(leaves.len(), count, "two variants share a code");
        let expected: alloc::vec::Vec<ErrorCode> = ErrorCode::KNOWN[1..].to_vec();
        assert!(
            expected.iter().all(|code| (1..1000).contains(&code.0)),
            "the core's range"
        );
        assert_eq!(
            leaves, expected,
            "a code no variant has, or one not in KNOWN"
        );
        assert_eq!(ErrorCode::KNOWN[0], ErrorCode::OK);
    }

    /// Codes are stable: these values are pinned, whatever is added.
    #[test]
    fn pinned_values() {
        let pinned = [
            (ErrorCode::OK, 0, "DLPACK_ABI_OK"),
            (
                ImportError::NullTensor.code(),
                101,
                "DLPACK_ABI_IMPORT_NULL_TENSOR",
            ),
            (
                ImportError::AddressOverflow {
                    address: 1,
                    byte_size: 1,
                }
                .code(),
                115,
                "DLPACK_ABI_IMPORT_ADDRESS_OVERFLOW",
            ),
            (
                AccessError::DtypeMismatch {
                    requested: crate::raw::DLDataType {
                        code: crate::raw::kDLFloat,
                        bits: 32,
                        lanes: 1,
                    },
                    found: crate::raw::DLDataType {
                        code: crate::raw::kDLInt,
                        bits: 32,
                        lanes: 1,
                    },
                }
                .code(),
                204,
                "DLPACK_ABI_ACCESS_DTYPE_MISMATCH",
            ),
            (
                AccessError::ReadOnly.code(),
                207,
                "DLPACK_ABI_ACCESS_READ_ONLY",
            ),
            (
                ExportError::Capacity {
                    ndim: 1,
                    capacity: 0,
                }
                .code(),
                305,
                "DLPACK_ABI_EXPORT_CAPACITY",
            ),
            (
                OrderError::Runtime { call: "x", code: 1 }.code(),
                414,
                "DLPACK_ABI_ORDER_RUNTIME",
            ),
            (
                MetadataError::TooLarge.code(),
                505,
                "DLPACK_ABI_METADATA_TOO_LARGE",
            ),
            (
                ValidationError::NullPointer.code(),
                601,
                "DLPACK_ABI_ARROW_NULL_POINTER",
            ),
            (
                ValidationError::DeviceMismatch {
                    stream: crate::raw::kDLCPU,
                    array: crate::raw::kDLCUDA,
                }
                .code(),
                632,
                "DLPACK_ABI_ARROW_DEVICE_MISMATCH",
            ),
            (
                ReadError::Misaligned { index: 0 }.code(),
                703,
                "DLPACK_ABI_READ_MISALIGNED",
            ),
            (
                BridgeError::DeviceIdOutOfRange { device_id: -1 }.code(),
                812,
                "DLPACK_ABI_BRIDGE_DEVICE_ID_OUT_OF_RANGE",
            ),
            (
                ProducerError::code_only(5).error_code(),
                901,
                "DLPACK_ABI_STREAM_PRODUCER",
            ),
            (
                ErrorCode::STREAM_PROTOCOL,
                902,
                "DLPACK_ABI_STREAM_PROTOCOL",
            ),
        ];
        for (code, value, name) in pinned {
            assert_eq!((code.0, code.name()), (value, Some(name)));
        }
        // Ascending (so no value twice), and in the range this crate keeps for itself.
        assert!(ErrorCode::KNOWN.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(ErrorCode::KNOWN
            .iter()
            .all(|code| (0..10_000).contains(&code.0)));
    }

    /// Wrapping errors report their inner error's code.
    #[test]
    fn wrappers_have_the_inner_code() {
        let import = ImportError::NullShape { ndim: 2 };
        assert_eq!(TensorError::from(import).code(), import.code());
        assert_eq!(ExportError::Invalid(import).code(), import.code());
        assert_eq!(
            BridgeError::Tensor(ExportError::Invalid(import)).code(),
            import.code()
        );
        let metadata = MetadataError::KeyNotUtf8 { pair: 0 };
        let arrow = ArrowError::from(BridgeError::Arrow(ValidationError::Metadata(metadata)));
        assert_eq!(arrow.code(), ErrorCode::METADATA_KEY_NOT_UTF8);
        let stream = StreamError::Invalid(ValidationError::Released);
        assert_eq!(stream.code(), ErrorCode::ARROW_RELEASED);
    }
}
