#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use proc_macro::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// The names the attribute defines: the Python names of the five dunders, and the Rust name of
/// the function behind the `__dlpack__` descriptor.
const GENERATED: [&str; 6] = [
    "__dlpack__",
    "__dlpack_device__",
    "__dlpack_c_exchange_api__",
    "__arrow_c_device_array__",
    "__arrow_c_array__",
    "__dlpack_abi_dlpack_method",
];

/// A refusal: where, and what to do instead.
type Refusal = (Span, String);

/// Adds the DLPack and Arrow PyCapsule dunders to a class's own `#[pymethods]` block.
///
/// Put it directly **above** `#[pymethods]` on the block of a `#[pyclass]` that implements
/// `dlpack_abi_pyo3::DlpackExporter`; everything else in the block stays as written. It adds:
///
/// - `__dlpack__` (array API 2023.12: `stream`, `max_version`, `dl_device`, `copy`), a method
///   descriptor whose keywords are parsed by hand;
/// - `__dlpack_device__`;
/// - `__dlpack_c_exchange_api__`, the DLPack C exchange API table of this class;
/// - `__arrow_c_device_array__` and `__arrow_c_array__`, through the zero-copy bridge.
///
/// These are the methods `dlpack_abi_pyo3::dlpack_pymethods!` writes (one home: the attribute
/// expands to that macro's body), for authors who keep their own `#[pymethods]` block.
///
/// ```no_run
/// use std::sync::Arc;
/// use dlpack_abi::dlpack::{ConsumerStream, Export, VersionedTensor};
/// use dlpack_abi_pyo3::{dlpack_exporter, DlpackExporter, PyDlpackResult};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// /// A ramp 0, 1, ..., n - 1 that `numpy.from_dlpack(Ramp(4))` reads zero-copy, read-only.
/// #[pyclass(frozen, module = "my_tensors")]
/// struct Ramp { values: Arc<[f64]>, shape: [i64; 1] }
///
/// impl DlpackExporter for Ramp {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _stream: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(Export::new(Arc::clone(&self.values), &self.shape).finish()?) // shared: read-only
///     }
/// }
///
/// #[dlpack_exporter] // above #[pymethods]: it adds __dlpack__ & co. to this block
/// #[pymethods]
/// impl Ramp {
///     #[new]
///     fn new(n: usize) -> PyResult<Self> {
///         let values: Arc<[f64]> = (0..n).map(|i| i as f64).collect();
///         Ok(Self { values, shape: [i64::try_from(n)?] })
///     }
///
///     /// The last value, or None when empty: the author's own method, next to the protocol.
///     fn last(&self) -> Option<f64> {
///         self.values.last().copied()
///     }
///
///     #[getter]
///     fn size(&self) -> usize {
///         self.values.len()
///     }
/// }
/// ```
///
/// # Refusals
///
/// Each is a compile error that says what to do:
///
/// - the attribute on anything but an inherent `impl` block, or on a generic one (a `#[pyclass]`
///   has no generics);
/// - no `#[pymethods]` below it: it is missing, or it is above the attribute (pyo3 would then
///   read the block before the dunders are added);
/// - a method of the block that has the name of one the attribute adds (its Rust name, or its
///   `#[pyo3(name = "...")]`): what the dunders return comes from the class's `DlpackExporter`
///   implementation; an author who writes a dunder himself drops the attribute and calls the
///   functions of `dlpack_abi_pyo3::exporter` from his own methods.
///
/// # Arguments
///
/// `#[dlpack_exporter(crate = "path")]` names dlpack-abi-pyo3 where a `Cargo.toml` renames it
/// (`my_dlpack = { package = "dlpack-abi-pyo3", ... }`: `crate = "my_dlpack"`); the default is
/// `::dlpack_abi_pyo3`. pyo3 is named `::pyo3`, as pyo3's own macros name it by default.
///
/// ```no_run
/// use dlpack_abi_pyo3 as renamed; // a crate named otherwise in Cargo.toml, here by a `use`
/// use dlpack_abi::dlpack::{ConsumerStream, VersionedTensor};
/// use renamed::{dlpack_exporter, DlpackExporter, PyDlpackResult};
/// use dlpack_abi::raw::{kDLCPU, DLDevice};
/// use pyo3::prelude::*;
///
/// #[pyclass(frozen)]
/// struct Empty;
///
/// impl DlpackExporter for Empty {
///     fn dlpack_device(&self) -> DLDevice { DLDevice { device_type: kDLCPU, device_id: 0 } }
///     fn dlpack_tensor(&self, _: ConsumerStream) -> PyDlpackResult<VersionedTensor> {
///         Ok(dlpack_abi::dlpack::Export::new(Vec::<f32>::new(), &[0]).finish()?)
///     }
/// }
///
/// #[dlpack_exporter(crate = "renamed")]
/// #[pymethods]
/// impl Empty {}
/// ```
#[proc_macro_attribute]
pub fn dlpack_exporter(arguments: TokenStream, item: TokenStream) -> TokenStream {
    match expand(arguments, item.clone()) {
        Ok(expanded) => expanded,
        Err((span, message)) => {
            // The item as written, so that the refusal is the only error.
            let mut refused = compile_error(span, &message);
            refused.extend(item);
            refused
        }
    }
}

