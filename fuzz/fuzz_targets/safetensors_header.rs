//! Opens arbitrary safetensors files (`SafeTensorsFile::from_bytes`) and takes every tensor.
//!
//! The input is either the file's raw bytes, or (mostly) a header synthesised from structured
//! input: tensors with any dtype name (the format's and a few it lacks), shapes, and offsets that
//! may lie (overlap, leave gaps, point past the data, disagree with the shape), padding, and a
//! data section of any length.
//!
//! Checks: no crash and no sanitizer report; a tensor taken from an accepted file reads exactly
//! the bytes its header offsets name, inside the data section, and is `READ_ONLY` on the CPU; a
//! refused tensor is refused for a reason of its own (misaligned, or an extent above `int64_t`).
#![no_main]

use arbitrary::Arbitrary;
use dlpack_abi::raw::{kDLCPU, DLPackFlags};
use dlpack_abi_safetensors::{SafeTensorsFile, SafetensorsError};
use libfuzzer_sys::fuzz_target;

const DTYPES: [&str; 26] = [
    "BOOL",
    "U8",
    "U16",
    "U32",
    "U64",
    "I8",
    "I16",
    "I32",
    "I64",
    "F16",
    "F32",
    "F64",
    "BF16",
    "C64",
    "F8_E4M3",
    "F8_E5M2",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "F8_E8M0",
    "F6_E2M3",
    "F6_E3M2",
    "F4",
    "Q4",
    "F128",
    "",
    "bf16",
];

#[derive(Arbitrary, Debug)]
struct Tensor {
    dtype: u8,
    shape: Vec<u8>,
    huge_extent: bool,
    begin: u16,
    end: u16,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(Vec<u8>),
    Synthesised {
        tensors: Vec<Tensor>,
        metadata: Option<(String, String)>,
        pad: u8,
        data_len: u16,
        /// Added to the header length field (a header that lies about its own length).
        length_skew: i8,
    },
}

fn file(input: &Input) -> (Vec<u8>, Vec<(String, usize, usize)>) {
    let Input::Synthesised {
        tensors,
        metadata,
        pad,
        data_len,
        length_skew,
    } = input
    else {
        let Input::Raw(bytes) = input else {
            unreachable!()
        };
        return (bytes.clone(), Vec::new());
    };
    let mut entries = Vec::new();
    let mut named = Vec::new();
    if let Some((key, value)) = metadata {
        entries.push(format!(r#""__metadata__":{{{key:?}:{value:?}}}"#));
    }
    for (i, t) in tensors.iter().take(8).enumerate() {
        let mut shape: Vec<u64> = t.shape.iter().take(4).map(|&e| u64::from(e % 9)).collect();
        if t.huge_extent {
            shape.push(u64::MAX);
        }
        let dtype = DTYPES[usize::from(t.dtype) % DTYPES.len()];
        entries.push(format!(
            r#""t{i}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{},{}]}}"#,
            t.begin, t.end
        ));
        named.push((format!("t{i}"), usize::from(t.begin), usize::from(t.end)));
    }
    let header = format!(
        "{{{}}}{}",
        entries.join(","),
        " ".repeat(usize::from(*pad % 16))
    );
    let length = (header.len() as u64).wrapping_add_signed(i64::from(*length_skew));
    let mut bytes = length.to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend((0..*data_len % 512).map(|b| b as u8));
    (bytes, named)
}

fuzz_target!(|input: Input| {
    let (bytes, named) = file(&input);
    let Ok(file) = SafeTensorsFile::from_bytes(&bytes) else {
        return;
    };
    // An accepted file's data starts after the header length its first 8 bytes state (a skewed
    // length moves header padding into the data, or data into the header).
    let stated = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    let data_start = 8 + usize::try_from(stated).unwrap();
    let names: Vec<String> = file.names().map(str::to_string).collect();
    for name in &names {
        match file.tensor(name) {
            Ok(tensor) => {
                let view = tensor.view();
                assert_eq!(view.device().device_type, kDLCPU);
                assert_eq!(view.flags(), DLPackFlags::READ_ONLY);
                assert!(view.is_c_contiguous());
                let read: &[u8] = if view.byte_size() == 0 {
                    &[]
                } else {
                    // SAFETY: validated, compact, host memory the tensor keeps alive.
                    unsafe {
                        std::slice::from_raw_parts(view.data_ptr().cast::<u8>(), view.byte_size())
                    }
                };
                if let Some((_, begin, end)) = named.iter().find(|(n, ..)| n == name) {
                    assert_eq!(read, &bytes[data_start + begin..data_start + end]);
                } else {
                    // Raw input: the bytes lie in the file's copy.
                    let sum: u64 = read.iter().map(|&b| u64::from(b)).sum();
                    std::hint::black_box(sum);
                }
            }
            Err(SafetensorsError::Misaligned { .. } | SafetensorsError::ExtentTooLarge { .. }) => {}
            Err(error) => panic!("tensor {name} of an accepted file refused: {error}"),
        }
    }
});
