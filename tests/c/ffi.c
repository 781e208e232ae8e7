/* The FFI-crate test: C calls the kernels of examples/ffi-kernels (a Rust staticlib built on
 * dlpack-abi) with stack DLTensors, good and malformed, and with managed tensors; branches on
 * the stable error codes (DLPackAbiErrorCode) of a kernel that fills a DLPackAbiErrorReport; and
 * Rust calls a C kernel with its own memory (kernels_call_c_scale). Each malformed tensor must be refused
 * with its own message and never read; the C stack buffers stay untouched (nothing is owned, so
 * nothing is freed); managed tensors' deleters run exactly once. Exits non-zero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dlpack_abi.h"
#include "check.h"
#include "producer.h"

int32_t kernels_sum(const DLTensor* x, double* out);
int32_t kernels_scale(const DLTensor* x, float k, DLTensor* out);
int32_t kernels_sum_managed(DLManagedTensorVersioned* x, double* out);
size_t kernels_last_error(char* buffer, size_t capacity);
int32_t kernels_call_c_scale(void);
int32_t kernels_scale_managed(DLManagedTensorVersioned* x, float k, DLPackAbiErrorReport* report);
size_t kernels_error_code_name(int32_t code, char* buffer, size_t capacity);

static DLTensor cpu_f32(float* data, int32_t ndim, int64_t* shape, int64_t* strides) {
  DLTensor t = cpu_i32((int32_t*)(void*)data, ndim, shape, strides);
  t.dtype.code = kDLFloat;
  return t;
}

/* Checks a refusal: the code and that the message contains `expected`. */
static void refused(const char* name, int code, int want_code, const char* expected) {
  char message[256];
  kernels_last_error(message, sizeof message);
  int ok = code == want_code && strstr(message, expected) != NULL;
  check(name, ok);
  if (ok) {
    printf("ok   %s: %s\n", name, message);
  } else {
    printf("  code %d (want %d), message \"%s\", expected \"%s\"\n", code, want_code, message, expected);
  }
}

/* What a caller does about each outcome: C branches on the code, not on the text. */
static const char* remedy(int32_t code) {
  switch (code) {
    case DLPACK_ABI_OK:
      return "done";
    case DLPACK_ABI_ACCESS_DTYPE_MISMATCH:
      return "convert to float32";
    case DLPACK_ABI_ACCESS_READ_ONLY:
    case DLPACK_ABI_ACCESS_NOT_EXCLUSIVE:
      return "scale a copy";
    case DLPACK_ABI_IMPORT_NEGATIVE_NDIM:
    case DLPACK_ABI_IMPORT_NULL_TENSOR:
      return "fix the producer";
    default: /* codes may be added within a major version */
      return "give up";
  }
}

/* Calls kernels_scale_managed on a managed tensor with `flags` and checks the returned code, the
 * report (same code, a NUL-terminated message containing `expected`), the remedy chosen by the
 * code, and that the deleter ran once. */
static void scale_managed(const char* name, DLTensor t, uint64_t flags, int32_t want_code,
                          const char* expected, const char* want_remedy) {
  int deleted = 0;
  DLPackAbiErrorReport report;
  memset(&report, 0xAB, sizeof report); /* garbage: the kernel writes all of it */
  DLManagedTensorVersioned* m = versioned(t, &deleted);
  m->flags = flags;
  int32_t code = kernels_scale_managed(m, 2.0f, &report);
  int ok = code == want_code && report.code == code && deleted == 1 &&
           memchr(report.message, 0, sizeof report.message) != NULL &&
           strstr(report.message, expected) != NULL && strcmp(remedy(code), want_remedy) == 0;
  check(name, ok);
  if (ok) {
    printf("ok   %s: code %d (%s): \"%s\"\n", name, (int)code, remedy(code), report.message);
  } else {
    printf("  code %d (want %d), report.code %d, deleted %d, message \"%.*s\"\n", (int)code,
           (int)want_code, (int)report.code, deleted, (int)sizeof report.message, report.message);
  }
}

