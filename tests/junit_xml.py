"""The JUnit XML schema CI systems read, checked by a parser (tests of `--junit`).

The schema is Jenkins xUnit's junit-10.xsd, which GitLab's and GitHub's test reporters follow;
its content model is encoded here element by element (no XSD engine is installed): which
elements may hold which, in what order, and with which attributes (none other allowed), with
the counts typed and adding up. tests/unit/test_junit_xml.py shows it refuses what breaks it."""
import re
import xml.etree.ElementTree as ET
from pathlib import Path

# element: (required attributes, allowed attributes)
ATTRIBUTES = {
    "testsuites": (set(), {"name", "time", "tests", "failures", "disabled", "errors"}),
    "testsuite": ({"name", "tests"}, {"name", "tests", "failures", "errors", "time", "disabled", "skipped",
                                      "timestamp", "hostname", "id", "package"}),
    "testcase": ({"name"}, {"name", "assertions", "time", "classname", "status"}),
    "failure": (set(), {"message", "type"}),
    "error": (set(), {"message", "type"}),
    "skipped": (set(), {"message"}),
    "properties": (set(), set()),
    "property": ({"name", "value"}, {"name", "value"}),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}
# element: its children as a regular expression over their tags, in document order
CONTENT = {
    "testsuites": r"(testsuite )*",
    "testsuite": r"(properties )?(testcase )*(system-out )?(system-err )?",
    "testcase": r"(skipped )?(error )*(failure )*(system-out )*(system-err )*",
    "properties": r"(property )*",
}
INTEGERS = {"tests", "failures", "errors", "disabled", "skipped", "assertions"}


class JUnitError(AssertionError):
    """A document the schema refuses: the element and what is wrong."""


def _valid(el: ET.Element, where: str) -> None:
    if el.tag not in ATTRIBUTES:
        raise JUnitError(f"{where}: element <{el.tag}> is not in the schema")
    required, allowed = ATTRIBUTES[el.tag]
    if missing := required - set(el.attrib):
        raise JUnitError(f"{where}: <{el.tag}> lacks {sorted(missing)}")
    if unknown := set(el.attrib) - allowed:
        raise JUnitError(f"{where}: <{el.tag}> has attributes the schema does not allow: {sorted(unknown)}")
    for attr, value in el.attrib.items():
        if attr in INTEGERS and not re.fullmatch(r"\d+", value):
            raise JUnitError(f"{where}: <{el.tag} {attr}={value!r}> is not a count")
        if attr == "time" and not re.fullmatch(r"\d+(\.\d+)?", value):
            raise JUnitError(f"{where}: <{el.tag} time={value!r}> is not a number of seconds")
    tags = "".join(c.tag + " " for c in el)
    if not re.fullmatch(CONTENT.get(el.tag, ""), tags):
        raise JUnitError(f"{where}: <{el.tag}> holds [{tags.strip()}], not what the schema allows")
    for i, child in enumerate(el):
        _valid(child, f"{where}/{child.tag}[{i}]")


def check_junit(path: Path) -> ET.Element:
    """The document valid by junit-10.xsd (above), every case named with its classname, every
    failure with a type, a message and its reason as text, and counts that add up."""
    root = ET.parse(path).getroot()  # a parser: well-formed XML, or ParseError
    if root.tag != "testsuites":
        raise JUnitError(f"the root is <{root.tag}>, not <testsuites>")
    _valid(root, "testsuites")
    total = failures = 0
    for suite in root:
        cases = suite.findall("testcase")
        if int(suite.get("tests")) != len(cases):
            raise JUnitError(f"suite {suite.get('name')!r}: tests={suite.get('tests')}, {len(cases)} test cases")
        failed = 0
        for case in cases:
            if not case.get("classname") or case.get("time") is None:
                raise JUnitError(f"test case {case.get('name')!r} lacks its classname or time")
            for f in case.findall("failure"):
                if not (f.get("message") and f.get("type") and f.text):
                    raise JUnitError(f"test case {case.get('name')!r}: a failure without message, type or text")
            failed += case.find("failure") is not None
        if int(suite.get("failures")) != failed:
            raise JUnitError(f"suite {suite.get('name')!r}: failures={suite.get('failures')}, {failed} failed")
        total += len(cases)
        failures += failed
    if int(root.get("tests")) != total or int(root.get("failures")) != failures:
        raise JUnitError(f"testsuites: tests={root.get('tests')} failures={root.get('failures')}, "
                         f"the suites hold {total} and {failures}")
    return root
