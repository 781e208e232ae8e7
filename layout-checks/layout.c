/* Prints the size, alignment and field offsets of every DLPack and Arrow C ABI type, and the
 * value of every constant, in the line format of `cargo run --example layout -- --check`.
 *
 * Built twice by layout-checks/run.sh: with -DUPSTREAM against the real dlpack/dlpack.h and
 * arrow/c/abi.h (from the pinned PyPI packages), and without it against our generated
 * include/dlpack_abi.h. The field lists here are written from the specifications, independently
 * of the Rust sources, so a field missing on either side shows up as a difference. */
#include <stddef.h>
#include <stdio.h>

#ifdef UPSTREAM
#include <arrow/c/abi.h>
#include <dlpack/dlpack.h>
#else
#include "dlpack_abi.h"
#endif

#define TYPE(name, T) printf("size %s %u\nalign %s %u\n", #name, (unsigned)sizeof(T), #name, (unsigned)_Alignof(T))
#define FIELD(name, T, f)                                                              \
  printf("offset %s.%s %u\nfieldsize %s.%s %u\n", #name, #f, (unsigned)offsetof(T, f), \
         #name, #f, (unsigned)sizeof(((T*)0)->f))
/* The value of a macro or enumerator, and (for macros) the size of its C type. */
#define VALUE(name) printf("value %s %lld\n", #name, (long long)(name))
#define MACRO(name)                                         \
  printf("value %s %lld\nmacrosize %s %u\n", #name, (long long)(name), #name, \
         (unsigned)sizeof(name))

int main(void) {
  TYPE(DLPackVersion, DLPackVersion);
  FIELD(DLPackVersion, DLPackVersion, major);
  FIELD(DLPackVersion, DLPackVersion, minor);
  TYPE(DLDeviceType, DLDeviceType);
  TYPE(DLDevice, DLDevice);
  FIELD(DLDevice, DLDevice, device_type);
  FIELD(DLDevice, DLDevice, device_id);
  TYPE(DLDataType, DLDataType);
  FIELD(DLDataType, DLDataType, code);
  FIELD(DLDataType, DLDataType, bits);
  FIELD(DLDataType, DLDataType, lanes);
  TYPE(DLTensor, DLTensor);
  FIELD(DLTensor, DLTensor, data);
  FIELD(DLTensor, DLTensor, device);
  FIELD(DLTensor, DLTensor, ndim);
  FIELD(DLTensor, DLTensor, dtype);
  FIELD(DLTensor, DLTensor, shape);
  FIELD(DLTensor, DLTensor, strides);
  FIELD(DLTensor, DLTensor, byte_offset);
  TYPE(DLManagedTensor, DLManagedTensor);
  FIELD(DLManagedTensor, DLManagedTensor, dl_tensor);
  FIELD(DLManagedTensor, DLManagedTensor, manager_ctx);
  FIELD(DLManagedTensor, DLManagedTensor, deleter);
  TYPE(DLManagedTensorVersioned, DLManagedTensorVersioned);
  FIELD(DLManagedTensorVersioned, DLManagedTensorVersioned, version);
  FIELD(DLManagedTensorVersioned, DLManagedTensorVersioned, manager_ctx);
  FIELD(DLManagedTensorVersioned, DLManagedTensorVersioned, deleter);
  FIELD(DLManagedTensorVersioned, DLManagedTensorVersioned, flags);
  FIELD(DLManagedTensorVersioned, DLManagedTensorVersioned, dl_tensor);
  TYPE(DLPackExchangeAPIHeader, DLPackExchangeAPIHeader);
  FIELD(DLPackExchangeAPIHeader, DLPackExchangeAPIHeader, version);
  FIELD(DLPackExchangeAPIHeader, DLPackExchangeAPIHeader, prev_api);
  TYPE(DLPackExchangeAPI, DLPackExchangeAPI);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, header);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, managed_tensor_allocator);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, managed_tensor_from_py_object_no_sync);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, managed_tensor_to_py_object_no_sync);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, dltensor_from_py_object_no_sync);
  FIELD(DLPackExchangeAPI, DLPackExchangeAPI, current_work_stream);

  TYPE(ArrowSchema, struct ArrowSchema);
  FIELD(ArrowSchema, struct ArrowSchema, format);
  FIELD(ArrowSchema, struct ArrowSchema, name);
  FIELD(ArrowSchema, struct ArrowSchema, metadata);
  FIELD(ArrowSchema, struct ArrowSchema, flags);
  FIELD(ArrowSchema, struct ArrowSchema, n_children);
  FIELD(ArrowSchema, struct ArrowSchema, children);
  FIELD(ArrowSchema, struct ArrowSchema, dictionary);
  FIELD(ArrowSchema, struct ArrowSchema, release);
  FIELD(ArrowSchema, struct ArrowSchema, private_data);
  TYPE(ArrowArray, struct ArrowArray);
  FIELD(ArrowArray, struct ArrowArray, length);
  FIELD(ArrowArray, struct ArrowArray, null_count);
  FIELD(ArrowArray, struct ArrowArray, offset);
  FIELD(ArrowArray, struct ArrowArray, n_buffers);
  FIELD(ArrowArray, struct ArrowArray, n_children);
  FIELD(ArrowArray, struct ArrowArray, buffers);
  FIELD(ArrowArray, struct ArrowArray, children);
  FIELD(ArrowArray, struct ArrowArray, dictionary);
  FIELD(ArrowArray, struct ArrowArray, release);
  FIELD(ArrowArray, struct ArrowArray, private_data);
  TYPE(ArrowDeviceType, ArrowDeviceType);
  TYPE(ArrowDeviceArray, struct ArrowDeviceArray);
  FIELD(ArrowDeviceArray, struct ArrowDeviceArray, array);
  FIELD(ArrowDeviceArray, struct ArrowDeviceArray, device_id);
  FIELD(ArrowDeviceArray, struct ArrowDeviceArray, device_type);
  FIELD(ArrowDeviceArray, struct ArrowDeviceArray, sync_event);
  FIELD(ArrowDeviceArray, struct ArrowDeviceArray, reserved);
  TYPE(ArrowArrayStream, struct ArrowArrayStream);
  FIELD(ArrowArrayStream, struct ArrowArrayStream, get_schema);
  FIELD(ArrowArrayStream, struct ArrowArrayStream, get_next);
  FIELD(ArrowArrayStream, struct ArrowArrayStream, get_last_error);
  FIELD(ArrowArrayStream, struct ArrowArrayStream, release);
  FIELD(ArrowArrayStream, struct ArrowArrayStream, private_data);
  TYPE(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, device_type);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, get_schema);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, get_next);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, get_last_error);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, release);
  FIELD(ArrowDeviceArrayStream, struct ArrowDeviceArrayStream, private_data);
  TYPE(ArrowAsyncTask, struct ArrowAsyncTask);
  FIELD(ArrowAsyncTask, struct ArrowAsyncTask, extract_data);
  FIELD(ArrowAsyncTask, struct ArrowAsyncTask, private_data);
  TYPE(ArrowAsyncProducer, struct ArrowAsyncProducer);
  FIELD(ArrowAsyncProducer, struct ArrowAsyncProducer, device_type);
  FIELD(ArrowAsyncProducer, struct ArrowAsyncProducer, request);
  FIELD(ArrowAsyncProducer, struct ArrowAsyncProducer, cancel);
  FIELD(ArrowAsyncProducer, struct ArrowAsyncProducer, additional_metadata);
  FIELD(ArrowAsyncProducer, struct ArrowAsyncProducer, private_data);
  TYPE(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, on_schema);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, on_next_task);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, on_error);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, release);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, producer);
  FIELD(ArrowAsyncDeviceStreamHandler, struct ArrowAsyncDeviceStreamHandler, private_data);

  MACRO(DLPACK_MAJOR_VERSION);
  MACRO(DLPACK_MINOR_VERSION);
  MACRO(DLPACK_FLAG_BITMASK_READ_ONLY);
  MACRO(DLPACK_FLAG_BITMASK_IS_COPIED);
  MACRO(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  MACRO(ARROW_FLAG_DICTIONARY_ORDERED);
  MACRO(ARROW_FLAG_NULLABLE);
  MACRO(ARROW_FLAG_MAP_KEYS_SORTED);
  VALUE(kDLCPU);
  VALUE(kDLCUDA);
  VALUE(kDLCUDAHost);
  VALUE(kDLOpenCL);
  VALUE(kDLVulkan);
  VALUE(kDLMetal);
  VALUE(kDLVPI);
  VALUE(kDLROCM);
  VALUE(kDLROCMHost);
  VALUE(kDLExtDev);
  VALUE(kDLCUDAManaged);
  VALUE(kDLOneAPI);
  VALUE(kDLWebGPU);
  VALUE(kDLHexagon);
  VALUE(kDLMAIA);
  VALUE(kDLTrn);
  VALUE(kDLInt);
  VALUE(kDLUInt);
  VALUE(kDLFloat);
  VALUE(kDLOpaqueHandle);
  VALUE(kDLBfloat);
  VALUE(kDLComplex);
  VALUE(kDLBool);
  VALUE(kDLFloat8_e3m4);
  VALUE(kDLFloat8_e4m3);
  VALUE(kDLFloat8_e4m3b11fnuz);
  VALUE(kDLFloat8_e4m3fn);
  VALUE(kDLFloat8_e4m3fnuz);
  VALUE(kDLFloat8_e5m2);
  VALUE(kDLFloat8_e5m2fnuz);
  VALUE(kDLFloat8_e8m0fnu);
  VALUE(kDLFloat6_e2m3fn);
  VALUE(kDLFloat6_e3m2fn);
  VALUE(kDLFloat4_e2m1fn);
#ifdef DLPACK_ABI_UNRELEASED
  /* On DLPack's main branch, in no release yet: ours declares them only on request. */
  VALUE(kDLTPU);
  VALUE(kDLTPUHost);
  VALUE(kDLAscend);
  VALUE(kDLBcomplex);
#endif
  MACRO(ARROW_DEVICE_CPU);
  MACRO(ARROW_DEVICE_CUDA);
  MACRO(ARROW_DEVICE_CUDA_HOST);
  MACRO(ARROW_DEVICE_OPENCL);
  MACRO(ARROW_DEVICE_VULKAN);
  MACRO(ARROW_DEVICE_METAL);
  MACRO(ARROW_DEVICE_VPI);
  MACRO(ARROW_DEVICE_ROCM);
  MACRO(ARROW_DEVICE_ROCM_HOST);
  MACRO(ARROW_DEVICE_EXT_DEV);
  MACRO(ARROW_DEVICE_CUDA_MANAGED);
  MACRO(ARROW_DEVICE_ONEAPI);
  MACRO(ARROW_DEVICE_WEBGPU);
  MACRO(ARROW_DEVICE_HEXAGON);
  return 0;
}
