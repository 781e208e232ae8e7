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


def not_applicable(reason):
    def thunk():
        raise _dlpack.NotApplicable(reason)

    return thunk


def first_of_each_device(samples):
    """The exchange API is checked once per device the samples lie on (its first sample there)."""
    firsts = {}
    for sample in samples:
        try:
            device = tuple(int(v) for v in sample.obj.__dlpack_device__())
        except Exception:  # noqa: BLE001 - dlpack.device reports it; group by what the adapter says
            device = tuple(sample.device)
        firsts.setdefault(device, sample)
    return list(firsts.values())


def items(mode, adapter):
    """The (rule, sample name, thunk) triples of a run, in a fixed order."""
    if mode == "consumer":
        host = getattr(adapter, "imports_cpu", True)
        device = adapter.consumer_device() if hasattr(adapter, "consumer_device") else None
        for rule in CONSUMER_RULES:
            if host:
                yield rule, "", lambda rule=rule: _consumer.run_case(rule, adapter)
            else:
                yield rule, "cpu", not_applicable("the library imports device memory only")
            if device is not None and _consumer.has_device_variant(rule):
                yield rule, _dlpack.device_name(device), lambda rule=rule: _consumer.run_case(rule, adapter, True)
        return
    samples = list(adapter.samples()) if hasattr(adapter, "samples") else []
    arrow = [_Arrow(n, o, getattr(adapter, "failing_stream", None)) for n, o in
             (adapter.arrow_samples() if hasattr(adapter, "arrow_samples") else [])]
    for rule in PRODUCER_RULES:
        if rule in _dlpack.CHECKS:
            group, check = samples, _dlpack.CHECKS[rule]
        elif rule in _exchange.CHECKS:
            group, check = first_of_each_device(samples), _exchange.CHECKS[rule]
        elif rule == "arrow.stream.error":
            group, check = [_Arrow("failing stream", None, getattr(adapter, "failing_stream", None))], _arrow.CHECKS[rule]
        else:
            group, check = arrow, _arrow.CHECKS[rule]
        if not group:
            yield rule, "", None
        for sample in group:
            yield rule, sample.name, lambda check=check, sample=sample: check(sample)


def verdict(thunk):
    """(verdict, detail, unchecked): ``unchecked`` marks an n/a the checker could not check."""
    if thunk is None:
        return "n/a", "", False
    try:
        return "pass", thunk() or "", False
    except _dlpack.NotApplicable as reason:
        return "n/a", str(reason), isinstance(reason, _dlpack.Unchecked)
    except _dlpack.Refused as reason:
        return "refused", str(reason), False
    except _dlpack.Warned as reason:
        return "warn", str(reason), False
    except _dlpack.Broken as reason:
        return "fail", str(reason), False
    except Exception as error:  # noqa: BLE001 - an unexpected exception is the library's failure
        last = traceback.extract_tb(error.__traceback__)[-1]
        return "fail", f"{type(error).__name__}: {error} (at {last.name})", False


def main(argv):
    mode, name, start = argv[0], argv[1], int(argv[2])
    out = sys.stdout
    try:
        adapter = libraries.adapter(name)
        version = adapter.version() if hasattr(adapter, "version") else ""
        work = list(items(mode, adapter))
    except (libraries.Unavailable, ImportError) as reason:
        # Not the library's failure: nothing of it could be checked here.
        text = str(reason) if isinstance(reason, libraries.Unavailable) else f"not installed ({reason})"
        print(json.dumps({"event": "unavailable", "reason": text}), file=out, flush=True)
        print(json.dumps({"event": "done", "version": f"{name} (not checked)"}), file=out, flush=True)
        return
    # The library, its modules and the samples live as long as the process: out of the collector's
    # way, so that the collections after each check stay cheap with a large library (PyTorch) loaded.
    gc.collect()
    gc.freeze()
    for index, (rule, sample, thunk) in enumerate(work):
        if index < start:
            continue
        print(json.dumps({"event": "start", "index": index, "rule": rule, "sample": sample}), file=out, flush=True)
        result, detail, unchecked = verdict(thunk)
        # A crash in a destructor or a callback freed too early shows here, under this rule.
        gc.collect()
        print(json.dumps({"event": "result", "index": index, "rule": rule, "sample": sample,
                          "verdict": result, "detail": detail, "unchecked": unchecked}), file=out, flush=True)
    print(json.dumps({"event": "done", "version": version}), file=out, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
