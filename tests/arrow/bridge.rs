//! The DLPack <-> Arrow bridge (zero copy both ways, every owner released exactly once in every
//! order) and the async device stream producer driven by a Rust-side handler.

use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use crate::fixture::arrow::*;
use crate::fixture::dlpack::{dtype, Fixture};
use dlpack_abi::arrow::*;
use dlpack_abi::dlpack::VersionedTensor;
use dlpack_abi::raw::*;

fn import(fixture: &mut Fixture) -> VersionedTensor {
    // SAFETY: the fixture's tensor follows DLPack; the test hands it over.
    unsafe { VersionedTensor::from_raw(fixture.versioned()) }.unwrap()
}

#[test]
fn one_d_tensor_round_trips_with_the_same_pointer_in_every_release_order() {
    // Orders: the final tensor dropped before or after the schema; the intermediate Arrow array
    // given to "C" and imported back; the final tensor handed out raw and deleted by "C".
    for order in 0..3 {
        let mut fixture = Fixture::new(&[1i32, 2, 3, 4], dtype(kDLInt, 32), &[4]);
        let (schema_def, array) = DeviceArray::from_tensor(import(&mut fixture)).unwrap();
        let schema = schema_def.export().unwrap();
        assert_eq!(schema.view().data_type(), DataType::Int32);
        assert_eq!(
            (array.device_type(), array.device_id()),
            (ARROW_DEVICE_CPU, -1)
        );
        let view = array.view(schema.view()).unwrap();
        assert_eq!(view.values::<i32>().unwrap(), &[1, 2, 3, 4]);
        assert_eq!(view.buffer(1).unwrap() as usize, fixture.data_address());
        let array = if order == 1 {
            let mut raw = array.into_raw();
            import_device_array(&mut raw, schema.view()).unwrap()
        } else {
            array
        };
        let tensor = array.into_tensor(schema.view()).unwrap();
        let back = tensor.view();
        assert_eq!(back.data_ptr() as usize, fixture.data_address());
        assert_eq!(back.shape(), &[4]);
        assert!(back.flags().contains(DLPackFlags::READ_ONLY));
        assert_eq!(
            back.device(),
            DLDevice {
                device_type: kDLCPU,
                device_id: 0
            }
        );
        assert_eq!(tensor.view().as_slice::<i32>().unwrap(), &[1, 2, 3, 4]);
        assert_eq!(fixture.calls(), 0);
        match order {
            0 => {
                drop(schema);
                drop(tensor);
            }
            1 => {
                drop(tensor);
                drop(schema);
            }
            _ => {
                let raw = tensor.into_raw();
                drop(schema);
                // SAFETY: the tensor was handed out raw; "C" deletes it once.
                unsafe { (*raw).deleter.unwrap()(raw) };
            }
        }
        assert_eq!(
            fixture.calls(),
            1,
            "order {order}: the producer's deleter ran once"
        );
    }
}

