/* dlpack_abi.h: DLPack 1.3 and the Apache Arrow C data, stream, device and async interfaces.
 *
 * Generated from the Rust definitions of dlpack-abi 0.1.0 by its build script (cbindgen);
 * do not edit. Regenerate with: DLPACK_ABI_BLESS=1 cargo test --features header --test header
 *
 * A drop-in for dlpack/dlpack.h and arrow/c/abi.h: each part sits behind the upstream include
 * guard, so this header and the upstream ones may be included together, in any order.
 *
 * Enum values on DLPack's main branch that no release has yet (kDLBcomplex, kDLTPU,
 * kDLTPUHost, kDLAscend) are declared only when DLPACK_ABI_UNRELEASED is defined, so that
 * by default the enums are exactly DLPack 1.3's.
 *
 * The last part (DLPACK_ABI_ERRORS_H_) is dlpack-abi's own: DLPackAbiErrorCode, stable error
 * codes, and DLPackAbiErrorReport, which carries a code and its message out of an FFI call.
 */
#ifndef DLPACK_ABI_H_
#define DLPACK_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

// Major version of the ABI mirrored here (C `DLPACK_MAJOR_VERSION`). A
// `DLManagedTensorVersioned` whose `version.major` differs
// has an unknown layout after `flags`: only its `deleter` may be called.
#define DLPACK_MAJOR_VERSION 1

// Minor version of the ABI mirrored here (C `DLPACK_MINOR_VERSION`). Minor versions add enum
// values, flags and API; they never move a field.
#define DLPACK_MINOR_VERSION 3

// A DLPack version, as written by the producer into a versioned tensor or exchange API table.
typedef struct {
  // Layout version; a different major means an incompatible layout.
  uint32_t major;
  // Additions within the same layout.
  uint32_t minor;
} DLPackVersion;
// The version this crate mirrors, 1.3.
#define DLPackVersion_CURRENT (DLPackVersion){ .major = DLPACK_MAJOR_VERSION, .minor = DLPACK_MINOR_VERSION }

#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  // CPU memory (plain host memory).
  kDLCPU = 1,
  // CUDA device memory.
  kDLCUDA = 2,
  // Pinned host memory allocated by `cudaMallocHost`.
  kDLCUDAHost = 3,
  // OpenCL device memory; `data` is a `cl_mem` handle.
  kDLOpenCL = 4,
  // Vulkan buffer.
  kDLVulkan = 7,
  // Metal memory on Apple GPUs.
  kDLMetal = 8,
  // Verilog simulator buffer.
  kDLVPI = 9,
  // ROCm (HIP) device memory.
  kDLROCM = 10,
  // Pinned host memory allocated by `hipMallocHost`.
  kDLROCMHost = 11,
  // Reserved extension device; its meaning is implementation-defined.
  kDLExtDev = 12,
  // CUDA managed (unified) memory from `cudaMallocManaged`.
  kDLCUDAManaged = 13,
  // oneAPI unified shared memory on a non-partitioned device.
  kDLOneAPI = 14,
  // WebGPU buffer.
  kDLWebGPU = 15,
  // Qualcomm Hexagon DSP memory.
  kDLHexagon = 16,
  // Microsoft MAIA device memory.
  kDLMAIA = 17,
  // AWS Trainium device memory.
  kDLTrn = 18,
#ifdef DLPACK_ABI_UNRELEASED
  // Google TPU device memory. Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#188).
  // Not host-accessible.
  kDLTPU = 19,
  // Pinned host memory of a Google TPU runtime (JAX exports `pinned_host` arrays with it). Not in
  // a DLPack release yet: on upstream `main` (dmlc/dlpack#188). Host-accessible, as `kDLCUDAHost`.
  kDLTPUHost = 20,
  // Huawei Ascend NPU memory. Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#189).
  // Not host-accessible.
  kDLAscend = 21,
#endif
} DLDeviceType;

// A device: a `DLDeviceType` and an ordinal within it.
typedef struct {
  // The kind of memory.
  DLDeviceType device_type;
  // Device ordinal, numbered by the producer; 0 for plain CPU, pinned and managed memory.
  int32_t device_id;
} DLDevice;

typedef enum {
  // Signed integer.
  kDLInt = 0U,
  // Unsigned integer.
  kDLUInt = 1U,
  // IEEE 754 binary floating point.
  kDLFloat = 2U,
  // Opaque handle whose meaning both sides must agree on; reserved for testing.
  kDLOpaqueHandle = 3U,
  // bfloat16; `bits` is 16.
  kDLBfloat = 4U,
  // Complex number stored as two consecutive parts; `bits` counts both (complex64 is 64).
  kDLComplex = 5U,
  // Boolean, one byte per element; `bits` is 8.
  kDLBool = 6U,
  // FP8 e3m4; `bits` is 8.
  kDLFloat8_e3m4 = 7U,
  // FP8 e4m3; `bits` is 8.
  kDLFloat8_e4m3 = 8U,
  // FP8 e4m3b11fnuz; `bits` is 8.
  kDLFloat8_e4m3b11fnuz = 9U,
  // FP8 e4m3fn; `bits` is 8.
  kDLFloat8_e4m3fn = 10U,
  // FP8 e4m3fnuz; `bits` is 8.
  kDLFloat8_e4m3fnuz = 11U,
  // FP8 e5m2; `bits` is 8.
  kDLFloat8_e5m2 = 12U,
  // FP8 e5m2fnuz; `bits` is 8.
  kDLFloat8_e5m2fnuz = 13U,
  // FP8 e8m0fnu (exponent only); `bits` is 8.
  kDLFloat8_e8m0fnu = 14U,
  // FP6 e2m3fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
  kDLFloat6_e2m3fn = 15U,
  // FP6 e3m2fn; `bits` must be 6. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
  kDLFloat6_e3m2fn = 16U,
  // FP4 e2m1fn; `bits` must be 4. Packed unless `IS_SUBBYTE_TYPE_PADDED` is set.
  kDLFloat4_e2m1fn = 17U,
#ifdef DLPACK_ABI_UNRELEASED
  // Complex number of two bfloat16 parts, stored as `kDLComplex` is; `bits` counts both (32).
  // Not in a DLPack release yet: on upstream `main` (dmlc/dlpack#187).
  kDLBcomplex = 18U,
#endif
} DLDataTypeCode;

