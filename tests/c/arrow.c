/* C side of the Arrow test: produces schemas, arrays, device arrays and streams (malloc-based,
 * with release callbacks that free what they own, release their children and count their calls)
 * that Rust imports (tests/c/arrow_rust.rs); checks the errors Rust gives for malformed ones;
 * consumes the schemas, arrays and streams Rust exports; implements an async stream handler Rust
 * drives; and reads a DLPack tensor bridged to Arrow. Checks every value, that each C release
 * ran exactly once, and that every Rust owner was dropped exactly once. Exits non-zero on any
 * failure. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_abi.h"
#include "check.h"
#include "producer.h"

/* What Rust read (`Report` in tests/c/arrow_rust.rs, field for field). */
struct Report {
  int64_t length;
  int64_t offset;
  int64_t null_count;
  int64_t bitmap_nulls;
  int64_t sum;
  int64_t items;
  int64_t device_id;
  int64_t shape[4];
  int64_t strides[4];
  int32_t device_type;
  int32_t ndim;
  int32_t code;
  int32_t has_message;
  int32_t ended;
  int32_t read_only;
  float first[4];
  char name[32];
  char text[64];
  char error[128];
};

size_t rust_drops(void);
size_t rust_report_size(void);
int rust_import_i32(struct ArrowSchema* schema, struct ArrowArray* array, struct Report* report);
int rust_import_check(struct ArrowSchema* schema, struct ArrowArray* array, struct Report* report);
DLManagedTensorVersioned* rust_tensor_from_arrow(struct ArrowSchema* schema,
                                                 struct ArrowArray* array, struct Report* report);
int rust_import_device(struct ArrowSchema* schema, struct ArrowDeviceArray* array,
                       struct Report* report);
int rust_consume_stream(struct ArrowArrayStream* stream, struct Report* report);
int rust_consume_device_stream(struct ArrowDeviceArrayStream* stream, struct Report* report);
int rust_export_i32(struct ArrowSchema* schema, struct ArrowArray* array);
int rust_export_stream(struct ArrowArrayStream* out);
int rust_export_device_stream(struct ArrowDeviceArrayStream* out);
int rust_async_run(struct ArrowAsyncDeviceStreamHandler* handler, int count, int fail);
int rust_bridge_dlpack(DLManagedTensorVersioned* tensor, struct ArrowSchema* schema,
                       struct ArrowDeviceArray* array, struct Report* report);
int rust_bridge_legacy(DLManagedTensor* tensor, struct ArrowSchema* schema,
                       struct ArrowDeviceArray* array, struct Report* report);



static struct Report new_report(void) {
  struct Report r;
  memset(&r, 0, sizeof r);
  return r;
}

static char* copy_string(const char* s) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char* copy = (char*)malloc(n);
  memcpy(copy, s, n);
  return copy;
}

/* ---- metadata: int32 count, then per pair int32 length + key, int32 length + value ---- */

static char* encode_metadata(int n, const char* const* keys, const char* const* values) {
  size_t size = 4;
  for (int i = 0; i < n; i++) size += 8 + strlen(keys[i]) + strlen(values[i]);
  char* out = (char*)malloc(size);
  char* at = out;
  int32_t count = n;
  memcpy(at, &count, 4);
  at += 4;
  for (int i = 0; i < n; i++) {
    const char* parts[2] = {keys[i], values[i]};
    for (int j = 0; j < 2; j++) {
      int32_t len = (int32_t)strlen(parts[j]);
      memcpy(at, &len, 4);
      memcpy(at + 4, parts[j], (size_t)len);
      at += 4 + len;
    }
  }
  return out;
}

/* The value of `key` in encoded metadata, copied into `out`; 0 if absent. */
static int metadata_get(const char* metadata, const char* key, char* out, size_t cap) {
  if (metadata == NULL) return 0;
  int32_t count;
  memcpy(&count, metadata, 4);
  const char* at = metadata + 4;
  for (int32_t i = 0; i < count; i++) {
    int32_t key_len, value_len;
    memcpy(&key_len, at, 4);
    const char* k = at + 4;
    memcpy(&value_len, k + key_len, 4);
    const char* v = k + key_len + 4;
    at = v + value_len;
    if ((size_t)key_len == strlen(key) && memcmp(k, key, (size_t)key_len) == 0) {
      size_t n = (size_t)value_len < cap - 1 ? (size_t)value_len : cap - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      return 1;
    }
  }
  return 0;
}

/* ---- C producer: schemas ---- */

typedef struct {
  char* format;
  char* name;
  char* metadata;
  int* released;
} SchemaPrivate;