#[test]
fn n_d_tensor_becomes_a_fixed_shape_tensor_and_back() {
    let mut fixture = Fixture::f32(&[2, 3, 4]);
    let (schema_def, array) = DeviceArray::from_tensor(import(&mut fixture)).unwrap();
    let schema = schema_def.export().unwrap();
    let view = schema.view();
    assert_eq!(view.format(), b"+w:12");
    assert_eq!(view.extension_name(), Some(FIXED_SHAPE_TENSOR));
    assert_eq!(view.extension_metadata(), Some(&br#"{"shape":[3,4]}"#[..]));
    let child = view.child(0).unwrap();
    assert_eq!(
        (child.format(), child.name(), child.is_nullable()),
        // Not nullable: arrow-rs's `FixedShapeTensor` needs that, and pyarrow imports it too.
        (&b"f"[..], Some("item"), false)
    );
    let cells = array.view(view).unwrap();
    assert_eq!(cells.len(), 2);
    let values = cells.child(0).unwrap().values::<f32>().unwrap();
    assert_eq!(values.as_ptr() as usize, fixture.data_address());
    assert_eq!(values.len(), 24);

    let tensor = array.into_tensor(view).unwrap();
    assert_eq!(tensor.view().shape(), &[2, 3, 4]);
    assert_eq!(tensor.view().strides().as_slice(), Some(&[12, 4, 1][..]));
    assert_eq!(tensor.view().data_ptr() as usize, fixture.data_address());
    drop(schema);
    assert_eq!(fixture.calls(), 0);
    drop(tensor);
    assert_eq!(fixture.calls(), 1);
}

/// Regression (use-after-free): the C Data Interface lets a consumer move a child out and
/// release the parent, keeping only the child. The child's values must stay alive until the
/// child itself is released; the tensor's deleter then runs once.
#[test]
fn a_child_moved_out_keeps_its_values_after_the_parent_is_released() {
    let mut fixture = Fixture::f32(&[2, 2]);
    let (schema_def, array) = DeviceArray::from_tensor(import(&mut fixture)).unwrap();
    let mut raw = array.into_raw();
    // SAFETY: a fixed-shape-tensor array has one child; the test owns the base struct and moves
    // the child out as the spec allows (bitwise copy, source marked released).
    let child_ptr = unsafe { *raw.array.children };
    // SAFETY: as above.
    let mut child = unsafe { ptr::read(child_ptr) };
    // SAFETY: as above.
    unsafe { (*child_ptr).release = None };
    // SAFETY: the parent is a base struct the test owns: released once.
    unsafe { raw.array.release.unwrap()(&mut raw.array) };
    assert_eq!(fixture.calls(), 0, "the moved child still holds the tensor");

    // The child alone, imported with its own schema and read.
    let value_schema = SchemaDef::new("f").unwrap().export().unwrap();
    let child = import_array(&mut child, value_schema.view()).unwrap();
    let values = child.view(value_schema.view()).unwrap();
    assert_eq!(values.values::<f32>().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
    drop(child);
    assert_eq!(fixture.calls(), 1, "released with the child, once");
    drop(schema_def);

    // The same with memory the deleter frees: reading a dangling child is what Miri would see.
    let exported = dlpack_abi::dlpack::Export::new(vec![5.0f32, 6.0, 7.0, 8.0], &[2, 2]);
    let (_, array) = DeviceArray::from_tensor(exported.finish().unwrap()).unwrap();
    let mut raw = array.into_raw();
    // SAFETY: as above.
    let mut child = unsafe { ptr::read(*raw.array.children) };
    // SAFETY: as above.
    unsafe { (**raw.array.children).release = None };
    // SAFETY: as above.
    unsafe { raw.array.release.unwrap()(&mut raw.array) };
    let child = import_array(&mut child, value_schema.view()).unwrap();
    let values = child.view(value_schema.view()).unwrap();
    assert_eq!(values.values::<f32>().unwrap(), &[5.0, 6.0, 7.0, 8.0]);
}

#[test]
fn permutation_becomes_strides() {
    // As pyarrow writes it, and as arrow-rs does (its spelling, and `null`s for absent keys).
    for json in [
        &br#"{"shape":[2,2],"permutation":[1,0],"dim_names":["H","W"]}"#[..],
        br#"{"shape":[2,2],"dim_names":null,"permutations":[1,0]}"#,
    ] {
        permuted_cells_become_strides(json);
    }
}

fn permuted_cells_become_strides(json: &[u8]) {
    let meta = metadata(&[
        (EXTENSION_NAME_KEY, FIXED_SHAPE_TENSOR.as_bytes()),
        (EXTENSION_METADATA_KEY, json),
    ]);
    let mut raw = schema(b"+w:4", None, Some(meta), vec![leaf("f")], &counter());
    let schema = import_schema(&mut raw).unwrap();
    let calls = counter();
    let values = bytes_of(&[0f32, 1., 2., 3., 4., 5., 6., 7.]);
    let child = array(8, 0, 0, vec![None, values], vec![], &counter());
    let mut raw = array(2, 0, 0, vec![None], vec![child], &calls);
    let cells = import_device_array(
        &mut ArrowDeviceArray {
            array: raw_take(&mut raw),
            device_id: -1,
            device_type: ARROW_DEVICE_CPU,
            sync_event: ptr::null_mut(),
            reserved: [0; 3],
        },
        schema.view(),
    )
    .unwrap();
    let tensor = cells.into_tensor(schema.view()).unwrap();
    assert_eq!(tensor.view().shape(), &[2, 2, 2]);
    assert_eq!(tensor.view().strides().as_slice(), Some(&[4, 1, 2][..]));
    assert_eq!(tensor.view().get::<f32>(&[1, 1, 0]).unwrap(), 5.0);
    drop(tensor);
    assert_eq!(count(&calls), 1);
}

fn raw_take(raw: &mut ArrowArray) -> ArrowArray {
    // SAFETY: a move as the spec defines it: bitwise copy, then the source marked released.
    let taken = unsafe { ptr::read(raw) };
    raw.release = None;
    taken
}

#[test]
fn arrow_offsets_become_byte_offsets() {
    let mut raw = leaf("l");
    let schema = import_schema(&mut raw).unwrap();
    let mut raw = array(
        2,
        0,
        3,
        vec![None, bytes_of(&[0i64, 1, 2, 3, 4, 5])],
        vec![],
        &counter(),
    );
    let cpu = DeviceArray::from_cpu(import_array(&mut raw, schema.view()).unwrap());
    let tensor = cpu.into_tensor(schema.view()).unwrap();
    assert_eq!(tensor.view().raw().byte_offset, 24);
    assert_eq!(tensor.view().as_slice::<i64>().unwrap(), &[3, 4]);
}

#[test]
fn unsupported_arrow_inputs_are_refused_and_released_once() {
    type Case = (
        &'static str,
        &'static str,
        Box<dyn Fn(&Counter) -> ArrowArray>,
        BridgeError,
    );
    let cases: Vec<Case> = vec![
        (
            "nulls",
            "i",
            Box::new(|c| {
                array(
                    2,
                    1,
                    0,
                    vec![Some(vec![0b01]), bytes_of(&[1i32, 2])],
                    vec![],
                    c,
                )
            }),
            BridgeError::NullsPresent { null_count: 1 },
        ),
        (
            "unknown null count with a null",
            "i",
            Box::new(|c| {
                array(
                    2,
                    -1,
                    0,
                    vec![Some(vec![0b01]), bytes_of(&[1i32, 2])],
                    vec![],
                    c,
                )
            }),
            BridgeError::NullsPresent { null_count: -1 },
        ),
        (
            "strings",
            "u",
            Box::new(|c| {
                array(
                    1,
                    0,
                    0,
                    vec![None, bytes_of(&[0i32, 1]), Some(b"a".to_vec())],
                    vec![],
                    c,
                )
            }),
            BridgeError::UnsupportedType {
                format: excerpt(b"u"),
            },
        ),
        (
            "bit-packed bool",
            "b",
            Box::new(|c| array(3, 0, 0, vec![None, Some(vec![5])], vec![], c)),
            BridgeError::UnsupportedType {
                format: excerpt(b"b"),
            },
        ),
    ];
    for (name, format, make, expected) in cases {
        let mut raw = leaf(format);
        let schema = import_schema(&mut raw).unwrap();
        let calls = counter();
        let mut raw = make(&calls);
        let cpu = DeviceArray::from_cpu(import_array(&mut raw, schema.view()).unwrap());
        assert_eq!(
            cpu.into_tensor(schema.view()).unwrap_err(),
            expected,
            "{name}"
        );
        assert_eq!(count(&calls), 1, "{name}: released once");
    }
    // A null count of -1 whose bitmap is all valid bridges.
    let mut raw = leaf("i");
    let schema = import_schema(&mut raw).unwrap();
    let mut raw = array(
        2,
        -1,
        0,
        vec![Some(vec![0b11]), bytes_of(&[1i32, 2])],
        vec![],
        &counter(),
    );
    let cpu = DeviceArray::from_cpu(import_array(&mut raw, schema.view()).unwrap());
    assert!(cpu.into_tensor(schema.view()).is_ok());
}

fn excerpt(format: &[u8]) -> Excerpt {
    Excerpt::of(format)
}

#[test]
fn unsupported_tensors_are_refused_and_deleted_once() {
    type Case = (&'static str, Box<dyn Fn(&mut Fixture)>, BridgeError);
    let cases: Vec<Case> = vec![
        (
            "0-d",
            Box::new(|f| {
                f.set_shape(&[]);
                f.set_strides(&[]);
            }),
            BridgeError::ZeroDims,
        ),
        (
            "transposed",
            Box::new(|f| f.set_strides(&[1, 2])),
            BridgeError::NotContiguous,
        ),
        (
            "bfloat16",
            Box::new(|f| f.dl.dtype = dtype(kDLBfloat, 16)),
            BridgeError::UnsupportedDtype {
                dtype: dtype(kDLBfloat, 16),
            },
        ),
        (
            "two lanes",
            Box::new(|f| f.dl.dtype.lanes = 2),
            BridgeError::UnsupportedDtype {
                dtype: DLDataType {
                    lanes: 2,
                    ..dtype(kDLFloat, 32)
                },
            },
        ),
        (
            "MAIA",
            Box::new(|f| f.dl.device.device_type = kDLMAIA),
            BridgeError::DeviceNotInArrow {
                device_type: kDLMAIA,
            },
        ),
        (
            "Trainium",
            Box::new(|f| f.dl.device.device_type = kDLTrn),
            BridgeError::DeviceNotInArrow {
                device_type: kDLTrn,
            },
        ),
        (
            "OpenCL handle with an offset",
            Box::new(|f| {
                f.dl.device.device_type = kDLOpenCL;
                f.dl.byte_offset = 4;
            }),
            BridgeError::OffsetNotRepresentable { offset: 4 },
        ),
    ];
    for (name, edit, expected) in cases {
        let mut fixture = Fixture::f32(&[2, 2]);
        edit(&mut fixture);
        let tensor = import(&mut fixture);
        assert_eq!(
            DeviceArray::from_tensor(tensor).unwrap_err(),
            expected,
            "{name}"
        );
        assert_eq!(fixture.calls(), 1, "{name}: deleted once");
    }
}

#[test]
fn bool_bytes_bridge_as_bool8_and_gpu_tensors_stay_on_their_device() {
    let mut fixture = Fixture::new(&[1u8, 0, 1], dtype(kDLBool, 8), &[3]);
    let (schema_def, array) = DeviceArray::from_tensor(import(&mut fixture)).unwrap();
    let schema = schema_def.export().unwrap();
    assert_eq!(schema.view().extension_name(), Some(BOOL8));
    // Empty metadata, as Arrow C++ writes it (arrow-rs's `Bool8` refuses none at all).
    assert_eq!(schema.view().extension_metadata(), Some(&b""[..]));
    let tensor = array.into_tensor(schema.view()).unwrap();
    assert_eq!(tensor.view().dtype(), dtype(kDLBool, 8));
    drop(tensor);
    assert_eq!(fixture.calls(), 1);

    let mut fixture = Fixture::f32(&[4]);
    fixture.dl.device = DLDevice {
        device_type: kDLCUDA,
        device_id: 3,
    };
    let (schema_def, array) = DeviceArray::from_tensor(import(&mut fixture)).unwrap();
    assert_eq!(
        (array.device_type(), array.device_id()),
        (ARROW_DEVICE_CUDA, 3)
    );
    let schema = schema_def.export().unwrap();
    let tensor = array.into_tensor(schema.view()).unwrap();
    assert_eq!(
        tensor.view().device(),
        DLDevice {
            device_type: kDLCUDA,
            device_id: 3
        }
    );
    assert_eq!(tensor.view().data_ptr() as usize, fixture.data_address());
}

// ---- the async producer, driven by a handler written in Rust the way C would write it ----

#[derive(Default)]
struct Seen {
    schemas: usize,
    values: Vec<i32>,
    end: usize,
    error: Option<(c_int, String)>,
    released: usize,
    cancel_after: Option<usize>,
}

// The handler below is called by the producer with the handler `run_async` made, whose
// `private_data` is its `Seen`, alive until `run_async` returns; calls are serialised.

/// The handler's record.
///
/// # Safety
/// `handler` is one `run_async` (or the test) made, and no other reference to its `Seen` lives.
unsafe fn seen<'a>(handler: *mut ArrowAsyncDeviceStreamHandler) -> &'a mut Seen {
    // SAFETY: see the contract.
    unsafe { &mut *(*handler).private_data.cast::<Seen>() }
}

/// Asks the producer for `n` more tasks (or cancels when `n` is 0).
///
/// # Safety
/// As for `seen`; `handler.producer` is set (the producer sets it before any callback).
unsafe fn ask(handler: *mut ArrowAsyncDeviceStreamHandler, n: i64) {
    // SAFETY: see the contract: the producer is alive until the handler is released.
    let producer = unsafe { (*handler).producer };
    if n == 0 {
        // SAFETY: as above.
        unsafe { (*producer).cancel.unwrap()(producer) };
    } else {
        // SAFETY: as above.
        unsafe { (*producer).request.unwrap()(producer, n) };
    }
}

unsafe extern "C" fn on_schema(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    schema: *mut ArrowSchema,
) -> c_int {
    // SAFETY: the producer hands over a schema it built; moved out, released on drop.
    let schema = import_schema(unsafe { &mut *schema }).unwrap();
    assert_eq!(schema.view().data_type(), DataType::Int32);
    // SAFETY: a handler `run_async` made (see above).
    unsafe { seen(handler).schemas += 1 };
    // SAFETY: as above.
    unsafe { ask(handler, 2) };
    0
}

unsafe extern "C" fn on_next_task(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    task: *mut ArrowAsyncTask,
    _: *const c_char,
) -> c_int {
    // SAFETY: a handler `run_async` made (see above).
    let seen = unsafe { seen(handler) };
    if task.is_null() {
        seen.end += 1;
        return 0;
    }
    let mut out: ArrowDeviceArray = bytemuck::Zeroable::zeroed();
    // SAFETY: a live task; `extract_data` is called exactly once, as the interface requires.
    assert_eq!(unsafe { (*task).extract_data.unwrap()(task, &mut out) }, 0);
    let schema = SchemaDef::new("i").unwrap().export().unwrap();
    let array = import_device_array(&mut out, schema.view()).unwrap();
    seen.values
        .extend(array.view(schema.view()).unwrap().values::<i32>().unwrap());
    let cancel = seen.cancel_after == Some(seen.values.len());
    // SAFETY: as above (`seen` is not used after this).
    unsafe { ask(handler, if cancel { 0 } else { 1 }) };
    0
}

unsafe extern "C" fn on_error(
    handler: *mut ArrowAsyncDeviceStreamHandler,
    code: c_int,
    message: *const c_char,
    _: *const c_char,
) {
    let message = if message.is_null() {
        String::new()
    } else {
        // SAFETY: a non-NULL message is NUL-terminated and valid during the call.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: a handler `run_async` made (see above).
    unsafe { seen(handler).error = Some((code, message)) };
}

unsafe extern "C" fn release_handler(handler: *mut ArrowAsyncDeviceStreamHandler) {
    // SAFETY: a handler `run_async` made (see above).
    unsafe { seen(handler).released += 1 };
}

fn run_async(items: Vec<Result<Vec<i32>, ProducerError>>, cancel_after: Option<usize>) -> Seen {
    let mut seen = Seen {
        cancel_after,
        ..Seen::default()
    };
    let mut handler = ArrowAsyncDeviceStreamHandler {
        on_schema: Some(on_schema),
        on_next_task: Some(on_next_task),
        on_error: Some(on_error),
        release: Some(release_handler),
        producer: ptr::null_mut(),
        private_data: (&raw mut seen).cast(),
    };
    let items = items
        .into_iter()
        .map(|item| item.map(|v| DeviceArray::from_cpu(Array::from_vec(v).unwrap())));
    let schema = SchemaDef::new("i").unwrap();
    // SAFETY: `handler` follows the interface and outlives the producer.
    let mut producer =
        unsafe { AsyncProducer::start(&mut handler, ARROW_DEVICE_CPU, &schema, items) };
    assert_eq!(producer.drive(), AsyncState::Finished);
    drop(producer);
    seen
}

#[test]
fn async_producer_delivers_tasks_then_the_end_or_an_error() {
    let seen = run_async(vec![Ok(vec![1, 2]), Ok(vec![3]), Ok(vec![4])], None);
    assert_eq!(
        (
            seen.schemas,
            seen.values,
            seen.end,
            seen.error,
            seen.released
        ),
        (1, vec![1, 2, 3, 4], 1, None, 1)
    );

    let failure = ProducerError::new(errno::EIO, Some("async source failed"));
    let seen = run_async(vec![Ok(vec![1]), Err(failure), Ok(vec![9])], None);
    assert_eq!(seen.values, [1]);
    assert_eq!(
        seen.error,
        Some((errno::EIO, "async source failed".to_string()))
    );
    assert_eq!((seen.end, seen.released), (0, 1));

    let seen = run_async(vec![Ok(vec![1]), Ok(vec![2]), Ok(vec![3])], Some(1));
    assert_eq!(
        (seen.values, seen.end, seen.error, seen.released),
        (vec![1], 0, None, 1)
    );
}

#[test]
fn async_producer_waits_for_requests_and_cancels_on_drop() {
    unsafe extern "C" fn no_request(
        _: *mut ArrowAsyncDeviceStreamHandler,
        schema: *mut ArrowSchema,
    ) -> c_int {
        // SAFETY: the producer hands over a schema it built.
        drop(import_schema(unsafe { &mut *schema }));
        0
    }
    let mut seen = Seen::default();
    let mut handler = ArrowAsyncDeviceStreamHandler {
        on_schema: Some(no_request),
        on_next_task: Some(on_next_task),
        on_error: Some(on_error),
        release: Some(release_handler),
        producer: ptr::null_mut(),
        private_data: (&raw mut seen).cast(),
    };
    let items = vec![Ok(DeviceArray::from_cpu(
        Array::from_vec(vec![1i32]).unwrap(),
    ))];
    // SAFETY: `handler` follows the interface and outlives the producer.
    let mut producer = unsafe {
        AsyncProducer::start(
            &mut handler,
            ARROW_DEVICE_CPU,
            &SchemaDef::new("i").unwrap(),
            items.into_iter(),
        )
    };
    assert_eq!(producer.drive(), AsyncState::Waiting);
    drop(producer); // never requested: the item is dropped, the handler released
    assert_eq!((seen.values.len(), seen.released, seen.error), (0, 1, None));
}