int main(void) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape23[2] = {2, 3};
  int64_t row_major[2] = {3, 1};
  int64_t col_major[2] = {1, 2};
  double sum = 0;
  (void)legacy; /* producer.h's legacy tensors are not used here */

  /* ---- C calls Rust with borrowed tensors ---- */
  DLTensor x = cpu_f32(data, 2, shape23, row_major);
  check("sum row-major", kernels_sum(&x, &sum) == 0 && sum == 21.0);
  x.strides = NULL; /* a bare DLTensor may leave strides NULL: compact row-major */
  check("sum with NULL strides", kernels_sum(&x, &sum) == 0 && sum == 21.0);
  x = cpu_f32(data, 2, shape23, col_major);
  check("sum column-major", kernels_sum(&x, &sum) == 0 && sum == 21.0);
  {
    int64_t shape2[1] = {2};
    x = cpu_f32(data, 1, shape2, row_major + 1);
    x.byte_offset = 4 * sizeof(float); /* elements 4 and 5: counted once */
    check("sum with byte_offset", kernels_sum(&x, &sum) == 0 && sum == 11.0);
  }
  {
    float result[6] = {0};
    x = cpu_f32(data, 2, shape23, col_major);
    DLTensor out = cpu_f32(result, 2, shape23, row_major);
    check("scale column-major into row-major", kernels_scale(&x, 10.0f, &out) == 0);
    /* x[i][j] = data[i + 2j] */
    float want[6] = {10, 30, 50, 20, 40, 60};
    check("scale wrote the C buffer", memcmp(result, want, sizeof want) == 0);
    out.strides = col_major;
    refused("scale refuses a strided output", kernels_scale(&x, 1.0f, &out), 2, "not contiguous");
  }

  /* ---- malformed tensors: each refused with its own message, nothing read or freed ---- */
  x = cpu_f32(data, 2, shape23, row_major);
  x.ndim = -1;
  refused("negative ndim", kernels_sum(&x, &sum), 1, "ndim is -1");
  x = cpu_f32(data, 2, NULL, row_major);
  refused("NULL shape", kernels_sum(&x, &sum), 1, "shape is NULL");
  {
    int64_t negative[2] = {2, -3};
    x = cpu_f32(data, 2, negative, row_major);
    refused("negative extent", kernels_sum(&x, &sum), 1, "shape[1] is -3");
  }
  x = cpu_f32(NULL, 2, shape23, row_major);
  refused("NULL data", kernels_sum(&x, &sum), 1, "data is NULL");
  x = cpu_f32(data, 2, shape23, row_major);
  x.dtype.lanes = 0;
  refused("zero lanes", kernels_sum(&x, &sum), 1, "lanes");
  x = cpu_f32(data, 2, shape23, row_major);
  x.byte_offset = UINT64_MAX;
  refused("byte_offset overflow", kernels_sum(&x, &sum), 1, "byte_offset");
  {
    int64_t huge[2] = {INT64_MAX, 1};
    x = cpu_f32(data, 2, shape23, huge);
    refused("strides overflow", kernels_sum(&x, &sum), 1, "strides");
  }
  x = cpu_i32((int32_t*)(void*)data, 2, shape23, row_major);
  refused("int32 for a float kernel", kernels_sum(&x, &sum), 2, "dtype");
  x = cpu_f32(data, 2, shape23, row_major);
  x.byte_offset = 1;
  refused("misaligned", kernels_sum(&x, &sum), 2, "not aligned");
  x = cpu_f32(data, 2, shape23, row_major);
  x.device.device_type = kDLCUDA;
  refused("CUDA memory", kernels_sum(&x, &sum), 2, "host");
  refused("NULL tensor", kernels_sum(NULL, &sum), 1, "NULL");
  x = cpu_f32(data, 2, shape23, row_major);
  refused("NULL out", kernels_sum(&x, NULL), 3, "out is NULL");
  {
    float want[6] = {1, 2, 3, 4, 5, 6};
    check("the C buffer is untouched", memcmp(data, want, sizeof want) == 0);
  }

  /* ---- managed tensors: the deleter runs once, on success and on refusal ---- */
  {
    int deleted = 0;
    DLManagedTensorVersioned* m = versioned(cpu_f32(data, 2, shape23, row_major), &deleted);
    check("sum managed", kernels_sum_managed(m, &sum) == 0 && sum == 21.0 && deleted == 1);
    deleted = 0;
    m = versioned(cpu_f32(data, 2, shape23, row_major), &deleted);
    m->dl_tensor.ndim = -1;
    refused("managed, malformed", kernels_sum_managed(m, &sum), 1, "ndim is -1");
    check("  deleter ran once", deleted == 1);
    deleted = 0;
    m = versioned(cpu_i32((int32_t*)(void*)data, 2, shape23, row_major), &deleted);
    refused("managed, wrong dtype", kernels_sum_managed(m, &sum), 2, "dtype");
    check("  deleter ran once", deleted == 1);
  }

  /* ---- stable error codes and the report: C branches on the code, prints the message ---- */
  {
    float mine[6] = {1, 2, 3, 4, 5, 6};
    const uint64_t copied = DLPACK_FLAG_BITMASK_IS_COPIED;
    const uint64_t frozen = DLPACK_FLAG_BITMASK_IS_COPIED | DLPACK_FLAG_BITMASK_READ_ONLY;
    scale_managed("scale managed: success", cpu_f32(mine, 2, shape23, row_major), copied,
                  DLPACK_ABI_OK, "", "done");
    float want[6] = {2, 4, 6, 8, 10, 12};
    check("  scaled in place", memcmp(mine, want, sizeof want) == 0);
    scale_managed("scale managed: int32 tensor", cpu_i32((int32_t*)(void*)mine, 2, shape23, row_major),
                  copied, DLPACK_ABI_ACCESS_DTYPE_MISMATCH, "dtype", "convert to float32");
    scale_managed("scale managed: READ_ONLY tensor", cpu_f32(mine, 2, shape23, row_major), frozen,
                  DLPACK_ABI_ACCESS_READ_ONLY, "READ_ONLY", "scale a copy");
    scale_managed("scale managed: not IS_COPIED", cpu_f32(mine, 2, shape23, row_major), 0,
                  DLPACK_ABI_ACCESS_NOT_EXCLUSIVE, "IS_COPIED", "scale a copy");
    DLTensor bad = cpu_f32(mine, 2, shape23, row_major);
    bad.ndim = -1;
    scale_managed("scale managed: malformed", bad, copied, DLPACK_ABI_IMPORT_NEGATIVE_NDIM,
                  "ndim is -1", "fix the producer");
    check("  refused tensors untouched", memcmp(mine, want, sizeof want) == 0);
    check("scale managed: NULL tensor, NULL report: the code alone",
          kernels_scale_managed(NULL, 2.0f, NULL) == DLPACK_ABI_IMPORT_NULL_TENSOR);
    check("the report is 256 bytes", sizeof(DLPackAbiErrorReport) == 256);
  }

  /* ---- the header names every code as the Rust table does, and no other ---- */
  {
    int agree = 1;
    for (int32_t code = -2; code < 12000; code++) {
      char rust[96];
      const char* header = dlpack_abi_error_code_name(code);
      if (kernels_error_code_name(code, rust, sizeof rust) == 0) {
        agree &= header == NULL;
      } else {
        agree &= header != NULL && strcmp(header, rust) == 0;
      }
    }
    check("error code names: the header's are the Rust table's", agree);
    check("error code name of 208",
          strcmp(dlpack_abi_error_code_name(208), "DLPACK_ABI_ACCESS_NOT_EXCLUSIVE") == 0);
    check("an integration crate's code has no name here", dlpack_abi_error_code_name(1601) == NULL);
  }

  /* ---- Rust calls C with Rust memory ---- */
  check("Rust lends a strided input and an output to c_scale", kernels_call_c_scale() == 0);

  return summary("ffi");
}
