"""Every workload family through the same contract: YCSB, sysbench, TPC-C and the toy family
of tests/e2e/test_family_plugin.py (registered here as its plugin would register it). On
the embedded SQLite target, where every family runs; each check says what a family must do
for the worker, the plan, the aggregate and the reports to stay right without knowing it:

- the load split covers the load range: contiguous, disjoint, every unit once, whatever the
  threads (the family's own split and the plan's shards alike);
- resuming equals an uninterrupted run: a campaign whose shard calls stop every few tens of
  milliseconds and go on from their checkpoints measures the same operations, and leaves the
  same rows, as one that never stops;
- the loop is the reference: the engine's operation loop, called as the worker calls it (up
  to a number of units per call), makes the same calls, draws, measurement and database
  changes as the reference implementation of tests/unit/test_operation_loop.py (one
  operation at a time through Measured's plain call / event / call_rows);
- summary, CSV and report render a merged result: two shards merged, the family's own table
  in summary.md and report.html, its run in result.csv.
"""
from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
import types
from pathlib import Path

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.campaign.plan import plan_run
from dbswarm.campaign.spec import load_campaign
from dbswarm.engine.calls import Measured
from dbswarm.engine.loop import OperationLoop
from dbswarm.engine.parallel import run_in_threads
from dbswarm.families import base as families
from dbswarm.families.base import ThreadContext
from dbswarm.families.stream import RandomStream
from dbswarm.measure.recorder import Recorder
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests.e2e.test_family_plugin import TOY_FAMILY
from tests.unit.test_operation_loop import reference

# small, count-limited workloads (a time cap far away), two threads over two shards; a rate
# where the family has one, so that a run phase lasts a few tenths of a second on any machine
WORKLOADS = {
    "ycsb": {"family": "ycsb", "preset": "a", "recordcount": 300, "operationcount": 600, "target": 400,
             "threads": 2},
    "sysbench": {"family": "sysbench", "test": "oltp_read_write", "tables": 1, "table_size": 300, "events": 40,
                 "rate": 20, "time": 600, "threads": 2},
    "tpcc": {"family": "tpcc", "warehouses": 1, "transactions": 40, "time": 600, "rampup": 0, "check": [],
             "threads": 2},
    "toyscan": {"family": "toyscan", "records": 300, "scans": 20000, "threads": 2},
    "custom": {"family": "custom", "operations": 40, "rate": 20, "time": 600, "threads": 2,
               "tables": {"accounts": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                                   {"name": "balance", "type": "int"},
                                                   {"name": "note", "type": "varchar(20)"}],
                                       "load": {"rows": 300, "key": "id", "batch": 40,
                                                "columns": {"balance": "amount", "note": "note"}}},
                          # no key: the loop's check runs again on the run's rows
                          "history": {"ddl": {d: "CREATE TABLE history (aid BIGINT, delta INT, seq BIGINT)"
                                              for d in ("sqlite", "postgresql", "mysql")},
                                      "indexes": ["CREATE INDEX history_aid ON history (aid)"]}},
               "generators": {"aid": {"type": "zipfian", "min": 1, "max": 300},
                              "amount": {"type": "uniform", "min": -500, "max": 500},
                              "note": {"type": "string", "min_length": 5, "max_length": 20},
                              "hid": {"type": "unique"}},
               "transactions": {
                   "pay": {"weight": 3, "statements": [
                       {"sql": "SELECT balance FROM accounts WHERE id = :aid", "capture": ["bal"]},
                       {"sql": "UPDATE accounts SET balance = :bal + :amount WHERE id = :aid"},
                       {"sql": "INSERT INTO history (aid, delta, seq) VALUES (:aid, :amount, :hid)"}]},
                   "look": {"weight": 1, "statements": [{"sql": "SELECT note FROM accounts WHERE id = :aid"}]}}},
}
# the cut campaign's shard calls: each stops this soon (service.run_shard's least: 0.5 s) and the
# next goes on from its checkpoint
CALL_SECONDS = 0.5
# what summary.md's section of each family begins with (its report_tables)
TABLE_HEADING = {"ycsb": "Throughput (OPS", "sysbench": "### sysbench OLTP", "tpcc": "### TPC-C",
                 "toyscan": "### Toy scans", "custom": "### Custom workload"}