/* Releases the children (the parent's job), frees what the schema owns, counts the call. */
static void release_schema(struct ArrowSchema* schema) {
  SchemaPrivate* p = (SchemaPrivate*)schema->private_data;
  for (int64_t i = 0; i < schema->n_children; i++) {
    struct ArrowSchema* child = schema->children[i];
    if (child->release != NULL) child->release(child);
    free(child);
  }
  free(schema->children);
  free(p->format);
  free(p->name);
  free(p->metadata);
  (*p->released)++;
  free(p);
  schema->release = NULL;
}

/* A schema owning copies of `format` and `name` and the encoded `metadata` (taken over). */
static struct ArrowSchema make_schema(const char* format, const char* name, char* metadata,
                                      int* released) {
  SchemaPrivate* p = (SchemaPrivate*)calloc(1, sizeof *p);
  p->format = copy_string(format);
  p->name = copy_string(name);
  p->metadata = metadata;
  p->released = released;
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  s.format = p->format;
  s.name = p->name;
  s.metadata = p->metadata;
  s.flags = ARROW_FLAG_NULLABLE;
  s.release = release_schema;
  s.private_data = p;
  return s;
}

/* Gives `parent` its only child (moved into a heap struct the parent's release frees). */
static void set_schema_child(struct ArrowSchema* parent, struct ArrowSchema child) {
  parent->children = (struct ArrowSchema**)malloc(sizeof(struct ArrowSchema*));
  parent->children[0] = (struct ArrowSchema*)malloc(sizeof child);
  *parent->children[0] = child;
  parent->n_children = 1;
}

/* An int32 field named "col" with metadata origin=c, unit=m. */
static struct ArrowSchema i32_schema(int* released) {
  const char* keys[2] = {"origin", "unit"};
  const char* values[2] = {"c", "m"};
  return make_schema("i", "col", encode_metadata(2, keys, values), released);
}

/* ---- C producer: arrays ---- */

typedef struct {
  void* validity;
  void* values;
  int* released;
} ArrayPrivate;

static void release_array(struct ArrowArray* array) {
  ArrayPrivate* p = (ArrayPrivate*)array->private_data;
  for (int64_t i = 0; i < array->n_children; i++) {
    struct ArrowArray* child = array->children[i];
    if (child->release != NULL) child->release(child);
    free(child);
  }
  free(array->children);
  free((void*)array->buffers);
  free(p->validity);
  free(p->values);
  (*p->released)++;
  free(p);
  array->release = NULL;
}

/* A primitive array of `n` values of `size` bytes (copied), with an optional validity bitmap
 * (copied), no nulls, offset 0. Room for 3 buffer pointers, so n_buffers can be raised. */
static struct ArrowArray primitive_array(const void* values, size_t size, int64_t n,
                                         const uint8_t* validity, int* released) {
  ArrayPrivate* p = (ArrayPrivate*)calloc(1, sizeof *p);
  p->released = released;
  p->values = malloc(size * (size_t)n + 1);
  memcpy(p->values, values, size * (size_t)n);
  if (validity != NULL) {
    size_t bytes = (size_t)(n + 7) / 8;
    p->validity = malloc(bytes);
    memcpy(p->validity, validity, bytes);
  }
  const void** buffers = (const void**)calloc(3, sizeof(void*));
  buffers[0] = p->validity;
  buffers[1] = p->values;
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  a.length = n;
  a.n_buffers = 2;
  a.buffers = buffers;
  a.release = release_array;
  a.private_data = p;
  return a;
}

static struct ArrowArray i32_array(const int32_t* values, int64_t n, int* released) {
  return primitive_array(values, sizeof(int32_t), n, NULL, released);
}

/* A fixed-size list array of `length` lists over `child` (moved; released by the parent). */
static struct ArrowArray fixed_size_list_array(int64_t length, struct ArrowArray child,
                                               int* released) {
  ArrayPrivate* p = (ArrayPrivate*)calloc(1, sizeof *p);
  p->released = released;
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  a.length = length;
  a.n_buffers = 1;
  a.buffers = (const void**)calloc(1, sizeof(void*));
  a.n_children = 1;
  a.children = (struct ArrowArray**)malloc(sizeof(struct ArrowArray*));
  a.children[0] = (struct ArrowArray*)malloc(sizeof child);
  *a.children[0] = child;
  a.release = release_array;
  a.private_data = p;
  return a;
}

/* ---- 1. C -> Rust ---- */

