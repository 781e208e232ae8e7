//! Generates `dlpack_abi.h` from the raw layer's Rust sources.
//!
//! cbindgen parses the sources and renders every struct and typedef. This file decides the
//! parts cbindgen cannot express: the upstream include guards around each part, which structs
//! carry a tag (`typedef struct DLManagedTensor {...}`) and which are anonymous
//! (`typedef struct {...} DLDevice`) or tag-only (`struct ArrowSchema {...}`), the open enums
//! `DLDeviceType`/`DLDataTypeCode` as C enums, and the exact spelling of the macros. Every name,
//! value, field and doc comment comes from the Rust definitions. The last part, this crate's
//! own (`DLPackAbiErrorCode`, `DLPackAbiErrorReport`), is rendered from the table of error
//! codes (`src/error_code/table.rs`), read line by line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use cbindgen::bindgen::ir::{Constant, GenericParams, GenericPath, ItemContainer, Literal, Type};
use cbindgen::{Bindings, Builder, Config, DocumentationStyle, Language, Style};

/// One module of the raw layer and how its items are spelled in C.
struct Module {
    /// Path of the Rust module, relative to the crate root.
    file: &'static str,
    /// Style of its structs, unless listed in [`TAGGED_TYPEDEFS`].
    style: Style,
}

/// An upstream header unit: an include guard and the modules it holds, in order.
struct Part {
    guard: &'static str,
    modules: &'static [Module],
}

const DLPACK: Part = Part {
    guard: "DLPACK_DLPACK_H_",
    modules: &[
        Module {
            file: "src/raw/dlpack/version.rs",
            style: Style::Type,
        },
        Module {
            file: "src/raw/dlpack/device.rs",
            style: Style::Type,
        },
        Module {
            file: "src/raw/dlpack/dtype.rs",
            style: Style::Type,
        },
        Module {
            file: "src/raw/dlpack/tensor.rs",
            style: Style::Type,
        },
        Module {
            file: "src/raw/dlpack/exchange_api.rs",
            style: Style::Type,
        },
    ],
};

/// The five canonical Arrow guard blocks, in `abi.h` order; Arrow structs have no typedefs.
const ARROW: [Part; 5] = [
    Part {
        guard: "ARROW_C_DATA_INTERFACE",
        modules: &[Module {
            file: "src/raw/arrow/c_data.rs",
            style: Style::Tag,
        }],
    },
    Part {
        guard: "ARROW_C_DEVICE_DATA_INTERFACE",
        modules: &[Module {
            file: "src/raw/arrow/c_device_data.rs",
            style: Style::Tag,
        }],
    },
    Part {
        guard: "ARROW_C_STREAM_INTERFACE",
        modules: &[Module {
            file: "src/raw/arrow/c_stream.rs",
            style: Style::Tag,
        }],
    },
    Part {
        guard: "ARROW_C_DEVICE_STREAM_INTERFACE",
        modules: &[Module {
            file: "src/raw/arrow/c_device_stream.rs",
            style: Style::Tag,
        }],
    },
    Part {
        guard: "ARROW_C_ASYNC_STREAM_INTERFACE",
        modules: &[Module {
            file: "src/raw/arrow/c_async_stream.rs",
            style: Style::Tag,
        }],
    },
];

/// DLPack structs declared `typedef struct Name {...} Name;` upstream (the rest are anonymous).
const TAGGED_TYPEDEFS: &[&str] = &[
    "DLManagedTensor",
    "DLManagedTensorVersioned",
    "DLPackExchangeAPIHeader",
    "DLPackExchangeAPI",
];

/// Open enums rendered as C enums: (type, enumerator suffix, C++ underlying type).
const C_ENUMS: &[(&str, &str, Option<&str>)] = &[
    ("DLDeviceType", "", Some("int32_t")),
    ("DLDataTypeCode", "U", None),
];

