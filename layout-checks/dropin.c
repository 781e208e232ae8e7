/* A consumer written against the upstream names only. It builds a DLManagedTensorVersioned and
 * an ArrowDeviceArray, reads every field, and calls the deleter and the release callback.
 * layout-checks/run.sh builds it against the upstream headers (-DUPSTREAM) and against our
 * generated header, as C11 and as C++11, and requires identical output. Exits non-zero if a
 * callback did not run exactly once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef UPSTREAM
#include <arrow/c/abi.h>
#include <dlpack/dlpack.h>
#else
#include "dlpack_abi.h"
#endif

static int deleter_calls = 0;
static int release_calls = 0;

typedef struct {
  int64_t shape[2];
  int64_t strides[2];
  float data[6];
} TensorContext;

static void delete_tensor(struct DLManagedTensorVersioned* self) {
  deleter_calls++;
  free(self->manager_ctx);
  free(self);
}

static void release_array(struct ArrowArray* array) {
  release_calls++;
  free((void*)array->buffers);
  array->release = NULL;
}

int main(void) {
  TensorContext* ctx = (TensorContext*)malloc(sizeof(TensorContext));
  DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)calloc(1, sizeof(DLManagedTensorVersioned));
  int i;
  if (ctx == NULL || t == NULL) return 2;
  for (i = 0; i < 6; i++) ctx->data[i] = (float)i * 0.5f;
  ctx->shape[0] = 2;
  ctx->shape[1] = 3;
  ctx->strides[0] = 3;
  ctx->strides[1] = 1;
  t->version.major = DLPACK_MAJOR_VERSION;
  t->version.minor = DLPACK_MINOR_VERSION;
  t->manager_ctx = ctx;
  t->deleter = delete_tensor;
  t->flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  t->dl_tensor.data = ctx->data;
  t->dl_tensor.device.device_type = kDLCUDAHost;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = 2;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = ctx->shape;
  t->dl_tensor.strides = ctx->strides;
  t->dl_tensor.byte_offset = 4;

  printf("version %u.%u flags %llu read_only %d copied %d padded %d\n", (unsigned)t->version.major,
         (unsigned)t->version.minor, (unsigned long long)t->flags,
         (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, (t->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0,
         (t->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0);
  printf("device %d/%d cuda_host %d ndim %d dtype %u/%u/%u float %d\n",
         (int)t->dl_tensor.device.device_type, (int)t->dl_tensor.device.device_id,
         t->dl_tensor.device.device_type == kDLCUDAHost, (int)t->dl_tensor.ndim,
         (unsigned)t->dl_tensor.dtype.code, (unsigned)t->dl_tensor.dtype.bits,
         (unsigned)t->dl_tensor.dtype.lanes, t->dl_tensor.dtype.code == kDLFloat);
  printf("shape %lld,%lld strides %lld,%lld byte_offset %llu first %.1f ctx_set %d\n",
         (long long)t->dl_tensor.shape[0], (long long)t->dl_tensor.shape[1],
         (long long)t->dl_tensor.strides[0], (long long)t->dl_tensor.strides[1],
         (unsigned long long)t->dl_tensor.byte_offset,
         (double)*(const float*)((const char*)t->dl_tensor.data + t->dl_tensor.byte_offset),
         t->manager_ctx == (void*)ctx);
  if (t->deleter != NULL) t->deleter(t);

  {
    struct ArrowDeviceArray device_array;
    static const int32_t values[4] = {7, 8, 9, 10};
    const void** buffers = (const void**)malloc(2 * sizeof(void*));
    if (buffers == NULL) return 2;
    memset(&device_array, 0, sizeof device_array);
    buffers[0] = NULL;
    buffers[1] = values;
    device_array.array.length = 3;
    device_array.array.null_count = 0;
    device_array.array.offset = 1;
    device_array.array.n_buffers = 2;
    device_array.array.n_children = 0;
    device_array.array.buffers = buffers;
    device_array.array.children = NULL;
    device_array.array.dictionary = NULL;
    device_array.array.release = release_array;
    device_array.array.private_data = NULL;
    device_array.device_id = -1;
    device_array.device_type = ARROW_DEVICE_CPU;
    device_array.sync_event = NULL;
    printf("array length %lld nulls %lld offset %lld buffers %lld children %lld first %d\n",
           (long long)device_array.array.length, (long long)device_array.array.null_count,
           (long long)device_array.array.offset, (long long)device_array.array.n_buffers,
           (long long)device_array.array.n_children,
           (int)((const int32_t*)device_array.array.buffers[1])[device_array.array.offset]);
    printf("device %lld type %d cpu %d sync %d reserved %lld,%lld,%lld dict %d priv %d\n",
           (long long)device_array.device_id, (int)device_array.device_type,
           device_array.device_type == ARROW_DEVICE_CPU, device_array.sync_event != NULL,
           (long long)device_array.reserved[0], (long long)device_array.reserved[1],
           (long long)device_array.reserved[2], device_array.array.dictionary != NULL,
           device_array.array.private_data != NULL);
    printf("schema flags %d %d %d\n", ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_NULLABLE,
           ARROW_FLAG_MAP_KEYS_SORTED);
    if (device_array.array.release != NULL) device_array.array.release(&device_array.array);
    printf("released %d\n", device_array.array.release == NULL);
  }
  printf("deleter_calls %d release_calls %d\n", deleter_calls, release_calls);
  return deleter_calls == 1 && release_calls == 1 ? 0 : 1;
}
