"""The checks of one library, run in a child process so that a crash of the library under test
is reported instead of ending the run: ``python -m dlpack_abi.conformance._worker MODE LIBRARY
START`` prints one JSON line per event on stdout."""
import gc
import json
import sys
import traceback

from . import _arrow, _consumer, _dlpack, _exchange, libraries
from ._rules import CONSUMER_RULES, PRODUCER_RULES


class _Arrow:
    """An Arrow sample, shaped as the checks expect: ``obj`` is a fresh producer each time."""

    def __init__(self, name, make, failing_stream=None):
        self.name, self.make, self.failing_stream = name, make, failing_stream

    @property
    def obj(self):
        return self.make()


def items(mode, adapter):
    """The (rule, sample name, thunk) triples of a run, in a fixed order."""
    if mode == "consumer":
        for rule in CONSUMER_RULES:
            yield rule, "", lambda rule=rule: _consumer.run_case(rule, adapter)
        return
    samples = list(adapter.samples()) if hasattr(adapter, "samples") else []
    arrow = [_Arrow(n, o, getattr(adapter, "failing_stream", None)) for n, o in
             (adapter.arrow_samples() if hasattr(adapter, "arrow_samples") else [])]
    for rule in PRODUCER_RULES:
        if rule in _dlpack.CHECKS:
            group, check = samples, _dlpack.CHECKS[rule]
        elif rule in _exchange.CHECKS:
            group, check = samples[:1], _exchange.CHECKS[rule]
        elif rule == "arrow.stream.error":
            group, check = [_Arrow("failing stream", None, getattr(adapter, "failing_stream", None))], _arrow.CHECKS[rule]
        else:
            group, check = arrow, _arrow.CHECKS[rule]
        if not group:
            yield rule, "", None
        for sample in group:
            yield rule, sample.name, lambda check=check, sample=sample: check(sample)


def verdict(thunk):
    if thunk is None:
        return "n/a", ""
    try:
        return "pass", thunk() or ""
    except _dlpack.NotApplicable as reason:
        return "n/a", str(reason)
    except _dlpack.Refused as reason:
        return "refused", str(reason)
    except _dlpack.Warned as reason:
        return "warn", str(reason)
    except _dlpack.Broken as reason:
        return "fail", str(reason)
    except Exception as error:  # noqa: BLE001 - an unexpected exception is the library's failure
        last = traceback.extract_tb(error.__traceback__)[-1]
        return "fail", f"{type(error).__name__}: {error} (at {last.name})"


def main(argv):
    mode, name, start = argv[0], argv[1], int(argv[2])
    adapter = libraries.adapter(name)
    out = sys.stdout
    for index, (rule, sample, thunk) in enumerate(items(mode, adapter)):
        if index < start:
            continue
        print(json.dumps({"event": "start", "index": index, "rule": rule, "sample": sample}), file=out, flush=True)
        result, detail = verdict(thunk)
        # A crash in a destructor or a callback freed too early shows here, under this rule.
        gc.collect()
        print(json.dumps({"event": "result", "index": index, "rule": rule, "sample": sample,
                          "verdict": result, "detail": detail}), file=out, flush=True)
    print(json.dumps({"event": "done", "version": adapter.version() if hasattr(adapter, "version") else ""}),
          file=out, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