/// How the Rust docs mark an enum value on DLPack's `main` that no release has yet (the
/// constants' doc comments, `raw::dlpack`); the header declares those only under
/// `#ifdef DLPACK_ABI_UNRELEASED`.
const UNRELEASED_MARK: &str = "Not in a DLPack release yet";

/// Rust types of macros whose C spelling has a literal suffix: `(1UL << 0UL)`.
const MACRO_SUFFIXES: &[(&str, &str)] = &[("c_ulong", "UL")];

/// Rust types spelled differently in a struct field: the data type code is stored as one byte.
const FIELD_RENAMES: &[(&str, &str)] = &[("DLDataTypeCode", "uint8_t")];

pub fn generate() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("dlpack_abi.h");
    for part in std::iter::once(&DLPACK).chain(&ARROW) {
        for module in part.modules {
            println!("cargo:rerun-if-changed={}", module.file);
        }
    }
    println!("cargo:rerun-if-changed={ERROR_TABLE}");
    let text = render(&root);
    std::fs::write(&out, text).expect("write generated header");
    println!(
        "cargo:rustc-env=DLPACK_ABI_GENERATED_HEADER={}",
        out.display()
    );
}

fn render(root: &Path) -> String {
    let version = std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION");
    let mut h = String::new();
    writeln!(
        h,
        "/* dlpack_abi.h: DLPack 1.3 and the Apache Arrow C data, stream, device and async interfaces.\n \
         *\n \
         * Generated from the Rust definitions of dlpack-abi {version} by its build script (cbindgen);\n \
         * do not edit. Regenerate with: DLPACK_ABI_BLESS=1 cargo test --features header --test header\n \
         *\n \
         * A drop-in for dlpack/dlpack.h and arrow/c/abi.h: each part sits behind the upstream include\n \
         * guard, so this header and the upstream ones may be included together, in any order.\n \
         *\n \
         * Enum values on DLPack's main branch that no release has yet (kDLBcomplex, kDLTPU,\n \
         * kDLTPUHost, kDLAscend) are declared only when DLPACK_ABI_UNRELEASED is defined, so that\n \
         * by default the enums are exactly DLPack 1.3's.\n \
         *\n \
         * The last part (DLPACK_ABI_ERRORS_H_) is dlpack-abi's own: DLPackAbiErrorCode, stable error\n \
         * codes, and DLPackAbiErrorReport, which carries a code and its message out of an FFI call.\n \
         */"
    )
    .unwrap();
    h.push_str("#ifndef DLPACK_ABI_H_\n#define DLPACK_ABI_H_\n\n#include <stddef.h>\n#include <stdint.h>\n\n");
    h.push_str("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");

    let dlpack: Vec<&Module> = DLPACK.modules.iter().collect();
    open_guard(&mut h, DLPACK.guard);
    h.push_str(DLPACK_LINKAGE_MACROS);
    for module in DLPACK.modules {
        render_module(&mut h, root, module, &dlpack);
    }
    close_guard(&mut h, DLPACK.guard);

    let arrow_modules: Vec<&Module> = ARROW.iter().flat_map(|p| p.modules).collect();
    for part in &ARROW {
        open_guard(&mut h, part.guard);
        for module in part.modules {
            render_module(&mut h, root, module, &arrow_modules);
        }
        close_guard(&mut h, part.guard);
    }

    render_errors(&mut h, root);

    h.push_str("#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n\n#endif  // DLPACK_ABI_H_\n");
    h
}

/// `DLPACK_EXTERN_C` and `DLPACK_DLL`, which dlpack.h defines for its users.
const DLPACK_LINKAGE_MACROS: &str = "\
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern \"C\"
#else
#define DLPACK_EXTERN_C
#endif

#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

";

fn open_guard(h: &mut String, guard: &str) {
    writeln!(h, "#ifndef {guard}\n#define {guard}\n").unwrap();
}

fn close_guard(h: &mut String, guard: &str) {
    writeln!(h, "#endif  // {guard}\n").unwrap();
}

