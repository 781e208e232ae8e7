/* A C kernel over bare DLTensors, as kernel libraries write them: out = k * in, for float32
 * tensors of at most two dimensions with any strides and byte offset. Returns 0, or -1 when it
 * cannot handle the tensors. Called from Rust with borrowed Rust memory (src/lib.rs). */
#include <stddef.h>
#include <stdint.h>

#include "dlpack_abi.h"

static float* at(const DLTensor* t, int64_t i, int64_t j) {
  int64_t offset = 0;
  if (t->ndim >= 1) offset += i * t->strides[0];
  if (t->ndim == 2) offset += j * t->strides[1];
  return (float*)((char*)t->data + t->byte_offset) + offset;
}

int c_scale(const DLTensor* in, float k, DLTensor* out) {
  if (in->ndim != out->ndim || in->ndim > 2 || in->dtype.code != kDLFloat || in->dtype.bits != 32 ||
      out->dtype.code != kDLFloat || out->dtype.bits != 32 || in->strides == NULL ||
      out->strides == NULL)
    return -1;
  int64_t rows = in->ndim >= 1 ? in->shape[0] : 1;
  int64_t cols = in->ndim == 2 ? in->shape[1] : 1;
  if ((in->ndim >= 1 && out->shape[0] != rows) || (in->ndim == 2 && out->shape[1] != cols))
    return -1;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) *at(out, i, j) = k * *at(in, i, j);
  return 0;
}
