"""Every bench script's imports of dbswarm resolve, those in the code it hands to a child
process as a string too. The package moved into packages by role once, and
bench/aggregation_cost.py's child went on importing ``dbswarm.service`` until the script was
next run, days later; nothing else runs the bench scripts' code before a benchmark does."""
import importlib
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
IMPORT = re.compile(r"^\s*from (dbswarm[\w.]*) import (?:\(([^)]*)\)|([\w, ]+))|^\s*import (dbswarm[\w.]*)", re.M)


def unresolved(text: str) -> list[str]:
    """The ``from dbswarm… import …`` / ``import dbswarm…`` lines of ``text`` that fail."""
    bad = []
    for m in IMPORT.finditer(text):
        module = m.group(1) or m.group(4)
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            bad.append(f"{module}: {exc}")
            continue
        names = (m.group(2) or m.group(3) or "").replace("\n", " ")
        for name in (n.split(" as ")[0].strip() for n in names.split(",")):
            if name and not name.startswith("#") and not hasattr(mod, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except ImportError:
                    bad.append(f"from {module} import {name}")
    return bad


def test_every_bench_script_s_dbswarm_imports_resolve():
    scripts = sorted(BENCH.glob("*.py"))
    assert len(scripts) > 10
    bad = {p.name: b for p in scripts if (b := unresolved(p.read_text()))}
    assert not bad


def test_an_import_of_a_moved_module_is_found_in_a_child_s_code():
    child = 'CHILD = r"""\nimport sys\nfrom dbswarm import service\nfrom dbswarm.results.store import (\n    LocalStore,\n    nothing_here,\n)\n"""\n'
    assert unresolved(child) == ["from dbswarm import service", "from dbswarm.results.store import nothing_here"]
    assert unresolved("from dbswarm.run.runtime import service\nimport dbswarm.results.store\n") == []
