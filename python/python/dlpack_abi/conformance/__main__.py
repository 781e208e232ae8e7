"""``python -m dlpack_abi.conformance {producer,consumer} LIBRARY... [--json]``."""
import argparse
import json
import sys

from . import check, summarize, table
from .libraries import KNOWN


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dlpack_abi.conformance", description=__doc__)
    parser.add_argument("mode", choices=["producer", "consumer"])
    parser.add_argument("libraries", nargs="+", help=f"{', '.join(KNOWN)}, or module:Class")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    status, report = 0, {}
    for library in args.libraries:
        results = check(args.mode, library)
        status |= summarize(results)
        version = results[0].library if results else library
        report[library] = {"version": version, "results": [r.to_json() for r in results]}
        if not args.json:
            print(table(results, f"{args.mode} check: {version}"))
            print()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    return status


if __name__ == "__main__":
    sys.exit(main())
