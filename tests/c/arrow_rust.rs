//! The Rust side of the C Arrow test (`tests/c/run.sh`), built as a static library: Rust imports
//! schemas, arrays, device arrays and streams that C produced (and reports what it read, or the
//! `ArrowError` message), bridges them to DLPack, exports schemas, arrays and streams to C, and
//! drives C's async stream handlers. Every owner Rust creates counts its drops (`counted.rs`), which
//! C reads with `rust_drops`.

use std::ffi::{c_char, c_int};
use std::ptr;

use dlpack_abi::arrow::{
    errno, Array, ArrayParts, ArrayStream, AsyncProducer, AsyncState, DeviceArray,
    DeviceArrayStream, ProducerError, Schema, SchemaDef, SchemaRef, StreamError, ValidationError,
};
use dlpack_abi::dlpack::{ManagedStruct, ManagedTensor};
use dlpack_abi::raw::{
    ArrowArray, ArrowArrayStream, ArrowAsyncDeviceStreamHandler, ArrowDeviceArray,
    ArrowDeviceArrayStream, ArrowSchema, DLManagedTensor, DLManagedTensorVersioned, DLPackFlags,
    ARROW_DEVICE_CPU,
};

mod counted;

use counted::{count_drop, Counted};

/// The buffers of a nullable i32 array: a validity bitmap and the values. Counts its drop.
struct Nullable {
    validity: Vec<u8>,
    values: Vec<i32>,
}

impl Drop for Nullable {
    fn drop(&mut self) {
        count_drop();
    }
}

/// What Rust read, for C to check (`struct Report` in arrow.c, field for field).
#[repr(C)]
pub struct Report {
    length: i64,
    offset: i64,
    /// `null_count` as imported (-1: unknown).
    null_count: i64,
    /// Zero bits in the validity bitmap (0 without one).
    bitmap_nulls: i64,
    /// Sum of the valid values (of every array, for a stream).
    sum: i64,
    /// Arrays a stream yielded before its end or error.
    items: i64,
    device_id: i64,
    shape: [i64; 4],
    strides: [i64; 4],
    device_type: i32,
    ndim: i32,
    /// The producer's error code (streams).
    code: i32,
    /// Whether the producer's error had a message.
    has_message: i32,
    /// Whether the stream ended with `None` (and, after an error, stayed ended).
    ended: i32,
    read_only: i32,
    first: [f32; 4],
    name: [c_char; 32],
    /// A metadata value, or the producer's error message.
    text: [c_char; 64],
    /// The error's message when a function returns -1.
    error: [c_char; 128],
}

/// The size of `Report`, which C compares with its own.
#[no_mangle]
pub extern "C" fn rust_report_size() -> usize {
    std::mem::size_of::<Report>()
}

/// Copies `s` into `buf`, truncated, NUL-terminated.
fn put<const N: usize>(buf: &mut [c_char; N], s: &[u8]) {
    let len = s.len().min(N - 1);
    for (slot, &byte) in buf.iter_mut().zip(&s[..len]) {
        *slot = byte as c_char;
    }
    buf[len] = 0;
}

/// Any error of the crate's layers (validation, reads, the bridge, typed access).
type Failure = Box<dyn std::error::Error>;

/// Runs `body` on `report`: 0 on success, -1 with the error's message in `report.error`.
fn reporting(report: &mut Report, body: impl FnOnce(&mut Report) -> Result<(), Failure>) -> c_int {
    match body(report) {
        Ok(()) => 0,
        Err(error) => {
            put(&mut report.error, error.to_string().as_bytes());
            -1
        }
    }
}

/// Reads a validated i32 array into `report`: length, offset, null counts, sum of valid values.
fn read_i32(view: dlpack_abi::arrow::ArrayView<'_>, report: &mut Report) -> Result<(), Failure> {
    let values = view.values::<i32>()?;
    let validity = view.validity()?;
    let valid = |i: usize| validity.map_or(true, |bitmap| bitmap.get(i) == Some(true));
    report.length = view.len() as i64;
    report.offset = view.offset() as i64;
    report.null_count = view.null_count().map_or(-1, |n| n as i64);
    report.bitmap_nulls = validity.map_or(0, |b| (b.len() - b.count_ones()) as i64);
    report.sum += values
        .iter()
        .enumerate()
        .filter(|&(i, _)| valid(i))
        .map(|(_, &v)| i64::from(v))
        .sum::<i64>();
    Ok(())
}