// The element type of a tensor: `{kDLFloat, 32, 1}` is `float`, `{kDLFloat, 32, 4}` a float4
// vector, `{kDLComplex, 64, 1}` `complex<float>`.
typedef struct {
  // Type code (C `uint8_t` holding a `DLDataTypeCode` value).
  uint8_t code;
  // Bits per lane.
  uint8_t bits;
  // Lanes of a vector type; 1 for scalars.
  uint16_t lanes;
} DLDataType;

// A non-owning view of a strided array. It owns nothing; `shape` and `strides` live as long as
// whatever produced the view (for a managed tensor: until its deleter runs).
typedef struct {
  // Base of the allocation, or an opaque handle (`cl_mem`, Metal buffer) on devices without
  // direct addressing. The first element is at `data + byte_offset`. May be NULL for an empty
  // tensor.
  void *data;
  // Where `data` lives.
  DLDevice device;
  // Number of dimensions; never negative in a valid tensor.
  int32_t ndim;
  // Element type.
  DLDataType dtype;
  // `ndim` extents; may be NULL when `ndim == 0`.
  int64_t *shape;
  // `ndim` strides in elements (not bytes), possibly negative or zero. NULL means compact
  // row-major, but only from legacy producers and versioned ones older than 1.2.
  int64_t *strides;
  // Bytes from `data` to the first element.
  uint64_t byte_offset;
} DLTensor;

// The legacy managed tensor (deprecated since v0.8, still the `"dltensor"` capsule): a
// `DLTensor` plus the producer's means to free it. It has no version and no flags.
typedef struct DLManagedTensor {
  // The view; valid until `deleter` runs.
  DLTensor dl_tensor;
  // Producer's context, for the deleter's use; may be NULL.
  void *manager_ctx;
  // Frees `manager_ctx` and this struct. The consumer calls it exactly once when done; NULL
  // means there is nothing to call.
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

// Bit 0 of `flags`: the consumer must not write through the view.
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)

// Bit 1 of `flags`: the producer made a copy, which the consumer owns until the deleter runs.
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

// Bit 2 of `flags`: a sub-byte type (FP4, FP6) is stored one element per byte, not packed.
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

// The versioned managed tensor (the `"dltensor_versioned"` capsule). `version`, `manager_ctx`,
// `deleter` and `flags` are a permanent prefix: whatever `version.major` says, the deleter can
// be found; nothing after `flags` may be read when the major differs from 1.
typedef struct DLManagedTensorVersioned {
  // The producer's DLPack version; check `major` before reading anything else.
  DLPackVersion version;
  // Producer's context, for the deleter's use; may be NULL.
  void *manager_ctx;
  // Frees `manager_ctx` and this struct. The consumer calls it exactly once when done, from
  // any thread; NULL means there is nothing to call.
  void (*deleter)(struct DLManagedTensorVersioned *self);
  // Bit set of `DLPACK_FLAG_BITMASK_*` values (see `DLPackFlags`); 0 by default.
  uint64_t flags;
  // The view; valid until `deleter` runs. Last, so that a future major can change it.
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

// Allocates a new owning tensor in the producer, reading only `dtype`, `ndim`, `shape` and
// `device` of `prototype`. On success writes `*out` and returns 0; on failure calls
// `SetError(error_ctx, kind, message)` and returns non-zero.
typedef int (*DLPackManagedTensorAllocator)(DLTensor *prototype,
                                            DLManagedTensorVersioned **out,
                                            void *error_ctx,
                                            void (*SetError)(void *error_ctx,
                                                             const char *kind,
                                                             const char *message));

// Exports a `PyObject*` of the table's type as an owning tensor written to `*out`, without
// stream synchronisation. On failure sets a Python exception and returns non-zero.
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void *py_object, DLManagedTensorVersioned **out);

// Fills the caller's `DLTensor` with a non-owning view of a `PyObject*`, valid only until
// control returns to the object's owner.
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void *py_object, DLTensor *out);

// Writes the producer's current work stream for a device (NULL is allowed for CPU).
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type,
                                       int32_t device_id,
                                       void **out_current_stream);

// Imports an owning tensor into the producer's tensor type, writing a new `PyObject*` to
// `*out_py_object`. Takes ownership of `tensor` whether or not it succeeds.
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned *tensor,
                                                   void **out_py_object);

// The part of an exchange API table that stays the same across versions.
typedef struct DLPackExchangeAPIHeader {
  // Version of the table; check `major` before using the rest.
  DLPackVersion version;
  // A table of an older major version, or NULL.
  struct DLPackExchangeAPIHeader *prev_api;
} DLPackExchangeAPIHeader;

