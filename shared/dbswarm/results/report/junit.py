"""CI outputs: JUnit XML (`--junit FILE` on run, resume and compare) and GitHub Actions' step
summary (``GITHUB_STEP_SUMMARY``).

The XML is the structure CI systems read (Jenkins, GitLab, GitHub test reporters):
``<testsuites>`` holding one ``<testsuite name tests failures errors skipped time>`` per
campaign (or comparison), one ``<testcase classname name time>`` per run and phase, and a
``<failure message type>`` with its reason for what fails it: a phase that did not complete, a
failed consistency check, an error rate over ``results.max_error_rate``, a client-bound phase
that is not allowed, a regression (the campaign's own verdict, or `dbswarm compare`'s worse
figures); a pair `dbswarm compare` cannot compare is a failure too (type ``not-comparable``).
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

from dbswarm.credentials.redact import redact_text
from dbswarm.measure.headroom import fails_run
from dbswarm.results.phase import PhaseResult, phases_of
from dbswarm.results.store import RESULT_DOC, SUMMARY_DOC, Store, campaign_key

OK_STATUSES = ("complete", None)
# characters XML 1.0 cannot hold, even escaped (a driver's message may carry a NUL or a terminal's ESC)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold written as Python escapes (``\\x1b``): the report
    stays a document a parser reads."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _suite(root: ET.Element, name: str, cases: list[tuple[str, str, float, list[tuple[str, str]]]],
           timestamp: Optional[str] = None) -> None:
    """``cases``: (classname, name, seconds, [(failure type, message)])."""
    failed = sum(bool(f) for *_, f in cases)
    suite = ET.SubElement(root, "testsuite", name=xml_text(name), tests=str(len(cases)), failures=str(failed),
                          errors="0", skipped="0", time=f"{sum(c[2] for c in cases):.3f}")
    if timestamp:
        suite.set("timestamp", timestamp)
    for classname, case_name, seconds, failures in cases:
        case = ET.SubElement(suite, "testcase", classname=xml_text(classname), name=xml_text(case_name),
                             time=f"{seconds:.3f}")
        if failures:
            kinds = list(dict.fromkeys(k for k, _ in failures))
            text = xml_text("\n".join(redact_text(m) for _, m in failures))
            f = ET.SubElement(case, "failure", message=text.splitlines()[0][:500], type=",".join(kinds))
            f.text = text


def _xml(root: ET.Element) -> str:
    root.set("tests", str(sum(int(s.get("tests", 0)) for s in root)))
    root.set("failures", str(sum(int(s.get("failures", 0)) for s in root)))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def phase_failures(result: dict, run: dict, name: str, phase: PhaseResult | dict) -> list[tuple[str, str]]:
    """Why one run's phase fails its test case ([] when it passes)."""
    p = phase if isinstance(phase, PhaseResult) else PhaseResult.of(phase)
    out = []
    status = p.status
    if status == "complete_with_errors" or p.error_problems:
        for problem in p.error_problems or [f"error rate {p.error_rate or 0:.2%} over results.max_error_rate"]:
            out.append(("error-threshold", problem))
    elif status not in OK_STATUSES:
        out.append(("incomplete", f"the phase is {status}" + (": " + "; ".join(p.problems) if p.problems else "")))
    c = p.client
    if fails_run(c):
        out.append(("client-bound", "the load generator was the bottleneck (client verdict bound; "
                    f"docs/client-health.md): {c.get('reason', '')}".rstrip(": ")))
    for d in ((result.get("compare") or {}).get("deltas") or []):
        if d.get("regressed") and d.get("run_id") in (run.get("cell"), run.get("run_id")) and name == (
                "run" if "run" in run.get("phases", {}) else "load"):
            out.append(("regression", d.get("why") or f"{d.get('metric')} regressed"))
    return out


def result_junit(result: dict) -> str:
    """One test suite for the campaign: a test case per run and phase, and one per
    consistency check stage (a failed check fails it), and the missing shards' run phases."""
    cases = []
    for r in result.get("runs") or []:
        for name, p in phases_of(r):
            missing = [m for m in result.get("missing_shards") or []
                       if m.get("run_id") == r["run_id"] and m.get("phase") == name]
            failures = phase_failures(result, r, name, p)
            failures += [("missing-shard", f"shard {m['shard']} missing: {m['reason']}") for m in missing]
            cases.append((f"{result.get('name')}.{r['run_id']}", name, float(p.duration_s or 0), failures))
        for stage, check in (r.get("checks") or {}).items():
            fails = [] if check.get("passed", True) else [
                ("check-failed", f"consistency check {stage} failed: "
                 + ("; ".join(str(f) for f in (check.get("failures") or [])) or "a condition failed"))]
            cases.append((f"{result.get('name')}.{r['run_id']}", f"check {stage}", 0.0, fails))
    compare = result.get("compare") or {}
    if compare.get("verdict") == "regressed":
        caught = {m for *_, f in cases for k, m in f if k == "regression"}
        rest = [r for r in compare.get("reasons") or [] if r and r not in caught]
        if rest:
            cases.append((f"{result.get('name')}.verdict", "regression verdict", 0.0,
                          [("regression", r) for r in rest]))
    root = ET.Element("testsuites", name="dbswarm")
    _suite(root, f"dbswarm campaign {result.get('campaign_id')}", cases)
    return _xml(root)


def compare_junit(doc: dict) -> str:
    """One test suite for the comparison: a test case per run and phase; its worse figures (or
    why it cannot be compared) fail it."""
    cases = []
    for p in doc["pairs"]:
        if not p["comparable"]:
            failures = [("not-comparable", w) for w in p["not_comparable"]]
        else:
            failures = [("regression", f"{d['figure']}: {d['verdict']}: {d.get('why', '')}")
                        for d in p["figures"] if d["verdict"] == "worse"]
        cases.append((f"compare.{p['run']}", p["phase"], 0.0, failures))
    root = ET.Element("testsuites", name="dbswarm compare")
    names = " vs ".join(", ".join(s["campaign_id"] or s["location"] for s in doc[k]) for k in ("baseline", "candidate"))
    _suite(root, f"dbswarm compare {names}", cases)
    return _xml(root)


def write_junit(path: str, text: str) -> None:
    target = Path(path)
    if target.parent and not target.parent.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")  # as its declaration says


def append_step_summary(markdown: str) -> Optional[str]:
    """Append to GitHub Actions' job summary when ``GITHUB_STEP_SUMMARY`` names its file; the
    path written, or None."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as f:
        f.write(redact_text(markdown).rstrip("\n") + "\n\n")
    return path


def campaign_ci_outputs(store: Store, campaign_id: str, junit_path: Optional[str]) -> None:
    """After `dbswarm run` / `resume`: the JUnit file from result.json, and summary.md appended
    to the step summary. A result that was never written gives a suite with one failed case."""
    try:
        result = store.get_json(campaign_key(store, campaign_id, RESULT_DOC))
    except (KeyError, ValueError, OSError):
        result = None
    if junit_path:
        if result is None:
            root = ET.Element("testsuites", name="dbswarm")
            _suite(root, f"dbswarm campaign {campaign_id}",
                   [(campaign_id, "result", 0.0, [("not-written", "result.json was not written")])])
            write_junit(junit_path, _xml(root))
        else:
            write_junit(junit_path, result_junit(result))
    try:
        summary = store.get_text(campaign_key(store, campaign_id, SUMMARY_DOC))
    except (KeyError, OSError):
        return
    append_step_summary(summary)