FAMILIES = list(WORKLOADS)
# each workload's count of run-phase operations (what a run stops after)
RUN_COUNT = {"ycsb": "operationcount", "sysbench": "events", "tpcc": "transactions", "toyscan": "scans",
             "custom": "operations"}
STEPS = 30  # units of the loop-and-reference check


@pytest.fixture(scope="module", autouse=True)
def toy_family():
    """The toy family of the plugin test, registered in this process as its plugin module
    registers it; unregistered afterwards (other tests see the built-in families only)."""
    module = sys.modules["toy_scan_family"] = types.ModuleType("toy_scan_family")
    exec(compile(TOY_FAMILY, "toy_scan_family.py", "exec"), module.__dict__)
    yield families.get("toyscan")
    families._REGISTRY.pop("toyscan", None)
    sys.modules.pop("toy_scan_family", None)


def _campaign(name: str, workload: dict, phases=("prepare", "load", "run"), shards: int = 2) -> dict:
    return {"name": f"contract-{name}", "seed": 11, "target": {"engine": "sqlite"}, "workload": dict(workload),
            "fanout": {"shards": shards}, "phases": list(phases)}


def _run(campaign: dict, results: Path, max_call_seconds: float | None = None) -> tuple[dict, dict]:
    """The campaign through the service's steps in this process, every shard to completion;
    with ``max_call_seconds``, each shard call stops that soon and the next call goes on from
    its checkpoint (as a continuation and `dbswarm resume` do). -> (result.json, calls per phase)."""
    calls = {"load": 0, "run": 0}

    def one_shard(event):
        checkpoint = None
        while True:
            ev = dict(event, checkpoint=checkpoint)
            if max_call_seconds:
                ev["max_call_seconds"] = max_call_seconds
            out = service.run_shard(ev)
            calls[event["phase"]] += 1
            if out["status"] == "done":
                return
            assert calls[event["phase"]] < 2000, "a shard never finished"
            checkpoint = out["checkpoint"]

    def run_shards(event, shard_count):
        run_in_threads(lambda i: one_shard(dict(event, shard=i)), [(i,) for i in range(shard_count)])

    agg = service.run_steps(campaign, str(results), run_shards, lead_seconds=0.1)
    store = open_store(agg["store"])
    return json.loads(store.get_text(agg["result_key"])), calls


def _folder(result: dict, results: Path) -> Path:
    return results / result["campaign_id"]


def _database(doc: dict, results: Path) -> Path:
    """The campaign's SQLite file (plan.json's target)."""
    plan = json.loads((_folder(doc, results) / "plan.json").read_text())
    return Path(plan["runs"][0]["target"]["url"])


@pytest.fixture(scope="module")
def merged_run(tmp_path_factory):
    """name -> (result.json, results folder) of the family's campaign (prepare, load and run over
    two shards), run once per family in this module: the summary test reads its result, the
    step-and-loop test starts from its database (a TPC-C warehouse is 600,000 rows to load)."""
    runs: dict = {}

    def get(name: str) -> tuple[dict, Path]:
        if name not in runs:
            results = tmp_path_factory.mktemp(f"merged-{name}")
            runs[name] = (_run(_campaign(name, WORKLOADS[name]), results)[0], results)
        return runs[name]
    return get


_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d")


