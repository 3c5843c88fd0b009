"""scripts/check-limits (run by scripts/lint in CI) holds the docs to their line limits and
bench/results to one record per script: the repository passes, and a tree one line over any
limit, or with two records of one script, fails naming the file."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check-limits"


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=60)


def _tree(root: Path, lines: dict) -> Path:
    """A repository of files (relative path -> number of lines)."""
    for name, n in lines.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n" * n)
    return root


def test_the_repository_is_within_its_limits():
    res = _check(ROOT)
    assert res.returncode == 0, res.stderr


LIMITS = {"README.md": 150, "BENCHMARKS.md": 250, "docs/guide.md": 300, "docs/decisions/0001-x.md": 80}


def test_files_just_under_their_limits_pass(tmp_path):
    root = _tree(tmp_path, {name: n - 1 for name, n in LIMITS.items()})
    assert _check(root).returncode == 0


def test_each_file_at_its_limit_fails_by_name(tmp_path):
    res = _check(_tree(tmp_path, LIMITS))
    assert res.returncode == 1
    for name, n in LIMITS.items():
        assert f"{name}: {n} lines" in res.stderr


def test_two_records_of_one_script_fail(tmp_path):
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    for name in ("vs_ycsb-20261128-170143.json", "vs_ycsb-20261129-024240.json", "vs_sysbench-20261129-143229.json"):
        (results / name).write_text("{}\n")
    res = _check(tmp_path)
    assert res.returncode == 1
    assert "2 records of vs_ycsb" in res.stderr and "vs_sysbench" not in res.stderr