static void c_to_rust(void) {
  /* int32 [1, null, 3] at offset 1 of [100, 1, 1000, 3]: bits 1 and 3 set. */
  int schema_released = 0, array_released = 0;
  struct ArrowSchema schema = i32_schema(&schema_released);
  int32_t values[4] = {100, 1, 1000, 3};
  uint8_t validity[1] = {0x0A};
  struct ArrowArray array = primitive_array(values, 4, 4, validity, &array_released);
  array.length = 3;
  array.offset = 1;
  array.null_count = 1;
  struct Report r = new_report();
  int rc = rust_import_i32(&schema, &array, &r);
  check("i32: imported", rc == 0);
  if (rc != 0) printf("  error: %s\n", r.error);
  check("i32: length, offset", r.length == 3 && r.offset == 1);
  check("i32: null_count 1", r.null_count == 1);
  check("i32: one zero bit in the bitmap", r.bitmap_nulls == 1);
  check("i32: sum of valid values", r.sum == 4);
  check_str("i32: name", r.name, "col");
  check_str("i32: metadata origin", r.text, "c");
  check("i32: schema moved (release NULL)", schema.release == NULL);
  check("i32: array moved (release NULL)", array.release == NULL);
  check("i32: schema released once", schema_released == 1);
  check("i32: array released once", array_released == 1);

  /* fixed_shape_tensor [2, 3]: 2 cells of float 0, 1, ..., 11. */
  int child_schema_released = 0, tensor_array_released = 0, values_released = 0;
  schema_released = 0;
  const char* keys[2] = {"ARROW:extension:name", "ARROW:extension:metadata"};
  const char* ext[2] = {"arrow.fixed_shape_tensor", "{\"shape\":[2,3]}"};
  schema = make_schema("+w:6", "tensor", encode_metadata(2, keys, ext), &schema_released);
  set_schema_child(&schema, make_schema("f", "item", NULL, &child_schema_released));
  float cells[12];
  for (int i = 0; i < 12; i++) cells[i] = (float)i * 0.5f;
  array = fixed_size_list_array(2, primitive_array(cells, sizeof(float), 12, NULL, &values_released),
                                &tensor_array_released);
  r = new_report();
  DLManagedTensorVersioned* t = rust_tensor_from_arrow(&schema, &array, &r);
  check("tensor: bridged", t != NULL);
  if (t == NULL) {
    printf("  error: %s\n", r.error);
    return;
  }
  check("tensor: reported ndim 3", r.ndim == 3);
  check("tensor: reported shape [2, 2, 3]", r.shape[0] == 2 && r.shape[1] == 2 && r.shape[2] == 3);
  check("tensor: reported strides [6, 3, 1]",
        r.strides[0] == 6 && r.strides[1] == 3 && r.strides[2] == 1);
  check("tensor: reported first values",
        r.first[0] == 0.0f && r.first[1] == 0.5f && r.first[2] == 1.0f && r.first[3] == 1.5f);
  check("tensor: reported READ_ONLY", r.read_only == 1);
  check("tensor: schema released once (children by the parent)",
        schema_released == 1 && child_schema_released == 1 && schema.release == NULL);
  const DLTensor* dl = &t->dl_tensor;
  check("tensor: DLPack flags READ_ONLY", (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  check("tensor: DLPack float32 on CPU",
        dl->dtype.code == kDLFloat && dl->dtype.bits == 32 && dl->device.device_type == kDLCPU);
  check("tensor: DLPack shape", dl->ndim == 3 && dl->shape[0] == 2 && dl->shape[2] == 3);
  check("tensor: DLPack last value",
        *(const float*)((const char*)dl->data + dl->byte_offset + 11 * sizeof(float)) == 5.5f);
  check("tensor: array moved, not yet released",
        array.release == NULL && tensor_array_released == 0 && values_released == 0);
  t->deleter(t);
  check("tensor: array released once by the deleter", tensor_array_released == 1);
  check("tensor: child released once by its parent", values_released == 1);
}

/* ---- 2. Malformed C input ---- */

/* Hands `schema` (and `array`, if non-NULL) to Rust; checks the error text and the releases. */
static void expect_error(const char* name, struct ArrowSchema* schema, int* schema_released,
                         int schema_releases, struct ArrowArray* array, int* array_released,
                         const char* expected) {
  char label[128];
  struct Report r = new_report();
  int rc = rust_import_check(schema, array, &r);
  snprintf(label, sizeof label, "%s: refused", name);
  check(label, rc == -1);
  snprintf(label, sizeof label, "%s: error text", name);
  check_str(label, r.error, expected);
  snprintf(label, sizeof label, "%s: schema released %d time(s)", name, schema_releases);
  check(label, *schema_released == schema_releases);
  if (array != NULL) {
    snprintf(label, sizeof label, "%s: array released once", name);
    check(label, *array_released == 1 && array->release == NULL);
  }
}

static void malformed(void) {
  int32_t values[3] = {1, 2, 3};
  int s = 0, a = 0;
  struct ArrowSchema schema = make_schema("q", NULL, NULL, &s);
  expect_error("format q", &schema, &s, 1, NULL, NULL, "ArrowSchema.format \"q\" is not valid");

  s = 0;
  schema = make_schema(NULL, "nameless", NULL, &s);
  expect_error("NULL format", &schema, &s, 1, NULL, NULL, "ArrowSchema.format is NULL");

  struct ArrowArray array;
  struct {
    const char* name;
    int64_t length, offset, null_count, n_buffers;
    const char* expected;
  } cases[] = {
      {"negative length", -1, 0, 0, 2, "ArrowArray.length is -1"},
      {"negative offset", 3, -2, 0, 2, "ArrowArray.offset is -2"},
      {"3 buffers for int32", 3, 0, 0, 3, "ArrowArray.n_buffers is 3, the type needs 2"},
      {"null_count > length", 3, 0, 5, 2, "ArrowArray.null_count is 5, outside -1..=3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    s = 0;
    a = 0;
    schema = i32_schema(&s);
    array = i32_array(values, 3, &a);
    array.length = cases[i].length;
    array.offset = cases[i].offset;
    array.null_count = cases[i].null_count;
    array.n_buffers = cases[i].n_buffers;
    expect_error(cases[i].name, &schema, &s, 1, &array, &a, cases[i].expected);
  }

  /* Released structs: nothing to import, nothing released. */
  const char* released = "the Arrow struct is already released (release is NULL)";
  s = 0;
  schema = i32_schema(&s);
  void (*schema_release)(struct ArrowSchema*) = schema.release;
  schema.release = NULL;
  expect_error("released schema", &schema, &s, 0, NULL, NULL, released);
  schema.release = schema_release;
  schema.release(&schema);
  check("released schema: freed by its producer", s == 1);

  s = 0;
  a = 0;
  schema = i32_schema(&s);
  array = i32_array(values, 3, &a);
  void (*array_release)(struct ArrowArray*) = array.release;
  array.release = NULL;
  struct Report r = new_report();
  check("released array: refused", rust_import_check(&schema, &array, &r) == -1);
  check_str("released array: error text", r.error, released);
  check("released array: not released by Rust", a == 0);
  check("released array: the schema was imported and dropped", s == 1);
  array.release = array_release;
  array.release(&array);
  check("released array: freed by its producer", a == 1);
}

/* ---- 3. C device array ---- */

static void device_array(void) {
  int s = 0, a = 0;
  int32_t values[4] = {5, 6, 7, 8};
  struct ArrowSchema schema = i32_schema(&s);
  struct ArrowDeviceArray d;
  memset(&d, 0, sizeof d);
  d.array = i32_array(values, 4, &a);
  d.device_id = -1;
  d.device_type = ARROW_DEVICE_CPU;
  d.sync_event = NULL;
  d.reserved[0] = 0x5eed;
  d.reserved[1] = -1;
  d.reserved[2] = INT64_MAX;
  struct Report r = new_report();
  int rc = rust_import_device(&schema, &d, &r);
  check("device: imported despite reserved garbage", rc == 0);
  if (rc != 0) printf("  error: %s\n", r.error);
  check("device: CPU, id -1", r.device_type == ARROW_DEVICE_CPU && r.device_id == -1);
  check("device: values", r.length == 4 && r.sum == 26);
  check("device: moved", d.array.release == NULL);
  check("device: schema and array released once", s == 1 && a == 1);
}

/* ---- 4. C streams consumed by Rust ---- */

/* One C stream's state: yields `n_arrays` int32 arrays (array k: k + 1 values 10k, 10k + 1,
 * ...), or fails with `code` and `message` when it reaches `fail_at`. */
typedef struct {
  int next;
  int n_arrays;
  int fail_at;
  int code;
  const char* message;
  int schemas_released;
  int arrays_made;
  int arrays_released;
  int released;
} StreamState;

static struct ArrowArray stream_array(StreamState* st) {
  int32_t values[16];
  int k = st->next++;
  for (int i = 0; i <= k; i++) values[i] = 10 * k + i;
  st->arrays_made++;
  return i32_array(values, k + 1, &st->arrays_released);
}

/* Whether `get_next` fails now, or ends the stream. */
static int stream_step(StreamState* st, int* end) {
  *end = 0;
  if (st->next == st->fail_at) return st->code;
  if (st->next >= st->n_arrays) *end = 1;
  return 0;
}

static int c_get_schema(struct ArrowArrayStream* self, struct ArrowSchema* out) {
  StreamState* st = (StreamState*)self->private_data;
  *out = make_schema("i", "streamed", NULL, &st->schemas_released);
  return 0;
}

static int c_get_next(struct ArrowArrayStream* self, struct ArrowArray* out) {
  StreamState* st = (StreamState*)self->private_data;
  int end;
  int code = stream_step(st, &end);
  if (code != 0) return code;
  if (end) {
    out->release = NULL;
    return 0;
  }
  *out = stream_array(st);
  return 0;
}

static const char* c_get_last_error(struct ArrowArrayStream* self) {
  return ((StreamState*)self->private_data)->message;
}

static void c_release_stream(struct ArrowArrayStream* self) {
  ((StreamState*)self->private_data)->released++;
  self->release = NULL;
}

static int c_device_get_schema(struct ArrowDeviceArrayStream* self, struct ArrowSchema* out) {
  StreamState* st = (StreamState*)self->private_data;
  *out = make_schema("i", "streamed", NULL, &st->schemas_released);
  return 0;
}

static int c_device_get_next(struct ArrowDeviceArrayStream* self, struct ArrowDeviceArray* out) {
  StreamState* st = (StreamState*)self->private_data;
  int end;
  int code = stream_step(st, &end);
  if (code != 0) return code;
  memset(out, 0, sizeof *out);
  if (end) return 0; /* out->array.release is NULL */
  out->array = stream_array(st);
  out->device_id = -1;
  out->device_type = ARROW_DEVICE_CPU;
  return 0;
}

static const char* c_device_get_last_error(struct ArrowDeviceArrayStream* self) {
  return ((StreamState*)self->private_data)->message;
}

static void c_device_release_stream(struct ArrowDeviceArrayStream* self) {
  ((StreamState*)self->private_data)->released++;
  self->release = NULL;
}

static struct ArrowArrayStream c_stream(StreamState* st) {
  struct ArrowArrayStream s;
  s.get_schema = c_get_schema;
  s.get_next = c_get_next;
  s.get_last_error = c_get_last_error;
  s.release = c_release_stream;
  s.private_data = st;
  return s;
}

static StreamState stream_state(int n_arrays, int fail_at, int code, const char* message) {
  StreamState st;
  memset(&st, 0, sizeof st);
  st.n_arrays = n_arrays;
  st.fail_at = fail_at;
  st.code = code;
  st.message = message;
  return st;
}

/* Stream releases: the stream, its schema and every array it made, once each. */
static void check_stream_releases(const char* name, const StreamState* st, int arrays) {
  char label[128];
  snprintf(label, sizeof label, "%s: stream released once", name);
  check(label, st->released == 1);
  snprintf(label, sizeof label, "%s: schema released once", name);
  check(label, st->schemas_released == 1);
  snprintf(label, sizeof label, "%s: %d arrays made, each released once", name, arrays);
  check(label, st->arrays_made == arrays && st->arrays_released == arrays);
}

static void c_streams(void) {
  /* 3 arrays, then the end: [0], [10, 11], [20, 21, 22]. */
  StreamState st = stream_state(3, -1, 0, NULL);
  struct ArrowArrayStream stream = c_stream(&st);
  struct Report r = new_report();
  int rc = rust_consume_stream(&stream, &r);
  check("stream: consumed", rc == 0);
  if (rc != 0) printf("  error: %s\n", r.error);
  check("stream: 3 arrays", r.items == 3);
  check("stream: sum", r.sum == 0 + 21 + 63);
  check("stream: ended with None", r.ended == 1 && r.code == 0);
  check_str("stream: schema name", r.name, "streamed");
  check("stream: moved", stream.release == NULL);
  check_stream_releases("stream", &st, 3);

  /* 1 array, then EIO "disk on fire". */
  st = stream_state(3, 1, EIO, "disk on fire");
  stream = c_stream(&st);
  r = new_report();
  rc = rust_consume_stream(&stream, &r);
  check("failing stream: consumed", rc == 0);
  check("failing stream: 1 array before the error", r.items == 1 && r.sum == 0);
  check("failing stream: EIO", r.code == EIO);
  check("failing stream: message", r.has_message == 1);
  check_str("failing stream: message text", r.text, "disk on fire");
  check("failing stream: fused after the error", r.ended == 1);
  check_stream_releases("failing stream", &st, 1);

  /* An error without a message. */
  st = stream_state(3, 0, ENOMEM, NULL);
  stream = c_stream(&st);
  r = new_report();
  rc = rust_consume_stream(&stream, &r);
  check("no-message stream: consumed", rc == 0);
  check("no-message stream: no array, ENOMEM", r.items == 0 && r.code == ENOMEM);
  check("no-message stream: message absent", r.has_message == 0);
  check_stream_releases("no-message stream", &st, 0);

  /* A device stream of 2 CPU arrays: [0], [10, 11]. */
  st = stream_state(2, -1, 0, NULL);
  struct ArrowDeviceArrayStream ds;
  ds.device_type = ARROW_DEVICE_CPU;
  ds.get_schema = c_device_get_schema;
  ds.get_next = c_device_get_next;
  ds.get_last_error = c_device_get_last_error;
  ds.release = c_device_release_stream;
  ds.private_data = &st;
  r = new_report();
  rc = rust_consume_device_stream(&ds, &r);
  check("device stream: consumed", rc == 0);
  if (rc != 0) printf("  error: %s\n", r.error);
  check("device stream: CPU, id -1", r.device_type == ARROW_DEVICE_CPU && r.device_id == -1);
  check("device stream: 2 arrays, sum", r.items == 2 && r.sum == 21);
  check("device stream: ended", r.ended == 1);
  check("device stream: moved", ds.release == NULL);
  check_stream_releases("device stream", &st, 2);
}

/* ---- 5. Rust -> C ---- */

static const int32_t* i32_values(const struct ArrowArray* a) {
  return (const int32_t*)a->buffers[1] + a->offset;
}

static int bit(const struct ArrowArray* a, int64_t i) {
  const uint8_t* bits = (const uint8_t*)a->buffers[0];
  int64_t at = a->offset + i;
  return bits == NULL || (bits[at / 8] >> (at % 8)) & 1;
}

static void rust_to_c(void) {
  size_t drops = rust_drops();
  struct ArrowSchema schema;
  struct ArrowArray array;
  char value[32];
  check("export: ok", rust_export_i32(&schema, &array) == 0);
  check_str("export: format", schema.format, "i");
  check_str("export: name", schema.name, "rust_col");
  check("export: nullable", (schema.flags & ARROW_FLAG_NULLABLE) != 0);
  check("export: metadata origin=rust",
        metadata_get(schema.metadata, "origin", value, sizeof value) && !strcmp(value, "rust"));
  check("export: no children", schema.n_children == 0 && schema.dictionary == NULL);
  check("export: lengths", array.length == 4 && array.offset == 1 && array.null_count == 1 &&
                               array.n_buffers == 2 && array.n_children == 0);
  const int32_t* v = i32_values(&array);
  int64_t sum = 0;
  for (int64_t i = 0; i < array.length; i++)
    if (bit(&array, i)) sum += v[i];
  check("export: valid values 10 + 30 + 40", sum == 80 && !bit(&array, 1) && v[3] == 40);
  check("export: not dropped before release", rust_drops() == drops);
  array.release(&array);
  check("export: array release sets release NULL", array.release == NULL);
  check("export: owner dropped once", rust_drops() == drops + 1);
  schema.release(&schema);
  check("export: schema release sets release NULL", schema.release == NULL);

  /* An ArrowArrayStream: [1, 2, 3], [4, 5], then EIO "rust source failed". */
  drops = rust_drops();
  struct ArrowArrayStream stream;
  check("export stream: ok", rust_export_stream(&stream) == 0);
  check("export stream: get_schema", stream.get_schema(&stream, &schema) == 0);
  check_str("export stream: schema format", schema.format, "i");
  schema.release(&schema);
  int64_t expected_len[2] = {3, 2};
  int32_t expected_first[2] = {1, 4};
  for (int k = 0; k < 2; k++) {
    memset(&array, 0, sizeof array);
    char label[64];
    snprintf(label, sizeof label, "export stream: array %d", k);
    check(label, stream.get_next(&stream, &array) == 0 && array.release != NULL &&
                     array.length == expected_len[k] && i32_values(&array)[0] == expected_first[k] &&
                     i32_values(&array)[array.length - 1] == expected_first[k] + array.length - 1);
    array.release(&array);
  }
  check("export stream: both arrays dropped", rust_drops() == drops + 2);
  memset(&array, 0, sizeof array);
  check("export stream: EIO", stream.get_next(&stream, &array) == EIO);
  check_str("export stream: last error", stream.get_last_error(&stream), "rust source failed");
  check("export stream: EIO again", stream.get_next(&stream, &array) == EIO);
  check("export stream: no array on error", array.release == NULL);
  stream.release(&stream);
  check("export stream: released", stream.release == NULL);
  check("export stream: drops balanced", rust_drops() == drops + 2);

  /* An ArrowDeviceArrayStream (CPU): [7, 8], [9], then the end. */
  drops = rust_drops();
  struct ArrowDeviceArrayStream ds;
  struct ArrowDeviceArray d;
  check("export device stream: ok", rust_export_device_stream(&ds) == 0);
  check("export device stream: CPU", ds.device_type == ARROW_DEVICE_CPU);
  check("export device stream: get_schema", ds.get_schema(&ds, &schema) == 0);
  schema.release(&schema);
  int32_t expected_sum[2] = {15, 9};
  for (int k = 0; k < 2; k++) {
    memset(&d, 0, sizeof d);
    char label[64];
    snprintf(label, sizeof label, "export device stream: array %d", k);
    int ok = ds.get_next(&ds, &d) == 0 && d.array.release != NULL;
    check(label, ok);
    if (!ok) return;
    const int32_t* values = i32_values(&d.array);
    int32_t s = 0;
    for (int64_t i = 0; i < d.array.length; i++) s += values[i];
    check(label, d.device_type == ARROW_DEVICE_CPU && d.device_id == -1 &&
                     d.sync_event == NULL && s == expected_sum[k]);
    d.array.release(&d.array);
  }
  memset(&d, 0xff, sizeof d);
  check("export device stream: end", ds.get_next(&ds, &d) == 0 && d.array.release == NULL);
  ds.release(&ds);
  check("export device stream: released", ds.release == NULL);
  check("export device stream: drops balanced", rust_drops() == drops + 2);
}

/* ---- 6. Async: a C handler driven by Rust ---- */

typedef struct {
  int cancel_after; /* cancel after this many tasks (0: never) */
  int schemas;
  int schema_ok; /* the schema was int32 "rust_col" */
  struct ArrowSchema schema; /* moved out in on_schema, released in release */
  int tasks;
  int extract_failures;
  int64_t sum;
  int ends;
  int errors;
  int error_code;
  char message[64];
  int released;
  int calls_after_release;
} Consumer;

static Consumer* consumer_of(struct ArrowAsyncDeviceStreamHandler* self) {
  Consumer* c = (Consumer*)self->private_data;
  if (c->released) c->calls_after_release++;
  return c;
}

static int on_schema(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowSchema* schema) {
  Consumer* c = consumer_of(self);
  c->schemas++;
  c->schema_ok = !strcmp(schema->format, "i") && !strcmp(schema->name, "rust_col");
  c->schema = *schema;
  schema->release = NULL;
  self->producer->request(self->producer, 1);
  return 0;
}

static int on_next_task(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowAsyncTask* task,
                        const char* metadata) {
  Consumer* c = consumer_of(self);
  (void)metadata;
  if (task == NULL) {
    c->ends++;
    return 0;
  }
  struct ArrowDeviceArray out;
  memset(&out, 0, sizeof out);
  if (task->extract_data(task, &out) != 0 || out.array.release == NULL) {
    c->extract_failures++;
    return 0;
  }
  c->tasks++;
  const int32_t* values = i32_values(&out.array);
  for (int64_t i = 0; i < out.array.length; i++) c->sum += values[i];
  if (out.device_type != ARROW_DEVICE_CPU) c->extract_failures++;
  out.array.release(&out.array);
  if (c->cancel_after > 0 && c->tasks >= c->cancel_after) {
    self->producer->cancel(self->producer);
  } else {
    self->producer->request(self->producer, 1);
  }
  return 0;
}

static void on_error(struct ArrowAsyncDeviceStreamHandler* self, int code, const char* message,
                     const char* metadata) {
  Consumer* c = consumer_of(self);
  (void)metadata;
  c->errors++;
  c->error_code = code;
  snprintf(c->message, sizeof c->message, "%s", message ? message : "(null)");
}

static void release_handler(struct ArrowAsyncDeviceStreamHandler* self) {
  Consumer* c = consumer_of(self);
  c->released++;
  if (c->schema.release != NULL) c->schema.release(&c->schema);
}

/* Runs one async stream of `count` arrays (then an error if `fail`) into a fresh handler that
 * cancels after `cancel_after` tasks (0: never); returns Rust's drive count. */
static int run_async(Consumer* c, int count, int fail, int cancel_after) {
  memset(c, 0, sizeof *c);
  c->cancel_after = cancel_after;
  struct ArrowAsyncDeviceStreamHandler h;
  memset(&h, 0, sizeof h);
  h.on_schema = on_schema;
  h.on_next_task = on_next_task;
  h.on_error = on_error;
  h.release = release_handler;
  h.private_data = c;
  return rust_async_run(&h, count, fail);
}

static void async_streams(void) {
  Consumer c;

  /* 3 arrays, then EIO "async source failed". */
  size_t drops = rust_drops();
  int rc = run_async(&c, 3, 1, 0);
  check("async error: finished", rc > 0);
  check("async error: on_schema once, int32 rust_col", c.schemas == 1 && c.schema_ok);
  check("async error: 3 tasks, arrays [1], [2, 2], [3, 3, 3]",
        c.tasks == 3 && c.sum == 1 + 4 + 9 && c.extract_failures == 0);
  check("async error: no end of stream", c.ends == 0);
  check("async error: on_error once with EIO", c.errors == 1 && c.error_code == EIO);
  check_str("async error: message", c.message, "async source failed");
  check("async error: released once, last", c.released == 1 && c.calls_after_release == 0);
  check("async error: drops balanced", rust_drops() == drops + 3);

  /* 2 arrays, then the end (a NULL task). */
  drops = rust_drops();
  rc = run_async(&c, 2, 0, 0);
  check("async end: finished", rc > 0);
  check("async end: on_schema once, int32 rust_col", c.schemas == 1 && c.schema_ok);
  check("async end: 2 tasks, end once", c.tasks == 2 && c.sum == 5 && c.ends == 1);
  check("async end: no error", c.errors == 0);
  check("async end: released once, last", c.released == 1 && c.calls_after_release == 0);
  check("async end: drops balanced", rust_drops() == drops + 2);

  /* 5 arrays offered, the consumer cancels after the first: release without on_error. */
  drops = rust_drops();
  rc = run_async(&c, 5, 1, 1);
  check("async cancel: finished", rc > 0);
  check("async cancel: 1 task", c.tasks == 1 && c.sum == 1);
  check("async cancel: no error, no end", c.errors == 0 && c.ends == 0);
  check("async cancel: released once, last", c.released == 1 && c.calls_after_release == 0);
  check("async cancel: drops balanced", rust_drops() == drops + 1);
}

/* ---- 7. C DLPack -> Rust bridge -> Arrow for C ---- */

static void bridge(void) {
  float data[6] = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  int deleted = 0;
  DLTensor t = cpu_i32(NULL, 2, shape, strides);
  t.data = data;
  t.dtype.code = kDLFloat;
  struct ArrowSchema schema;
  struct ArrowDeviceArray d;
  struct Report r = new_report();
  int rc = rust_bridge_dlpack(versioned(t, &deleted), &schema, &d, &r);
  check("bridge: ok", rc == 0);
  if (rc != 0) {
    printf("  error: %s\n", r.error);
    return;
  }
  char value[64];
  check_str("bridge: format", schema.format, "+w:3");
  check("bridge: extension name",
        metadata_get(schema.metadata, "ARROW:extension:name", value, sizeof value) &&
            !strcmp(value, "arrow.fixed_shape_tensor"));
  check("bridge: extension metadata",
        metadata_get(schema.metadata, "ARROW:extension:metadata", value, sizeof value) &&
            !strcmp(value, "{\"shape\":[3]}"));
  check("bridge: one float child",
        schema.n_children == 1 && !strcmp(schema.children[0]->format, "f"));
  check("bridge: CPU, id -1, no event",
        d.device_type == ARROW_DEVICE_CPU && d.device_id == -1 && d.sync_event == NULL);
  check("bridge: 2 cells, no nulls", d.array.length == 2 && d.array.null_count == 0 &&
                                         d.array.offset == 0 && d.array.n_children == 1);
  const struct ArrowArray* child = d.array.children[0];
  check("bridge: 6 values", child->length == 6 && child->n_buffers == 2);
  check("bridge: same data pointer as the DLPack tensor", child->buffers[1] == (const void*)data);
  const float* values = (const float*)child->buffers[1] + child->offset;
  check("bridge: cell 1, element 2", values[1 * 3 + 2] == 6.5f);
  check("bridge: DLPack deleter not yet run", deleted == 0);
  d.array.release(&d.array);
  check("bridge: array released", d.array.release == NULL);
  check("bridge: DLPack deleter ran once, at array release", deleted == 1);
  schema.release(&schema);
  check("bridge: schema released", schema.release == NULL && deleted == 1);

  /* A 1-D legacy int32 tensor (NULL strides) becomes a primitive int32 array. */
  int32_t ints[4] = {-1, 0, 1, 2};
  int64_t four[1] = {4};
  deleted = 0;
  r = new_report();
  rc = rust_bridge_legacy(legacy(cpu_i32(ints, 1, four, NULL), &deleted), &schema, &d, &r);
  check("bridge legacy: ok", rc == 0);
  if (rc != 0) {
    printf("  error: %s\n", r.error);
    return;
  }
  check_str("bridge legacy: format", schema.format, "i");
  check("bridge legacy: no extension", schema.metadata == NULL && schema.n_children == 0);
  check("bridge legacy: 4 values, same data pointer",
        d.array.length == 4 && d.array.n_buffers == 2 && d.array.buffers[1] == (const void*)ints);
  check("bridge legacy: value", i32_values(&d.array)[3] == 2);
  schema.release(&schema);
  check("bridge legacy: DLPack deleter not yet run", deleted == 0);
  d.array.release(&d.array);
  check("bridge legacy: DLPack deleter ran once, at array release", deleted == 1);
}

int main(void) {
  check("Report has the same size in C and Rust", rust_report_size() == sizeof(struct Report));
  c_to_rust();
  malformed();
  device_array();
  c_streams();
  rust_to_c();
  async_streams();
  bridge();
  return summary("c-arrow");
}
