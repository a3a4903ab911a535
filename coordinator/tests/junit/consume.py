"""Read a Vantage JUnit report the way CI tooling does, and say what it saw.

1. Validate it against the Jenkins xUnit plugin's published JUnit schema (`junit-10.xsd`, as
   pytest's source distribution on PyPI ships it in testing/example_scripts/;
   `bash .ci/install-peers` fetches it into .venv/ beside this file) with libxml2 (lxml). Any violation: exit 1 with the errors.
2. Parse it with junitparser (a JUnit consumer from PyPI) and recount every suite; the
   counts the file declares must equal the counts of its test cases, else exit 1.
3. Print one JSON document: totals, and per suite its counts, properties and cases
   (name, classname, result, message, type).

Usage: consume.py REPORT.xml
"""

import json
import os
import sys

from lxml import etree
from junitparser import Error, Failure, JUnitXml, Skipped

HERE = os.path.dirname(os.path.abspath(__file__))


def validate(path):
    xsd = os.path.join(HERE, ".venv", "junit-10.xsd")
    if not os.path.exists(xsd):
        print(f"{xsd} is missing: run bash .ci/install-peers", file=sys.stderr)
        sys.exit(2)
    schema = etree.XMLSchema(etree.parse(xsd))
    doc = etree.parse(path)
    if not schema.validate(doc):
        errors = [f"line {e.line}: {e.message}" for e in schema.error_log]
        print("schema violations:\n" + "\n".join(errors), file=sys.stderr)
        sys.exit(1)


def result_of(case):
    for r in case.result:
        if isinstance(r, Failure):
            return "failure", r.message, r.type
        if isinstance(r, Error):
            return "error", r.message, r.type
        if isinstance(r, Skipped):
            return "skipped", r.message, r.type
    return "passed", None, None


def main(path):
    validate(path)
    xml = JUnitXml.fromfile(path)
    declared_root = {k: getattr(xml, k) for k in ("tests", "failures", "errors")}
    suites = []
    for suite in xml:
        declared = {k: getattr(suite, k) for k in ("tests", "failures", "errors", "skipped")}
        cases = []
        for case in suite:
            result, message, kind = result_of(case)
            cases.append(
                {
                    "name": case.name,
                    "classname": case.classname,
                    "result": result,
                    "message": message,
                    "type": kind,
                    "system_out": case.system_out,
                }
            )
        suite.update_statistics()
        counted = {k: getattr(suite, k) for k in ("tests", "failures", "errors", "skipped")}
        if declared != counted:
            print(f"suite {suite.name}: declares {declared}, has {counted}", file=sys.stderr)
            sys.exit(1)
        suites.append(
            {
                "name": suite.name,
                **counted,
                "properties": {p.name: p.value for p in suite.properties()},
                "cases": cases,
            }
        )
    xml.update_statistics()
    counted_root = {k: getattr(xml, k) for k in ("tests", "failures", "errors")}
    if declared_root != counted_root:
        print(f"testsuites: declares {declared_root}, has {counted_root}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({**counted_root, "skipped": xml.skipped, "suites": suites}))


if __name__ == "__main__":
    main(sys.argv[1])
