"""The documentation's Python examples, run as doctests: the quick start in the crate's README,
the guide's pages, the API reference in python/README.md, and the docstrings of the
``dlpack_abi`` module. In Markdown files, each ```` ```python ```` block is one doctest."""
import doctest
import pathlib
import re

import pytest

import dlpack_abi

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


def test_the_docstrings_of_the_module():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    globs = {"dlpack_abi": dlpack_abi}
    for name in ["dlpack_abi", *dlpack_abi.__all__]:
        obj = dlpack_abi if name == "dlpack_abi" else getattr(dlpack_abi, name)
        for test in finder.find(obj, name, globs=globs):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, "no docstring has an example"
    assert result.failed == 0