def _rows(path) -> dict:
    """Every table's rows, sorted, timestamps left out (TPC-C stamps rows with the clock)."""
    con = sqlite3.connect(str(path))
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'dbswarm_%'")]
        out = {}
        for t in sorted(tables):
            rows = [tuple(None if isinstance(v, str) and _TIMESTAMP.match(v) else v for v in r)
                    for r in con.execute(f"SELECT * FROM {t}")]
            out[t] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def _counts(phase: dict) -> dict:
    return {op: s["count"] for op, s in (phase.get("operations") or {}).items()}


# ---- the load split --------------------------------------------------------------------------

def _covers(ranges, lo: int, units: int) -> None:
    ranges = sorted((start, count) for start, count in ranges if count)
    assert ranges, (lo, units)
    assert ranges[0][0] == lo, ranges
    for (s0, c0), (s1, _) in zip(ranges, ranges[1:]):
        assert s1 == s0 + c0, ranges  # contiguous and disjoint
    assert sum(c for _, c in ranges) == units, ranges


@pytest.mark.parametrize("name", FAMILIES)
def test_the_load_split_covers_the_range(name):
    family = families.get(name)
    w = family.workload(WORKLOADS[name])
    lo, units = family.load_range(w)
    assert units > 0
    for threads in (1, 2, 3, 7, 16):
        split = family.split_load(w, threads)
        assert len(split) == threads, (threads, split)
        _covers(split, lo, units)
    # the plan's shards carry the same ranges: every thread's, and the shard's own span
    for shards in (1, 2, 3):
        campaign, runs = load_campaign({**_campaign(name, {**WORKLOADS[name], "threads": 5}),
                                        "fanout": {"shards": shards}})
        plan = plan_run(campaign, runs[0])
        assert len(plan) == shards and sum(s.threads for s in plan) == 5
        _covers([tuple(t) for s in plan for t in s.thread_load], lo, units)
        _covers([(s.load_start, s.load_count) for s in plan], lo, units)


# ---- resume equals an uninterrupted run ------------------------------------------------------

def _cut_run(name: str, workload: dict, results: Path) -> tuple[dict, dict, dict, Path]:
    """The campaign with its run phase cut into calls of CALL_SECONDS. A run phase that a fast
    moment of the machine finishes within one call has nothing to resume (TPC-C's transactions
    have no rate: 40 of them on SQLite once took under 0.5 s): its count is doubled then and the
    campaign run again, up to 4 times. -> (workload, result.json, calls per phase, folder)."""
    for attempt in range(5):
        folder = results / f"cut-{attempt}"
        cut, calls = _run(_campaign(name, workload, shards=1), folder, max_call_seconds=CALL_SECONDS)
        if calls["run"] > 1 or attempt == 4:
            return workload, cut, calls, folder
        key = RUN_COUNT[name]
        workload = {**workload, key: workload[key] * 2}
    raise AssertionError("unreachable")