/// `<crate>::__dlpack_exporter_methods! { [<attributes>] impl <class> { <methods> } }`: the
/// block's own attributes (its `#[pymethods]` among them) and methods, to which the macro adds
/// the dunders.
fn expand(arguments: TokenStream, item: TokenStream) -> Result<TokenStream, Refusal> {
    let krate = crate_path(arguments)?;
    let mut tokens = item.into_iter().peekable();

    let mut attributes = TokenStream::new();
    let mut has_pymethods = false;
    while let Some(TokenTree::Punct(pound)) = tokens.peek() {
        if pound.as_char() != '#' {
            break;
        }
        let pound = TokenTree::Punct(pound.clone());
        tokens.next();
        match tokens.next() {
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Bracket => {
                has_pymethods |= is_pymethods(&group);
                attributes.extend([pound, TokenTree::Group(group)]);
            }
            _ => return Err((pound.span(), "expected an attribute after `#`".into())),
        }
    }

    match tokens.next() {
        Some(TokenTree::Ident(keyword)) if keyword.to_string() == "impl" => {}
        other => {
            let span = other.map_or_else(Span::call_site, |token| token.span());
            return Err((
                span,
                "#[dlpack_exporter] goes on the #[pymethods] impl block of a class that \
                 implements DlpackExporter: `#[dlpack_exporter] #[pymethods] impl MyClass { ... }`"
                    .into(),
            ));
        }
    }
    if !has_pymethods {
        return Err((
            Span::call_site(),
            "#[dlpack_exporter] must sit directly above #[pymethods], and found none below it: \
             add `#[pymethods]` under the attribute, or move the attribute above it (placed below, \
             it runs after pyo3 has read the block, and the dunders it adds would not reach Python)"
                .into(),
        ));
    }

    let mut class = TokenStream::new();
    let body = loop {
        match tokens.next() {
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => break group,
            Some(TokenTree::Punct(open)) if open.as_char() == '<' && class.is_empty() => {
                return Err((
                    open.span(),
                    "#[dlpack_exporter] takes no generic impl: a #[pyclass] has no generic \
                     parameters"
                        .into(),
                ));
            }
            Some(TokenTree::Ident(word)) if word.to_string() == "for" => {
                return Err((
                    word.span(),
                    "#[dlpack_exporter] goes on the class's inherent #[pymethods] block \
                     (`impl MyClass { ... }`), not on a trait impl"
                        .into(),
                ));
            }
            Some(TokenTree::Ident(word)) if word.to_string() == "where" => {
                return Err((
                    word.span(),
                    "#[dlpack_exporter] takes no generic impl: a #[pyclass] has no generic \
                     parameters"
                        .into(),
                ));
            }
            Some(token) => class.extend([token]),
            None => {
                return Err((
                    Span::call_site(),
                    "expected the impl block's body `{ ... }`".into(),
                ))
            }
        }
    };
    if class.is_empty() {
        return Err((body.span(), "expected the class after `impl`".into()));
    }
    check_names(body.stream())?;

    let mut invocation = krate;
    invocation.extend([
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        TokenTree::Ident(Ident::new("__dlpack_exporter_methods", Span::call_site())),
        punct('!', Spacing::Alone),
    ]);
    let mut arguments = TokenStream::new();
    arguments.extend([TokenTree::Group(Group::new(Delimiter::Bracket, attributes))]);
    arguments.extend([TokenTree::Ident(Ident::new("impl", Span::call_site()))]);
    arguments.extend(class);
    arguments.extend([TokenTree::Group(body)]);
    invocation.extend([TokenTree::Group(Group::new(Delimiter::Brace, arguments))]);
    Ok(invocation)
}

