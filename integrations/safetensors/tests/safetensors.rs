//! The safetensors bridge against the `safetensors` crate's own writer: every dtype, zero-copy
//! (pointers into the mapping), the mapping's lifetime (`/proc/self/maps`), malformed files, and
//! a property test of lying headers. Miri runs the in-memory tests (`from_bytes`); mapping is
//! outside what Miri can run.

use std::path::PathBuf;

use dlpack_abi::dlpack::{TensorView, VersionedTensor};
use dlpack_abi::raw::*;
use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
use proptest::prelude::*;
use safetensors::tensor::TensorView as StView;
use safetensors::{Dtype, SafeTensorError};

/// A file written by the `safetensors` crate: `(name, dtype, shape, bytes)` each.
fn write(tensors: &[(&str, Dtype, &[usize], Vec<u8>)]) -> Vec<u8> {
    let views = tensors.iter().map(|(name, dtype, shape, bytes)| {
        (*name, StView::new(*dtype, shape.to_vec(), bytes).unwrap())
    });
    safetensors::serialize(views, None).unwrap()
}

/// A file from a header written by hand (no padding) and data.
fn handmade(header: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// The bytes a tensor reaches (validated, host memory, compact).
fn bytes_of<'a>(view: &TensorView<'a>) -> &'a [u8] {
    assert!(view.is_c_contiguous());
    if view.byte_size() == 0 {
        return &[]; // `data` may be NULL
    }
    let data = view.data_ptr().cast::<u8>().cast_const();
    // SAFETY: the view is validated, on the CPU, compact: `byte_size` bytes from `data` are
    // readable for the view's lifetime (the export keeps them alive and unwritten).
    unsafe { std::slice::from_raw_parts(data, view.byte_size()) }
}

/// A unique temporary path (tests run in parallel).
fn temp_path(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "dlpack-abi-{test}-{}.safetensors",
        std::process::id()
    ))
}

/// Whether this process maps `path` (Linux).
fn mapped(path: &std::path::Path) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    // A removed file's line ends with " (deleted)".
    maps.lines()
        .any(|line| line.contains(path.to_str().unwrap()))
}

const DTYPES: [(Dtype, DLDataTypeCode, u8); 22] = [
    (Dtype::BOOL, kDLBool, 8),
    (Dtype::U8, kDLUInt, 8),
    (Dtype::U16, kDLUInt, 16),
    (Dtype::U32, kDLUInt, 32),
    (Dtype::U64, kDLUInt, 64),
    (Dtype::I8, kDLInt, 8),
    (Dtype::I16, kDLInt, 16),
    (Dtype::I32, kDLInt, 32),
    (Dtype::I64, kDLInt, 64),
    (Dtype::F16, kDLFloat, 16),
    (Dtype::F32, kDLFloat, 32),
    (Dtype::F64, kDLFloat, 64),
    (Dtype::BF16, kDLBfloat, 16),
    (Dtype::C64, kDLComplex, 64),
    (Dtype::F8_E4M3, kDLFloat8_e4m3fn, 8),
    (Dtype::F8_E5M2, kDLFloat8_e5m2, 8),
    (Dtype::F8_E4M3FNUZ, kDLFloat8_e4m3fnuz, 8),
    (Dtype::F8_E5M2FNUZ, kDLFloat8_e5m2fnuz, 8),
    (Dtype::F8_E8M0, kDLFloat8_e8m0fnu, 8),
    (Dtype::F6_E2M3, kDLFloat6_e2m3fn, 6),
    (Dtype::F6_E3M2, kDLFloat6_e3m2fn, 6),
    (Dtype::F4, kDLFloat4_e2m1fn, 4),
];

/// One tensor of each dtype, 2 x 4 elements (a whole number of bytes even for FP6), with
/// distinct bytes, written by the `safetensors` crate (which orders them by alignment).
fn every_dtype() -> Vec<u8> {
    let tensors: Vec<(String, Dtype, Vec<u8>)> = DTYPES
        .iter()
        .enumerate()
        .map(|(i, &(dtype, ..))| {
            let len = 8 * dtype.bitsize() / 8;
            let bytes = (0..len).map(|b| (i * 31 + b) as u8).collect();
            (format!("t{i}"), dtype, bytes)
        })
        .collect();
    let borrowed: Vec<(&str, Dtype, &[usize], Vec<u8>)> = tensors
        .iter()
        .map(|(name, dtype, bytes)| (name.as_str(), *dtype, &[2usize, 4][..], bytes.clone()))
        .collect();
    write(&borrowed)
}

