#!/usr/bin/env python3
"""Counts the crate's public items whose docs carry no example a user can copy.

Reads rustdoc's JSON output (nightly: ``-Z unstable-options --output-format json``) and walks
every item a user can reach from the crate root, through public modules and re-exports:
modules, structs, unions, enums, traits, functions, type aliases, constants, statics, macros,
and the methods and associated constants of inherent impls and traits. Fields and variants are
documented on their type's page; trait impls by the trait.

An item passes when its own docs hold a Rust code block that compiles (plain, ``rust``,
``no_run`` or ``should_panic``; not ``ignore``, ``text`` or ``compile_fail``) that a user can
copy whole: a hidden line (``# ...``) may hold only ``fn main`` and its braces, a ``#[cfg]``
gate, or the ``Ok(())`` that ends a fallible example; never an import, an ``include!`` or a
helper. Items that
a macro from another crate generates (bitflags' ``bits()`` and friends) are that crate's docs,
and are left out.

Usage: ``doc_examples.py path/to/crate.json [--list]``, from the workspace root (each crate of
the workspace has its own JSON file: ``dlpack_abi.json``, ``dlpack_abi_pyo3.json``, ...). Prints the count and exits 1 when
it is not zero (``--list`` names every missing item either way).
"""

import json
import os
import re
import sys

FENCE = re.compile(r"^\s*```(.*)$")
COPYABLE = {"", "rust", "no_run", "should_panic"}
# What a hidden line may hold: the scaffolding every user's own code has anyway.
HIDDEN_OK = re.compile(
    r"^\s*#\s*("
    r"$|fn main\(\)|}|\{|Ok(::<.*>)?\(\(\)\)|#!?\[|//"
    r")"
)


def code_blocks(docs):
    """Yields (info string, lines) for every fenced block in `docs`."""
    lines = (docs or "").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        info = match.group(1).strip()
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1
        yield info, body


def is_copyable(info):
    tags = {t.strip() for t in info.split(",")} - {""}
    tags = {t for t in tags if not t.startswith("edition")}
    return all(t in COPYABLE for t in tags)


def example_problem(docs):
    """None when the docs hold a copyable example, else why not."""
    blocks = [(info, body) for info, body in code_blocks(docs) if is_copyable(info)]
    if not blocks:
        return "no example"
    for _, body in blocks:
        for line in body:
            stripped = line.strip()
            if stripped.startswith("# ") or stripped == "#":
                if not HIDDEN_OK.match(stripped):
                    return f"hidden helper: {stripped}"
    return None


def main():
    path = sys.argv[1]
    listing = "--list" in sys.argv
    doc = json.load(open(path))
    index = doc["index"]
    item = lambda i: index.get(str(i))

    seen = set()
    missing = []

    def local(it):
        return it is not None and it["crate_id"] == 0

    sources = {}

    def generated_elsewhere(it):
        """True for items a macro wrote: their source span does not spell their name."""
        span = it.get("span")
        # A local crate's files are relative to the workspace root (`src/...` for the core,
        # `integrations/<name>/src/...` for the others); another crate's are absolute.
        if span is None or os.path.isabs(span["filename"]) or not os.path.isfile(span["filename"]):
            return True
        name = it["name"]
        if name is None:
            return False
        file = span["filename"]
        if file not in sources:
            sources[file] = open(file, encoding="utf-8").read().splitlines()
        text = "\n".join(sources[file][span["begin"][0] - 1 : span["end"][0]])
        kind = next(iter(it["inner"]))
        keyword = {"function": r"fn\s+", "constant": r"const\s+", "assoc_const": r"const\s+"}
        pattern = keyword.get(kind, "") + re.escape(name) + r"\b"
        return re.search(r"\b" + pattern, text) is None

    def hidden(it):
        return any(isinstance(a, dict) and "doc(hidden)" in str(a) or a == "hidden" for a in it["attrs"]) or any(
            "#[doc(hidden)]" in str(a) for a in it["attrs"]
        )

    def check(it, path):
        problem = example_problem(it["docs"])
        if problem:
            missing.append((path, it["span"]["filename"], it["span"]["begin"][0], problem))

    def visit(item_id, path):
        it = item(item_id)
        if not local(it) or item_id in seen or hidden(it):
            return
        seen.add(item_id)
        kind, inner = next(iter(it["inner"].items()))
        name = it["name"]
        here = f"{path}::{name}" if path else name
        if kind == "use":
            target = inner.get("id")
            if target is None:
                return
            if inner["is_glob"]:
                target_item = item(target)
                if local(target_item) and "module" in target_item["inner"]:
                    for child in target_item["inner"]["module"]["items"]:
                        visit(child, path)
                return
            visit(target, path)
            return
        if kind in ("struct_field", "variant", "impl", "assoc_type"):
            return
        if item_id != doc["root"] and generated_elsewhere(it):
            return
        check(it, here)
        if kind == "module":
            for child in inner["items"]:
                visit(child, here)
        elif kind in ("struct", "enum", "union"):
            for impl_id in inner["impls"]:
                impl = item(impl_id)
                if not local(impl) or impl["inner"]["impl"]["trait"] is not None:
                    continue
                for member in impl["inner"]["impl"]["items"]:
                    m = item(member)
                    if m and m["visibility"] == "public" and not hidden(m):
                        visit(member, here)
        elif kind == "trait":
            for member in inner["items"]:
                m = item(member)
                if m and "assoc_type" not in m["inner"]:
                    visit(member, here)

    root = item(doc["root"])
    visit(doc["root"], "")
    del root
    total = len(seen)
    if listing or missing:
        for path, file, line, problem in sorted(missing, key=lambda m: (m[1], m[2])):
            print(f"{file}:{line}: {path}: {problem}")
    print(f"{len(missing)} of {total} public items lack a copyable example")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
