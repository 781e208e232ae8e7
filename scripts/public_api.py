#!/usr/bin/env python3
"""The public API of a crate as a sorted list of lines, one per item, read from rustdoc's JSON
(nightly: ``-Z unstable-options --output-format json``): every module, type, field, variant,
function and method (with its full signature), trait and trait item, constant (with its value),
static, macro and trait implementation (auto traits included) that a user can reach from the
crate root through public modules and re-exports, under the path a user writes.

The committed record (``public-api/dlpack-abi.txt``) is compared with a fresh listing by the test
command: any change to the core's public API fails it until the record is regenerated with
``--bless``, so every API change shows as a diff of that file in the commit that makes it.

Usage: ``public_api.py CRATE.json RECORD [--bless]``, from the workspace root. Exits 1 (with a
unified diff) when the listing and the record differ.

Why not ``cargo public-api``: its newest release (0.52, public-api 0.52.2) reads rustdoc JSON
format 59 only, and the nightly the test command installs writes format 61; pinning an older
nightly and building the tool would cost every CI run minutes. This script reads the format the
project's other JSON check (``doc_examples.py``) already reads, and fails loudly on a format it
does not know.
"""

import difflib
import json
import os
import sys

KNOWN_FORMATS = range(56, 62)
STABLE_AUTO_TRAITS = {"Send", "Sync", "Unpin", "UnwindSafe", "RefUnwindSafe"}