/// Reports the name and the value of metadata key `origin`.
fn read_field(schema: SchemaRef<'_>, report: &mut Report) {
    put(&mut report.name, schema.name().unwrap_or("").as_bytes());
    let origin = schema.metadata().and_then(|m| m.get("origin"));
    put(&mut report.text, origin.unwrap_or(b""));
}

/// Imports a C int32 schema and array, reports what they hold, and drops both.
///
/// # Safety
/// `schema` and `array` are C structs handed over to Rust (an int32 array for the schema);
/// `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_import_i32(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |report| {
        // SAFETY: the caller hands the schema over.
        let schema = unsafe { Schema::from_raw(schema) }?;
        read_field(schema.view(), report);
        // SAFETY: the caller hands the array over, of the schema's type.
        let array = unsafe { Array::from_raw(array, schema.view()) }?;
        read_i32(array.view(schema.view())?, report)
    })
}

/// Imports a C schema and, when `array` is non-NULL, a C array of its type, then drops both:
/// 0 if both were accepted, -1 with the first error's message.
///
/// # Safety
/// `schema` (and a non-NULL `array`) are C structs handed over to Rust; `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_import_check(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |_| {
        // SAFETY: the caller hands the schema over.
        let schema = unsafe { Schema::from_raw(schema) }?;
        if !array.is_null() {
            // SAFETY: the caller hands the array over.
            unsafe { Array::from_raw(array, schema.view()) }?;
        }
        Ok(())
    })
}

/// Imports a C `fixed_shape_tensor` schema and array, bridges the array to a DLPack tensor,
/// reports its shape, strides, first values and READ_ONLY flag, and hands the tensor to C (the
/// C array is released when the tensor's deleter runs). NULL on error.
///
/// # Safety
/// `schema` and `array` are C structs handed over to Rust; `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_tensor_from_arrow(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
    report: *mut Report,
) -> *mut DLManagedTensorVersioned {
    let mut tensor = None;
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    let code = reporting(report, |report| {
        // SAFETY: the caller hands the schema over.
        let schema = unsafe { Schema::from_raw(schema) }?;
        // SAFETY: the caller hands the array over.
        let array = unsafe { Array::from_raw(array, schema.view()) }?;
        let bridged = DeviceArray::from_cpu(array).into_tensor(schema.view())?;
        let view = bridged.view();
        report.ndim = view.ndim() as i32;
        for (i, &extent) in view.shape().iter().take(4).enumerate() {
            report.shape[i] = extent;
            report.strides[i] = view.strides().get(i).unwrap_or(0);
        }
        for (slot, &value) in report.first.iter_mut().zip(view.as_slice::<f32>()?) {
            *slot = value;
        }
        report.read_only = view.flags().contains(DLPackFlags::READ_ONLY).into();
        tensor = Some(bridged);
        Ok(())
    });
    match (code, tensor) {
        (0, Some(tensor)) => tensor.into_raw(),
        _ => ptr::null_mut(),
    }
}

/// Imports a C int32 schema and device array, reports its device and values, drops both.
///
/// # Safety
/// `schema` and `array` are C structs handed over to Rust; `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_import_device(
    schema: *mut ArrowSchema,
    array: *mut ArrowDeviceArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |report| {
        // SAFETY: the caller hands the schema over.
        let schema = unsafe { Schema::from_raw(schema) }?;
        // SAFETY: the caller hands the device array over (CPU memory).
        let array = unsafe { DeviceArray::from_raw(array, schema.view()) }?;
        report.device_type = array.device_type().0;
        report.device_id = array.device_id();
        read_i32(array.view(schema.view())?, report)
    })
}

/// Records the end of a stream's iteration: a producer error (code and message), or `None`.
fn stream_end(error: Option<StreamError>, report: &mut Report) -> Result<(), Failure> {
    match error {
        None => report.ended = 1,
        Some(StreamError::Producer(error)) => {
            report.code = error.code();
            report.has_message = error.message().is_some().into();
            put(&mut report.text, error.message().unwrap_or("").as_bytes());
        }
        Some(StreamError::Invalid(error)) => return Err(error.into()),
        Some(other) => put(&mut report.text, other.to_string().as_bytes()),
    }
    Ok(())
}