/// The path of dlpack-abi-pyo3: `crate = "path"` when given, `::dlpack_abi_pyo3` otherwise.
fn crate_path(arguments: TokenStream) -> Result<TokenStream, Refusal> {
    let tokens: Vec<TokenTree> = arguments.into_iter().collect();
    let refused = |span| {
        (
            span,
            "#[dlpack_exporter] takes no arguments but `crate = \"path\"`, the path of a renamed \
             dlpack-abi-pyo3"
                .to_string(),
        )
    };
    match tokens.as_slice() {
        [] => {
            let mut path = TokenStream::new();
            path.extend([
                punct(':', Spacing::Joint),
                punct(':', Spacing::Alone),
                TokenTree::Ident(Ident::new("dlpack_abi_pyo3", Span::call_site())),
            ]);
            Ok(path)
        }
        [TokenTree::Ident(key), TokenTree::Punct(equals), TokenTree::Literal(value)]
            if key.to_string() == "crate" && equals.as_char() == '=' =>
        {
            let quoted = value.to_string();
            let path = quoted
                .strip_prefix('"')
                .and_then(|rest| rest.strip_suffix('"'))
                .ok_or_else(|| refused(value.span()))?;
            path.parse::<TokenStream>()
                .ok()
                .filter(|path| !path.is_empty())
                .ok_or_else(|| refused(value.span()))
        }
        [first, ..] => Err(refused(first.span())),
    }
}

/// Whether the attribute `#[...]` is pyo3's `pymethods` (`pymethods`, `pyo3::pymethods`, ...).
fn is_pymethods(attribute: &Group) -> bool {
    let mut last = None;
    for token in attribute.stream() {
        match token {
            TokenTree::Ident(ident) => last = Some(ident.to_string()),
            TokenTree::Punct(colon) if colon.as_char() == ':' => {}
            _ => return false,
        }
    }
    last.as_deref() == Some("pymethods")
}

/// Refuses a method of the block named as one the attribute adds: a Rust name after `fn` or
/// `const`, or a Python name in `#[pyo3(name = "...")]`.
fn check_names(body: TokenStream) -> Result<(), Refusal> {
    let mut after_keyword = false;
    for token in body {
        match &token {
            TokenTree::Ident(ident) if after_keyword => clash(&ident.to_string(), ident.span())?,
            TokenTree::Group(attribute) if attribute.delimiter() == Delimiter::Bracket => {
                pyo3_names(attribute.stream())?;
            }
            _ => {}
        }
        after_keyword = matches!(&token, TokenTree::Ident(word)
            if matches!(word.to_string().as_str(), "fn" | "const"));
    }
    Ok(())
}

/// The `name = "..."` of a `pyo3(...)` attribute's contents, checked by [`clash`].
fn pyo3_names(attribute: TokenStream) -> Result<(), Refusal> {
    let mut tokens = attribute.into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(TokenTree::Ident(path)), Some(TokenTree::Group(options)))
            if path.to_string() == "pyo3" && options.delimiter() == Delimiter::Parenthesis =>
        {
            let options: Vec<TokenTree> = options.stream().into_iter().collect();
            for window in options.windows(3) {
                if let [TokenTree::Ident(key), TokenTree::Punct(equals), TokenTree::Literal(name)] =
                    window
                {
                    if key.to_string() == "name" && equals.as_char() == '=' {
                        let name = name.to_string();
                        clash(name.trim_matches('"'), window[2].span())?;
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Refuses `name` when the attribute defines it.
fn clash(name: &str, span: Span) -> Result<(), Refusal> {
    if !GENERATED.contains(&name) {
        return Ok(());
    }
    Err((
        span,
        format!(
            "`{name}` is defined by #[dlpack_exporter] (with __dlpack__, __dlpack_device__, \
             __dlpack_c_exchange_api__, __arrow_c_device_array__ and __arrow_c_array__), from \
             the class's DlpackExporter implementation: change what they return there \
             (dlpack_device, dlpack_tensor, arrow_event, current_work_stream), or drop the \
             attribute and write the dunders yourself with the functions of \
             dlpack_abi_pyo3::exporter"
        ),
    ))
}

/// `::core::compile_error!("message")`, reported at `span`.
fn compile_error(span: Span, message: &str) -> TokenStream {
    let mut message = Literal::string(message);
    message.set_span(span);
    let mut arguments = Group::new(Delimiter::Parenthesis, TokenTree::Literal(message).into());
    arguments.set_span(span);
    let spanned = |mut token: TokenTree| {
        token.set_span(span);
        token
    };
    [
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        TokenTree::Ident(Ident::new("core", span)),
        punct(':', Spacing::Joint),
        punct(':', Spacing::Alone),
        TokenTree::Ident(Ident::new("compile_error", span)),
        punct('!', Spacing::Alone),
        TokenTree::Group(arguments),
        punct(';', Spacing::Alone),
    ]
    .into_iter()
    .map(spanned)
    .collect()
}

/// A punctuation token.
fn punct(character: char, spacing: Spacing) -> TokenTree {
    TokenTree::Punct(Punct::new(character, spacing))
}
