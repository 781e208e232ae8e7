"""The documentation's Python examples, run as doctests: the quick start in the crate's README,
the guide's pages, the API reference in python/README.md, and the docstrings of the
``dlpack_abi`` module. In Markdown files, each ```` ```python ```` block is one doctest."""
import doctest
import pathlib
import re

import pytest

import dlpack_abi
import dlpack_abi.safetensors

ROOT = pathlib.Path(__file__).resolve().parents[2]
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def markdown_doctests(path):
    """The examples of every ```python block of `path`, sharing one namespace, as a doctest
    whose line numbers are the file's."""
    text = path.read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    examples = []
    for block in BLOCK.finditer(text):
        first_line = text.count("\n", 0, block.start(1))
        for example in parser.get_examples(block.group(1)):
            example.lineno += first_line
            examples.append(example)
    return doctest.DocTest(examples, {}, str(path.relative_to(ROOT)), str(path), 0, text)


@pytest.mark.parametrize(
    "document", ["README.md", "python/README.md", "docs/python.md", "docs/exchange-api.md"]
)
def test_the_examples_of(document):
    test = markdown_doctests(ROOT / document)
    assert test.examples, f"{document} has no Python examples"
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def public_docstrings():
    """(name, docstring) for the module, every name in ``__all__``, and every public attribute
    of its classes (methods, static methods, properties; the protocol dunders are the
    protocols', documented on the class)."""
    yield "dlpack_abi", dlpack_abi.__doc__
    # Submodules in Python: their docstrings and their functions'.
    yield "dlpack_abi.safetensors", dlpack_abi.safetensors.__doc__
    for name in ("open", "load"):
        yield f"dlpack_abi.safetensors.{name}", getattr(dlpack_abi.safetensors, name).__doc__
    for name in dlpack_abi.__all__:
        obj = getattr(dlpack_abi, name)
        yield name, obj.__doc__
        if isinstance(obj, type):
            for attribute in vars(obj):
                if not attribute.startswith("_"):
                    # Through the class, not its __dict__: a static method's wrapper in the
                    # __dict__ carries `staticmethod`'s own docstring.
                    yield f"{name}.{attribute}", getattr(getattr(obj, attribute), "__doc__", None)


def test_every_public_name_has_an_example_that_runs():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    without = []
    for name, docstring in public_docstrings():
        test = parser.get_doctest(docstring or "", {"dlpack_abi": dlpack_abi}, name, None, 0)
        if not test.examples:
            without.append(name)
        runner.run(test)
    assert without == [], f"docstrings without an example: {without}"
    assert runner.summarize(verbose=False).failed == 0