fn check_every_dtype(file: &SafeTensorsFile) {
    assert_eq!(file.len(), DTYPES.len());
    for (i, &(dtype, code, bits)) in DTYPES.iter().enumerate() {
        let name = format!("t{i}");
        let tensor = file.tensor(&name).unwrap();
        let view = tensor.view();
        let expected = DLDataType {
            code,
            bits,
            lanes: 1,
        };
        assert_eq!(view.dtype(), expected, "{dtype}");
        assert_eq!(file.describe(&name).unwrap(), (expected, &[2usize, 4][..]));
        assert_eq!(view.shape(), [2, 4]);
        assert_eq!(view.device().device_type, kDLCPU);
        assert_eq!(view.flags(), DLPackFlags::READ_ONLY);
        // Sub-byte elements packed, as the file stores them: 8 FP4 elements are 4 bytes.
        assert_eq!(view.byte_size(), 8 * dtype.bitsize() / 8, "{dtype}");
        let len = 8 * dtype.bitsize() / 8;
        let want: Vec<u8> = (0..len).map(|b| (i * 31 + b) as u8).collect();
        assert_eq!(bytes_of(&view), want, "{dtype}");
    }
}

#[test]
fn every_dtype_in_memory() {
    let file = SafeTensorsFile::from_bytes(&every_dtype()).unwrap();
    check_every_dtype(&file);
    // Typed access where Rust has the type: the values, little-endian as the file stores them.
    let f32s = DTYPES.iter().position(|d| d.0 == Dtype::F32).unwrap();
    let tensor = file.tensor(&format!("t{f32s}")).unwrap();
    let values = tensor.view().as_slice::<f32>().unwrap().to_vec();
    let bytes = bytes_of(&tensor.view()).to_vec();
    let decoded: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, decoded);
}

#[cfg_attr(miri, ignore = "Miri cannot map files")]
#[test]
fn every_dtype_mapped_and_read() {
    let path = temp_path("every-dtype");
    std::fs::write(&path, every_dtype()).unwrap();
    // SAFETY: nothing else writes this file.
    check_every_dtype(&unsafe { SafeTensorsFile::open(&path) }.unwrap());
    check_every_dtype(&SafeTensorsFile::read(&path).unwrap());
    std::fs::remove_file(&path).unwrap();
}

/// Zero-copy: every tensor points into the one mapping, at its offset in the file, and taking a
/// tensor twice shares it again.
#[cfg_attr(miri, ignore = "Miri cannot map files")]
#[test]
fn tensors_share_the_mapping() {
    let bytes = write(&[
        ("a", Dtype::F32, &[4], vec![1; 16]),
        ("b", Dtype::F32, &[2], vec![2; 8]),
    ]);
    let header_len = usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap();
    let path = temp_path("share");
    std::fs::write(&path, &bytes).unwrap();
    // SAFETY: nothing else writes this file.
    let file = unsafe { SafeTensorsFile::open(&path) }.unwrap();
    let (a, b, a_again) = (
        file.tensor("a").unwrap(),
        file.tensor("b").unwrap(),
        file.tensor("a").unwrap(),
    );
    let address = |t: &VersionedTensor| t.view().data_ptr() as usize;
    assert_eq!(address(&b) - address(&a), 16, "b follows a in the file");
    assert_eq!(address(&a), address(&a_again));
    // The mapping starts at a page boundary: a's address is its file offset past it.
    assert_eq!(address(&a) % 4096, 8 + header_len);
    assert_eq!(bytes_of(&b.view()), [2; 8]);
    std::fs::remove_file(&path).unwrap();
}

/// Every tensor keeps the mapping alive: it outlives the file value (and the removed file);
/// the mapping goes when the last tensor does, including one that went through C.
#[cfg_attr(miri, ignore = "Miri cannot map files")]
#[test]
fn the_last_tensor_unmaps() {
    let path = temp_path("lifetime");
    std::fs::write(
        &path,
        write(&[(
            "x",
            Dtype::I64,
            &[2],
            [7i64, -7].iter().flat_map(|v| v.to_le_bytes()).collect(),
        )]),
    )
    .unwrap();
    // SAFETY: nothing else writes this file.
    let file = unsafe { SafeTensorsFile::open(&path) }.unwrap();
    let first = file.tensor("x").unwrap();
    let through_c = file.tensor("x").unwrap().into_raw();
    assert!(mapped(&path));
    drop(file);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(first.view().as_slice::<i64>().unwrap(), [7, -7]);
    drop(first);
    assert!(
        mapped(&path),
        "the tensor handed to C still holds the mapping"
    );
    // SAFETY: `through_c` is a live tensor handed over once.
    let back = unsafe { VersionedTensor::from_raw(through_c) }.unwrap();
    assert_eq!(back.view().get::<i64>(&[1]).unwrap(), -7);
    drop(back); // the deleter: the last holder
    assert!(!mapped(&path), "unmapped after the last tensor");
}