// The exchange API table. Producers keep it in static storage for the life of the process.
typedef struct DLPackExchangeAPI {
  // Version and link to older tables.
  struct DLPackExchangeAPIHeader header;
  // Non-NULL.
  DLPackManagedTensorAllocator managed_tensor_allocator;
  // Non-NULL.
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  // Non-NULL.
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  // May be NULL: the producer offers no non-owning fast path.
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  // Non-NULL.
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

#endif  // DLPACK_DLPACK_H_

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

// Schema flag: the ordering of dictionary indices is meaningful.
#define ARROW_FLAG_DICTIONARY_ORDERED 1

// Schema flag: the field is semantically nullable.
#define ARROW_FLAG_NULLABLE 2

// Schema flag: map keys are sorted within each map value.
#define ARROW_FLAG_MAP_KEYS_SORTED 4

// The type of an array, and of its children. Everything it points to is owned by the
// producer and freed by `release`.
struct ArrowSchema {
  // Mandatory NUL-terminated UTF-8 format string (`"f"` is float32, `"+w:4"` a fixed-size list).
  const char *format;
  // Optional NUL-terminated UTF-8 field name; NULL or empty.
  const char *name;
  // Optional binary key/value map (native-endian `int32` counts and lengths); NULL when absent.
  const char *metadata;
  // Bit set of `ARROW_FLAG_*` values; unknown bits must be kept.
  int64_t flags;
  // Number of children.
  int64_t n_children;
  // `n_children` pointers to the child schemas; NULL only when there are none.
  struct ArrowSchema **children;
  // The dictionary's value type, non-NULL iff the field is dictionary-encoded.
  struct ArrowSchema *dictionary;
  // Releases this schema, its children and dictionary, and sets itself to NULL. NULL means
  // already released. Only the consumer of the base struct calls it.
  void (*release)(struct ArrowSchema*);
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

// The data of an array, and of its children. Buffers are immutable and owned by the producer
// until `release`.
struct ArrowArray {
  // Logical length in elements.
  int64_t length;
  // Number of null elements, or -1 if not computed.
  int64_t null_count;
  // Logical offset into the buffers, in elements; never negative.
  int64_t offset;
  // Number of buffers, fixed by the data type's layout.
  int64_t n_buffers;
  // Number of children.
  int64_t n_children;
  // `n_buffers` buffer pointers; an entry may be NULL only for an absent validity bitmap or a
  // zero-size buffer.
  const void **buffers;
  // `n_children` pointers to the child arrays.
  struct ArrowArray **children;
  // The dictionary values, non-NULL iff the array is dictionary-encoded.
  struct ArrowArray *dictionary;
  // Releases this array, its children and dictionary, and sets itself to NULL. NULL means
  // already released. Only the consumer of the base struct calls it.
  void (*release)(struct ArrowArray*);
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

// The kind of memory an array's buffers live in (C `typedef int32_t ArrowDeviceType`).
//
// Values are those of DLPack's `DLDeviceType`. Newer producers may send values this crate does
// not name, so this is an open newtype; an unknown value prints as `ArrowDeviceType(17)`.
typedef int32_t ArrowDeviceType;

// CPU memory; `sync_event` must be NULL.
#define ARROW_DEVICE_CPU 1

// CUDA device memory; `sync_event` points to a `cudaEvent_t`.
#define ARROW_DEVICE_CUDA 2

// Pinned host memory from `cudaMallocHost`; `sync_event` points to a `cudaEvent_t`.
#define ARROW_DEVICE_CUDA_HOST 3

// OpenCL device memory; `sync_event` points to a `cl_event`.
#define ARROW_DEVICE_OPENCL 4

// Vulkan buffer; `sync_event` points to a `VkEvent`.
#define ARROW_DEVICE_VULKAN 7

// Metal memory; `sync_event` points to an `MTLEvent`.
#define ARROW_DEVICE_METAL 8

// Verilog simulator buffer.
#define ARROW_DEVICE_VPI 9

// ROCm device memory; `sync_event` points to a `hipEvent_t`.
#define ARROW_DEVICE_ROCM 10

// Pinned host memory from `hipMallocHost`; `sync_event` points to a `hipEvent_t`.
#define ARROW_DEVICE_ROCM_HOST 11

// Reserved extension device; the producer documents what `sync_event` means.
#define ARROW_DEVICE_EXT_DEV 12

// CUDA managed memory; `sync_event` points to a `cudaEvent_t`.
#define ARROW_DEVICE_CUDA_MANAGED 13

// oneAPI unified shared memory; `sync_event` points to a `sycl::event`.
#define ARROW_DEVICE_ONEAPI 14

// WebGPU buffer.
#define ARROW_DEVICE_WEBGPU 15

// Qualcomm Hexagon DSP memory.
#define ARROW_DEVICE_HEXAGON 16

// An `ArrowArray` whose buffers live on one device. Only buffer contents are device memory;
// the structs, pointer arrays and strings are CPU memory. Released iff `array.release` is NULL.
struct ArrowDeviceArray {
  // The array, by value; its `release` releases the whole device array.
  struct ArrowArray array;
  // Device ordinal; -1 for devices without ids (Arrow C++ uses -1 for CPU).
  int64_t device_id;
  // The kind of memory the buffers live in.
  ArrowDeviceType device_type;
  // NULL when no synchronisation is needed; otherwise points to the device's event object
  // (e.g. a `cudaEvent_t`), owned by the producer until release. Wait on it before reading.
  void *sync_event;
  // Reserved; producers write zeros, consumers must not reject other values.
  int64_t reserved[3];
};

#endif  // ARROW_C_DEVICE_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

// A pull-style stream of arrays sharing one schema. Not thread-safe: calls must be serialised.
// Released iff `release` is NULL; releasing it leaves arrays already pulled alive.
struct ArrowArrayStream {
  // Writes the stream's schema to `out`, which the caller then owns. Returns 0 or an errno.
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema *out);
  // Writes the next array to `out` (released, i.e. `out.release == NULL`, at end of stream).
  // Returns 0 or an errno.
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray *out);
  // After a non-zero return: a UTF-8 message or NULL, valid until the next call on the stream.
  const char *(*get_last_error)(struct ArrowArrayStream*);
  // Releases the stream and sets itself to NULL.
  void (*release)(struct ArrowArrayStream*);
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

// A pull-style stream of device arrays, all on devices of one type. Not thread-safe.
// Released iff `release` is NULL.
struct ArrowDeviceArrayStream {
  // The device type of every array this stream yields.
  ArrowDeviceType device_type;
  // Writes the stream's schema (CPU data) to `out`. Returns 0 or an errno.
  int (*get_schema)(struct ArrowDeviceArrayStream *self, struct ArrowSchema *out);
  // Writes the next device array to `out` (`out.array.release == NULL` at end of stream).
  // Returns 0 or an errno.
  int (*get_next)(struct ArrowDeviceArrayStream *self, struct ArrowDeviceArray *out);
  // After a non-zero return: a UTF-8 message or NULL, valid until the next call on the stream.
  const char *(*get_last_error)(struct ArrowDeviceArrayStream *self);
  // Releases the stream and sets itself to NULL.
  void (*release)(struct ArrowDeviceArrayStream *self);
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

#endif  // ARROW_C_DEVICE_STREAM_INTERFACE

#ifndef ARROW_C_ASYNC_STREAM_INTERFACE
#define ARROW_C_ASYNC_STREAM_INTERFACE

// One unit of data a producer hands to `on_next_task`, owned by the producer. Only valid during
// that call unless copied; `extract_data` must be called exactly once and does the cleanup.
struct ArrowAsyncTask {
  // Moves the task's data into `out` (which the caller then owns) and cleans the task up.
  // Returns 0 or an errno.
  int (*extract_data)(struct ArrowAsyncTask *self, struct ArrowDeviceArray *out);
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

// The producer's side of an async stream, owned by the producer and valid until just before
// the handler's `release` is called.
struct ArrowAsyncProducer {
  // The device type of every array the producer delivers.
  ArrowDeviceType device_type;
  // Asks for `n` (> 0) more tasks; back-pressure.
  void (*request)(struct ArrowAsyncProducer *self, int64_t n);
  // Asks the producer to stop; idempotent and thread-safe.
  void (*cancel)(struct ArrowAsyncProducer *self);
  // NULL, or extra metadata in the schema metadata encoding, valid for the producer's life.
  const char *additional_metadata;
  // Producer's bookkeeping; consumers never touch it.
  void *private_data;
};

// The consumer's callbacks for an async stream. The consumer allocates it and hands it to the
// producer, which calls `release` last.
struct ArrowAsyncDeviceStreamHandler {
  // Called once with the stream's schema, which the handler must move out. Non-zero stops
  // the stream.
  int (*on_schema)(struct ArrowAsyncDeviceStreamHandler *self, struct ArrowSchema *stream_schema);
  // Called per task; `task == NULL` means end of stream. `task` and `metadata` are valid only
  // during the call. Non-zero stops the stream.
  int (*on_next_task)(struct ArrowAsyncDeviceStreamHandler *self,
                      struct ArrowAsyncTask *task,
                      const char *metadata);
  // Reports an errno-style error; the strings are valid only during the call. `release`
  // follows.
  void (*on_error)(struct ArrowAsyncDeviceStreamHandler *self,
                   int code,
                   const char *message,
                   const char *metadata);
  // Last call the producer makes; frees the handler's resources.
  void (*release)(struct ArrowAsyncDeviceStreamHandler *self);
  // Set by the producer before any callback other than `release`.
  struct ArrowAsyncProducer *producer;
  // Consumer's bookkeeping.
  void *private_data;
};

#endif  // ARROW_C_ASYNC_STREAM_INTERFACE

#ifndef DLPACK_ABI_ERRORS_H_
#define DLPACK_ABI_ERRORS_H_

// A dlpack-abi error code: 0 on success, else why a call failed, one value per error
// (1xx DLPack import, 2xx typed access, 3xx export, 4xx DLPack streams, 5xx Arrow metadata,
// 6xx Arrow validation, 7xx Arrow reads, 8xx the DLPack-Arrow bridge, 9xx Arrow streams).
// 1000 to 1999 belong to the dlpack-abi integration crates (dlpack-abi-arrow-rs, ...), which
// declare their own codes.
//
// Stable within a major version of dlpack-abi: values are never renumbered or reused; new
// codes may be added (a switch needs a default). dlpack-abi and its integrations assign only
// 0 to 9999: negative values and values from 10000 on are free for an FFI crate's own
// errors. Functions and struct fields carry a code as int32_t.
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  // Success: no error.
  DLPACK_ABI_OK = 0,

  // ---- 1xx: ImportError (a tensor's description refused) ----
  // The tensor pointer handed over was NULL.
  DLPACK_ABI_IMPORT_NULL_TENSOR = 101,
  // The producer's DLPack major version is not 1.
  DLPACK_ABI_IMPORT_UNSUPPORTED_VERSION = 102,
  // DLTensor.ndim is negative.
  DLPACK_ABI_IMPORT_NEGATIVE_NDIM = 103,
  // DLTensor.ndim is above the maximum (MAX_NDIM).
  DLPACK_ABI_IMPORT_TOO_MANY_DIMS = 104,
  // DLTensor.dtype.lanes is zero.
  DLPACK_ABI_IMPORT_ZERO_LANES = 105,
  // DLTensor.dtype.bits is zero.
  DLPACK_ABI_IMPORT_ZERO_BITS = 106,
  // A sub-byte dtype code (FP4, FP6) with a bit width other than the spec's.
  DLPACK_ABI_IMPORT_SUB_BYTE_BITS = 107,
  // DLTensor.shape is NULL although ndim > 0.
  DLPACK_ABI_IMPORT_NULL_SHAPE = 108,
  // An extent in DLTensor.shape is negative.
  DLPACK_ABI_IMPORT_NEGATIVE_EXTENT = 109,
  // The tensor's size, in elements or bytes, does not fit in isize.
  DLPACK_ABI_IMPORT_SIZE_OVERFLOW = 110,
  // DLTensor.strides is NULL although ndim > 0 and the producer is DLPack 1.2 or later.
  DLPACK_ABI_IMPORT_NULL_STRIDES = 111,
  // data + byte_offset overflows the address space.
  DLPACK_ABI_IMPORT_BYTE_OFFSET_OVERFLOW = 112,
  // DLTensor.data is NULL although the tensor has elements.
  DLPACK_ABI_IMPORT_NULL_DATA = 113,
  // The strides reach bytes outside the address space.
  DLPACK_ABI_IMPORT_STRIDES_OVERFLOW = 114,
  // A compact tensor's bytes run past the end of the address space.
  DLPACK_ABI_IMPORT_ADDRESS_OVERFLOW = 115,

  // ---- 2xx: AccessError (typed access refused; the tensor is untouched) ----
  // The memory is not host-accessible.
  DLPACK_ABI_ACCESS_NOT_HOST_ACCESSIBLE = 201,
  // The device's data is an opaque handle (OpenCL, Vulkan, Metal, ...), not an address.
  DLPACK_ABI_ACCESS_NOT_ADDRESSABLE = 202,
  // The tensor's flags carry bits this crate does not know.
  DLPACK_ABI_ACCESS_UNKNOWN_FLAGS = 203,
  // The requested type does not describe the tensor's dtype.
  DLPACK_ABI_ACCESS_DTYPE_MISMATCH = 204,
  // data + byte_offset is not aligned for the requested type.
  DLPACK_ABI_ACCESS_MISALIGNED = 205,
  // The strides are not contiguous in the required order.
  DLPACK_ABI_ACCESS_NOT_CONTIGUOUS = 206,
  // The tensor is READ_ONLY and cannot be written.
  DLPACK_ABI_ACCESS_READ_ONLY = 207,
  // Others may hold the same memory (not IS_COPIED), so it cannot be written safely.
  DLPACK_ABI_ACCESS_NOT_EXCLUSIVE = 208,
  // An index has another number of coordinates than the tensor's ndim.
  DLPACK_ABI_ACCESS_INDEX_RANK = 209,
  // A view with a fixed number of dimensions was requested for a tensor with another.
  DLPACK_ABI_ACCESS_DIMENSION_MISMATCH = 210,
  // Mutable access through strides that may reach one element from two indices.
  DLPACK_ABI_ACCESS_OVERLAPPING = 211,
  // An index is out of bounds.
  DLPACK_ABI_ACCESS_INDEX_OUT_OF_BOUNDS = 212,
  // The dtype is none of those a converting read or a dtype dispatch supports.
  DLPACK_ABI_ACCESS_UNSUPPORTED_DTYPE = 213,
  // A borrow registry's release hook was refused: another one is installed in this process.
  DLPACK_ABI_ACCESS_HOOK_INSTALLED = 214,

  // ---- 3xx: ExportError (an export refused; ExportError::Invalid has the ImportError's code) ----
  // The strides given do not have one entry per dimension.
  DLPACK_ABI_EXPORT_STRIDES_LENGTH = 301,
  // The description reaches outside the owner's buffer.
  DLPACK_ABI_EXPORT_OUTSIDE_BUFFER = 302,
  // The flags cannot be represented in the requested struct (legacy tensors have none).
  DLPACK_ABI_EXPORT_FLAGS_NOT_REPRESENTABLE = 303,
  // The owner's ndim changed between announcing and describing the tensor.
  DLPACK_ABI_EXPORT_NDIM_CHANGED = 304,
  // More dimensions than the export's capacity.
  DLPACK_ABI_EXPORT_CAPACITY = 305,

  // ---- 4xx: ConsumerStreamError and OrderError (DLPack stream ordering) ----
  // A stream was given for a device that has none (the CPU).
  DLPACK_ABI_STREAM_NO_STREAMS = 401,
  // CUDA stream 0, which could mean either default stream.
  DLPACK_ABI_STREAM_AMBIGUOUS = 402,
  // A stream value the device's table leaves out (ROCm 1 and 2).
  DLPACK_ABI_STREAM_UNSUPPORTED = 403,
  // A stream value below -1, or a handle wider than a pointer on this target.
  DLPACK_ABI_STREAM_INVALID = 404,
  // The producer cannot order its work on the requested stream.
  DLPACK_ABI_ORDER_UNSUPPORTED = 411,
  // The data is ready on one stream only, and no runtime can order it for the requester.
  DLPACK_ABI_ORDER_NOT_ORDERED = 412,
  // No device runtime can record the sync event an Arrow device export must carry.
  DLPACK_ABI_ORDER_NO_EVENT = 413,
  // The device runtime failed.
  DLPACK_ABI_ORDER_RUNTIME = 414,

  // ---- 5xx: MetadataError (an Arrow metadata map refused) ----
  // The metadata map is shorter than its counts and lengths say.
  DLPACK_ABI_METADATA_TRUNCATED = 501,
  // The metadata pair count is negative.
  DLPACK_ABI_METADATA_NEGATIVE_COUNT = 502,
  // A metadata key or value length is negative.
  DLPACK_ABI_METADATA_NEGATIVE_LENGTH = 503,
  // A metadata key is not UTF-8.
  DLPACK_ABI_METADATA_KEY_NOT_UTF8 = 504,
  // The metadata map's total size does not fit in isize.
  DLPACK_ABI_METADATA_TOO_LARGE = 505,

  // ---- 6xx: ValidationError (an Arrow struct refused) ----
  // The Arrow struct pointer was NULL.
  DLPACK_ABI_ARROW_NULL_POINTER = 601,
  // The Arrow struct is already released.
  DLPACK_ABI_ARROW_RELEASED = 602,
  // The schema or array is nested too deeply.
  DLPACK_ABI_ARROW_TOO_DEEP = 603,
  // The schema or array has too many nodes.
  DLPACK_ABI_ARROW_TOO_MANY_NODES = 604,
  // A required callback is NULL.
  DLPACK_ABI_ARROW_NULL_CALLBACK = 605,
  // ArrowSchema.format is NULL.
  DLPACK_ABI_ARROW_NULL_FORMAT = 606,
  // ArrowSchema.format is not a valid format string.
  DLPACK_ABI_ARROW_INVALID_FORMAT = 607,
  // ArrowSchema.name is not UTF-8.
  DLPACK_ABI_ARROW_NAME_NOT_UTF8 = 608,
  // A dictionary's index type is not an integer.
  DLPACK_ABI_ARROW_DICTIONARY_INDEX = 609,
  // n_children is negative.
  DLPACK_ABI_ARROW_NEGATIVE_CHILDREN = 610,
  // children is NULL although n_children > 0.
  DLPACK_ABI_ARROW_NULL_CHILDREN = 611,
  // A child pointer is NULL.
  DLPACK_ABI_ARROW_NULL_CHILD = 612,
  // A child is already released.
  DLPACK_ABI_ARROW_RELEASED_CHILD = 613,
  // The dictionary is already released.
  DLPACK_ABI_ARROW_RELEASED_DICTIONARY = 614,
  // The number of children is not the one the format requires.
  DLPACK_ABI_ARROW_CHILD_COUNT = 615,
  // An extension type's metadata is invalid.
  DLPACK_ABI_ARROW_EXTENSION_METADATA = 616,
  // A tensor extension's JSON parameters are invalid.
  DLPACK_ABI_ARROW_TENSOR_JSON = 617,
  // A tensor extension parameter is missing.
  DLPACK_ABI_ARROW_TENSOR_PARAMETER_MISSING = 618,
  // A tensor extension parameter is invalid.
  DLPACK_ABI_ARROW_TENSOR_PARAMETER = 619,
  // ArrowArray.length is negative.
  DLPACK_ABI_ARROW_NEGATIVE_LENGTH = 620,
  // ArrowArray.offset is negative.
  DLPACK_ABI_ARROW_NEGATIVE_OFFSET = 621,
  // ArrowArray.null_count is invalid for its length.
  DLPACK_ABI_ARROW_INVALID_NULL_COUNT = 622,
  // n_buffers is not the number the format requires.
  DLPACK_ABI_ARROW_BUFFER_COUNT = 623,
  // n_buffers is too large.
  DLPACK_ABI_ARROW_TOO_MANY_BUFFERS = 624,
  // buffers is NULL although n_buffers > 0.
  DLPACK_ABI_ARROW_NULL_BUFFERS = 625,
  // A required buffer is NULL.
  DLPACK_ABI_ARROW_NULL_BUFFER = 626,
  // A buffer's size does not fit in isize.
  DLPACK_ABI_ARROW_SIZE_OVERFLOW = 627,
  // A child array is shorter than its parent needs.
  DLPACK_ABI_ARROW_CHILD_TOO_SHORT = 628,
  // The array's dictionary does not match the schema's.
  DLPACK_ABI_ARROW_DICTIONARY_MISMATCH = 629,
  // The array does not match its schema.
  DLPACK_ABI_ARROW_SCHEMA_MISMATCH = 630,
  // What was to be exported as Arrow is invalid.
  DLPACK_ABI_ARROW_INVALID_SOURCE = 631,
  // A stream's array is on another device type than the stream.
  DLPACK_ABI_ARROW_DEVICE_MISMATCH = 632,

  // ---- 7xx: ReadError (typed reading of an Arrow array refused) ----
  // The Arrow array's memory is not host-accessible.
  DLPACK_ABI_READ_NOT_HOST_ACCESSIBLE = 701,
  // The Arrow array's type is not the one requested.
  DLPACK_ABI_READ_TYPE_MISMATCH = 702,
  // An Arrow buffer is not aligned for the requested type.
  DLPACK_ABI_READ_MISALIGNED = 703,

  // ---- 8xx: BridgeError (DLPack <-> Arrow bridge refused) ----
  // The Arrow array has nulls, which a DLPack tensor cannot express.
  DLPACK_ABI_BRIDGE_NULLS_PRESENT = 801,
  // The Arrow array is dictionary-encoded.
  DLPACK_ABI_BRIDGE_DICTIONARY_ENCODED = 802,
  // The Arrow type has no DLPack dtype.
  DLPACK_ABI_BRIDGE_UNSUPPORTED_TYPE = 803,
  // The DLPack dtype has no Arrow type.
  DLPACK_ABI_BRIDGE_UNSUPPORTED_DTYPE = 804,
  // The tensor is not compact row-major.
  DLPACK_ABI_BRIDGE_NOT_CONTIGUOUS = 805,
  // The tensor has no dimensions (a 0-d tensor has no Arrow length).
  DLPACK_ABI_BRIDGE_ZERO_DIMS = 806,
  // An offset does not fit the other side (Arrow offset or DLPack byte_offset).
  DLPACK_ABI_BRIDGE_OFFSET_NOT_REPRESENTABLE = 807,
  // The values buffer is not aligned for the element type.
  DLPACK_ABI_BRIDGE_MISALIGNED = 808,
  // The device array has a pending sync_event: wait on it before bridging.
  DLPACK_ABI_BRIDGE_PENDING_EVENT = 809,
  // A sync_event cannot be attached (CPU data, or one is already attached).
  DLPACK_ABI_BRIDGE_EVENT_NOT_ATTACHABLE = 810,
  // The DLPack device type has no Arrow value.
  DLPACK_ABI_BRIDGE_DEVICE_NOT_IN_ARROW = 811,
  // The Arrow device_id does not fit DLPack's int32_t.
  DLPACK_ABI_BRIDGE_DEVICE_ID_OUT_OF_RANGE = 812,

  // ---- 9xx: Arrow streams ----
  // An Arrow stream's producer returned an error (its errno and message).
  DLPACK_ABI_STREAM_PRODUCER = 901,
  // An async Arrow stream's producer broke the protocol.
  DLPACK_ABI_STREAM_PROTOCOL = 902,
} DLPackAbiErrorCode;

// The name of a DLPackAbiErrorCode value, as this header spells it ("DLPACK_ABI_ACCESS_READ_ONLY"
// for 207), or NULL for a value it does not declare: an integration crate's code (1000
// to 1999), an FFI crate's own, or a code newer than this header. The string is static.
static inline const char* dlpack_abi_error_code_name(int32_t code) {
  switch (code) {
    case DLPACK_ABI_OK: return "DLPACK_ABI_OK";
    case DLPACK_ABI_IMPORT_NULL_TENSOR: return "DLPACK_ABI_IMPORT_NULL_TENSOR";
    case DLPACK_ABI_IMPORT_UNSUPPORTED_VERSION: return "DLPACK_ABI_IMPORT_UNSUPPORTED_VERSION";
    case DLPACK_ABI_IMPORT_NEGATIVE_NDIM: return "DLPACK_ABI_IMPORT_NEGATIVE_NDIM";
    case DLPACK_ABI_IMPORT_TOO_MANY_DIMS: return "DLPACK_ABI_IMPORT_TOO_MANY_DIMS";
    case DLPACK_ABI_IMPORT_ZERO_LANES: return "DLPACK_ABI_IMPORT_ZERO_LANES";
    case DLPACK_ABI_IMPORT_ZERO_BITS: return "DLPACK_ABI_IMPORT_ZERO_BITS";
    case DLPACK_ABI_IMPORT_SUB_BYTE_BITS: return "DLPACK_ABI_IMPORT_SUB_BYTE_BITS";
    case DLPACK_ABI_IMPORT_NULL_SHAPE: return "DLPACK_ABI_IMPORT_NULL_SHAPE";
    case DLPACK_ABI_IMPORT_NEGATIVE_EXTENT: return "DLPACK_ABI_IMPORT_NEGATIVE_EXTENT";
    case DLPACK_ABI_IMPORT_SIZE_OVERFLOW: return "DLPACK_ABI_IMPORT_SIZE_OVERFLOW";
    case DLPACK_ABI_IMPORT_NULL_STRIDES: return "DLPACK_ABI_IMPORT_NULL_STRIDES";
    case DLPACK_ABI_IMPORT_BYTE_OFFSET_OVERFLOW: return "DLPACK_ABI_IMPORT_BYTE_OFFSET_OVERFLOW";
    case DLPACK_ABI_IMPORT_NULL_DATA: return "DLPACK_ABI_IMPORT_NULL_DATA";
    case DLPACK_ABI_IMPORT_STRIDES_OVERFLOW: return "DLPACK_ABI_IMPORT_STRIDES_OVERFLOW";
    case DLPACK_ABI_IMPORT_ADDRESS_OVERFLOW: return "DLPACK_ABI_IMPORT_ADDRESS_OVERFLOW";
    case DLPACK_ABI_ACCESS_NOT_HOST_ACCESSIBLE: return "DLPACK_ABI_ACCESS_NOT_HOST_ACCESSIBLE";
    case DLPACK_ABI_ACCESS_NOT_ADDRESSABLE: return "DLPACK_ABI_ACCESS_NOT_ADDRESSABLE";
    case DLPACK_ABI_ACCESS_UNKNOWN_FLAGS: return "DLPACK_ABI_ACCESS_UNKNOWN_FLAGS";
    case DLPACK_ABI_ACCESS_DTYPE_MISMATCH: return "DLPACK_ABI_ACCESS_DTYPE_MISMATCH";
    case DLPACK_ABI_ACCESS_MISALIGNED: return "DLPACK_ABI_ACCESS_MISALIGNED";
    case DLPACK_ABI_ACCESS_NOT_CONTIGUOUS: return "DLPACK_ABI_ACCESS_NOT_CONTIGUOUS";
    case DLPACK_ABI_ACCESS_READ_ONLY: return "DLPACK_ABI_ACCESS_READ_ONLY";
    case DLPACK_ABI_ACCESS_NOT_EXCLUSIVE: return "DLPACK_ABI_ACCESS_NOT_EXCLUSIVE";
    case DLPACK_ABI_ACCESS_INDEX_RANK: return "DLPACK_ABI_ACCESS_INDEX_RANK";
    case DLPACK_ABI_ACCESS_DIMENSION_MISMATCH: return "DLPACK_ABI_ACCESS_DIMENSION_MISMATCH";
    case DLPACK_ABI_ACCESS_OVERLAPPING: return "DLPACK_ABI_ACCESS_OVERLAPPING";
    case DLPACK_ABI_ACCESS_INDEX_OUT_OF_BOUNDS: return "DLPACK_ABI_ACCESS_INDEX_OUT_OF_BOUNDS";
    case DLPACK_ABI_ACCESS_UNSUPPORTED_DTYPE: return "DLPACK_ABI_ACCESS_UNSUPPORTED_DTYPE";
    case DLPACK_ABI_ACCESS_HOOK_INSTALLED: return "DLPACK_ABI_ACCESS_HOOK_INSTALLED";
    case DLPACK_ABI_EXPORT_STRIDES_LENGTH: return "DLPACK_ABI_EXPORT_STRIDES_LENGTH";
    case DLPACK_ABI_EXPORT_OUTSIDE_BUFFER: return "DLPACK_ABI_EXPORT_OUTSIDE_BUFFER";
    case DLPACK_ABI_EXPORT_FLAGS_NOT_REPRESENTABLE: return "DLPACK_ABI_EXPORT_FLAGS_NOT_REPRESENTABLE";
    case DLPACK_ABI_EXPORT_NDIM_CHANGED: return "DLPACK_ABI_EXPORT_NDIM_CHANGED";
    case DLPACK_ABI_EXPORT_CAPACITY: return "DLPACK_ABI_EXPORT_CAPACITY";
    case DLPACK_ABI_STREAM_NO_STREAMS: return "DLPACK_ABI_STREAM_NO_STREAMS";
    case DLPACK_ABI_STREAM_AMBIGUOUS: return "DLPACK_ABI_STREAM_AMBIGUOUS";
    case DLPACK_ABI_STREAM_UNSUPPORTED: return "DLPACK_ABI_STREAM_UNSUPPORTED";
    case DLPACK_ABI_STREAM_INVALID: return "DLPACK_ABI_STREAM_INVALID";
    case DLPACK_ABI_ORDER_UNSUPPORTED: return "DLPACK_ABI_ORDER_UNSUPPORTED";
    case DLPACK_ABI_ORDER_NOT_ORDERED: return "DLPACK_ABI_ORDER_NOT_ORDERED";
    case DLPACK_ABI_ORDER_NO_EVENT: return "DLPACK_ABI_ORDER_NO_EVENT";
    case DLPACK_ABI_ORDER_RUNTIME: return "DLPACK_ABI_ORDER_RUNTIME";
    case DLPACK_ABI_METADATA_TRUNCATED: return "DLPACK_ABI_METADATA_TRUNCATED";
    case DLPACK_ABI_METADATA_NEGATIVE_COUNT: return "DLPACK_ABI_METADATA_NEGATIVE_COUNT";
    case DLPACK_ABI_METADATA_NEGATIVE_LENGTH: return "DLPACK_ABI_METADATA_NEGATIVE_LENGTH";
    case DLPACK_ABI_METADATA_KEY_NOT_UTF8: return "DLPACK_ABI_METADATA_KEY_NOT_UTF8";
    case DLPACK_ABI_METADATA_TOO_LARGE: return "DLPACK_ABI_METADATA_TOO_LARGE";
    case DLPACK_ABI_ARROW_NULL_POINTER: return "DLPACK_ABI_ARROW_NULL_POINTER";
    case DLPACK_ABI_ARROW_RELEASED: return "DLPACK_ABI_ARROW_RELEASED";
    case DLPACK_ABI_ARROW_TOO_DEEP: return "DLPACK_ABI_ARROW_TOO_DEEP";
    case DLPACK_ABI_ARROW_TOO_MANY_NODES: return "DLPACK_ABI_ARROW_TOO_MANY_NODES";
    case DLPACK_ABI_ARROW_NULL_CALLBACK: return "DLPACK_ABI_ARROW_NULL_CALLBACK";
    case DLPACK_ABI_ARROW_NULL_FORMAT: return "DLPACK_ABI_ARROW_NULL_FORMAT";
    case DLPACK_ABI_ARROW_INVALID_FORMAT: return "DLPACK_ABI_ARROW_INVALID_FORMAT";
    case DLPACK_ABI_ARROW_NAME_NOT_UTF8: return "DLPACK_ABI_ARROW_NAME_NOT_UTF8";
    case DLPACK_ABI_ARROW_DICTIONARY_INDEX: return "DLPACK_ABI_ARROW_DICTIONARY_INDEX";
    case DLPACK_ABI_ARROW_NEGATIVE_CHILDREN: return "DLPACK_ABI_ARROW_NEGATIVE_CHILDREN";
    case DLPACK_ABI_ARROW_NULL_CHILDREN: return "DLPACK_ABI_ARROW_NULL_CHILDREN";
    case DLPACK_ABI_ARROW_NULL_CHILD: return "DLPACK_ABI_ARROW_NULL_CHILD";
    case DLPACK_ABI_ARROW_RELEASED_CHILD: return "DLPACK_ABI_ARROW_RELEASED_CHILD";
    case DLPACK_ABI_ARROW_RELEASED_DICTIONARY: return "DLPACK_ABI_ARROW_RELEASED_DICTIONARY";
    case DLPACK_ABI_ARROW_CHILD_COUNT: return "DLPACK_ABI_ARROW_CHILD_COUNT";
    case DLPACK_ABI_ARROW_EXTENSION_METADATA: return "DLPACK_ABI_ARROW_EXTENSION_METADATA";
    case DLPACK_ABI_ARROW_TENSOR_JSON: return "DLPACK_ABI_ARROW_TENSOR_JSON";
    case DLPACK_ABI_ARROW_TENSOR_PARAMETER_MISSING: return "DLPACK_ABI_ARROW_TENSOR_PARAMETER_MISSING";
    case DLPACK_ABI_ARROW_TENSOR_PARAMETER: return "DLPACK_ABI_ARROW_TENSOR_PARAMETER";
    case DLPACK_ABI_ARROW_NEGATIVE_LENGTH: return "DLPACK_ABI_ARROW_NEGATIVE_LENGTH";
    case DLPACK_ABI_ARROW_NEGATIVE_OFFSET: return "DLPACK_ABI_ARROW_NEGATIVE_OFFSET";
    case DLPACK_ABI_ARROW_INVALID_NULL_COUNT: return "DLPACK_ABI_ARROW_INVALID_NULL_COUNT";
    case DLPACK_ABI_ARROW_BUFFER_COUNT: return "DLPACK_ABI_ARROW_BUFFER_COUNT";
    case DLPACK_ABI_ARROW_TOO_MANY_BUFFERS: return "DLPACK_ABI_ARROW_TOO_MANY_BUFFERS";
    case DLPACK_ABI_ARROW_NULL_BUFFERS: return "DLPACK_ABI_ARROW_NULL_BUFFERS";
    case DLPACK_ABI_ARROW_NULL_BUFFER: return "DLPACK_ABI_ARROW_NULL_BUFFER";
    case DLPACK_ABI_ARROW_SIZE_OVERFLOW: return "DLPACK_ABI_ARROW_SIZE_OVERFLOW";
    case DLPACK_ABI_ARROW_CHILD_TOO_SHORT: return "DLPACK_ABI_ARROW_CHILD_TOO_SHORT";
    case DLPACK_ABI_ARROW_DICTIONARY_MISMATCH: return "DLPACK_ABI_ARROW_DICTIONARY_MISMATCH";
    case DLPACK_ABI_ARROW_SCHEMA_MISMATCH: return "DLPACK_ABI_ARROW_SCHEMA_MISMATCH";
    case DLPACK_ABI_ARROW_INVALID_SOURCE: return "DLPACK_ABI_ARROW_INVALID_SOURCE";
    case DLPACK_ABI_ARROW_DEVICE_MISMATCH: return "DLPACK_ABI_ARROW_DEVICE_MISMATCH";
    case DLPACK_ABI_READ_NOT_HOST_ACCESSIBLE: return "DLPACK_ABI_READ_NOT_HOST_ACCESSIBLE";
    case DLPACK_ABI_READ_TYPE_MISMATCH: return "DLPACK_ABI_READ_TYPE_MISMATCH";
    case DLPACK_ABI_READ_MISALIGNED: return "DLPACK_ABI_READ_MISALIGNED";
    case DLPACK_ABI_BRIDGE_NULLS_PRESENT: return "DLPACK_ABI_BRIDGE_NULLS_PRESENT";
    case DLPACK_ABI_BRIDGE_DICTIONARY_ENCODED: return "DLPACK_ABI_BRIDGE_DICTIONARY_ENCODED";
    case DLPACK_ABI_BRIDGE_UNSUPPORTED_TYPE: return "DLPACK_ABI_BRIDGE_UNSUPPORTED_TYPE";
    case DLPACK_ABI_BRIDGE_UNSUPPORTED_DTYPE: return "DLPACK_ABI_BRIDGE_UNSUPPORTED_DTYPE";
    case DLPACK_ABI_BRIDGE_NOT_CONTIGUOUS: return "DLPACK_ABI_BRIDGE_NOT_CONTIGUOUS";
    case DLPACK_ABI_BRIDGE_ZERO_DIMS: return "DLPACK_ABI_BRIDGE_ZERO_DIMS";
    case DLPACK_ABI_BRIDGE_OFFSET_NOT_REPRESENTABLE: return "DLPACK_ABI_BRIDGE_OFFSET_NOT_REPRESENTABLE";
    case DLPACK_ABI_BRIDGE_MISALIGNED: return "DLPACK_ABI_BRIDGE_MISALIGNED";
    case DLPACK_ABI_BRIDGE_PENDING_EVENT: return "DLPACK_ABI_BRIDGE_PENDING_EVENT";
    case DLPACK_ABI_BRIDGE_EVENT_NOT_ATTACHABLE: return "DLPACK_ABI_BRIDGE_EVENT_NOT_ATTACHABLE";
    case DLPACK_ABI_BRIDGE_DEVICE_NOT_IN_ARROW: return "DLPACK_ABI_BRIDGE_DEVICE_NOT_IN_ARROW";
    case DLPACK_ABI_BRIDGE_DEVICE_ID_OUT_OF_RANGE: return "DLPACK_ABI_BRIDGE_DEVICE_ID_OUT_OF_RANGE";
    case DLPACK_ABI_STREAM_PRODUCER: return "DLPACK_ABI_STREAM_PRODUCER";
    case DLPACK_ABI_STREAM_PROTOCOL: return "DLPACK_ABI_STREAM_PROTOCOL";
    default: return NULL;
  }
}

// Bytes in DLPackAbiErrorReport.message, the terminating NUL included.
#define DLPACK_ABI_ERROR_MESSAGE_SIZE 252

// An error's code and message, filled by an FFI function on failure (usually into the
// caller's stack): nothing is allocated and nothing needs freeing. 256 bytes, aligned to 4,
// on every target.
typedef struct {
  // A DLPackAbiErrorCode value (DLPACK_ABI_OK on success).
  int32_t code;
  // The error's message: UTF-8, always NUL-terminated, zero after the NUL. A message
  // longer than DLPACK_ABI_ERROR_MESSAGE_SIZE - 1 bytes is cut at a character boundary
  // and ends with "...".
  char message[DLPACK_ABI_ERROR_MESSAGE_SIZE];
} DLPackAbiErrorReport;

#endif  // DLPACK_ABI_ERRORS_H_

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLPACK_ABI_H_
