"""The JUnit schema check (tests/junit_xml.py, junit-10.xsd's content model) refuses what CI
systems' readers refuse, and `--junit`'s writer stays within it whatever a message holds."""
import xml.etree.ElementTree as ET

import pytest

from dbswarm.results.report import junit as J
from tests.junit_xml import JUnitError, check_junit

VALID = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="dbswarm" tests="2" failures="1" errors="0">
  <testsuite name="s" tests="2" failures="1" errors="0" skipped="0" time="1.500">
    <testcase classname="c.000" name="load" time="0.500"/>
    <testcase classname="c.000" name="run" time="1.000"><failure message="m" type="regression">why</failure></testcase>
  </testsuite>
</testsuites>
"""


def _doc(tmp_path, text):
    path = tmp_path / "report.xml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_valid_document_passes(tmp_path):
    assert len(list(check_junit(_doc(tmp_path, VALID)).iter("testcase"))) == 2


@pytest.mark.parametrize("edit, says", [
    (('<testsuite name="s" tests="2"', '<testsuite tests="2"'), "lacks ['name']"),
    (('classname="c.000" name="load"', 'classname="c.000" name="load" result="ok"'), "does not allow: ['result']"),
    (('<failure message="m" type="regression">why</failure>',
      '<system-out>x</system-out><failure message="m" type="regression">why</failure>'), "not what the schema allows"),
    (('<testcase classname="c.000" name="load" time="0.500"/>', '<case classname="c.000" name="load"/>'),
     "holds [case testcase], not what the schema allows"),
    (('tests="2" failures="1" errors="0" skipped', 'tests="two" failures="1" errors="0" skipped'), "not a count"),
    (('time="1.000"', 'time="1 s"'), "not a number of seconds"),
    (('<testsuite name="s" tests="2" failures="1"', '<testsuite name="s" tests="2" failures="0"'), "failures=0"),
    (('<testsuites name="dbswarm" tests="2"', '<testsuites name="dbswarm" tests="3"'), "tests=3"),
    (('<failure message="m" type="regression">why</failure>', '<failure type="regression">why</failure>'),
     "without message"),
])
def test_what_the_schema_refuses_is_refused(tmp_path, edit, says):
    old, new = edit
    assert old in VALID
    with pytest.raises(JUnitError, match=says.replace("[", r"\[").replace("]", r"\]")):
        check_junit(_doc(tmp_path, VALID.replace(old, new)))


def test_a_message_with_characters_xml_cannot_hold(tmp_path):
    """A driver's error with a NUL, a terminal colour (ESC) and a lone surrogate: the report
    is still XML a parser reads, the characters written as escapes, the rest as it was."""
    doc = {"name": "x", "campaign_id": "x-1", "runs": [{"run_id": "000", "phases": {"run": {
        "status": "complete_with_errors", "error_problems": ["ERROR \x1b[31mbad\x1b[0m \x00 é \ud800 done"]}}}]}
    path = tmp_path / "run.xml"
    J.write_junit(str(path), J.result_junit(doc))
    failure = check_junit(path).find(".//failure")
    assert failure.text == "ERROR \\x1b[31mbad\\x1b[0m \\x00 é \\ud800 done" == failure.get("message")
    with pytest.raises(ET.ParseError):  # what the writer avoids: the raw characters are not XML
        ET.fromstring("<a>\x1b</a>")