#[test]
fn malformed_files_are_refused() {
    let format = |bytes: &[u8]| match SafeTensorsFile::from_bytes(bytes) {
        Err(SafetensorsError::Format(error)) => error,
        other => panic!("expected a format error, got {other:?}"),
    };
    let ok = handmade(
        r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
        &[1, 2],
    );
    assert!(SafeTensorsFile::from_bytes(&ok).is_ok());
    // Shorter than the length prefix; a huge header length; one past the end of the file.
    assert!(matches!(format(&ok[..5]), SafeTensorError::HeaderTooSmall));
    let mut huge = ok.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(format(&huge), SafeTensorError::HeaderTooLarge));
    let mut past = ok.clone();
    past[..8].copy_from_slice(&(ok.len() as u64).to_le_bytes());
    assert!(matches!(
        format(&past),
        SafeTensorError::InvalidHeaderLength
    ));
    // Truncated data, and bytes left over.
    assert!(matches!(
        format(&ok[..ok.len() - 1]),
        SafeTensorError::MetadataIncompleteBuffer
    ));
    let mut longer = ok.clone();
    longer.push(0);
    assert!(matches!(
        format(&longer),
        SafeTensorError::MetadataIncompleteBuffer
    ));
    // Not JSON, not UTF-8.
    assert!(matches!(
        format(&handmade("{", b"")),
        SafeTensorError::InvalidHeaderDeserialization(_)
    ));
    assert!(matches!(
        format(&handmade("\u{0}\u{ff}", b"")),
        SafeTensorError::InvalidHeaderDeserialization(_)
    ));
    let mut not_utf8 = handmade("{ }", b"");
    not_utf8[9] = 0xff;
    assert!(matches!(
        format(&not_utf8),
        SafeTensorError::InvalidHeader(_)
    ));
    // Offsets that overlap, leave a gap, point outside the data, or disagree with the shape.
    let two = |a: &str, b: &str| {
        format!(
            r#"{{"a":{{"dtype":"U8","shape":[2],"data_offsets":{a}}},"b":{{"dtype":"U8","shape":[2],"data_offsets":{b}}}}}"#
        )
    };
    assert!(matches!(
        format(&handmade(&two("[0,2]", "[1,3]"), &[0; 3])),
        SafeTensorError::InvalidOffset(_)
    ));
    assert!(matches!(
        format(&handmade(&two("[0,2]", "[3,5]"), &[0; 5])),
        SafeTensorError::InvalidOffset(_)
    ));
    assert!(matches!(
        format(&handmade(&two("[0,2]", "[2,4]"), &[0; 3])),
        SafeTensorError::MetadataIncompleteBuffer
    ));
    // Data shorter than the shape says: the crate's `TensorInvalidInfo`, with the tensor named.
    let short = SafeTensorsFile::from_bytes(&handmade(
        r#"{"a":{"dtype":"U16","shape":[2],"data_offsets":[0,2]}}"#,
        &[0; 2],
    ));
    let Err(short) = short else {
        panic!("a short tensor was accepted")
    };
    assert_eq!(
        short.to_string(),
        "not a valid safetensors file: tensor \"a\" has shape [2] of U16, 4 bytes, but its \
         data_offsets span 2"
    );
    assert!(matches!(
        short,
        SafetensorsError::TensorSize { ref name, expected: 4, found: 2, .. } if name == "a"
    ));
    // An odd number of 4-bit elements is not a whole number of bytes.
    assert!(matches!(
        format(&handmade(
            r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
            &[0; 2]
        )),
        SafeTensorError::MisalignedSlice
    ));
    // A dtype no version of the format has.
    assert!(matches!(
        format(&handmade(
            r#"{"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,1]}}"#,
            &[0; 1]
        )),
        SafeTensorError::InvalidHeaderDeserialization(_)
    ));
    // The message says what is wrong.
    let error = SafeTensorsFile::from_bytes(&ok[..ok.len() - 1]).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("not a valid safetensors file: "),
        "{error}"
    );
}

