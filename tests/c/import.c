/* C producer for the import test: builds DLPack tensors with the generated header
 * (include/dlpack_abi.h), hands each to Rust (tests/c/import_consumer.rs) and checks what Rust
 * reports and that every deleter ran exactly once. Exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"
#include "check.h"
#include "producer.h"

int rust_import_versioned(DLManagedTensorVersioned* tensor, char* out, size_t capacity);
int rust_import_legacy(DLManagedTensor* tensor, char* out, size_t capacity);
int rust_fill_versioned(DLManagedTensorVersioned* tensor, int32_t value, char* out, size_t capacity);

/* Checks Rust's return code, that its report contains `expected`, and the deleter count. */
static void expect(const char* name, int code, const char* report, int want_code,
                   const char* expected, int deleted, int want_deleted) {
  checks++;
  if (code != want_code || strstr(report, expected) == NULL || deleted != want_deleted) {
    failures++;
    printf("FAIL %s: code %d (want %d), deleter calls %d (want %d)\n  report:   %s\n  expected: %s\n",
           name, code, want_code, deleted, want_deleted, report, expected);
  } else {
    printf("ok   %s: %s\n", name, report);
  }
}

#define CAP 512

int main(void) {
  char report[CAP];
  int32_t data[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape23[2] = {2, 3};
  int64_t row_major[2] = {3, 1};
  int64_t col_major[2] = {1, 2};
  int64_t shape22[2] = {2, 2};
  int64_t shape4[1] = {4};
  int64_t backwards[1] = {-1};
  int64_t shape03[2] = {0, 3};
  int64_t negative[2] = {2, -3};
  int32_t scalar = 7;
  int code;

  /* ---- valid tensors ---- */
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(data, 2, shape23, row_major), &deleted), report, CAP);
    expect("row-major 2x3", code, report, 0,
           "shape=[2, 3] strides=[3, 1] c=1 f=0 elements=0,1,2,3,4,5", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(data, 2, shape23, col_major), &deleted), report, CAP);
    expect("column-major 2x3", code, report, 0,
           "shape=[2, 3] strides=[1, 2] c=0 f=1 elements=0,2,4,1,3,5", deleted, 1);
  }
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 1, shape4, backwards);
    t.byte_offset = 3 * sizeof(int32_t);
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("negative stride with byte_offset", code, report, 0,
           "shape=[4] strides=[-1] c=0 f=0 elements=3,2,1,0", deleted, 1);
  }
  {
    int deleted = 0;
    DLManagedTensorVersioned* m = versioned(cpu_i32(data, 2, shape22, NULL), &deleted);
    m->version.minor = 1; /* before 1.2: NULL strides mean row-major */
    code = rust_import_versioned(m, report, CAP);
    expect("1.1 producer, NULL strides", code, report, 0,
           "shape=[2, 2] strides=[2, 1] c=1 f=0 elements=0,1,2,3", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(&scalar, 0, NULL, NULL), &deleted), report, CAP);
    expect("0-d, NULL shape and strides", code, report, 0,
           "shape=[] strides=[] c=1 f=1 elements=7", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(NULL, 2, shape03, row_major), &deleted), report, CAP);
    expect("empty, NULL data", code, report, 0, "shape=[0, 3] strides=[3, 1] c=1 f=1 elements=", deleted, 1);
  }
  {
    int deleted = 0;
    DLManagedTensorVersioned* m = versioned(cpu_i32(data, 2, shape23, row_major), &deleted);
    Context* ctx = (Context*)m->manager_ctx;
    m->deleter = NULL; /* legal: nothing to call; this producer frees by itself */
    m->version.minor = 99; /* a newer minor is accepted */
    code = rust_import_versioned(m, report, CAP);
    expect("NULL deleter, minor 99", code, report, 0, "elements=0,1,2,3,4,5", deleted, 0);
    free(ctx);
    free(m);
  }

  /* ---- refused at import: the deleter still runs once ---- */
  {
    int deleted = 0;
    DLManagedTensorVersioned* m = versioned(cpu_i32(data, 2, shape23, row_major), &deleted);
    m->version.major = 2;
    m->dl_tensor.ndim = 5; /* under another major nothing past flags may be read */
    m->dl_tensor.shape = (int64_t*)(uintptr_t)8;
    m->dl_tensor.strides = (int64_t*)(uintptr_t)8;
    code = rust_import_versioned(m, report, CAP);
    expect("major 2", code, report, 1, "version is 2.3; only major version 1", deleted, 1);
  }
  {
    int deleted = 0;
    DLManagedTensorVersioned* m = versioned(cpu_i32(data, -1, shape23, row_major), &deleted);
    code = rust_import_versioned(m, report, CAP);
    expect("ndim -1", code, report, 1, "DLTensor.ndim is -1", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(data, 2, NULL, row_major), &deleted), report, CAP);
    expect("NULL shape", code, report, 1, "DLTensor.shape is NULL but DLTensor.ndim is 2", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(data, 2, negative, row_major), &deleted), report, CAP);
    expect("negative extent", code, report, 1, "DLTensor.shape[1] is -3", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(data, 2, shape23, NULL), &deleted), report, CAP);
    expect("1.3 producer, NULL strides", code, report, 1, "DLTensor.strides is NULL", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_versioned(versioned(cpu_i32(NULL, 2, shape23, row_major), &deleted), report, CAP);
    expect("NULL data", code, report, 1, "DLTensor.data is NULL but the tensor has 6 elements", deleted, 1);
  }
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 2, shape23, row_major);
    t.dtype.code = kDLFloat4_e2m1fn;
    t.dtype.bits = 8;
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("fp4 with 8 bits", code, report, 1, "this code requires bits = 4", deleted, 1);
  }
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 2, shape23, row_major);
    t.dtype.lanes = 0;
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("zero lanes", code, report, 1, "lanes is 0", deleted, 1);
  }
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 2, shape23, row_major);
    t.byte_offset = UINT64_MAX;
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("byte_offset overflow", code, report, 1, "DLTensor.byte_offset is 18446744073709551615", deleted, 1);
  }
  code = rust_import_versioned(NULL, report, CAP);
  expect("NULL pointer", code, report, 1, "pointer is NULL", 0, 0);

  /* ---- imported, but typed access refused ---- */
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 2, shape23, row_major);
    t.dtype.code = kDLFloat;
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("f32 read as i32", code, report, 1, "DLTensor.dtype is float32, but the requested type is int32", deleted, 1);
  }
  {
    int deleted = 0;
    DLTensor t = cpu_i32(data, 2, shape23, row_major);
    t.device.device_type = kDLCUDA;
    code = rust_import_versioned(versioned(t, &deleted), report, CAP);
    expect("CUDA memory", code, report, 1, "DLTensor.device is cuda:0, whose memory the host cannot read", deleted, 1);
  }

  /* ---- legacy tensors ---- */
  {
    int deleted = 0;
    code = rust_import_legacy(legacy(cpu_i32(data, 2, shape23, NULL), &deleted), report, CAP);
    expect("legacy, NULL strides", code, report, 0,
           "shape=[2, 3] strides=[3, 1] c=1 f=0 elements=0,1,2,3,4,5", deleted, 1);
  }
  {
    int deleted = 0;
    code = rust_import_legacy(legacy(cpu_i32(data, -2, shape23, NULL), &deleted), report, CAP);
    expect("legacy, ndim -2", code, report, 1, "DLTensor.ndim is -2", deleted, 1);
  }

  /* ---- writes through the safe mutable slice ---- */
  {
    int deleted = 0, i, all = 1;
    int32_t buffer[6] = {0, 0, 0, 0, 0, 0};
    DLManagedTensorVersioned* m = versioned(cpu_i32(buffer, 2, shape23, row_major), &deleted);
    m->flags = DLPACK_FLAG_BITMASK_IS_COPIED; /* the consumer's alone: writable through &mut */
    code = rust_fill_versioned(m, 9, report, CAP);
    for (i = 0; i < 6; i++) all = all && buffer[i] == 9;
    expect("fill copied", code, report, 0, all ? "filled" : "<buffer not filled>", deleted, 1);
  }
  {
    int deleted = 0, i, untouched = 1;
    int32_t buffer[6] = {0, 0, 0, 0, 0, 0};
    /* Writable but not IS_COPIED: the producer may have handed the memory to others too. */
    code = rust_fill_versioned(versioned(cpu_i32(buffer, 2, shape23, row_major), &deleted), 9, report, CAP);
    for (i = 0; i < 6; i++) untouched = untouched && buffer[i] == 0;
    expect("fill shared", code, report, 1, untouched ? "not IS_COPIED" : "<buffer written>", deleted, 1);
  }
  {
    int deleted = 0, i, untouched = 1;
    int32_t buffer[6] = {0, 0, 0, 0, 0, 0};
    DLManagedTensorVersioned* m = versioned(cpu_i32(buffer, 2, shape23, row_major), &deleted);
    m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    code = rust_fill_versioned(m, 9, report, CAP);
    for (i = 0; i < 6; i++) untouched = untouched && buffer[i] == 0;
    expect("fill read-only", code, report, 1, untouched ? "READ_ONLY set" : "<buffer written>", deleted, 1);
  }

  return summary("c-import");
}
