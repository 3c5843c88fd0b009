"""Result files: white-paper tables, published figures, CSV shapes; the format round-trips."""
import csv
import io
import json

from dbswarm.aggregate import merge_phase as merge_run_phase
from dbswarm.measure import Measurement, Timeline
from dbswarm.reference import published_for
from dbswarm.report import CSV_FIELDS, result_csv, summary_markdown, timeseries_csv


def _shard_doc(ops, start):
    m = Measurement()
    for op, (count, lat) in ops.items():
        s = m.op(op)
        s.count = count
        s.histogram.record_value(lat, count)
    m.timeline = Timeline(start)
    m.timeline.ops = {op: [c // 4] * 4 for op, (c, _) in ops.items()}
    return {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": 0, "threads": 1,
            "binding": {"engine": "mongodb", "is_real_database": True},
            "measurement": m.to_dict(), "started_at": start, "ended_at": start + 4.0, "status": "done",
            "start_skew_s": 0.01}


def merge_phase(run, phase, docs, failures):
    return merge_run_phase(run["family"], run["workload"], run["shard_count"], phase, docs, failures)


def _result(label="4 vCPUs 16 GB", presets=("S2", "S6")):
    runs = []
    for i, preset in enumerate(presets):
        run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "preset": preset,
                                                                "recordcount": 1000, "warmuptime": 0}}
        docs = {0: _shard_doc({"READ": (400, 200), "UPDATE": (400, 900)}, 1000),
                1: _shard_doc({"READ": (400, 300), "UPDATE": (400, 1100)}, 1000)}
        phase = merge_phase(run, "run", docs, {})
        runs.append({"run_id": f"00{i}-{preset}", "index": i, "axes": {}, "threads": 8, "shard_count": 2,
                     "target": {"engine": "mongodb", "label": label, "url": None, "is_real_database": True,
                                "options": {"reference": {"version": "4.0", "topology": "Replica Set"}}},
                     "workload": {"family": "ycsb", "name": preset, "recordcount": 1000},
                     "phases": {"run": phase}})
    return {"schema_version": 1, "campaign_id": "c", "name": "n", "seed": 1, "status": "complete",
            "runs": runs, "missing_shards": []}


def test_merge_phase_exact_and_white_paper_table():
    result = _result()
    phase = result["runs"][0]["phases"]["run"]
    assert phase["operations_total"] == 1600 and phase["mix"] == {"READ": 0.5, "UPDATE": 0.5}
    assert phase["steady"]["seconds"] == 4 and phase["throughput"] == 400.0
    assert phase["read_latency"]["p50_us"] in (200, 300) and phase["read_latency"]["max_us"] >= 300
    md = summary_markdown(result)
    assert "| instance | threads | S2 | S6 |" in md and "| 4 vCPUs 16 GB | 8 | 400 | 400 |" in md
    assert "Published figures for the same instance class" in md
    assert "DDS (MongoDB) 4.0" in md and "Cluster" not in md.split("Published figures")[1].split("###")[0]


def test_published_figures_match_reference_rows():
    figures = published_for("4 vCPUs 16 GB", ["S1", "S6"], {"version": "4.0"})
    assert figures and all(k[1] == "4.0" for k in figures)
    assert all(v > 0 for f in figures.values() for v in f.values())
    assert published_for("no such class", ["S1"]) == {}


def test_csv_files_parse():
    result = _result()
    rows = list(csv.DictReader(io.StringIO(result_csv(result))))
    assert {r["operation"] for r in rows} == {"READ", "UPDATE"} and rows[0]["count"] == "800"
    # a family adds its columns only to results that hold its runs (this one: YCSB, which adds none)
    assert list(rows[0]) == CSV_FIELDS
    ts = list(csv.DictReader(io.StringIO(timeseries_csv(result))))
    assert sum(int(r["count"]) for r in ts) == 3200


def test_missing_shard_is_named():
    run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}
    phase = merge_phase(run, "run", {0: _shard_doc({"READ": (100, 50)}, 10), 1: None}, {1: "process died"})
    assert phase["status"] == "partial" and phase["shards"]["missing"] == [{"shard": 1, "reason": "process died"}]
    assert phase["operations_total"] == 100
    json.dumps(phase)


def test_abandoned_client_threads_are_counted_and_listed():
    result = _result(presets=("S2",))
    assert "Client threads abandoned" not in summary_markdown(result)
    run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}
    stuck = dict(_shard_doc({"READ": (100, 50)}, 10), segments=[{"abandoned_threads": 1}, {"abandoned_threads": 2}])
    phase = merge_phase(run, "run", {0: _shard_doc({"READ": (100, 50)}, 10), 1: stuck}, {})
    assert phase["abandoned_threads"] == {"count": 3, "per_shard": {1: 3}}
    result["runs"][0]["phases"]["run"] = phase
    md = summary_markdown(result)
    assert "**Client threads abandoned**" in md and "- run 000-S2, run phase: 3 (shard 1: 3)" in md
    json.dumps(phase)


def test_error_threshold_decides_complete_with_errors():
    run = {"shard_count": 1, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}

    def with_errors(n, key="READ:fatal:UndefinedTable"):
        doc = _shard_doc({"READ": (99, 50)}, 10)
        doc["measurement"]["errors"] = {key: n}
        return {0: doc}
    ok = merge_phase(run, "run", with_errors(1), {})        # 1 of 100 calls: at the 1 % threshold
    assert ok["status"] == "complete" and ok["error_rate"] == 0.01 and "error_problems" not in ok
    bad = merge_phase(run, "run", with_errors(2), {})       # 2 of 101
    assert bad["status"] == "complete_with_errors"
    assert bad["error_problems"] == ["READ: 2 of 101 calls failed (fatal: UndefinedTable ×2)"]
    resumed_load = merge_phase(run, "load", with_errors(50, "READ:duplicate:duplicate_key"), {})
    assert resumed_load["status"] == "complete" and resumed_load["error_rate"] == 0
    strict = merge_run_phase("ycsb", run["workload"], 1, "run", with_errors(1), {}, max_error_rate=0.0)
    assert strict["status"] == "complete_with_errors"