/// Checks of one tensor refuse that tensor (naming it) and leave the others usable.
#[test]
fn bad_tensors_are_refused_alone() {
    // The header padded to 120 bytes: `f` starts at byte 8 + 120 + 2 = 130 of the file, not a
    // multiple of 4.
    let header = format!(
        "{:<120}",
        r#"{"u":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"f":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}"#
    );
    let file = SafeTensorsFile::from_bytes(&handmade(&header, &[1, 2, 0, 0, 128, 63])).unwrap();
    let error = file.tensor("f").unwrap_err();
    assert!(
        matches!(&error, SafetensorsError::Misaligned { name, offset: 130, align: 4 } if name == "f"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "tensor \"f\" starts at byte 130 of the file, which is not a multiple of its dtype's alignment, 4"
    );
    assert_eq!(
        file.tensor("u").unwrap().view().as_slice::<u8>().unwrap(),
        [1, 2]
    );
    let missing = file.tensor("g").unwrap_err();
    assert_eq!(missing.to_string(), "the file has no tensor named \"g\"");
    // A valid file with an extent above i64::MAX (the tensor is empty); on 32-bit targets the
    // extent does not fit `usize`, and the safetensors crate refuses the file.
    let header = format!(
        r#"{{"e":{{"dtype":"U8","shape":[{},0],"data_offsets":[0,0]}}}}"#,
        u64::MAX
    );
    match SafeTensorsFile::from_bytes(&handmade(&header, &[])) {
        Ok(file) if cfg!(target_pointer_width = "64") => assert!(matches!(
            file.tensor("e"),
            Err(SafetensorsError::ExtentTooLarge { dim: 0, .. })
        )),
        Err(SafetensorsError::Format(_)) if cfg!(target_pointer_width = "32") => {}
        other => panic!("{other:?}"),
    }
    // Empty tensors are fine.
    let file = SafeTensorsFile::from_bytes(&handmade(
        r#"{"z":{"dtype":"F64","shape":[0,3],"data_offsets":[0,0]}}"#,
        &[],
    ))
    .unwrap();
    assert_eq!(file.tensor("z").unwrap().view().element_count(), 0);
}

/// Offsets that tile almost 2^64 bytes: `safetensors` 0.8 overflows adding them to the header
/// length (a panic in debug builds); refused as an overflow, never a panic.
#[cfg(target_pointer_width = "64")]
#[test]
fn offsets_near_the_address_space_are_refused() {
    let size = (1u64 << 61) - 1;
    let entries: Vec<String> = (0..8)
        .map(|i| {
            format!(
                r#""t{i}":{{"dtype":"U8","shape":[{size}],"data_offsets":[{},{}]}}"#,
                i * size,
                (i + 1) * size
            )
        })
        .collect();
    let header = format!("{{{}}}", entries.join(","));
    assert!(matches!(
        SafeTensorsFile::from_bytes(&handmade(&header, &[])),
        Err(SafetensorsError::Format(
            SafeTensorError::ValidationOverflow
        ))
    ));
}

/// A header of `tensors`: (dtype index, shape, begin, end), offsets as given (honest or not).
fn lying_file(
    tensors: &[(usize, Vec<usize>, usize, usize)],
    data_len: usize,
    pad: usize,
) -> Vec<u8> {
    let entries: Vec<String> = tensors
        .iter()
        .enumerate()
        .map(|(i, (dtype, shape, begin, end))| {
            format!(
                r#""t{i}":{{"dtype":"{}","shape":{shape:?},"data_offsets":[{begin},{end}]}}"#,
                DTYPES[*dtype].0
            )
        })
        .collect();
    let header = format!("{{{}}}{}", entries.join(","), " ".repeat(pad));
    let data: Vec<u8> = (0..data_len).map(|b| b as u8).collect();
    handmade(&header, &data)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if cfg!(miri) { 6 } else { 400 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Whatever the header claims, a file is refused or every tensor taken from it reaches only
    /// bytes of the file's data, the ones its offsets name (Miri and the sanitizers see each
    /// read). Honest headers are always accepted.
    #[test]
    fn headers_never_reach_outside_the_file(
        tensors in prop::collection::vec(
            (0..DTYPES.len(), prop::collection::vec(0usize..5, 0..3), 0usize..40, 0usize..40),
            0..4,
        ),
        honest in any::<bool>(),
        extra in 0usize..3,
        pad in 0usize..8,
    ) {
        let mut tensors = tensors;
        let mut data_len = extra;
        if honest {
            let mut at = 0;
            for (dtype, shape, begin, end) in &mut tensors {
                let bits: usize = shape.iter().product::<usize>() * DTYPES[*dtype].0.bitsize();
                if bits % 8 != 0 { shape.push(8); }
                let bits: usize = shape.iter().product::<usize>() * DTYPES[*dtype].0.bitsize();
                *begin = at;
                *end = at + bits / 8;
                at = *end;
            }
            data_len = at;
        }
        let bytes = lying_file(&tensors, data_len, pad);
        let data_start = bytes.len() - data_len;
        match SafeTensorsFile::from_bytes(&bytes) {
            Err(error) => prop_assert!(!honest, "honest file refused: {error}"),
            Ok(file) => {
                for (i, (dtype, _, begin, end)) in tensors.iter().enumerate() {
                    match file.tensor(&format!("t{i}")) {
                        Ok(tensor) => {
                            let view = tensor.view();
                            let read = bytes_of(&view);
                            prop_assert_eq!(read, &bytes[data_start + begin..data_start + end]);
                        }
                        Err(SafetensorsError::Misaligned { align, .. }) => {
                            prop_assert_eq!(align, DTYPES[*dtype].0.bitsize().div_ceil(8));
                        }
                        Err(error) => prop_assert!(false, "{}", error),
                    }
                }
            }
        }
    }
}