class Renderer:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.paths = doc.get("paths", {})
        self.public = public_paths(doc)

    # ---- types ----

    def path(self, p):
        """A path, spelled the same wherever it appears: a local item by the public path a user
        writes (never the private module it is defined in, which may move), another crate's by
        its crate and name (`core::Debug`, `bytemuck::Pod`: the standard library's own module
        layout is not part of this record)."""
        item_id = str(p.get("id"))
        if item_id in self.public:
            name = self.public[item_id]
        elif item_id in self.paths and self.paths[item_id]["crate_id"] != 0:
            full = self.paths[item_id]["path"]
            name = f"{full[0]}::{full[-1]}"
        else:
            name = p.get("path") or p.get("name") or "?"
        args = p.get("args")
        return name + (self.generic_args(args) if args else "")

    def generic_args(self, args):
        if args is None:
            return ""
        if "angle_bracketed" in args:
            ab = args["angle_bracketed"]
            parts = [self.generic_arg(a) for a in ab.get("args", [])]
            for c in ab.get("constraints", []):
                parts.append(self.constraint(c))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in args:
            pa = args["parenthesized"]
            out = "(" + ", ".join(self.ty(t) for t in pa.get("inputs", [])) + ")"
            if pa.get("output") is not None:
                out += " -> " + self.ty(pa["output"])
            return out
        if "return_type_notation" in args:
            return "(..)"
        raise ValueError(f"generic args: {args}")

    def generic_arg(self, a):
        if a == "infer":
            return "_"
        if "type" in a:
            return self.ty(a["type"])
        if "lifetime" in a:
            return a["lifetime"]
        if "const" in a:
            c = a["const"]
            return c.get("expr") or c.get("value") or "?"
        raise ValueError(f"generic arg: {a}")

    def constraint(self, c):
        name = c["name"] + self.generic_args(c.get("args"))
        binding = c["binding"]
        if "equality" in binding:
            term = binding["equality"]
            value = self.ty(term["type"]) if "type" in term else term["constant"].get("expr", "?")
            return f"{name} = {value}"
        if "constraint" in binding:
            return f"{name}: " + " + ".join(self.bound(b) for b in binding["constraint"])
        raise ValueError(f"constraint: {c}")

    def bound(self, b):
        if "trait_bound" in b:
            tb = b["trait_bound"]
            prefix = ""
            if tb.get("generic_params"):
                prefix = "for<" + ", ".join(self.param(p) for p in tb["generic_params"]) + "> "
            modifier = {"none": "", "maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier", "none"), "")
            return prefix + modifier + self.path(tb["trait"])
        if "outlives" in b:
            return b["outlives"]
        if "use" in b:
            return "use<" + ", ".join(str(x) for x in b["use"]) + ">"
        raise ValueError(f"bound: {b}")

    def ty(self, t):
        if t is None:
            return "()"
        kind, v = next(iter(t.items()))
        if kind == "resolved_path":
            return self.path(v)
        if kind == "dyn_trait":
            traits = [self.bound({"trait_bound": p}) for p in v["traits"]]
            if v.get("lifetime"):
                traits.append(v["lifetime"])
            return "dyn " + " + ".join(traits)
        if kind == "generic":
            return v
        if kind == "primitive":
            return v
        if kind == "function_pointer":
            return self.fn_pointer(v)
        if kind == "tuple":
            return "(" + ", ".join(self.ty(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if kind == "slice":
            return "[" + self.ty(v) + "]"
        if kind == "array":
            return "[" + self.ty(v["type"]) + "; " + v["len"] + "]"
        if kind == "pat":
            return self.ty(v["type"]) + " is " + v.get("__pat_unstable_do_not_use", "?")
        if kind == "impl_trait":
            return "impl " + " + ".join(self.bound(b) for b in v)
        if kind == "infer":
            return "_"
        if kind == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(v["type"])
        if kind == "borrowed_ref":
            lt = (v["lifetime"] + " ") if v.get("lifetime") else ""
            return "&" + lt + ("mut " if v["is_mutable"] else "") + self.ty(v["type"])
        if kind == "qualified_path":
            self_ty = self.ty(v["self_type"])
            trait = v.get("trait")
            implied = trait is None or not (trait.get("path") or self.paths.get(str(trait.get("id"))))
            base = self_ty if implied else f"<{self_ty} as {self.path(trait)}>"
            return base + "::" + v["name"] + self.generic_args(v.get("args"))
        raise ValueError(f"type: {t}")

    def header(self, h):
        out = ""
        if h.get("is_const"):
            out += "const "
        if h.get("is_async"):
            out += "async "
        if h.get("is_unsafe"):
            out += "unsafe "
        abi = h.get("abi", "Rust")
        if abi != "Rust":
            if isinstance(abi, dict):
                name, detail = next(iter(abi.items()))
                unwind = "-unwind" if isinstance(detail, dict) and detail.get("unwind") else ""
                out += f'extern "{name}{unwind}" '
            else:
                out += f'extern "{abi}" '
        return out

    def fn_pointer(self, v):
        sig = v["sig"]
        prefix = ""
        if v.get("generic_params"):
            prefix = "for<" + ", ".join(self.param(p) for p in v["generic_params"]) + "> "
        args = ", ".join(self.ty(t) for _, t in sig["inputs"])
        if sig.get("is_c_variadic"):
            args += ", ..."
        out = prefix + self.header(v["header"]) + "fn(" + args + ")"
        if sig.get("output") is not None:
            out += " -> " + self.ty(sig["output"])
        return out

    # ---- generics ----

    def param(self, p):
        kind, v = next(iter(p["kind"].items()))
        if kind == "lifetime":
            return p["name"] + (": " + " + ".join(v["outlives"]) if v.get("outlives") else "")
        if kind == "type":
            if v.get("is_synthetic"):
                return None
            out = p["name"]
            if v.get("bounds"):
                out += ": " + " + ".join(self.bound(b) for b in v["bounds"])
            if v.get("default") is not None:
                out += " = " + self.ty(v["default"])
            return out
        if kind == "const":
            out = f"const {p['name']}: {self.ty(v['type'])}"
            if v.get("default") is not None:
                out += " = " + v["default"]
            return out
        raise ValueError(f"param: {p}")

    def generics(self, g):
        params = [x for x in (self.param(p) for p in g.get("params", [])) if x is not None]
        return "<" + ", ".join(params) + ">" if params else ""

    def where_clause(self, g):
        preds = []
        for w in g.get("where_predicates", []):
            kind, v = next(iter(w.items()))
            if kind == "bound_predicate":
                prefix = ""
                if v.get("generic_params"):
                    prefix = "for<" + ", ".join(self.param(p) for p in v["generic_params"]) + "> "
                preds.append(prefix + self.ty(v["type"]) + ": " + " + ".join(self.bound(b) for b in v["bounds"]))
            elif kind == "lifetime_predicate":
                preds.append(v["lifetime"] + ": " + " + ".join(v["outlives"]))
            elif kind == "eq_predicate":
                preds.append(self.ty(v["lhs"]) + " == " + str(v["rhs"]))
            else:
                raise ValueError(f"where: {w}")
        return " where " + ", ".join(preds) if preds else ""

    def function(self, path, f):
        sig = f["sig"]
        args = []
        for name, t in sig["inputs"]:
            if name == "self":
                rendered = self.ty(t)
                args.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(rendered, "self: " + rendered))
            else:
                args.append(f"{name}: {self.ty(t)}")
        if sig.get("is_c_variadic"):
            args.append("...")
        out = self.header(f["header"]) + "fn " + path + self.generics(f["generics"]) + "(" + ", ".join(args) + ")"
        if sig.get("output") is not None:
            out += " -> " + self.ty(sig["output"])
        return out + self.where_clause(f["generics"])


def public_paths(doc):
    """Each reachable local item's shortest public path (by modules and re-exports)."""
    index = doc["index"]
    found = {}

    def visit(item_id, path, depth=0):
        it = index.get(str(item_id))
        if it is None or it["crate_id"] != 0 or depth > 64:
            return
        kind, inner = next(iter(it["inner"].items()))
        if kind == "use":
            target = inner.get("id")
            if target is None:
                return
            if inner["is_glob"]:
                target_item = index.get(str(target))
                if target_item and "module" in target_item["inner"]:
                    for child in target_item["inner"]["module"]["items"]:
                        visit(child, path, depth + 1)
                return
            here = f"{path}::{inner['name']}"
            key = str(target)
            if key not in found or len(here) < len(found[key]):
                found[key] = here
            target_item = index.get(key)
            if target_item and "module" in target_item["inner"]:
                for child in target_item["inner"]["module"]["items"]:
                    visit(child, here, depth + 1)
            return
        here = f"{path}::{it['name']}" if path else it["name"]
        key = str(item_id)
        if key not in found or len(here) < len(found[key]):
            found[key] = here
        if kind == "module":
            for child in inner["items"]:
                visit(child, here, depth + 1)

    visit(doc["root"], "")
    return found


def attrs_of(item):
    """The attributes that are part of the contract: repr, non_exhaustive, must_use."""
    kept = []
    for a in item.get("attrs", []):
        text = json.dumps(a) if not isinstance(a, str) else a
        if isinstance(a, dict):
            if "repr" in a:
                r = a["repr"]
                parts = []
                if r.get("kind") not in (None, "rust"):
                    parts.append({"c": "C"}.get(r["kind"], r["kind"]))
                if r.get("int"):
                    parts.append(r["int"])
                if r.get("align"):
                    parts.append(f"align({r['align']})")
                if r.get("packed"):
                    parts.append(f"packed({r['packed']})")
                if parts:
                    kept.append("#[repr(" + ", ".join(parts) + ")]")
            elif "non_exhaustive" in a or a == "non_exhaustive":
                kept.append("#[non_exhaustive]")
            continue
        if a == "non_exhaustive" or "#[non_exhaustive]" in text:
            kept.append("#[non_exhaustive]")
        elif "#[repr(" in text:
            kept.append(text.strip('"'))
    return " ".join(sorted(set(kept))) + (" " if kept else "")


def listing(doc):
    if doc.get("format_version") not in KNOWN_FORMATS:
        sys.exit(f"public_api.py: rustdoc JSON format {doc.get('format_version')} is not one this "
                 f"script was written for ({KNOWN_FORMATS.start}..{KNOWN_FORMATS.stop - 1}); check the "
                 "renderer against the new format and widen KNOWN_FORMATS")
    r = Renderer(doc)
    index = r.index
    item = lambda i: index.get(str(i))
    lines = set()
    seen_paths = set()

    def local(it):
        return it is not None and it["crate_id"] == 0

    def hidden(it):
        return any("hidden" in json.dumps(a) for a in it.get("attrs", []))

    def visit(item_id, path):
        it = item(item_id)
        if not local(it) or hidden(it):
            return
        kind, inner = next(iter(it["inner"].items()))
        name = it["name"]
        here = f"{path}::{name}" if path and name else (name or path)
        if kind == "use":
            target = inner.get("id")
            if target is None:
                lines.add(f"pub use {path}::{inner['name']} (from {inner['source']})")
                return
            target_item = item(target)
            if inner["is_glob"]:
                if local(target_item) and "module" in target_item["inner"]:
                    for child in target_item["inner"]["module"]["items"]:
                        visit(child, path)
                return
            if target_item is None or not local(target_item):
                lines.add(f"pub use {path}::{inner['name']} = {inner['source']}")
                return
            # A re-export: the item, under the name the `use` gives it.
            renamed = dict(target_item)
            renamed["name"] = inner["name"]
            index[f"use:{item_id}"] = renamed
            visit(f"use:{item_id}", path)
            return
        key = (kind, here)
        if key in seen_paths:
            return
        seen_paths.add(key)
        a = attrs_of(it)
        if kind == "module":
            lines.add(f"pub mod {here}")
            for child in inner["items"]:
                visit(child, here)
        elif kind == "struct":
            g = r.generics(inner["generics"]) + r.where_clause(inner["generics"])
            shape = inner["kind"]
            if shape == "unit":
                lines.add(f"{a}pub struct {here}{g};")
            elif "tuple" in shape:
                fields = ["pub " + r.ty(item(f)["inner"]["struct_field"]) if f is not None else "_" for f in shape["tuple"]]
                lines.add(f"{a}pub struct {here}{g}({', '.join(fields)})")
            else:
                lines.add(f"{a}pub struct {here}{g}" + (" (has private fields)" if shape["plain"].get("has_stripped_fields") else ""))
                for f in shape["plain"]["fields"]:
                    field = item(f)
                    lines.add(f"pub {here}::{field['name']}: {r.ty(field['inner']['struct_field'])}")
            impls(here, inner["impls"])
        elif kind == "union":
            g = r.generics(inner["generics"])
            lines.add(f"{a}pub union {here}{g}")
            for f in inner["fields"]:
                field = item(f)
                lines.add(f"pub {here}::{field['name']}: {r.ty(field['inner']['struct_field'])}")
            impls(here, inner["impls"])
        elif kind == "enum":
            g = r.generics(inner["generics"]) + r.where_clause(inner["generics"])
            lines.add(f"{a}pub enum {here}{g}")
            for v in inner["variants"]:
                variant = item(v)
                vk = variant["inner"]["variant"]["kind"]
                disc = variant["inner"]["variant"].get("discriminant")
                disc = f" = {disc['expr']}" if disc else ""
                if vk == "plain":
                    lines.add(f"{here}::{variant['name']}{disc}")
                elif "tuple" in vk:
                    fields = [r.ty(item(f)["inner"]["struct_field"]) if f is not None else "_" for f in vk["tuple"]]
                    lines.add(f"{here}::{variant['name']}({', '.join(fields)})")
                else:
                    fields = [f"{item(f)['name']}: {r.ty(item(f)['inner']['struct_field'])}" for f in vk["struct"]["fields"]]
                    lines.add(f"{here}::{variant['name']} {{ {', '.join(fields)} }}")
            impls(here, inner["impls"])
        elif kind == "function":
            lines.add(f"{a}pub " + r.function(here, inner))
        elif kind == "trait":
            g = r.generics(inner["generics"]) + r.where_clause(inner["generics"])
            supertraits = (": " + " + ".join(r.bound(b) for b in inner["bounds"])) if inner.get("bounds") else ""
            unsafe = "unsafe " if inner.get("is_unsafe") else ""
            lines.add(f"pub {unsafe}trait {here}{g}{supertraits}")
            for m in inner["items"]:
                member = item(m)
                mk, mv = next(iter(member["inner"].items()))
                mpath = f"{here}::{member['name']}"
                if mk == "function":
                    provided = " (provided)" if mv.get("has_body") else ""
                    lines.add(r.function(mpath, mv) + provided)
                elif mk == "assoc_type":
                    bounds = (": " + " + ".join(r.bound(b) for b in mv["bounds"])) if mv.get("bounds") else ""
                    lines.add(f"type {mpath}{bounds}")
                elif mk == "assoc_const":
                    lines.add(f"const {mpath}: {r.ty(mv['type'])}")
            for impl_id in inner.get("implementations", []):
                impl = item(impl_id)
                if impl is not None and local(impl):
                    lines.add(f"impl {here} for {r.ty(impl['inner']['impl']['for'])}")
        elif kind == "type_alias":
            lines.add(f"pub type {here}{r.generics(inner['generics'])} = {r.ty(inner['type'])}")
        elif kind == "constant":
            value = inner["const"].get("value") or inner["const"].get("expr")
            lines.add(f"pub const {here}: {r.ty(inner['type'])}" + (f" = {value}" if value not in (None, "_") else ""))
        elif kind == "static":
            lines.add(f"pub static {'mut ' if inner.get('is_mutable') else ''}{here}: {r.ty(inner['type'])}")
        elif kind in ("macro", "proc_macro"):
            lines.add(f"macro {name}!")
        else:
            raise ValueError(f"unknown item kind {kind} at {here}")

    def impls(owner, impl_ids):
        for impl_id in impl_ids:
            impl = item(impl_id)
            if impl is None:
                continue
            body = impl["inner"]["impl"]
            if body.get("blanket_impl") is not None:
                continue
            g = r.generics(body["generics"])
            wc = r.where_clause(body["generics"])
            unsafe = "unsafe " if body.get("is_unsafe") else ""
            neg = "!" if body.get("is_negative") else ""
            for_type = r.ty(body["for"])
            if body["trait"] is not None:
                if not local(impl) and not body.get("is_synthetic"):
                    continue
                # Auto traits: the stable ones (the nightly's own, `Freeze` and the like, would
                # make the record depend on the toolchain).
                if body.get("is_synthetic") and body["trait"].get("path") not in STABLE_AUTO_TRAITS:
                    continue
                lines.add(f"{unsafe}impl{g} {neg}{r.path(body['trait'])} for {for_type}{wc}")
                continue
            if not local(impl):
                continue
            # Methods of `impl Stream<ArrowArrayStream>` are told apart from those of
            # `impl Stream<ArrowDeviceArrayStream>` by the implementing type's arguments.
            args = body["for"].get("resolved_path", {}).get("args")
            owner_here = owner + (r.generic_args(args) if args else "")
            for member in body["items"]:
                m = item(member)
                if m is None or m["visibility"] != "public" or hidden(m):
                    continue
                mk, mv = next(iter(m["inner"].items()))
                mpath = f"{owner_here}::{m['name']}"
                if mk == "function":
                    lines.add(f"{attrs_of(m)}pub " + r.function(mpath, mv) + (f" (impl{g}{wc})" if g or wc else ""))
                elif mk == "assoc_const":
                    value = mv.get("value") or mv.get("expr")
                    lines.add(f"pub const {mpath}: {r.ty(mv['type'])}" + (f" = {value}" if value not in (None, "_") else ""))
                elif mk == "assoc_type":
                    lines.add(f"pub type {mpath} = {r.ty(mv.get('type'))}")

    visit(doc["root"], "")
    return sorted(lines)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    doc = json.load(open(sys.argv[1]))
    record = sys.argv[2]
    fresh = [line + "\n" for line in listing(doc)]
    if "--bless" in sys.argv:
        os.makedirs(os.path.dirname(record) or ".", exist_ok=True)
        with open(record, "w") as out:
            out.writelines(fresh)
        print(f"{record}: {len(fresh)} items written")
        return 0
    try:
        kept = open(record).readlines()
    except FileNotFoundError:
        kept = []
    if kept == fresh:
        print(f"{record}: the public API matches the record ({len(fresh)} items)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(kept, fresh, record, "the public API now"))
    print(f"\nThe public API differs from {record}. If the change is meant, regenerate the record "
          f"(scripts/public_api.py {sys.argv[1]} {record} --bless), commit it with the change, "
          "and say so in CHANGELOG.md.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
