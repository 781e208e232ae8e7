//! Build script. It tells dependents where the committed C header is: `links = "dlpack_abi"`
//! makes `cargo:include=DIR` reach a dependent's build script as `DEP_DLPACK_ABI_INCLUDE`, so
//! that it compiles its C code against `DIR/dlpack_abi.h` (with `cc`, say). Without the `header`
//! feature that is all it does (dependents never compile cbindgen). With it, it generates the C header from the raw Rust definitions into `OUT_DIR`
//! and exports its path as `DLPACK_ABI_GENERATED_HEADER`; `tests/header.rs` compares it with
//! the committed `include/dlpack_abi.h`.

#[cfg(feature = "header")]
#[path = "build/header.rs"]
mod header;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let include = std::path::Path::new(&manifest_dir).join("include");
    println!("cargo:include={}", include.display());
    #[cfg(feature = "header")]
    header::generate();
}
