/* dlpack_sum_f32_c: the hand-written C counterpart of dlpack_sum_f32 (src/lib.rs). The same
 * checks as TensorView::from_raw (a bare DLTensor: no version, no flags) and iter::<float>, in
 * the same order, returning the same negative codes; then the row-major sum through the strides.
 * For 32-bit targets (a pointer and size_t of 32 bits), as the code size comparison needs. */
#include <stddef.h>
#include <stdint.h>

#include "dlpack_abi.h"

_Static_assert(sizeof(void *) == 4 && sizeof(size_t) == 4, "written for 32-bit targets");

#define MAX_NDIM 64
/* Element offsets farther than this from the first element leave a 32-bit address space even
 * for 1-bit elements: the walk fails there, and nothing below it overflows int64_t. */
#define MAX_REACH ((int64_t)1 << 40)

int dlpack_sum_f32_c(const DLTensor *t, float *out) {
  if (!t) return -1;
  if (t->ndim < 0) return -2;
  if (t->ndim > MAX_NDIM) return -3;
  int n = t->ndim;
  DLDataType dt = t->dtype;
  if (dt.lanes == 0) return -4;
  if (dt.bits == 0) return -5;
  if ((dt.code == kDLFloat4_e2m1fn && dt.bits != 4) ||
      ((dt.code == kDLFloat6_e2m3fn || dt.code == kDLFloat6_e3m2fn) && dt.bits != 6))
    return -6;
  uint32_t bits = (uint32_t)dt.bits * dt.lanes;
  int packed = bits < 8; /* no IS_SUBBYTE_TYPE_PADDED flag on a bare DLTensor */
  uint32_t element_bytes = packed ? 1 : (bits + 7) / 8;
  const int64_t *shape = t->shape, *strides = t->strides;
  if (n > 0 && !shape) return -7;

  /* Elements (zero extents counted as one) and their bytes must fit in ptrdiff_t. */
  size_t capacity = 1, size;
  int empty = 0;
  for (int d = n - 1; d >= 0; d--) {
    if (shape[d] < 0) return -8;
    if ((uint64_t)shape[d] > SIZE_MAX) return -9;
    if (__builtin_mul_overflow(capacity, shape[d] ? (size_t)shape[d] : 1, &capacity)) return -9;
    empty |= shape[d] == 0;
  }
  if (__builtin_mul_overflow(capacity, element_bytes, &size) || size > PTRDIFF_MAX) return -9;
  size_t elements = empty ? 0 : capacity;
  size_t byte_size = !packed ? size : (size_t)(((uint64_t)elements * bits + 7) / 8);

  if (t->byte_offset > SIZE_MAX) return -10;
  uintptr_t start;
  if (__builtin_add_overflow((uintptr_t)t->data, (uintptr_t)t->byte_offset, &start)) return -10;
  if (elements > 0) {
    if (!t->data) return -11;
    if (!strides || n == 0) {
      /* Compact: the last byte must have an address. */
      uintptr_t last;
      if (__builtin_add_overflow(start, byte_size - 1, &last)) return -13;
    } else {
      /* Strides: the bytes reachable from the first element (lowest to highest offset) must
       * lie in the address space and span at most PTRDIFF_MAX, checked after each dimension. */
      int64_t low = 0, high = 0;
      for (int d = 0; d < n; d++) {
        int64_t reach;
        if (__builtin_mul_overflow(strides[d], shape[d] - 1, &reach) || reach < -MAX_REACH ||
            reach > MAX_REACH)
          return -12;
        if (reach < 0) low += reach; else high += reach;
        if (low < -MAX_REACH || high > MAX_REACH) return -12;
        int64_t first = packed ? (low * bits) >> 3 : low * element_bytes;
        int64_t end = packed ? ((high + 1) * bits + 7) >> 3 : (high + 1) * element_bytes;
        if ((int64_t)start + first < 0 || (int64_t)start + end > ((int64_t)1 << 32) ||
            end - first > PTRDIFF_MAX)
          return -12;
      }
    }
  }

  /* Typed access: host memory, float32, aligned. */
  switch (t->device.device_type) {
    case kDLCPU: case kDLCUDAHost: case kDLROCMHost: case kDLCUDAManaged: break;
    default: return -20;
  }
  if (dt.code != kDLFloat || dt.bits != 32 || dt.lanes != 1) return -21;
  if (elements > 0 && start % _Alignof(float) != 0) return -22;

  /* Row-major odometer over the strides (compact ones when NULL); wrapping offsets, as an
   * extent-1 dimension may carry any stride. */
  uint64_t step[MAX_NDIM], index[MAX_NDIM], offset = 0, compact = 1;
  for (int d = n - 1; d >= 0; d--) {
    step[d] = strides ? (uint64_t)strides[d] : compact;
    compact *= (uint64_t)shape[d];
    index[d] = 0;
  }
  float sum = 0.0f;
  for (size_t k = elements; k > 0; k--) {
    sum += *(const float *)(start + (uintptr_t)offset * sizeof(float));
    for (int d = n - 1; d >= 0; d--) {
      offset += step[d];
      if ((int64_t)++index[d] < shape[d]) break;
      offset -= step[d] * (uint64_t)shape[d];
      index[d] = 0;
    }
  }
  *out = sum;
  return 0;
}
