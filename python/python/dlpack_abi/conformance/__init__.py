"""A conformance checker for DLPack and Arrow PyCapsule producers and consumers.

``python -m dlpack_abi.conformance producer numpy`` checks what NumPy's ``__dlpack__``,
``__dlpack_device__``, capsules and exchange API do; ``consumer numpy`` hands ``numpy.from_dlpack``
odd and broken producers and reports whether each is handled, refused or mishandled. Every rule
cites the section of the specification it checks. A crash of the library under test is caught (the
checks run in a child process) and reported as ``crash``. ``--json`` prints JSON; the exit code is
1 when a rule fails or the library crashes, so it can gate a CI job.

Verdicts: ``pass``, ``fail``, ``crash``, ``refused`` (a refusal the spec allows), ``warn`` (a
recommendation not followed) and ``n/a``: the rule does not apply, or the checker cannot check it
here, with the reason (device memory the producer will not copy to the CPU, a library that is not
installed or has no device). n/a is neither a pass nor a failure and never sets the exit code; it
never stands for the checker's own limits blamed on the library.

Device producers (``torch`` and ``cupy`` on a GPU) are checked as they are used: the checker reads
device memory only through the producer's own copy to the CPU (``__dlpack__(dl_device=(1, 0),
copy=True)``), passes the streams consumers pass, and runs the consumer cases in the library's
device memory too.

Examples
--------
>>> from dlpack_abi import conformance
>>> results = conformance.check("producer", "numpy")
>>> {r.rule: r.verdict for r in results}["dlpack.capsule.unconsumed"]
'pass'
"""
from ._dlpack import Sample
from ._rules import CONSUMER_RULES, PRODUCER_RULES, Result, summarize, table
from ._runner import check

__all__ = ["check", "table", "summarize", "Result", "Sample", "PRODUCER_RULES", "CONSUMER_RULES"]
