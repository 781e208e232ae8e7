//! Prints the size, alignment and every field offset of every type in `dlpack_abi::raw` for the
//! current target (from `raw::layout::LAYOUTS`, the table the compile-time assertions check),
//! and the value of every constant.
//!
//! `cargo run --example layout` prints a table; `-- --check` prints the line format that
//! `layout-checks/layout.c` prints for the C headers, so the three can be compared; with
//! `--unreleased`, the enum values no DLPack release has yet are printed too (as `layout.c` built
//! with `-DDLPACK_ABI_UNRELEASED` prints them). `-- --errors` prints, in the same format, the
//! layout of `ErrorReport` and every `ErrorCode` (what `layout-checks/errors.c` prints for the
//! header's `DLPackAbiErrorReport` and `DLPackAbiErrorCode`).

use dlpack_abi::error_code::{ErrorCode, ErrorReport};
use dlpack_abi::raw::layout::{ABI_FAMILY, LAYOUTS};
use dlpack_abi::raw::*;

/// The error codes and the report struct, as `layout-checks/errors.c` prints them for C.
fn print_errors() {
    use std::mem::{align_of, offset_of, size_of, size_of_val};
    let report = ErrorReport::OK;
    println!("size DLPackAbiErrorCode {}", size_of::<ErrorCode>());
    println!("align DLPackAbiErrorCode {}", align_of::<ErrorCode>());
    println!("size DLPackAbiErrorReport {}", size_of::<ErrorReport>());
    println!("align DLPackAbiErrorReport {}", align_of::<ErrorReport>());
    for (field, offset, size) in [
        (
            "code",
            offset_of!(ErrorReport, code),
            size_of_val(&report.code),
        ),
        (
            "message",
            offset_of!(ErrorReport, message),
            size_of_val(&report.message),
        ),
    ] {
        println!("offset DLPackAbiErrorReport.{field} {offset}");
        println!("fieldsize DLPackAbiErrorReport.{field} {size}");
    }
    println!(
        "value DLPACK_ABI_ERROR_MESSAGE_SIZE {}",
        ErrorReport::MESSAGE_CAPACITY
    );
    for code in ErrorCode::KNOWN {
        let name = code.name().expect("KNOWN codes are named");
        println!("value {name} {}", code.0);
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
    // Values no DLPack release has yet: the header declares them under DLPACK_ABI_UNRELEASED.
    let unreleased = std::env::args().any(|a| a == "--unreleased");
    all.extend(
        DLDeviceType::KNOWN
            .iter()
            .filter(|v| unreleased || !DLDeviceType::UNRELEASED.contains(v))
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all.extend(
        DLDataTypeCode::KNOWN
            .iter()
            .filter(|v| unreleased || !DLDataTypeCode::UNRELEASED.contains(v))
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all.extend(
        ArrowDeviceType::KNOWN
            .iter()
            .map(|v| (named(v.name()), i64::from(v.0))),
    );
    all
}

fn main() {
    if std::env::args().any(|a| a == "--errors") {
        print_errors();
        return;
    }
    let check = std::env::args().any(|a| a == "--check");
    if check {
        for t in LAYOUTS {
            println!("size {0} {1}\nalign {0} {2}", t.name, t.size, t.align);
            for f in t.fields {
                println!(
                    "offset {0}.{1} {2}\nfieldsize {0}.{1} {3}",
                    t.name, f.name, f.offset, f.size
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
        ABI_FAMILY
    );
    println!(
        "{:<42} {:>6} {:>6} {:>6}",
        "type / field", "offset", "size", "align"
    );
    for t in LAYOUTS {
        println!("{:<42} {:>6} {:>6} {:>6}", t.name, "", t.size, t.align);
        for f in t.fields {
            println!("  .{:<40} {:>6} {:>6}", f.name, f.offset, f.size);
        }
    }
    println!("\n{:<44} {:>6}", "constant", "value");
    for (name, value) in constants() {
        println!("{name:<44} {value:>6}");
    }
}
