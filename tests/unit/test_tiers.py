"""tests/tiers.py names real tests and folders: a renamed test would otherwise join the fast
tier unnoticed."""
import re

from tests import tiers
from tests.conftest import ROOT


def test_every_listed_slow_test_and_file_exists():
    for entry in tiers.SLOW_TESTS:
        path, function = entry.split("::")
        source = (ROOT / "tests" / path).read_text()
        assert re.search(rf"^def {function}\(", source, re.M), entry
    for folder in tiers.SLOW_FOLDERS:
        assert (ROOT / folder).is_dir(), folder


def test_the_tiers_split_by_folder_file_and_test():
    assert tiers.is_slow("tests/e2e/test_compare.py::test_x")
    assert tiers.is_slow("tests/faults/test_hostile_input.py::test_x[a]")
    assert not tiers.is_slow("tests/unit/test_bad_input.py::test_x[a]")
    assert tiers.is_slow("tests/unit/test_verdict.py::test_no_regression_on_30_noisy_runs_of_one_distribution")
    assert tiers.is_slow("tests/unit/test_tpcc.py::test_each_condition_fails_when_broken_and_names_the_place[3.3.2.1]")
    assert not tiers.is_slow("tests/unit/test_tpcc.py::test_something_else")
