"""A full local campaign on the embedded SQLite target, shards in real OS processes."""
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from dbswarm.run.runtime.local import run_campaign

ROOT = Path(__file__).resolve().parents[2]


def _result(out):
    return json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())


def test_full_campaign_mix_and_exact_totals(tmp_path):
    campaign = {
        "name": "e2e", "seed": 5,
        "workload": {"recordcount": 5000, "operationcount": 20000, "threads": 6},
        "fanout": {"shards": 3},
        "matrix": {"workload": [{"preset": "S3"}, {"preset": "f"},
                                {"family": "sysbench", "tables": 2, "table_size": 1000, "events": 600}]},
    }
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert out["status"] == "complete"
    result = _result(out)
    assert result["schema_version"] == 1 and result["missing_shards"] == []
    folder = Path(out["store"]) / out["campaign_id"]
    for name in ("campaign.json", "plan.json", "result.json", "result.csv", "timeseries.csv", "summary.md",
                 "report.html"):
        assert (folder / name).stat().st_size > 0, name

    s3 = result["runs"][0]["phases"]["run"]
    assert s3["operations_total"] == 20000
    for op, want in (("READ", 0.65), ("UPDATE", 0.10), ("INSERT", 0.25)):
        assert abs(s3["mix"][op] - want) < 0.01, (op, s3["mix"])
    f = result["runs"][1]["phases"]["run"]
    assert abs(f["mix"]["READ"] - 0.5) < 0.01 and abs(f["mix"]["READ-MODIFY-WRITE"] - 0.5) < 0.01

    # the merged total equals the sum over the shard files, for every phase
    for run in result["runs"]:
        for phase, merged in run["phases"].items():
            shard_files = sorted(glob.glob(str(folder / "runs" / run["run_id"] / phase / "shard-*.json")))
            assert len(shard_files) == 3
            total = sum(sum(o["count"] for o in json.loads(Path(p).read_text())["measurement"]["operations"].values())
                        for p in shard_files)
            assert merged["operations_total"] == total
            assert sum(sum(seq) for seq in merged["timeline"]["ops"].values()) == total
    assert result["runs"][0]["phases"]["load"]["operations_total"] == 5000
    sb = result["runs"][2]["phases"]["run"]["sysbench"]
    assert sb["transactions"] == 600 and sb["queries_other"] >= 1200
    summary = (folder / "summary.md").read_text()
    assert "| instance | threads | S3 | f |" in summary and "oltp_read_write" in summary


def test_killed_shard_is_named_and_others_kept(tmp_path, monkeypatch):
    progress = tmp_path / "progress"
    progress.mkdir()
    monkeypatch.setenv("DBSWARM_PROGRESS_DIR", str(progress))
    campaign = {"name": "kill", "workload": {"preset": "S6", "recordcount": 2000, "operationcount": 0,
                                            "maxexecutiontime": 4, "threads": 3},
                "fanout": {"shards": 3}}
    killed = {}

    def killer():
        deadline = time.time() + 60
        while time.time() < deadline:
            for path in glob.glob(str(progress / "*.run.1.json")):
                try:
                    info = json.loads(Path(path).read_text())
                except ValueError:
                    continue
                if info.get("done", 0) > 0 and info.get("pid"):
                    os.kill(info["pid"], signal.SIGKILL)
                    killed["pid"] = info["pid"]
                    return
            time.sleep(0.1)
    t = threading.Thread(target=killer)
    t.start()
    out = run_campaign(campaign, str(tmp_path / "results"), show_progress=False, log=lambda *_: None)
    t.join()
    assert killed, "the run phase never reported progress"
    result = _result(out)
    assert out["status"] == "partial" and result["status"] == "partial"
    missing = result["missing_shards"]
    assert [(m["phase"], m["shard"]) for m in missing] == [("run", 1)]
    assert "died" in missing[0]["reason"] or "signal" in missing[0]["reason"] or "exit" in missing[0]["reason"]
    run = result["runs"][0]["phases"]["run"]
    assert run["shards"]["complete"] == [0, 2]
    folder = Path(out["store"]) / out["campaign_id"] / "runs" / result["runs"][0]["run_id"] / "run"
    kept = sum(sum(o["count"] for o in json.loads((folder / f"shard-{i}.json").read_text())
                   ["measurement"]["operations"].values()) for i in (0, 2))
    assert run["operations_total"] == kept > 0
    assert "shard 1" in (folder.parents[2] / "summary.md").read_text()


