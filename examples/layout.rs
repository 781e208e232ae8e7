//! Prints the size, alignment and every field offset of every type in `dlpack_abi::raw` for the
//! current target, and the value of every constant.
//!
//! `cargo run --example layout` prints a table; `-- --check` prints the line format that
//! `layout-checks/layout.c` prints for the C headers, so the three can be compared.

use std::mem::{align_of, offset_of, size_of};

use dlpack_abi::raw::*;

struct Layout {
    name: &'static str,
    size: usize,
    align: usize,
    /// (field, offset, size)
    fields: Vec<(&'static str, usize, usize)>,
}

/// The size of a field, named by a projection closure.
fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! layouts {
    ($($ty:ident { $($field:ident),* $(,)? })*) => {
        vec![$(Layout {
            name: stringify!($ty),
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: vec![$((stringify!($field), offset_of!($ty, $field), field_size(|s: &$ty| &s.$field))),*],
        }),*]
    };
}

fn layouts() -> Vec<Layout> {
    layouts! {
        DLPackVersion { major, minor }
        DLDeviceType {}
        DLDevice { device_type, device_id }
        DLDataType { code, bits, lanes }
        DLTensor { data, device, ndim, dtype, shape, strides, byte_offset }
        DLManagedTensor { dl_tensor, manager_ctx, deleter }
        DLManagedTensorVersioned { version, manager_ctx, deleter, flags, dl_tensor }
        DLPackExchangeAPIHeader { version, prev_api }
        DLPackExchangeAPI {
            header,
            managed_tensor_allocator,
            managed_tensor_from_py_object_no_sync,
            managed_tensor_to_py_object_no_sync,
            dltensor_from_py_object_no_sync,
            current_work_stream,
        }
        ArrowSchema { format, name, metadata, flags, n_children, children, dictionary, release, private_data }
        ArrowArray {
            length, null_count, offset, n_buffers, n_children, buffers, children, dictionary, release, private_data,
        }
        ArrowDeviceType {}
        ArrowDeviceArray { array, device_id, device_type, sync_event, reserved }
        ArrowArrayStream { get_schema, get_next, get_last_error, release, private_data }
        ArrowDeviceArrayStream { device_type, get_schema, get_next, get_last_error, release, private_data }
        ArrowAsyncTask { extract_data, private_data }
        ArrowAsyncProducer { device_type, request, cancel, additional_metadata, private_data }
        ArrowAsyncDeviceStreamHandler { on_schema, on_next_task, on_error, release, producer, private_data }
    }
}

/// Every constant of the C headers, with its value.
fn constants() -> Vec<(&'static str, i64)> {
    let mut all: Vec<(&'static str, i64)> = vec![
        ("DLPACK_MAJOR_VERSION", DLPACK_MAJOR_VERSION.into()),
        ("DLPACK_MINOR_VERSION", DLPACK_MINOR_VERSION.into()),
        (
            "DLPACK_FLAG_BITMASK_READ_ONLY",
            DLPACK_FLAG_BITMASK_READ_ONLY as i64,
        ),
        (
            "DLPACK_FLAG_BITMASK_IS_COPIED",
            DLPACK_FLAG_BITMASK_IS_COPIED as i64,
        ),
        (
            "DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
            DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED as i64,
        ),
        (
            "ARROW_FLAG_DICTIONARY_ORDERED",
            ARROW_FLAG_DICTIONARY_ORDERED,
        ),
        ("ARROW_FLAG_NULLABLE", ARROW_FLAG_NULLABLE),
        ("ARROW_FLAG_MAP_KEYS_SORTED", ARROW_FLAG_MAP_KEYS_SORTED),
    ];
    let named = |name: Option<&'static str>| name.expect("KNOWN values are named");
    all.extend(
        DLDeviceType::KNOWN
            .iter()
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all.extend(
        DLDataTypeCode::KNOWN
            .iter()
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all.extend(
        ArrowDeviceType::KNOWN
            .iter()
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all
}

fn family() -> &'static str {
    match (size_of::<usize>(), align_of::<u64>()) {
        (8, 8) => "LP64",
        (4, 4) => "i686 (32-bit, u64 aligned to 4)",
        (4, 8) => "ILP32-a8 (32-bit, u64 aligned to 8)",
        _ => "unknown",
    }
}

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    if check {
        for l in layouts() {
            println!("size {} {}\nalign {} {}", l.name, l.size, l.name, l.align);
            for (field, offset, size) in &l.fields {
                println!(
                    "offset {}.{field} {offset}\nfieldsize {}.{field} {size}",
                    l.name, l.name
                );
            }
        }
        for (name, value) in constants() {
            println!("value {name} {value}");
        }
        return;
    }
    println!(
        "dlpack-abi layouts on {} ({}), ABI family {}\n",
        std::env::consts::ARCH,
        std::env::consts::OS,
        family()
    );
    println!(
        "{:<42} {:>6} {:>6} {:>6}",
        "type / field", "offset", "size", "align"
    );
    for l in layouts() {
        println!("{:<42} {:>6} {:>6} {:>6}", l.name, "", l.size, l.align);
        for (field, offset, size) in &l.fields {
            println!("  .{field:<40} {offset:>6} {size:>6}");
        }
    }
    println!("\n{:<44} {:>6}", "constant", "value");
    for (name, value) in constants() {
        println!("{name:<44} {value:>6}");
    }
}