/// Consumes a C `ArrowArrayStream` of int32 arrays: counts and sums them until the end or an
/// error, which it reports; then checks the stream stays ended, and drops it.
///
/// # Safety
/// `stream` is a C stream handed over to Rust; `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_consume_stream(
    stream: *mut ArrowArrayStream,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |report| {
        // SAFETY: the caller hands the stream over.
        let mut stream = unsafe { ArrayStream::from_raw(stream) }?;
        let end = loop {
            match stream.next() {
                Some(Ok(array)) => {
                    report.items += 1;
                    let schema = stream.schema().map_err(|_| ValidationError::Released)?;
                    put(&mut report.name, schema.name().unwrap_or("").as_bytes());
                    read_i32(array.view(schema)?, report)?;
                }
                Some(Err(error)) => break Some(error),
                None => break None,
            }
        };
        let errored = end.is_some();
        stream_end(end, report)?;
        if errored && stream.next().is_none() {
            report.ended = 1;
        }
        Ok(())
    })
}

/// Consumes a C `ArrowDeviceArrayStream` of CPU int32 arrays, as `rust_consume_stream` does;
/// reports the stream's device type and the last array's device id.
///
/// # Safety
/// `stream` is a C stream handed over to Rust; `report` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_consume_device_stream(
    stream: *mut ArrowDeviceArrayStream,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |report| {
        // SAFETY: the caller hands the stream over.
        let mut stream = unsafe { DeviceArrayStream::from_raw(stream) }?;
        report.device_type = stream.device_type().0;
        let end = loop {
            match stream.next() {
                Some(Ok(array)) => {
                    report.items += 1;
                    report.device_id = array.device_id();
                    let schema = stream.schema().map_err(|_| ValidationError::Released)?;
                    read_i32(array.view(schema)?, report)?;
                }
                Some(Err(error)) => break Some(error),
                None => break None,
            }
        };
        stream_end(end, report)
    })
}

/// The field Rust exports: int32 named `rust_col` with metadata `origin` = `rust`.
fn rust_field() -> Result<SchemaDef, ValidationError> {
    Ok(SchemaDef::new("i")?
        .with_name("rust_col")
        .with_metadata("origin", "rust")
        .nullable())
}

/// An int32 array [start, start + 1, ..., start + n - 1] over a counted vector.
fn counted_i32(start: i32, n: i32) -> Result<Array, Failure> {
    Ok(Array::from_vec(Counted(
        (start..start + n).collect::<Vec<i32>>(),
    ))?)
}

/// Exports an int32 schema and the array [10, null, 30, 40] (offset 1 into its buffers: the
/// values are [-1, 10, 20, 30, 40], bit 2 of the bitmap unset) into C's structs.
///
/// # Safety
/// `schema` and `array` are writable.
#[no_mangle]
pub unsafe extern "C" fn rust_export_i32(
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
) -> c_int {
    let Ok(exported) = rust_field().and_then(|def| def.export()) else {
        return -1;
    };
    let owner = Nullable {
        validity: vec![0b0001_1010],
        values: vec![-1, 10, 20, 30, 40],
    };
    let buffers = vec![owner.validity.as_ptr().cast(), owner.values.as_ptr().cast()];
    let parts = ArrayParts::new(4, buffers)
        .with_null_count(1)
        .with_offset(1);
    // SAFETY: a bitmap of 5 bits and 5 i32 values (offset 1 + length 4), in vectors the owner
    // keeps (their heap memory does not move with it) until the array is released.
    let produced = unsafe { Array::from_parts(parts, owner) };
    // SAFETY: the caller's structs are writable; C owns both from now on.
    unsafe {
        exported.export_to(schema);
        produced.export_to(array);
    }
    0
}

/// Exports an `ArrowArrayStream` of int32 arrays [1, 2, 3] and [4, 5], then the error
/// `EIO` "rust source failed".
///
/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_export_stream(out: *mut ArrowArrayStream) -> c_int {
    let items = [(1, 3), (4, 2)]
        .into_iter()
        .map(|(start, n)| {
            counted_i32(start, n).map_err(|_| ProducerError::code_only(errno::EINVAL))
        })
        .chain([Err(ProducerError::new(
            errno::EIO,
            Some("rust source failed"),
        ))]);
    let Ok(stream) = rust_field().and_then(|def| ArrayStream::from_iter(def, items)) else {
        return -1;
    };
    // SAFETY: the caller's struct is writable; C owns the stream from now on.
    unsafe { stream.export_to(out) };
    0
}

