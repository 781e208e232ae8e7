"""Runs a library's checks in child processes, restarting after a crash, and folds the verdicts of
its samples into one per rule."""
import json
import signal
import subprocess
import sys

from ._rules import CONSUMER_RULES, PRODUCER_RULES, Result

#: Worst first. An n/a the checker could not check ("unchecked": device memory it cannot read)
#: outranks a pass, so that other samples' passes do not hide it; a rule that does not apply does
#: not.
ORDER = ["crash", "fail", "warn", "refused", "unchecked", "pass", "n/a"]


def _rank(event):
    unchecked = event["verdict"] == "n/a" and event.get("unchecked")
    return ORDER.index("unchecked" if unchecked else event["verdict"])


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except (ValueError, TypeError):
        return f"exit status {code}"


def run_items(mode, library, timeout=300):
    """Every (rule, sample, verdict, detail) of a run, the library's version, and why nothing could
    be checked (``""`` when the run took place)."""
    events, start, version, unavailable = [], 0, "", ""
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
            elif event["event"] == "unavailable":
                unavailable = event["reason"]
            elif event["event"] == "done":
                done, version = True, event["version"]
        if done:
            return events, version, unavailable
        if started is None:
            raise RuntimeError(f"the checker's worker failed before any check:\n{process.stderr[-2000:]}")
        events.append(dict(started, verdict="crash",
                           detail=f"the process died ({_signal_name(process.returncode)})"))
        start = started["index"] + 1


def fold(events, rules, unavailable=""):
    """One Result per rule: the worst verdict of its samples (``ORDER``)."""
    results = []
    for rule, (spec, _) in rules.items():
        mine = [e for e in events if e["rule"] == rule]
        if not mine and unavailable:
            mine = [{"sample": "", "verdict": "n/a", "detail": f"not checked: {unavailable}", "unchecked": True}]
        if not mine:
            results.append(Result(rule, spec, "n/a"))
            continue
        rank = min(_rank(e) for e in mine)
        worst_events = [e for e in mine if _rank(e) == rank]
        worst = worst_events[0]["verdict"]
        worst_events = [e for e in worst_events if e["detail"]]
        if len({e["detail"] for e in worst_events}) == 1 and len(worst_events) > 1:
            details = [worst_events[0]["detail"] + f" ({len(worst_events)} samples)"]
        else:
            details = [f"{e['sample']}: {e['detail']}" if e["sample"] else e["detail"] for e in worst_events]
        detail = " ".join("; ".join(dict.fromkeys(details)).split())
        results.append(Result(rule, spec, worst, detail[:400],
                              [e["sample"] for e in mine if _rank(e) == rank and e["sample"]],
                              rank == ORDER.index("unchecked")))
    return results


def check(mode, library):
    """The verdict of every rule of ``mode`` (``"producer"`` or ``"consumer"``) for ``library``
    (a name from ``libraries.KNOWN`` or ``module:Class``). A library that cannot be checked here
    (not installed, no device) gets n/a for every rule, and each result's ``unavailable`` says why
    (``""`` otherwise)."""
    events, version, unavailable = run_items(mode, library)
    results = fold(events, PRODUCER_RULES if mode == "producer" else CONSUMER_RULES, unavailable)
    for result in results:
        result.library, result.unavailable = version, unavailable
    return results
