// The table of error codes: one line of doc and one `NAME = value,` per code. The C header's
// `DLPackAbiErrorCode` is generated from this file (build/header.rs reads it line by line), and
// `layout-checks` compares the header's values with these.
//
// Values are assigned once and never renumbered or reused: a retired code keeps its number,
// unassigned. New codes go at the end of their range.

error_codes! {
    /// Success: no error.
    OK = 0,

    // ---- 1xx: ImportError (a tensor's description refused) ----
    /// The tensor pointer handed over was NULL.
    IMPORT_NULL_TENSOR = 101,
    /// The producer's DLPack major version is not 1.
    IMPORT_UNSUPPORTED_VERSION = 102,
    /// DLTensor.ndim is negative.
    IMPORT_NEGATIVE_NDIM = 103,
    /// DLTensor.ndim is above the maximum (MAX_NDIM).
    IMPORT_TOO_MANY_DIMS = 104,
    /// DLTensor.dtype.lanes is zero.
    IMPORT_ZERO_LANES = 105,
    /// DLTensor.dtype.bits is zero.
    IMPORT_ZERO_BITS = 106,
    /// A sub-byte dtype code (FP4, FP6) with a bit width other than the spec's.
    IMPORT_SUB_BYTE_BITS = 107,
    /// DLTensor.shape is NULL although ndim > 0.
    IMPORT_NULL_SHAPE = 108,
    /// An extent in DLTensor.shape is negative.
    IMPORT_NEGATIVE_EXTENT = 109,
    /// The tensor's size, in elements or bytes, does not fit in isize.
    IMPORT_SIZE_OVERFLOW = 110,
    /// DLTensor.strides is NULL although ndim > 0 and the producer is DLPack 1.2 or later.
    IMPORT_NULL_STRIDES = 111,
    /// data + byte_offset overflows the address space.
    IMPORT_BYTE_OFFSET_OVERFLOW = 112,
    /// DLTensor.data is NULL although the tensor has elements.
    IMPORT_NULL_DATA = 113,
    /// The strides reach bytes outside the address space.
    IMPORT_STRIDES_OVERFLOW = 114,
    /// A compact tensor's bytes run past the end of the address space.
    IMPORT_ADDRESS_OVERFLOW = 115,

    // ---- 2xx: AccessError (typed access refused; the tensor is untouched) ----
    /// The memory is not host-accessible.
    ACCESS_NOT_HOST_ACCESSIBLE = 201,
    /// The device's data is an opaque handle (OpenCL, Vulkan, Metal, ...), not an address.
    ACCESS_NOT_ADDRESSABLE = 202,
    /// The tensor's flags carry bits this crate does not know.
    ACCESS_UNKNOWN_FLAGS = 203,
    /// The requested type does not describe the tensor's dtype.
    ACCESS_DTYPE_MISMATCH = 204,
    /// data + byte_offset is not aligned for the requested type.
    ACCESS_MISALIGNED = 205,
    /// The strides are not contiguous in the required order.
    ACCESS_NOT_CONTIGUOUS = 206,
    /// The tensor is READ_ONLY and cannot be written.
    ACCESS_READ_ONLY = 207,
    /// Others may hold the same memory (not IS_COPIED), so it cannot be written safely.
    ACCESS_NOT_EXCLUSIVE = 208,
    /// An index has another number of coordinates than the tensor's ndim.
    ACCESS_INDEX_RANK = 209,
    /// A view with a fixed number of dimensions was requested for a tensor with another.
    ACCESS_DIMENSION_MISMATCH = 210,
    /// Mutable access through strides that may reach one element from two indices.
    ACCESS_OVERLAPPING = 211,
    /// An index is out of bounds.
    ACCESS_INDEX_OUT_OF_BOUNDS = 212,
    /// The dtype is none of those a converting read or a dtype dispatch supports.
    ACCESS_UNSUPPORTED_DTYPE = 213,
    /// A borrow registry's release hook was refused: another one is installed in this process.
    ACCESS_HOOK_INSTALLED = 214,

    // ---- 3xx: ExportError (an export refused; ExportError::Invalid has the ImportError's code) ----
    /// The strides given do not have one entry per dimension.
    EXPORT_STRIDES_LENGTH = 301,
    /// The description reaches outside the owner's buffer.
    EXPORT_OUTSIDE_BUFFER = 302,
    /// The flags cannot be represented in the requested struct (legacy tensors have none).
    EXPORT_FLAGS_NOT_REPRESENTABLE = 303,
    /// The owner's ndim changed between announcing and describing the tensor.
    EXPORT_NDIM_CHANGED = 304,
    /// More dimensions than the export's capacity.
    EXPORT_CAPACITY = 305,

    // ---- 4xx: ConsumerStreamError and OrderError (DLPack stream ordering) ----
    /// A stream was given for a device that has none (the CPU).
    STREAM_NO_STREAMS = 401,
    /// CUDA stream 0, which could mean either default stream.
    STREAM_AMBIGUOUS = 402,
    /// A stream value the device's table leaves out (ROCm 1 and 2).
    STREAM_UNSUPPORTED = 403,
    /// A stream value below -1, or a handle wider than a pointer on this target.
    STREAM_INVALID = 404,
    /// The producer cannot order its work on the requested stream.
    ORDER_UNSUPPORTED = 411,
    /// The data is ready on one stream only, and no runtime can order it for the requester.
    ORDER_NOT_ORDERED = 412,
    /// No device runtime can record the sync event an Arrow device export must carry.
    ORDER_NO_EVENT = 413,
    /// The device runtime failed.
    ORDER_RUNTIME = 414,

    // ---- 5xx: MetadataError (an Arrow metadata map refused) ----
    /// The metadata map is shorter than its counts and lengths say.
    METADATA_TRUNCATED = 501,
    /// The metadata pair count is negative.
    METADATA_NEGATIVE_COUNT = 502,
    /// A metadata key or value length is negative.
    METADATA_NEGATIVE_LENGTH = 503,
    /// A metadata key is not UTF-8.
    METADATA_KEY_NOT_UTF8 = 504,
    /// The metadata map's total size does not fit in isize.
    METADATA_TOO_LARGE = 505,

    // ---- 6xx: ValidationError (an Arrow struct refused) ----
    /// The Arrow struct pointer was NULL.
    ARROW_NULL_POINTER = 601,
    /// The Arrow struct is already released.
    ARROW_RELEASED = 602,
    /// The schema or array is nested too deeply.
    ARROW_TOO_DEEP = 603,
    /// The schema or array has too many nodes.
    ARROW_TOO_MANY_NODES = 604,
    /// A required callback is NULL.
    ARROW_NULL_CALLBACK = 605,
    /// ArrowSchema.format is NULL.
    ARROW_NULL_FORMAT = 606,
    /// ArrowSchema.format is not a valid format string.
    ARROW_INVALID_FORMAT = 607,
    /// ArrowSchema.name is not UTF-8.
    ARROW_NAME_NOT_UTF8 = 608,
    /// A dictionary's index type is not an integer.
    ARROW_DICTIONARY_INDEX = 609,
    /// n_children is negative.
    ARROW_NEGATIVE_CHILDREN = 610,
    /// children is NULL although n_children > 0.
    ARROW_NULL_CHILDREN = 611,
    /// A child pointer is NULL.
    ARROW_NULL_CHILD = 612,
    /// A child is already released.
    ARROW_RELEASED_CHILD = 613,
    /// The dictionary is already released.
    ARROW_RELEASED_DICTIONARY = 614,
    /// The number of children is not the one the format requires.
    ARROW_CHILD_COUNT = 615,
    /// An extension type's metadata is invalid.
    ARROW_EXTENSION_METADATA = 616,
    /// A tensor extension's JSON parameters are invalid.
    ARROW_TENSOR_JSON = 617,
    /// A tensor extension parameter is missing.
    ARROW_TENSOR_PARAMETER_MISSING = 618,
    /// A tensor extension parameter is invalid.
    ARROW_TENSOR_PARAMETER = 619,
    /// ArrowArray.length is negative.
    ARROW_NEGATIVE_LENGTH = 620,
    /// ArrowArray.offset is negative.
    ARROW_NEGATIVE_OFFSET = 621,
    /// ArrowArray.null_count is invalid for its length.
    ARROW_INVALID_NULL_COUNT = 622,
    /// n_buffers is not the number the format requires.
    ARROW_BUFFER_COUNT = 623,
    /// n_buffers is too large.
    ARROW_TOO_MANY_BUFFERS = 624,
    /// buffers is NULL although n_buffers > 0.
    ARROW_NULL_BUFFERS = 625,
    /// A required buffer is NULL.
    ARROW_NULL_BUFFER = 626,
    /// A buffer's size does not fit in isize.
    ARROW_SIZE_OVERFLOW = 627,
    /// A child array is shorter than its parent needs.
    ARROW_CHILD_TOO_SHORT = 628,
    /// The array's dictionary does not match the schema's.
    ARROW_DICTIONARY_MISMATCH = 629,
    /// The array does not match its schema.
    ARROW_SCHEMA_MISMATCH = 630,
    /// What was to be exported as Arrow is invalid.
    ARROW_INVALID_SOURCE = 631,
    /// A stream's array is on another device type than the stream.
    ARROW_DEVICE_MISMATCH = 632,

    // ---- 7xx: ReadError (typed reading of an Arrow array refused) ----
    /// The Arrow array's memory is not host-accessible.
    READ_NOT_HOST_ACCESSIBLE = 701,
    /// The Arrow array's type is not the one requested.
    READ_TYPE_MISMATCH = 702,
    /// An Arrow buffer is not aligned for the requested type.
    READ_MISALIGNED = 703,

    // ---- 8xx: BridgeError (DLPack <-> Arrow bridge refused) ----
    /// The Arrow array has nulls, which a DLPack tensor cannot express.
    BRIDGE_NULLS_PRESENT = 801,
    /// The Arrow array is dictionary-encoded.
    BRIDGE_DICTIONARY_ENCODED = 802,
    /// The Arrow type has no DLPack dtype.
    BRIDGE_UNSUPPORTED_TYPE = 803,
    /// The DLPack dtype has no Arrow type.
    BRIDGE_UNSUPPORTED_DTYPE = 804,
    /// The tensor is not compact row-major.
    BRIDGE_NOT_CONTIGUOUS = 805,
    /// The tensor has no dimensions (a 0-d tensor has no Arrow length).
    BRIDGE_ZERO_DIMS = 806,
    /// An offset does not fit the other side (Arrow offset or DLPack byte_offset).
    BRIDGE_OFFSET_NOT_REPRESENTABLE = 807,
    /// The values buffer is not aligned for the element type.
    BRIDGE_MISALIGNED = 808,
    /// The device array has a pending sync_event: wait on it before bridging.
    BRIDGE_PENDING_EVENT = 809,
    /// A sync_event cannot be attached (CPU data, or one is already attached).
    BRIDGE_EVENT_NOT_ATTACHABLE = 810,
    /// The DLPack device type has no Arrow value.
    BRIDGE_DEVICE_NOT_IN_ARROW = 811,
    /// The Arrow device_id does not fit DLPack's int32_t.
    BRIDGE_DEVICE_ID_OUT_OF_RANGE = 812,

    // ---- 9xx: Arrow streams ----
    /// An Arrow stream's producer returned an error (its errno and message).
    STREAM_PRODUCER = 901,
    /// An async Arrow stream's producer broke the protocol.
    STREAM_PROTOCOL = 902,
}
