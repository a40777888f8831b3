"""Rendering `rtk-policy test` results: text lines, JSON, and JUnit XML for CI systems."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from rtk_policy.policytest.run import ERROR, FAIL, SKIP, Coverage, TestResult, summary

_LABELS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skip": "SKIP"}


def render_text(results: Sequence[TestResult], coverage: Coverage | None, files: int) -> str:
    """One `STATUS file:line name: command` line per result (with the reason under failures), a
    summary line and, when asked, the coverage section."""
    lines = []
    for result in results:
        label = _LABELS[result.status]
        command = f": {result.command!r}" if result.command else ""
        lines.append(f"{label:5} {result.location} {result.name}{command}")
        if result.detail and result.status != "pass":
            lines.append(f"      {result.detail}")
    counts = summary(results)
    lines.append(
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['errors']} errors, "
        f"{counts['skipped']} skipped ({_count(results, 'case')} cases in {files} test file(s), "
        f"{_count(results, 'example')} examples)"
    )
    if coverage is not None:
        lines.extend(coverage_lines(coverage))
    return "\n".join(lines) + "\n"


def _count(results: Sequence[TestResult], kind: str) -> int:
    return sum(result.kind == kind for result in results)


def coverage_lines(coverage: Coverage) -> list[str]:
    """The coverage section: the ratio, then every rule no case or example exercised."""
    total = len(coverage.rules)
    missing = coverage.unexercised
    done = total - len(missing)
    percent = 100.0 * done / total if total else 100.0
    lines = [f"coverage: {done}/{total} rules exercised ({percent:.0f}%)"]
    for rule in missing:
        lines.append(f"  not exercised: {rule.id} ({rule.file}:{rule.line})")
    return lines


def coverage_data(coverage: Coverage) -> dict[str, object]:
    """The coverage as plain data."""
    return {
        "rules": len(coverage.rules),
        "exercised": sorted(coverage.exercised),
        "not_exercised": [
            {"id": rule.id, "file": rule.file, "line": rule.line}
            for rule in coverage.unexercised
        ],
    }


def render_json(results: Sequence[TestResult], coverage: Coverage | None) -> str:
    """The results, the summary and (when asked) the coverage as one JSON document."""
    data: dict[str, object] = {
        "summary": summary(results),
        "results": [
            {"kind": r.kind, "name": r.name, "file": r.file, "line": r.line, "status": r.status,
             "command": r.command, "detail": r.detail, "matched_rules": list(r.matched_rules)}
            for r in results
        ],
    }
    if coverage is not None:
        data["coverage"] = coverage_data(coverage)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_junit(results: Sequence[TestResult]) -> str:
    """JUnit XML: one `testsuite` per file (test file or policy file), one `testcase` per result.
    (Coverage is not part of the JUnit schema; `test` prints it on stderr with this format.)"""
    counts = summary(results)
    root = ET.Element("testsuites", name="rtk-policy", tests=str(counts["total"]),
                      failures=str(counts["failed"]), errors=str(counts["errors"]),
                      skipped=str(counts["skipped"]))
    suites: dict[str, list[TestResult]] = {}
    for result in results:
        suites.setdefault(result.file, []).append(result)
    for file, members in suites.items():
        part = summary(members)
        suite = ET.SubElement(root, "testsuite", name=file, tests=str(part["total"]),
                              failures=str(part["failed"]), errors=str(part["errors"]),
                              skipped=str(part["skipped"]))
        for result in members:
            _testcase(suite, result)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, result: TestResult) -> None:
    name = f"{result.name}: {result.command}" if result.command else result.name
    case = ET.SubElement(suite, "testcase", name=f"{name} (line {result.line})",
                         classname=_classname(result.file), file=result.file, line=str(result.line))
    message = f"{result.location}: {result.detail}"
    if result.status == FAIL:
        ET.SubElement(case, "failure", message=message, type="AssertionError").text = message
    elif result.status == ERROR:
        ET.SubElement(case, "error", message=message, type="Error").text = message
    elif result.status == SKIP:
        ET.SubElement(case, "skipped", message=result.detail)


def _classname(file: str) -> str:
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]