fn config(style: Style) -> Config {
    let mut config = Config {
        language: Language::C,
        style,
        no_includes: true,
        ..Config::default()
    };
    config.documentation = true;
    config.documentation_style = DocumentationStyle::C99;
    config.export.rename = FIELD_RENAMES
        .iter()
        .map(|(from, to)| (from.to_string(), to.to_string()))
        .collect();
    config
}

/// Parses modules together, so that every type they refer to is known (and so spelled right).
fn parse(root: &Path, modules: &[&Module], style: Style) -> Bindings {
    let mut config = config(style);
    config.export.include = modules.iter().flat_map(|m| names_in(root, m)).collect();
    let mut builder = Builder::new().with_config(config);
    for module in modules {
        builder = builder.with_src(root.join(module.file));
    }
    builder
        .generate()
        .expect("cbindgen failed to parse the raw layer")
}

/// Names of the items and constants a module defines: its top-level `pub struct`, `pub type`
/// and `pub const` lines (associated constants are indented and so left out).
fn names_in(root: &Path, module: &Module) -> Vec<String> {
    let source = std::fs::read_to_string(root.join(module.file)).expect("read raw module");
    source
        .lines()
        .filter_map(|line| {
            ["pub struct ", "pub type ", "pub const "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
        })
        .map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The Rust name of an item (its C name may differ through `FIELD_RENAMES`).
fn item_name(item: &ItemContainer) -> &str {
    match item {
        ItemContainer::Constant(c) => c.path.name(),
        ItemContainer::Static(s) => s.path.name(),
        ItemContainer::OpaqueItem(o) => o.path.name(),
        ItemContainer::Struct(s) => s.path.name(),
        ItemContainer::Union(u) => u.path.name(),
        ItemContainer::Enum(e) => e.path.name(),
        ItemContainer::Typedef(t) => t.path.name(),
    }
}

/// Rustdoc link syntax reads badly in C: `[`X`](path)` and `[`X`]` become `` `X` ``.
fn plain_doc(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("[`") {
        let Some(end) = rest[start..].find("`]").map(|e| start + e) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&rest[start + 1..end + 1]);
        rest = &rest[end + 2..];
        if rest.starts_with('(') {
            rest = rest.find(')').map_or(rest, |close| &rest[close + 1..]);
        }
    }
    out.push_str(rest);
    out
}

/// In a tagged typedef (rendered in `Style::Both`), cbindgen writes `struct X` for every struct
/// it refers to; DLPack's anonymous typedefs (`DLTensor`, `DLPackVersion`) have no tag, so their
/// references must be spelled by the typedef name alone.
fn untag_anonymous(ty: &mut Type, config: &Config) {
    match ty {
        Type::Path(path) if path.ctype().is_some() && !TAGGED_TYPEDEFS.contains(&path.name()) => {
            let mut plain = GenericPath::new(path.path().clone(), Vec::new());
            plain.rename_for_config(config, &GenericParams::default());
            *path = plain;
        }
        Type::Ptr { ty, .. } | Type::Array(ty, _) => untag_anonymous(ty, config),
        Type::FuncPtr { ret, args, .. } => {
            untag_anonymous(ret, config);
            args.iter_mut()
                .for_each(|(_, arg)| untag_anonymous(arg, config));
        }
        _ => {}
    }
}

/// Prepares an item for C: plain doc comments, upstream parameter names, and in tagged
/// typedefs untagged references to anonymous ones.
fn prepare_for_c(item: &mut ItemContainer, config: &Config) {
    if config.style == Style::Both {
        match item {
            ItemContainer::Struct(s) => s
                .fields
                .iter_mut()
                .for_each(|f| untag_anonymous(&mut f.ty, config)),
            ItemContainer::Typedef(t) => untag_anonymous(&mut t.aliased, config),
            _ => {}
        }
    }
    let clean = |doc: &mut Vec<String>| {
        *doc = without_examples(doc);
        doc.iter_mut().for_each(|line| *line = plain_doc(line));
    };
    match item {
        ItemContainer::Struct(s) => {
            clean(&mut s.documentation.doc_comment);
            for constant in &mut s.associated_constants {
                clean(&mut constant.documentation.doc_comment);
            }
            for field in &mut s.fields {
                clean(&mut field.documentation.doc_comment);
                rename_self_params(&mut field.ty);
            }
        }
        ItemContainer::Typedef(t) => {
            clean(&mut t.documentation.doc_comment);
            rename_self_params(&mut t.aliased);
        }
        _ => {}
    }
}

/// The Rust name of a constant's type (`DLDeviceType`, `c_ulong`, `i64`, ...).
fn type_name(ty: &Type) -> String {
    match ty {
        Type::Path(path) => path.path().name().to_string(),
        Type::Primitive(primitive) => primitive.to_repr_rust().to_string(),
        other => panic!("unexpected constant type {other:?}"),
    }
}

/// Renders a constant's value as C, appending `suffix` to every integer literal.
fn literal(value: &Literal, suffix: &str) -> String {
    match value {
        Literal::Expr(text) if text.chars().all(|c| c.is_ascii_digit()) => {
            format!("{text}{suffix}")
        }
        Literal::Expr(text) => text.clone(),
        Literal::BinOp { left, op, right } => {
            format!(
                "({} {op} {})",
                literal(left, suffix),
                literal(right, suffix)
            )
        }
        // A newtype constant such as `DLDeviceType(1)`: its single field is the value.
        Literal::Struct { fields, .. } if fields.len() == 1 => {
            literal(&fields.values().next().unwrap().value, suffix)
        }
        other => panic!("unsupported constant value {other:?}"),
    }
}

/// A doc comment without its code blocks (Rust examples, which mean nothing in C) and the blank
/// lines they leave at the end.
fn without_examples(doc: &[String]) -> Vec<String> {
    let mut in_example = false;
    let mut kept: Vec<String> = doc
        .iter()
        .filter(|line| {
            let fence = line.trim_start().starts_with("```");
            in_example ^= fence;
            !(fence || in_example)
        })
        .cloned()
        .collect();
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    kept
}

fn write_doc(h: &mut String, indent: &str, doc: &[String]) {
    for line in &without_examples(doc) {
        let line = plain_doc(line.trim_end());
        if line.is_empty() {
            writeln!(h, "{indent}//").unwrap();
        } else {
            writeln!(h, "{indent}//{line}").unwrap();
        }
    }
}

/// Renders one module in source order (which is upstream order); `family` are the modules
/// parsed with it, so that cross-module types are known to cbindgen.
fn render_module(h: &mut String, root: &Path, module: &Module, family: &[&Module]) {
    let parsed = parse(root, family, module.style);
    let constant = |name: &str| {
        parsed
            .constants
            .iter()
            .find(|c| c.associated_to.is_none() && c.path.name() == name)
    };
    for name in names_in(root, module) {
        if let Some(&(_, suffix, cxx_underlying)) = C_ENUMS.iter().find(|(e, ..)| *e == name) {
            render_enum(h, &parsed, &name, suffix, cxx_underlying);
        } else if let Some(c) = constant(&name) {
            let ty = type_name(&c.ty);
            if C_ENUMS.iter().all(|(e, ..)| *e != ty) {
                let suffix = MACRO_SUFFIXES
                    .iter()
                    .find(|(t, _)| *t == ty)
                    .map_or("", |(_, s)| *s);
                write_doc(h, "", &c.documentation.doc_comment);
                writeln!(
                    h,
                    "#define {} {}\n",
                    c.export_name,
                    literal(&c.value, suffix)
                )
                .unwrap();
            }
        } else {
            let style = if TAGGED_TYPEDEFS.contains(&name.as_str()) {
                Style::Both
            } else {
                module.style
            };
            h.push_str(&render_item(root, family, &name, style));
        }
    }
}

/// Renders an open enum newtype and its constants as a C enum.
fn render_enum(
    h: &mut String,
    parsed: &Bindings,
    name: &str,
    suffix: &str,
    cxx_underlying: Option<&str>,
) {
    if let Some(ItemContainer::Typedef(t)) = parsed.items.iter().find(|i| item_name(i) == name) {
        write_doc(h, "", &t.documentation.doc_comment);
    }
    match cxx_underlying {
        Some(ty) => writeln!(
            h,
            "#ifdef __cplusplus\ntypedef enum : {ty} {{\n#else\ntypedef enum {{\n#endif"
        )
        .unwrap(),
        None => h.push_str("typedef enum {\n"),
    }
    let constants: Vec<_> = parsed
        .constants
        .iter()
        .filter(|c| c.associated_to.is_none() && type_name(&c.ty) == name)
        .collect();
    // Values on DLPack's `main` that no release has: only under `DLPACK_ABI_UNRELEASED`, so that
    // by default the enum is exactly DLPack 1.3's.
    let unreleased = |c: &&Constant| {
        let doc: Vec<&str> = c
            .documentation
            .doc_comment
            .iter()
            .map(|l| l.trim())
            .collect();
        doc.join(" ").contains(UNRELEASED_MARK)
    };
    let (new, released): (Vec<_>, Vec<_>) = constants.into_iter().partition(unreleased);
    for c in released {
        write_doc(h, "  ", &c.documentation.doc_comment);
        writeln!(h, "  {} = {},", c.export_name, literal(&c.value, suffix)).unwrap();
    }
    if !new.is_empty() {
        h.push_str("#ifdef DLPACK_ABI_UNRELEASED\n");
        for c in new {
            write_doc(h, "  ", &c.documentation.doc_comment);
            writeln!(h, "  {} = {},", c.export_name, literal(&c.value, suffix)).unwrap();
        }
        h.push_str("#endif\n");
    }
    writeln!(h, "}} {name};\n").unwrap();
}

/// Upstream names the callback parameter `self`, a Rust keyword; the Rust mirror says `self_`.
fn rename_self_params(ty: &mut Type) {
    if let Type::FuncPtr { args, .. } = ty {
        for (name, arg_ty) in args.iter_mut() {
            if name.as_deref() == Some("self_") {
                *name = Some("self".to_string());
            }
            rename_self_params(arg_ty);
        }
    }
}

/// Renders one item with cbindgen in the given style.
fn render_item(root: &Path, family: &[&Module], name: &str, style: Style) -> String {
    let mut bindings = parse(root, family, style);
    bindings.constants.clear();
    bindings.items.retain(|item| item_name(item) == name);
    let config = bindings.config.clone();
    bindings
        .items
        .iter_mut()
        .for_each(|item| prepare_for_c(item, &config));
    let mut buffer = Vec::new();
    bindings.write(&mut buffer);
    let text = String::from_utf8(buffer).expect("cbindgen writes UTF-8");
    format!("{}\n\n", text.trim())
}

/// The table of error codes: `/// doc` lines, `// ---- section ----` lines and `NAME = value,`
/// lines inside `error_codes! { ... }`.
const ERROR_TABLE: &str = "src/error_code/table.rs";

/// `ErrorReport`'s message buffer in bytes (`ErrorReport::MESSAGE_CAPACITY`; layout-checks
/// compares the header's struct with Rust's).
const ERROR_MESSAGE_SIZE: usize = 252;

/// This crate's own part: the error codes as a C enum (`DLPACK_ABI_` + the Rust name), and the
/// report struct.
fn render_errors(h: &mut String, root: &Path) {
    let table = std::fs::read_to_string(root.join(ERROR_TABLE)).expect("read the error table");
    let body = table
        .split_once("error_codes! {")
        .expect("the table invokes error_codes!")
        .1;
    open_guard(h, "DLPACK_ABI_ERRORS_H_");
    h.push_str(
        "// A dlpack-abi error code: 0 on success, else why a call failed, one value per error\n\
         // (1xx DLPack import, 2xx typed access, 3xx export, 4xx DLPack streams, 5xx Arrow metadata,\n\
         // 6xx Arrow validation, 7xx Arrow reads, 8xx the DLPack-Arrow bridge, 9xx Arrow streams).\n\
         // 1000 to 1999 belong to the dlpack-abi integration crates (dlpack-abi-arrow-rs, ...), which\n\
         // declare their own codes.\n\
         //\n\
         // Stable within a major version of dlpack-abi: values are never renumbered or reused; new\n\
         // codes may be added (a switch needs a default). dlpack-abi and its integrations assign only\n\
         // 0 to 9999: negative values and values from 10000 on are free for an FFI crate's own\n\
         // errors. Functions and struct fields carry a code as int32_t.\n",
    );
    h.push_str("#ifdef __cplusplus\ntypedef enum : int32_t {\n#else\ntypedef enum {\n#endif\n");
    let mut doc: Vec<&str> = Vec::new();
    let mut names: Vec<(&str, &str)> = Vec::new();
    for line in body.lines().map(str::trim) {
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text);
        } else if let Some(section) = line.strip_prefix("// ----") {
            writeln!(h, "\n  // ----{section}").unwrap();
        } else if let Some((name, value)) = line.strip_suffix(',').and_then(|l| l.split_once(" = "))
        {
            assert!(
                !doc.is_empty() && value.parse::<i32>().is_ok(),
                "{ERROR_TABLE}: `{line}` needs a doc line and an integer value"
            );
            for text in doc.drain(..) {
                writeln!(h, "  //{text}").unwrap();
            }
            writeln!(h, "  DLPACK_ABI_{name} = {value},").unwrap();
            names.push((name, value));
        }
    }
    h.push_str("} DLPackAbiErrorCode;\n\n");
    // The example's value is the table's, not written twice.
    let (example, example_value) = names
        .iter()
        .find(|(name, _)| *name == "ACCESS_READ_ONLY")
        .expect("the table declares ACCESS_READ_ONLY");
    writeln!(
        h,
        "// The name of a DLPackAbiErrorCode value, as this header spells it (\"DLPACK_ABI_{example}\"\n\
         // for {example_value}), or NULL for a value it does not declare: an integration crate's code (1000\n\
         // to 1999), an FFI crate's own, or a code newer than this header. The string is static.\n\
         static inline const char* dlpack_abi_error_code_name(int32_t code) {{\n\
         \x20 switch (code) {{"
    )
    .unwrap();
    for (name, _) in names {
        writeln!(
            h,
            "    case DLPACK_ABI_{name}: return \"DLPACK_ABI_{name}\";"
        )
        .unwrap();
    }
    h.push_str("    default: return NULL;\n  }\n}\n\n");
    writeln!(
        h,
        "// Bytes in DLPackAbiErrorReport.message, the terminating NUL included.\n\
         #define DLPACK_ABI_ERROR_MESSAGE_SIZE {ERROR_MESSAGE_SIZE}\n"
    )
    .unwrap();
    h.push_str(
        "// An error's code and message, filled by an FFI function on failure (usually into the\n\
         // caller's stack): nothing is allocated and nothing needs freeing. 256 bytes, aligned to 4,\n\
         // on every target.\n\
         typedef struct {\n\
         \x20 // A DLPackAbiErrorCode value (DLPACK_ABI_OK on success).\n\
         \x20 int32_t code;\n\
         \x20 // The error's message: UTF-8, always NUL-terminated, zero after the NUL. A message\n\
         \x20 // longer than DLPACK_ABI_ERROR_MESSAGE_SIZE - 1 bytes is cut at a character boundary\n\
         \x20 // and ends with \"...\".\n\
         \x20 char message[DLPACK_ABI_ERROR_MESSAGE_SIZE];\n\
         } DLPackAbiErrorReport;\n\n",
    );
    close_guard(h, "DLPACK_ABI_ERRORS_H_");
}
