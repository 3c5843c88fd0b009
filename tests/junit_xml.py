"""The JUnit XML structure CI systems read, checked by a parser (tests of `--junit`)."""
import xml.etree.ElementTree as ET
from pathlib import Path


def check_junit(path: Path) -> ET.Element:
    """The JUnit XML structure CI systems read (Jenkins' junit-10.xsd, which GitLab and GitHub's
    reporters follow): testsuites > testsuite[name, tests, failures, errors, time] > testcase[name,
    classname, time] > failure[message, type] with text; counts that add up."""
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    total = failures = 0
    for suite in root:
        assert suite.tag == "testsuite"
        for attr in ("name", "tests", "failures", "errors", "time"):
            assert suite.get(attr) is not None, attr
        cases = list(suite)
        assert all(c.tag == "testcase" for c in cases)
        assert int(suite.get("tests")) == len(cases)
        failed = 0
        for case in cases:
            assert case.get("name") and case.get("classname") and float(case.get("time")) >= 0
            for child in case:
                assert child.tag in ("failure", "error", "skipped", "system-out", "system-err")
                if child.tag == "failure":
                    assert child.get("message") and child.get("type") and child.text
            failed += any(child.tag == "failure" for child in case)
        assert int(suite.get("failures")) == failed
        total += len(cases)
        failures += failed
    assert int(root.get("tests")) == total and int(root.get("failures")) == failures
    return root