@pytest.mark.parametrize("name", FAMILIES)
def test_resuming_equals_an_uninterrupted_run(name, tmp_path):
    """One client thread (its rows then depend on its draws alone, not on how two threads
    interleave), its operations spread over a few seconds by the workload's rate (the toy
    family and TPC-C: by their count), the run phase cut into calls of CALL_SECONDS."""
    one = {**WORKLOADS[name], "threads": 1}
    one.update({k: v // 2 for k, v in one.items() if k in ("operationcount", "target", "events")})
    if "scans" in one:  # the toy family's count: 20,000 scans took 0.6-0.8 s on a loaded machine,
        one["scans"] *= 4  # a quiet one may finish them in one CALL_SECONDS call (no resume to test)
    one, cut, cut_calls, cut_folder = _cut_run(name, one, tmp_path)
    whole, whole_calls = _run(_campaign(name, one, shards=1), tmp_path / "whole")
    assert whole["status"] == cut["status"] == "complete", (whole["status"], cut["status"])
    assert whole_calls == {"load": 1, "run": 1}  # one call per phase
    assert cut_calls["run"] > 1, cut_calls  # the cut campaign's run went on from checkpoints
    for phase in ("load", "run"):
        a, b = whole["runs"][0]["phases"][phase], cut["runs"][0]["phases"][phase]
        assert a["errors_total"] == b["errors_total"] == 0, (a.get("errors"), b.get("errors"))
        assert _counts(a) == _counts(b) and sum(_counts(a).values()) > 0, (phase, _counts(a), _counts(b))
    # the same rows written and changed (the threads' draws continued across the calls)
    assert _rows(_database(whole, tmp_path / "whole")) == _rows(_database(cut, cut_folder))


# ---- the loop is the reference ----------------------------------------------------------------

def _client(family, w, path: Path, seed: int):
    b = bindings.get("sqlite")(Connection(engine="sqlite", url=str(path), password=None, options={},
                                          display="sqlite"))
    b.connect()
    rng = RandomStream(seed)
    m = Measured(b, Recorder())
    return family.run_client(w, ThreadContext(m=m, rng=rng, thread=0, threads=1)), m, rng, b


@pytest.mark.parametrize("name", FAMILIES)
def test_the_loop_does_what_the_reference_does(name, tmp_path, merged_run):
    family = families.get(name)
    source = _database(*merged_run(name))  # loaded, then run: both ways start from a copy of it
    w = family.workload(WORKLOADS[name])
    outcomes = []
    for way in ("reference", "loop"):
        path = tmp_path / f"{way}.db"
        shutil.copy(source, path)
        client, m, rng, b = _client(family, w, path, seed=7)
        if way == "reference":
            done = reference(client, m, STEPS)
        else:
            loop = OperationLoop(client, m)
            far = 2 ** 62  # no deadline: max_units decides
            done = 0
            for chunk in (1, 7, STEPS - 8):
                if not loop.exhausted:
                    done += loop.run(far, chunk)
        client.close()
        b.close()
        measured = m.rec.measurement()
        outcomes.append((done, {op: s.count for op, s in measured.operations.items()}, dict(measured.errors),
                         rng.position, rng.random(), _rows(path)))
    assert outcomes[0][0] > 0 and sum(outcomes[0][1].values()) > 0, outcomes[0][:3]
    assert outcomes[0] == outcomes[1], ([o[:5] for o in outcomes])


# ---- summary, CSV and report render a merged result ------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
def test_summary_csv_and_report_render_a_merged_result(name, merged_run):
    result, results = merged_run(name)
    folder = _folder(result, results)
    run = result["runs"][0]
    assert result["status"] == "complete" and run["workload"]["family"] == name and run["shard_count"] == 2
    family = families.get(name)
    w = family.workload(WORKLOADS[name])
    reads, writes = family.read_operations(w), family.write_operations(w)
    for phase in ("load", "run"):
        p = run["phases"][phase]
        assert p["shards"]["expected"] == 2 and len(p["shards"]["complete"]) == 2, p["shards"]
        # every operation is declared a read or a write, and the merged latencies hold them all
        assert set(p["operations"]) <= set(reads) | set(writes), (phase, sorted(p["operations"]), reads, writes)
        assert not set(reads) & set(writes), (reads, writes)
        for kind, ops in (("read", reads), ("write", writes)):
            calls = sum(s["calls"] for op, s in p["operations"].items() if op in ops)
            assert (p[f"{kind}_latency"] or {}).get("calls", 0) == calls, (phase, kind, p[f"{kind}_latency"])
    assert run["phases"]["run"]["read_latency"] or run["phases"]["run"]["write_latency"]
    summary = (folder / "summary.md").read_text()
    assert TABLE_HEADING[name] in summary, summary
    html = (folder / "report.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and TABLE_HEADING[name].lstrip("# ") in html
    rows = (folder / "result.csv").read_text().splitlines()
    assert len(rows) >= 2 and any(run["run_id"] in r and name in r for r in rows[1:]), rows[:3]
    timeseries = (folder / "timeseries.csv").read_text().splitlines()
    assert len(timeseries) >= 2, timeseries[:3]
