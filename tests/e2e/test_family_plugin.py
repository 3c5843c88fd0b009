"""A workload family added without touching the library: defined here, registered by a
plugin module (DBSWARM_PLUGINS), run end to end by `dbswarm run` on SQLite — the state
machine, the worker processes, the aggregate and the reports all find it."""
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A key-value "read-only scan" family: load N records, then only short scans.
TOY_FAMILY = textwrap.dedent('''
    from typing import Literal

    from pydantic import Field

    from dbswarm.families import base as families
    from dbswarm.families.base import BatchLoader, Client, Family, Op, RunLimits, WorkloadModel


    class ScanOnlyWorkload(WorkloadModel):
        family: Literal["toyscan"] = "toyscan"
        table: str = "toytable"
        records: int = Field(300, ge=1)
        scans: int = Field(120, ge=1, description="scans over all threads")
        scanlength: int = Field(10, ge=1)


    class _Scans(Client):
        def __init__(self, w, ctx):
            self.w, self.rng, self.scan = w, ctx.rng, ctx.m.binding.scan
            self.op = Op("SCAN")  # one call, timed and recorded by the engine's loop

        def next_operation(self):
            start = f"k{int(self.rng.random() * self.w.records):06d}"
            return self.op, self.scan, (self.w.table, start, self.w.scanlength, None, False)


    class ToyScan(Family):
        name = "toyscan"
        model = ScanOnlyWorkload
        requires = "kv"

        def limits(self, w):
            return RunLimits(count=w.scans)

        def read_operations(self, w):
            return ("SCAN",)  # the run's read latency

        def write_operations(self, w):
            return ("INSERT",)  # the load's write latency

        def load_range(self, w):
            return 0, w.records

        def prepare(self, binding, w, stage):
            if stage == "before_load":
                binding.create_table(w.table, 1)
            elif stage == "cleanup":
                binding.drop_table(w.table)

        def run_client(self, w, ctx):
            return _Scans(w, ctx)

        def load_client(self, w, ctx, start, count):
            insert_batch = ctx.m.binding.insert_batch

            def batch(nxt, end):
                hi = min(end, nxt + 50)
                rows = [(f"k{i:06d}", {"field0": "v"}) for i in range(nxt, hi)]
                return hi, len(rows), insert_batch, (w.table, rows)
            return BatchLoader(ctx, start, count, batch)

        def phase_summary(self, w, phase, measurement, duration, window=None):
            if phase == "run":
                scans = measurement.operations.get("SCAN")
                return {"scans": scans.count if scans else 0}
            return None

        def report_tables(self, runs):
            lines = ["### Toy scans", ""]
            lines += [f"- {r['run_id']}: {r['phases']['run']['toyscan']['scans']} scans" for r in runs]
            return "\\n".join(lines) + "\\n"


    families.register(ToyScan())
''')


def _env(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "toy_scan_family.py").write_text(TOY_FAMILY)
    env = dict(os.environ, DBSWARM_PLUGINS="toy_scan_family")
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "plugins"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _cli(env, *args):
    return subprocess.run([sys.executable, "-m", "dbswarm.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=240)


@pytest.mark.slow
def test_a_family_from_a_plugin_runs_end_to_end(tmp_path):
    env = _env(tmp_path)
    campaign = tmp_path / "toy.yaml"
    campaign.write_text("name: toy\nseed: 5\nworkload: {family: toyscan, threads: 3}\n"
                        "matrix: {records: [300, 500]}\nfanout: {shards: 2}\n")
    checked = _cli(env, "validate", str(campaign))
    assert checked.returncode == 0, checked.stderr
    assert "toyscan" in checked.stdout and "2 runs" in checked.stdout
    schema = json.loads(_cli(env, "schema").stdout)
    assert "ScanOnlyWorkload" in schema["$defs"]

    proc = _cli(env, "run", str(campaign), "--results", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = next((tmp_path / "r").iterdir())
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "complete" and len(result["runs"]) == 2
    plan = json.loads((folder / "plan.json").read_text())
    for run, records in zip(result["runs"], (300, 500)):
        assert run["workload"]["family"] == "toyscan" and run["shard_count"] == 2
        load, scan = run["phases"]["load"], run["phases"]["run"]
        assert load["operations"]["INSERT"]["count"] == records
        assert scan["operations"]["SCAN"]["count"] == 120 and scan["toyscan"] == {"scans": 120}
        assert scan["errors_total"] == 0
    # both runs use the campaign's one SQLite file: the second run's prepare made the table anew
    url = plan["runs"][-1]["target"]["url"]
    assert sqlite3.connect(url).execute("SELECT COUNT(*) FROM toytable").fetchone()[0] == 500
    summary = (folder / "summary.md").read_text()
    assert "### Toy scans" in summary and "120 scans" in summary


def test_an_unknown_family_names_the_known_ones(tmp_path):
    env = _env(tmp_path)
    campaign = tmp_path / "bad.yaml"
    campaign.write_text("workload: {family: toyscn}\n")
    proc = _cli(env, "validate", str(campaign))
    assert proc.returncode == 2
    assert "workload.family: unknown family 'toyscn'" in proc.stderr and "toyscan" in proc.stderr
