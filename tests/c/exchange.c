/* C side of the exchange test: consumes tensors that Rust exports (tests/c/exchange_rust.rs),
 * reading them through the generated header (include/dlpack_abi.h) and calling their deleters,
 * and produces tensors that Rust imports and re-exports back to C. Checks every value and that
 * every deleter, C's and Rust's, ran exactly once. Exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"
#include "check.h"
#include "producer.h"

size_t rust_drops(void);
DLManagedTensorVersioned* rust_export_f32(int64_t n);
DLManagedTensorVersioned* rust_export_transposed(size_t offset);
DLManagedTensorVersioned* rust_export_read_only(void);
DLManagedTensorVersioned* rust_export_empty(void);
DLManagedTensor* rust_export_legacy(int64_t n);
DLManagedTensor* rust_reexport_legacy(DLManagedTensorVersioned* tensor);
DLManagedTensorVersioned* rust_upgrade(DLManagedTensor* tensor);
DLManagedTensorVersioned* rust_reexport_transposed(DLManagedTensorVersioned* tensor);


/* Element (i, j) of a 2-D tensor, addressed as a consumer must: data + byte_offset + strides. */
static const char* element2(const DLTensor* t, int64_t i, int64_t j, size_t size) {
  const char* base = (const char*)t->data + t->byte_offset;
  return base + (i * t->strides[0] + j * t->strides[1]) * (int64_t)size;
}

static int is_current(DLPackVersion v) {
  return v.major == DLPACK_MAJOR_VERSION && v.minor == DLPACK_MINOR_VERSION;
}

static void rust_to_c(void) {
  size_t drops = rust_drops();

  DLManagedTensorVersioned* f = rust_export_f32(1000);
  check("f32: exported", f != NULL);
  const DLTensor* t = &f->dl_tensor;
  check("f32: version 1.3", is_current(f->version));
  check("f32: no flags", f->flags == 0);
  check("f32: cpu", t->device.device_type == kDLCPU && t->device.device_id == 0);
  check("f32: dtype", t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1);
  check("f32: shape", t->ndim == 1 && t->shape[0] == 1000);
  check("f32: strides sent", t->strides != NULL && t->strides[0] == 1);
  check("f32: byte_offset 0", t->byte_offset == 0);
  const float* values = (const float*)t->data;
  int all = 1;
  for (int i = 0; i < 1000; i++) all &= values[i] == (float)i;
  check("f32: values", all);
  check("f32: not dropped before the deleter", rust_drops() == drops);
  f->deleter(f);
  check("f32: dropped once by the deleter", rust_drops() == drops + 1);

  DLManagedTensorVersioned* tr = rust_export_transposed(5);
  t = &tr->dl_tensor;
  check("transposed: shape", t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 2);
  check("transposed: strides", t->strides[0] == 1 && t->strides[1] == 3);
  check("transposed: byte_offset folds the offset", t->byte_offset == 5 * sizeof(int32_t));
  int32_t expected[3][2] = {{0, 10}, {1, 11}, {2, 12}};
  all = 1;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) all &= *(const int32_t*)element2(t, i, j, 4) == expected[i][j];
  check("transposed: values through byte_offset and strides", all);
  tr->deleter(tr);
  check("transposed: dropped once", rust_drops() == drops + 2);

  DLManagedTensorVersioned* ro = rust_export_read_only();
  check("read-only: flag", ro->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  check("read-only: values", ((const uint8_t*)ro->dl_tensor.data)[2] == 9);
  ro->deleter(ro);
  check("read-only: dropped once", rust_drops() == drops + 3);

  DLManagedTensorVersioned* e = rust_export_empty();
  t = &e->dl_tensor;
  check("empty: data NULL", t->data == NULL && t->byte_offset == 0);
  check("empty: shape and strides", t->shape[0] == 0 && t->shape[1] == 4 && t->strides != NULL);
  e->deleter(e);
  check("empty: dropped once", rust_drops() == drops + 4);

  DLManagedTensor* l = rust_export_legacy(4);
  t = &l->dl_tensor;
  check("legacy: dtype", t->dtype.code == kDLInt && t->dtype.bits == 16);
  check("legacy: values", ((const int16_t*)t->data)[3] == -3 && t->strides[0] == 1);
  l->deleter(l);
  check("legacy: dropped once", rust_drops() == drops + 5);

  check("bad request: NULL, nothing leaked", rust_export_f32(-1) == NULL && rust_drops() == drops + 5);
}

static void c_to_rust_to_c(void) {
  int32_t data[6] = {0, 1, 2, 10, 11, 12};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  size_t drops = rust_drops();

  /* Versioned C tensor -> Rust -> legacy for C. */
  int deleted = 0;
  DLManagedTensor* l = rust_reexport_legacy(versioned(cpu_i32(data, 2, shape, strides), &deleted));
  check("as legacy: re-exported", l != NULL);
  check("as legacy: same data", l->dl_tensor.data == data);
  check("as legacy: same element", *(const int32_t*)element2(&l->dl_tensor, 1, 2, 4) == 12);
  check("as legacy: C deleter not yet run", deleted == 0);
  l->deleter(l);
  check("as legacy: C deleter ran once", deleted == 1);

  /* A read-only one cannot be legacy: refused, and the C deleter has run. */
  deleted = 0;
  DLManagedTensorVersioned* ro = versioned(cpu_i32(data, 2, shape, strides), &deleted);
  ro->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  check("read-only as legacy: refused", rust_reexport_legacy(ro) == NULL);
  check("read-only as legacy: C deleter ran once", deleted == 1);

  /* Legacy C tensor (NULL strides) -> Rust -> versioned for C. */
  deleted = 0;
  DLManagedTensorVersioned* v = rust_upgrade(legacy(cpu_i32(data, 2, shape, NULL), &deleted));
  check("upgrade: version 1.3", v != NULL && is_current(v->version));
  check("upgrade: read-only", v->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  check("upgrade: strides written", v->dl_tensor.strides != NULL &&
                                        v->dl_tensor.strides[0] == 3 && v->dl_tensor.strides[1] == 1);
  check("upgrade: same data", v->dl_tensor.data == data);
  v->deleter(v);
  check("upgrade: C deleter ran once", deleted == 1);

  /* Versioned C tensor -> Rust -> transposed view (a Rust owner) for C. */
  deleted = 0;
  DLManagedTensorVersioned* tr =
      rust_reexport_transposed(versioned(cpu_i32(data, 2, shape, strides), &deleted));
  check("transpose: re-exported", tr != NULL);
  const DLTensor* t = &tr->dl_tensor;
  check("transpose: shape", t->shape[0] == 3 && t->shape[1] == 2);
  check("transpose: same data", t->data == data);
  check("transpose: element (2, 1)", *(const int32_t*)element2(t, 2, 1, 4) == 12);
  check("transpose: element (0, 1)", *(const int32_t*)element2(t, 0, 1, 4) == 10);
  check("transpose: C deleter not yet run", deleted == 0);
  tr->deleter(tr);
  check("transpose: C deleter ran once", deleted == 1);
  check("transpose: Rust owner dropped once", rust_drops() == drops + 1);

  /* A 1-D tensor cannot be transposed: refused, C deleter run. */
  deleted = 0;
  int64_t one[1] = {6};
  int64_t unit[1] = {1};
  check("transpose 1-D: refused",
        rust_reexport_transposed(versioned(cpu_i32(data, 1, one, unit), &deleted)) == NULL);
  check("transpose 1-D: C deleter ran once", deleted == 1);
}

int main(void) {
  rust_to_c();
  c_to_rust_to_c();
  return summary("c-exchange");
}
