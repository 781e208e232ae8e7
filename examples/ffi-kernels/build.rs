//! Compiles the C kernel against dlpack-abi's header: its build script exports the include
//! directory, which Cargo hands to this one as `DEP_DLPACK_ABI_INCLUDE` (`links = "dlpack_abi"`).

fn main() {
    let include =
        std::env::var("DEP_DLPACK_ABI_INCLUDE").expect("dlpack-abi exports its include dir");
    println!("cargo:rerun-if-changed=c/scale.c");
    cc::Build::new()
        .file("c/scale.c")
        .include(include)
        .warnings_into_errors(true)
        .compile("scale");
}