def test_cli_run_prints_progress_and_summary(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_text("name: cli\nworkload: {recordcount: 1000, operationcount: 1000, threads: 2}\n"
                    "matrix: {preset: [S2, S6]}\n")
    env = dict(os.environ, COLUMNS="160")
    env.pop("DBSWARM_PROGRESS_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "dbswarm.cli", "run", str(spec), "--results", str(tmp_path / "r")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ops/s" in proc.stderr and "━" in proc.stderr          # the progress bar
    assert "| instance | threads | S2 | S6 |" in proc.stdout       # the white-paper table
    assert "result.json: " in proc.stdout and "open the report in a browser: file://" in proc.stdout
    cid = next((tmp_path / "r").iterdir()).name
    shown = subprocess.run([sys.executable, "-m", "dbswarm.cli", "show", str(tmp_path / "r" / cid)],
                           capture_output=True, text=True, timeout=60)
    assert "| instance | threads | S2 | S6 |" in shown.stdout


def test_cli_validate_reports_bad_field(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text("workload: {preset: S42}\n")
    proc = subprocess.run([sys.executable, "-m", "dbswarm.cli", "validate", str(spec)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "workload.preset: unknown preset 'S42'" in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "dbswarm.cli", "validate", str(ROOT / "examples" / "demo.yaml")],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "5 runs" in ok.stdout


def test_noop_results_are_labelled_and_hold_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("DBSWARM_TEST_SECRET", "s3cr3t-value-xyz")
    campaign = {"name": "noop", "target": {"engine": "noop", "url": "noop://user@host/db",
                                           "password": {"env": "DBSWARM_TEST_SECRET"}},
                "workload": {"preset": "a", "recordcount": 1000, "operationcount": 5000, "threads": 2}}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=lambda *_: None)
    folder = Path(out["store"]) / out["campaign_id"]
    for path in folder.rglob("*"):
        if path.is_file():
            assert b"s3cr3t-value-xyz" not in path.read_bytes(), path
    assert "noop" in (folder / "summary.md").read_text()
    assert _result(out)["runs"][0]["target"]["is_real_database"] is False


def test_a_run_that_measured_only_errors_is_not_complete(tmp_path):
    """The run phase inserts keys an earlier campaign loaded (its recordcount was 2,000, this
    one's is 1,000: a load past recordcount in one campaign is refused by validation): every
    INSERT is a duplicate key. That measured failures, not the workload: status
    complete_with_errors, exit 5, and summary.md says which operation and why."""
    db = tmp_path / "dup.db"
    spec = tmp_path / "dup.yaml"

    def run_spec(text, results):
        spec.write_text(text)
        return subprocess.run([sys.executable, "-m", "dbswarm.cli", "run", str(spec), "--results", str(results),
                               "--quiet"], capture_output=True, text=True, timeout=300)
    # the earlier campaign, in this process (its exit code is not what this test is about)
    loaded = run_campaign({"name": "dup-load", "seed": 1, "target": {"engine": "sqlite", "url": str(db)},
                           "workload": {"preset": "S1", "recordcount": 2000, "threads": 2}, "fanout": {"shards": 1},
                           "phases": ["prepare", "load"]}, str(tmp_path / "r0"), show_progress=False,
                          log=lambda *_: None)
    assert loaded["status"] == "complete", loaded
    load = _result(loaded)["runs"][0]["phases"]["load"]
    assert load["status"] == "complete" and load["error_rate"] == 0  # 2,000 keys written
    proc = run_spec(f"name: dup\nseed: 1\ntarget: {{engine: sqlite, url: '{db}'}}\nworkload: {{preset: S1, "
                    "recordcount: 1000, operationcount: 400, threads: 2}\nfanout: {shards: 1}\nphases: [run]\n",
                    tmp_path / "r")
    assert proc.returncode == 5, proc.stdout + proc.stderr
    assert "complete_with_errors" in proc.stderr and "max_error_rate" in proc.stderr
    folder = next((tmp_path / "r").iterdir())
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "complete_with_errors"
    run = result["runs"][0]["phases"]["run"]
    assert run["status"] == "complete_with_errors" and run["error_rate"] == 1.0
    assert run["errors"] == {"INSERT:duplicate:duplicate_key": 400}
    problem, = run["error_problems"]
    assert problem.startswith("INSERT: 400 of 400 calls failed (duplicate: duplicate_key ×400); the table already "
                              "holds the run phase's insert keys")
    assert "set recordcount to the table's current record count" in problem  # what to set
    summary = (folder / "summary.md").read_text()
    head = summary.split("###")[0]
    assert "**Errors above the threshold**" in head and "INSERT: 400 of 400 calls failed" in head
