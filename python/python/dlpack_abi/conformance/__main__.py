"""``python -m dlpack_abi.conformance {producer,consumer} LIBRARY... [--json]``.

Prints each rule's verdict: pass, fail, crash, refused, warn or n/a (the rule does not apply, or
the checker cannot check it here: device memory the producer will not copy to the CPU, a library
that is not installed; the detail says why). The exit code is 1 when a rule fails or a library
crashes, else 0: n/a counts as neither a pass nor a failure."""
import argparse
import datetime
import json
import sys

from . import check, summarize, table
from .libraries import KNOWN


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlpack_abi.conformance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["producer", "consumer"])
    parser.add_argument("libraries", nargs="+", help=f"{', '.join(KNOWN)}, or module:Class")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    status, report = 0, {}
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    for library in args.libraries:
        results = check(args.mode, library)
        status |= summarize(results)
        version = results[0].library if results else library
        unavailable = results[0].unavailable if results else ""
        report[library] = {"version": version, "date": today,
                           "results": [r.to_json() for r in results]}
        if unavailable:
            report[library]["unavailable"] = unavailable
        if not args.json:
            if unavailable:
                print(f"{args.mode} check: {version}\nn/a: not checked: {unavailable}")
            else:
                print(table(results, f"{args.mode} check: {version}"))
            print()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
