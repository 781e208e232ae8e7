"""Runs a library's checks in child processes, restarting after a crash, and folds the verdicts of
its samples into one per rule."""
import json
import signal
import subprocess
import sys

from ._rules import CONSUMER_RULES, PRODUCER_RULES, Result

ORDER = ["crash", "fail", "warn", "refused", "pass", "n/a"]


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"exit status {code}"


def run_items(mode, library, timeout=300):
    """Every (rule, sample, verdict, detail) of a run, and the library's version."""
    events, start, version = [], 0, ""
    while True:
        process = subprocess.run(
            [sys.executable, "-m", "dlpack_abi.conformance._worker", mode, library, str(start)],
            capture_output=True, text=True, timeout=timeout)
        started, done = None, False
        for line in process.stdout.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # the library printed something
            if event["event"] == "start":
                started = event
            elif event["event"] == "result":
                events.append(event)
                started = None
            elif event["event"] == "done":
                done, version = True, event["version"]
        if done:
            return events, version
        if started is None:
            raise RuntimeError(f"the checker's worker failed before any check:\n{process.stderr[-2000:]}")
        events.append(dict(started, verdict="crash",
                           detail=f"the process died ({_signal_name(process.returncode)})"))
        start = started["index"] + 1


def fold(events, rules):
    """One Result per rule: the worst verdict of its samples."""
    results = []
    for rule, (spec, _) in rules.items():
        mine = [e for e in events if e["rule"] == rule]
        verdicts = [e["verdict"] for e in mine] or ["n/a"]
        worst = min(verdicts, key=ORDER.index)
        worst_events = [e for e in mine if e["verdict"] == worst and e["detail"]]
        if len({e["detail"] for e in worst_events}) == 1 and len(worst_events) > 1:
            details = [worst_events[0]["detail"] + f" ({len(worst_events)} samples)"]
        else:
            details = [f"{e['sample']}: {e['detail']}" if e["sample"] else e["detail"] for e in worst_events]
        detail = " ".join("; ".join(dict.fromkeys(details)).split())
        results.append(Result(rule, spec, worst, detail[:400],
                              [e["sample"] for e in mine if e["verdict"] == worst and e["sample"]]))
    return results


def check(mode, library):
    """The verdict of every rule of ``mode`` (``"producer"`` or ``"consumer"``) for ``library``
    (a name from ``libraries.KNOWN`` or ``module:Class``)."""
    events, version = run_items(mode, library)
    results = fold(events, PRODUCER_RULES if mode == "producer" else CONSUMER_RULES)
    for result in results:
        result.library = version
    return results