/// Exports an `ArrowDeviceArrayStream` (CPU) of int32 arrays [7, 8] and [9], then its end.
///
/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn rust_export_device_stream(out: *mut ArrowDeviceArrayStream) -> c_int {
    let items = [(7, 2), (9, 1)].into_iter().map(|(start, n)| {
        counted_i32(start, n)
            .map(DeviceArray::from_cpu)
            .map_err(|_| ProducerError::code_only(errno::EINVAL))
    });
    let Ok(stream) =
        rust_field().and_then(|def| DeviceArrayStream::from_iter(def, ARROW_DEVICE_CPU, items))
    else {
        return -1;
    };
    // SAFETY: the caller's struct is writable; C owns the stream from now on.
    unsafe { stream.export_to(out) };
    0
}

/// Drives C's async handler with CPU int32 arrays [1], [2, 2], [3, 3, 3], ... (`count` of them),
/// then the error `EIO` "async source failed" when `fail` is non-zero, or the end of the stream.
/// Returns the number of `drive` calls until the handler was released, or -1 if the consumer
/// stopped requesting without finishing.
///
/// # Safety
/// `handler` is a C handler following the async device stream interface, valid until released.
#[no_mangle]
pub unsafe extern "C" fn rust_async_run(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    count: c_int,
    fail: c_int,
) -> c_int {
    let Ok(def) = rust_field() else {
        return -1;
    };
    let arrays = (1..=count).map(|i| {
        Array::from_vec(Counted(vec![i; i as usize]))
            .map(DeviceArray::from_cpu)
            .map_err(|_| ProducerError::code_only(errno::EINVAL))
    });
    let failure =
        (fail != 0).then(|| Err(ProducerError::new(errno::EIO, Some("async source failed"))));
    let items = arrays.chain(failure);
    // SAFETY: the caller's handler follows the interface and lives until released.
    let mut producer = unsafe { AsyncProducer::start(handler, ARROW_DEVICE_CPU, &def, items) };
    for drives in 1..=100 {
        if producer.drive() == AsyncState::Finished {
            return drives;
        }
    }
    -1
}

/// Imports a C DLPack tensor (versioned or legacy), bridges it to Arrow and exports the schema
/// and device array into C's structs (the tensor's deleter runs when C releases the array).
///
/// # Safety
/// `tensor` is a C tensor handed over to Rust; `schema`, `array` and `report` are writable.
unsafe fn bridge<M: ManagedStruct + 'static>(
    tensor: *mut M,
    schema: *mut ArrowSchema,
    array: *mut ArrowDeviceArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: the caller passes a writable report.
    let report = unsafe { &mut *report };
    reporting(report, |_| {
        // SAFETY: the caller hands the tensor over.
        let imported = unsafe { ManagedTensor::<M>::from_raw(tensor) }?;
        let (def, bridged) = DeviceArray::from_tensor(imported)?;
        let exported = def.export()?;
        // SAFETY: the caller's structs are writable; C owns both from now on.
        unsafe {
            exported.export_to(schema);
            bridged.export_to(array);
        }
        Ok(())
    })
}

/// `bridge` for a versioned C tensor.
///
/// # Safety
/// As for `bridge`.
#[no_mangle]
pub unsafe extern "C" fn rust_bridge_dlpack(
    tensor: *mut DLManagedTensorVersioned,
    schema: *mut ArrowSchema,
    array: *mut ArrowDeviceArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { bridge(tensor, schema, array, report) }
}

/// `bridge` for a legacy (unversioned) C tensor.
///
/// # Safety
/// As for `bridge`.
#[no_mangle]
pub unsafe extern "C" fn rust_bridge_legacy(
    tensor: *mut DLManagedTensor,
    schema: *mut ArrowSchema,
    array: *mut ArrowDeviceArray,
    report: *mut Report,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { bridge(tensor, schema, array, report) }
}
