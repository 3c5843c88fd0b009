"""result.json keeps its shape across the typed phase result (issue 59 item 3): the demo campaign
and one small campaign per family (YCSB on the noop engine; sysbench, TPC-C and a custom workload
on SQLite) write the same key paths as main did before the merge built a typed model, and
validate against the unchanged result.schema.json.

tests/e2e/data/result_shape.json holds the key paths (not values) per campaign: the union of three
runs on main (219e534) before the change, each written by ``DBSWARM_WRITE_RESULT_SHAPE=<file> python3
-m pytest tests/e2e/test_result_shape.py`` in a checkout of that commit.
A path is the keys from the document's root joined by ``.``, a list's items as ``[]``; map keys
that are data (an error's message, a second's stamp) are folded as ``*`` (``_DATA_MAPS``). A few
keys appear only when the machine made them (a stall, a thread waiting for a CPU, a failed
call's message): ``_CIRCUMSTANTIAL`` names them, and a path through one may be on either side.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from dbswarm.results.phase import PhaseResult
from dbswarm.run.runtime.local import run_campaign

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "data" / "result_shape.json"
SCHEMA = ROOT / "shared" / "dbswarm" / "schema" / "result.schema.json"

# map keys that are data, not names of the format: folded to "*"
_DATA_MAPS = ("errors", "errors_by_class", "abandoned_threads", "start_skew_s", "per_shard", "thread_errors",
              "operations", "histograms", "mix", "by_operation", "ops", "p90_limit", "p90_ms", "transactions",
              "signals")
# keys present or absent by what the machine did during the run (load, timing), not by the code
_CIRCUMSTANTIAL = ("stalls", "warnings", "wakeup_delay", "lost_s", "errors", "errors_by_class", "partial",
                   "thread_errors", "abandoned_threads", "client_health", "note", "problems", "skew",
                   "start_skew_s", "series", "on_cpu_s", "runqueue_wait_s", "steady_ops_per_sec",
                   "steady_seconds", "per_shard", "failure", "reasons", "bound", "verdicts", "cv", "signals",
                   "throughput_caveat", "stalled_seconds_left_out",
                   # the client verdict's advice, there when a phase was judged bound, near or contended
                   "client_scheduling_us", "max_threads_per_shard", "waited_for_others")
# keys always there whose content is there only when the run did it (no read in a short TPC-C run: null)
_CIRCUMSTANTIAL_BELOW = ("read_latency", "write_latency")


def key_paths(doc, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(doc, dict):
        for k, v in doc.items():
            name = "*" if prefix.rsplit(".", 1)[-1] in _DATA_MAPS else str(k)
            path = f"{prefix}.{name}" if prefix else name
            out.add(path)
            out |= key_paths(v, path)
    elif isinstance(doc, list):
        for item in doc:
            out |= key_paths(item, prefix + "[]")
    return out


def _circumstantial(path: str) -> bool:
    parts = [p.removesuffix("[]") for p in path.replace("[]", "[].").split(".") if p]
    return any(p in _CIRCUMSTANTIAL for p in parts) or any(p in _CIRCUMSTANTIAL_BELOW for p in parts[:-1])


def _family_campaigns(tmp: Path) -> dict[str, dict]:
    short = {"warmuptime": 1, "threads": 2}
    return {
        "ycsb": {"name": "shape-ycsb", "seed": 3, "target": {"engine": "noop", "options": {"service_time_ms": 1}},
                 "workload": {"preset": "a", "recordcount": 500, "operationcount": 0, "maxexecutiontime": 3,
                              **short},
                 "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]},
        "sysbench": {"name": "shape-sysbench", "seed": 3, "target": {"engine": "sqlite", "url": str(tmp / "sb.db")},
                     "workload": {"family": "sysbench", "test": "oltp_read_write", "tables": 1, "table_size": 500,
                                  "time": 3, **short},
                     "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]},
        "tpcc": {"name": "shape-tpcc", "seed": 3, "target": {"engine": "sqlite", "url": str(tmp / "tpcc.db")},
                 "workload": {"family": "tpcc", "warehouses": 1, "time": 3, "rampup": 1, "threads": 2,
                              "check": ["after_run"]},
                 "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]},
        "custom": {"name": "shape-custom", "seed": 3, "target": {"engine": "sqlite", "url": str(tmp / "cu.db")},
                   "workload": {"family": "custom", "label": "shape", "time": 3, **short,
                                "tables": {"sh_acc": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                                                  {"name": "v", "type": "bigint"}],
                                                      "load": {"rows": 200, "key": "id", "columns": {"v": "v"}}}},
                                "generators": {"v": {"type": "uniform", "min": 0, "max": 100},
                                               "id": {"type": "uniform", "min": 1, "max": 200}},
                                "transactions": {
                                    "bump": {"weight": 1, "statements": [
                                        {"sql": "UPDATE sh_acc SET v = v + 1 WHERE id = :id"}]},
                                    "look": {"weight": 1, "statements": [
                                        {"sql": "SELECT v FROM sh_acc WHERE id = :id"}]}}},
                   "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]},
    }


@pytest.fixture(scope="module")
def results(demo_run, tmp_path_factory) -> dict[str, dict]:
    """{campaign: its result.json}: the demo (as scripts/demo runs it: the session's demo_run,
    tests/conftest.py) and one per family."""
    tmp = tmp_path_factory.mktemp("shape")
    proc, folder = demo_run
    assert proc.returncode == 0 and folder is not None, proc.stderr[-3000:]
    out = {"demo": json.loads((folder / "result.json").read_text())}
    for family, campaign in _family_campaigns(tmp).items():
        done = run_campaign(campaign, str(tmp / family), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
        out[family] = json.loads((Path(done["store"]) / done["campaign_id"] / "result.json").read_text())
    return out


def test_result_json_keeps_its_key_paths_and_schema(results):
    shapes = {name: sorted(key_paths(doc)) for name, doc in results.items()}
    if os.environ.get("DBSWARM_WRITE_RESULT_SHAPE"):  # a path: this run's key paths, to make the fixture of
        Path(os.environ["DBSWARM_WRITE_RESULT_SHAPE"]).write_text(json.dumps(shapes, indent=1) + "\n")
    expected = json.loads(FIXTURE.read_text())
    assert set(shapes) == set(expected)
    schema = json.loads(SCHEMA.read_text())
    for name, doc in results.items():
        assert doc["status"] in ("complete", "check_failed", "complete_with_errors"), (name, doc["status"])
        jsonschema.validate(doc, schema)
        now, before = set(shapes[name]), set(expected[name])
        added = sorted(p for p in now - before if not _circumstantial(p))
        gone = sorted(p for p in before - now if not _circumstantial(p))
        assert not added and not gone, (name, {"added": added, "gone": gone})
        # the paths that are the format's own (no circumstantial key on the way) are most of it
        assert len([p for p in before if not _circumstantial(p)]) > 50, name
        # the typed phase reads each phase back whole: the same keys, in the same order, the same values
        for run in doc["runs"]:
            for phase in run["phases"].values():
                again = PhaseResult.of(phase).to_dict()
                assert list(again) == list(phase) and again == phase, (name, run["run_id"], phase.get("phase"))
