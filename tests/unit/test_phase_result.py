"""results.phase.PhaseResult (issue 59 item 3): result.json's phase typed, read back and written
again key for key in the merge's order, for every shape a phase takes: not run, missing (no shard
wrote anything), measured, and measured with the server's section added after the merge (an edge
of its window never read)."""
from __future__ import annotations

import json

from dbswarm.results.phase import PhaseResult, main_phase, phases_of

NOT_RUN = {"phase": "run", "status": "not run"}
MISSING = {"phase": "load", "shards": {"expected": 2, "complete": [], "partial": [],
                                       "missing": [{"shard": 0, "reason": "x"}, {"shard": 1, "reason": "y"}]},
           "binding_settings": None, "status": "missing"}


def _measured(**more) -> dict:
    out = {"phase": "run", "shards": {"expected": 1, "complete": [0], "partial": [], "missing": []},
           "binding_settings": {"isolation": "rc"}, "status": "complete", "started_at": 100.0, "ended_at": 110.0,
           "duration_s": 10.0, "operations_total": 50, "errors_total": 0, "ops_per_s": 5.0,
           "steady": {"window": [101, 110], "seconds": 9, "ops_per_s": 5.0}, "throughput": 5.0,
           "throughput_basis": "steady-state window", "operations": {"READ": {"count": 50}}, "errors": {},
           "counters": {}, "start_skew_s": {"max": None, "per_shard": {}},
           "abandoned_threads": {"count": 0, "per_shard": {}}, "client_cpu_s": 0.5,
           "usage": {"worker_calls": 1, "worker_seconds": 10.0}, "mix": {"READ": 1.0}}
    out.update(more.pop("before_error_rate", {}))
    out.update({"error_rate": 0.0, "read_latency": {"p99_us": 9}, "write_latency": None,
                "latency_operations": {"read": ["READ"], "write": []}, "latency_basis": "service time"})
    out.update(more.pop("before_histograms", {}))
    out.update({"histograms": {"READ": "HIST"}, "timeline": {"start": 100}, "intervals": {},
                "shard_series": None, "client": {"verdict": "ok"}})
    out.update(more)
    return out


def _same(d: dict) -> PhaseResult:
    p = PhaseResult.of(json.loads(json.dumps(d)))
    again = p.to_dict()
    assert list(again) == list(d) and again == d
    assert json.dumps(again) == json.dumps(d)
    return p


def test_every_shape_of_a_phase_is_written_again_as_it_was_read():
    assert _same(NOT_RUN).shards is None and not _same(NOT_RUN).measured
    missing = _same(MISSING)
    assert missing.shards is not None and [m["shard"] for m in missing.shards.missing] == [0, 1]
    plain = _same(_measured())
    assert plain.steady is not None and plain.steady.seconds == 9 and plain.read_latency == {"p99_us": 9}
    # the optional keys where the merge puts them, the family's figures before the histograms
    full = _same(_measured(before_error_rate={"stalls": {"threads": 1}, "problems": ["a stall"],
                                              "warmup": {"seconds": 1}, "operations_after_warmup": 40},
                           before_histograms={"schedule": {"target_per_s": 10}, "server": {"window_s": 9},
                                              "tpcc": {"tpmC": 1.0}}))
    assert full.problems == ["a stall"] and full.family("tpcc") == {"tpmC": 1.0} and full.server == {"window_s": 9}
    # the server's section added after the merge: last
    late = _same(_measured(server={"missing": "the end edge was never read"}))
    assert late.server_last and late.server == {"missing": "the end edge was never read"}


def test_a_steady_window_with_stalled_seconds_keeps_them():
    d = _measured()
    d["steady"]["stalled_seconds_left_out"] = [104, 105]
    assert _same(d).steady.stalled_seconds_left_out == [104, 105]


def test_a_run_reads_its_phases_and_its_main_phase():
    run = {"run_id": "r", "phases": {"load": MISSING, "run": _measured()}}
    assert [(name, p.status) for name, p in phases_of(run)] == [("load", "missing"), ("run", "complete")]
    assert main_phase(run).phase == "run"
    assert main_phase({"phases": {"load": MISSING}}).status == "missing"
    assert main_phase({"phases": {}}) is None
