//! The committed `include/dlpack_abi.h` must equal a fresh generation from the Rust definitions.
//! Needs the `header` feature (which builds cbindgen); regenerate the committed file with
//! `DLPACK_ABI_BLESS=1 cargo test --features header --test header`.
#![cfg(feature = "header")]

use std::path::Path;

#[test]
fn committed_header_matches_fresh_generation() {
    let fresh =
        std::fs::read_to_string(env!("DLPACK_ABI_GENERATED_HEADER")).expect("generated header");
    let committed_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/dlpack_abi.h");
    if std::env::var_os("DLPACK_ABI_BLESS").is_some() {
        std::fs::write(&committed_path, &fresh).expect("write include/dlpack_abi.h");
        return;
    }
    let committed = std::fs::read_to_string(&committed_path).unwrap_or_default();
    if committed != fresh {
        let (line, (ours, theirs)) = committed
            .lines()
            .chain(std::iter::repeat("<end of file>"))
            .zip(fresh.lines().chain(std::iter::repeat("<end of file>")))
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .expect("texts differ, so some line differs");
        panic!(
            "include/dlpack_abi.h is stale (first difference at line {}):\n  committed: {ours}\n  generated: {theirs}\n\
             Regenerate with: DLPACK_ABI_BLESS=1 cargo test --features header --test header",
            line + 1
        );
    }
}
