//! Build script. Without the `header` feature it does nothing (dependents never compile
//! cbindgen). With it, it generates the C header from the raw Rust definitions into `OUT_DIR`
//! and exports its path as `DLPACK_ABI_GENERATED_HEADER`; `tests/header.rs` compares it with
//! the committed `include/dlpack_abi.h`.

#[cfg(feature = "header")]
#[path = "build/header.rs"]
mod header;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "header")]
    header::generate();
}
