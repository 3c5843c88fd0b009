"""Each family declares which of its operations read and which write; aggregate merges their
latencies by that declaration, and the nightly verdict judges them for every family (it judged
read and write latency for YCSB only: its operation names lived in aggregate.py)."""
import random

import pytest

from dbswarm.families import base as families
from dbswarm.measure.recorder import Measurement, Timeline
from dbswarm.results.aggregate import merge_phase
from dbswarm.results.verdict.regression import judge_campaign

SETTINGS = {"alpha": 0.05, "min_effect": 0.02, "recent": 5}


def _shard_doc(ops: dict, start: float = 1000.0) -> dict:
    """A shard's run phase: {op: (count, latency µs)} over 4 seconds."""
    m = Measurement()
    for op, (count, lat) in ops.items():
        s = m.op(op)
        s.count = count
        s.histogram.record_value(lat, count)
    m.timeline = Timeline(int(start))
    m.timeline.ops = {op: [c // 4] * 4 for op, (c, _) in ops.items()}
    return {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": 0, "threads": 1,
            "binding": {"engine": "sqlite", "is_real_database": True},
            "measurement": m.to_dict(), "started_at": start, "ended_at": start + 4.0, "status": "done",
            "start_skew_s": 0.01}


def _phase(workload: dict, ops: dict) -> dict:
    return merge_phase(workload["family"], workload, 1, "run", {0: _shard_doc(ops)}, {})


@pytest.mark.parametrize("test, read", [("oltp_read_write", False), ("oltp_write_only", False),
                                        ("oltp_read_only", True), ("oltp_point_select", True)])
def test_a_sysbench_event_is_a_read_or_a_write_by_its_test(test, read):
    phase = _phase({"family": "sysbench", "test": test}, {"TRANSACTION": (400, 2500)})
    judged, other = ("read_latency", "write_latency") if read else ("write_latency", "read_latency")
    assert phase[judged]["calls"] == 400 and phase[judged]["p50_us"] in range(2490, 2510), phase[judged]
    assert phase[other] is None
    assert phase["latency_operations"] == {"read": ["TRANSACTION"] if read else [],
                                           "write": [] if read else ["TRANSACTION"]}


def test_tpcc_order_status_and_stock_level_read_the_others_write():
    ops = {"NEW_ORDER": (45, 9000), "PAYMENT": (43, 5000), "DELIVERY": (4, 20000),
           "ORDER_STATUS": (4, 1000), "STOCK_LEVEL": (4, 3000)}
    phase = _phase({"family": "tpcc", "warehouses": 1}, ops)
    assert phase["read_latency"]["calls"] == 8 and phase["write_latency"]["calls"] == 92
    assert phase["latency_operations"] == {"read": ["ORDER_STATUS", "STOCK_LEVEL"],
                                           "write": ["NEW_ORDER", "PAYMENT", "DELIVERY"]}
    assert phase["read_latency"]["max_us"] < 3100 <= phase["write_latency"]["max_us"]


# a family whose operations are the workload's own (custom: its transactions) needs one to declare them
OWN_OPERATIONS = {"custom": {
    "generators": {"id": {"type": "uniform", "min": 1, "max": 10}},
    "transactions": {"look": {"statements": [{"sql": "SELECT v FROM t WHERE id = :id"}]},
                     "bump": {"statements": [{"sql": "UPDATE t SET v = v + 1 WHERE id = :id"}]}},
    "tables": {"t": {"existing": True}}}}


def test_the_declarations_do_not_overlap():
    for fam in families.all_families():
        w = fam.workload({"family": fam.name, **OWN_OPERATIONS.get(fam.name, {})})
        reads, writes = fam.read_operations(w), fam.write_operations(w)
        assert writes and not set(reads) & set(writes), (fam.name, reads, writes)


def _campaign(family_workload: dict, ops_of) -> dict:
    """Five baseline runs and five candidate runs of one cell, interleaved (repeat: {count,
    baseline}), each phase merged by aggregate from its operations."""
    rng = random.Random(3)
    runs = []
    for i in range(10):
        arm = "baseline" if i % 2 == 0 else "candidate"
        phase = _phase(family_workload, ops_of(arm, rng))
        runs.append({"run_id": f"{i:03d}", "cell": "000", "arm": arm, "phases": {"run": phase}})
    return {"campaign_id": "tonight", "name": "nightly", "seed": 1, "runs": runs}


def test_a_sysbench_nightly_verdict_judges_write_latency():
    """The same throughput, the events 40 % slower: the verdict fails on write_p99_us."""
    def ops(arm, rng):
        lat = (2000 if arm == "baseline" else 2800) * (1 + rng.uniform(-0.05, 0.05))
        return {"TRANSACTION": (400, int(lat))}
    doc = judge_campaign(_campaign({"family": "sysbench", "test": "oltp_read_write"}, ops), [], None, {}, SETTINGS)
    by_metric = {d["metric"]: d for d in doc["deltas"]}
    assert set(by_metric) == {"throughput", "write_p99_us"}, by_metric
    assert by_metric["write_p99_us"]["regressed"] and by_metric["write_p99_us"]["method"] == "statistical"
    assert not by_metric["throughput"]["regressed"]
    assert doc["verdict"] == "regressed" and any("write_p99_us" in r for r in doc["reasons"])


def test_a_tpcc_nightly_verdict_judges_read_latency():
    """Stock-Level 50 % slower, the rest alike: the verdict fails on read_p99_us, not on writes."""
    def ops(arm, rng):
        jitter = 1 + rng.uniform(-0.05, 0.05)
        slow = 1.5 if arm == "candidate" else 1.0
        return {"NEW_ORDER": (45, int(9000 * jitter)), "PAYMENT": (43, int(5000 * jitter)),
                "DELIVERY": (4, int(20000 * jitter)), "ORDER_STATUS": (4, int(1000 * jitter)),
                "STOCK_LEVEL": (4, int(3000 * slow * jitter))}
    doc = judge_campaign(_campaign({"family": "tpcc", "warehouses": 1}, ops), [], None, {}, SETTINGS)
    by_metric = {d["metric"]: d for d in doc["deltas"]}
    assert set(by_metric) == {"throughput", "read_p99_us", "write_p99_us"}, by_metric
    assert by_metric["read_p99_us"]["regressed"] and not by_metric["write_p99_us"]["regressed"]
    assert doc["verdict"] == "regressed"
