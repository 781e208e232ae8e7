/* A C producer shared by the C tests: tensors over test-owned i32 data, whose deleters count
 * their calls and free what they allocated (the managed struct and its context). */
#ifndef DLPACK_ABI_TEST_PRODUCER_H
#define DLPACK_ABI_TEST_PRODUCER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"

/* The producer's context: where its deleter counts calls. Shape, strides and data belong to the
 * test (they outlive the tensor), so the data can be checked after Rust dropped it. */
typedef struct {
  int* deleted;
} Context;

static void delete_versioned(DLManagedTensorVersioned* self) {
  Context* ctx = (Context*)self->manager_ctx;
  (*ctx->deleted)++;
  free(ctx);
  free(self);
}

static void delete_legacy(DLManagedTensor* self) {
  Context* ctx = (Context*)self->manager_ctx;
  (*ctx->deleted)++;
  free(ctx);
  free(self);
}

static DLTensor cpu_i32(int32_t* data, int32_t ndim, int64_t* shape, int64_t* strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = kDLInt;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

static DLManagedTensorVersioned* versioned(DLTensor t, int* deleted) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof *m);
  Context* ctx = (Context*)calloc(1, sizeof *ctx);
  ctx->deleted = deleted;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = ctx;
  m->deleter = delete_versioned;
  m->flags = 0;
  m->dl_tensor = t;
  return m;
}

static DLManagedTensor* legacy(DLTensor t, int* deleted) {
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof *m);
  Context* ctx = (Context*)calloc(1, sizeof *ctx);
  ctx->deleted = deleted;
  m->dl_tensor = t;
  m->manager_ctx = ctx;
  m->deleter = delete_legacy;
  return m;
}

#endif
