"""The start barrier with many shards: the lead before it grows with the shards where they are
started one after another (local mode), a campaign may set it, and a phase whose shards
missed it by a large share of the run (or that has no steady window) says so first in
summary.md and carries ``throughput_caveat`` in result.json."""
import json
import time

from dbswarm.measure.recorder import Measurement, Timeline
from dbswarm.results.aggregate import merge_phase
from dbswarm.results.report.files import summary_markdown
from dbswarm.run.runtime import service

RUN = {"family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}


def _doc(shard, start, seconds, per_second=100, skew=0.01):
    """A shard that began ``start`` (epoch seconds, its start skew ``skew``) and ran ``seconds``."""
    m = Measurement()
    s = m.op("READ")
    s.count = per_second * seconds
    s.histogram.record_value(200, s.count)
    m.timeline = Timeline(int(start))
    m.timeline.ops = {"READ": [per_second] * seconds}
    return {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": shard, "threads": 1,
            "binding": {"engine": "postgresql", "is_real_database": True}, "measurement": m.to_dict(),
            "started_at": start, "ended_at": start + seconds, "status": "done", "start_skew_s": skew}


def _result(phase):
    return {"schema_version": 1, "campaign_id": "c", "name": "n", "seed": 1, "status": "complete",
            "missing_shards": [],
            "runs": [{"run_id": "000", "index": 0, "axes": {}, "threads": 4, "shard_count": 4,
                      "target": {"engine": "postgresql", "label": "pg", "url": None, "is_real_database": True},
                      "workload": {"family": "ycsb", "name": "S2", "recordcount": 1000}, "phases": {"run": phase}}]}


def test_a_barrier_met_says_nothing():
    docs = {i: _doc(i, 1000.0, 20) for i in range(4)}
    phase = merge_phase("ycsb", RUN["workload"], 4, "run", docs, {})
    assert phase["status"] == "complete" and phase["throughput_basis"] == "steady-state window"
    assert "throughput_caveat" not in phase
    assert "read with care" not in summary_markdown(_result(phase))


def test_a_slow_start_is_said_first_and_the_figure_marked():
    # a fake slow start: shard k began 3 s after shard k-1 (the barrier missed by up to 9 s of a 29 s phase)
    docs = {i: _doc(i, 1000.0 + 3 * i, 20, skew=0.01 + 3 * i) for i in range(4)}
    phase = merge_phase("ycsb", RUN["workload"], 4, "run", docs, {})
    assert phase["status"] == "complete"
    assert phase["start_skew_s"]["max"] == 9.01
    caveat = phase["throughput_caveat"]
    assert "9.01 s after the start barrier" in caveat and "31%" in caveat and "fanout.start_lead_s" in caveat
    md = summary_markdown(_result(phase))
    lines = md.splitlines()
    status = next(i for i, line in enumerate(lines) if line.startswith("Status:"))
    # the first thing after the status line
    assert lines[status + 2].startswith("**Throughput to read with care**")
    assert lines[status + 4] == f"- run 000, run phase: {caveat}"
    runs_row = next(line for line in lines if line.startswith("| 000 | run |"))
    assert "⚠" in runs_row
    json.dumps(phase)


def test_several_slow_starts_are_one_line_before_the_tables_and_their_reasons_at_the_end():
    """Issue 58: on a loaded host every phase's shards start late; a bullet per phase before the
    tables pushed the demo's first table past its terminal's first screen."""
    docs = {i: _doc(i, 1000.0 + 3 * i, 20, skew=0.01 + 3 * i) for i in range(4)}
    phase = merge_phase("ycsb", RUN["workload"], 4, "run", docs, {})
    result = _result(phase)
    result["runs"] = [dict(result["runs"][0], run_id=f"00{k}") for k in range(3)]
    md = summary_markdown(result)
    head, first_table = md.split("\n|", 1)[0], md.index("\n|")
    said = [line for line in head.splitlines() if "read with care" in line]
    assert said == ["**Throughput to read with care** in 3 phases (marked ⚠ below; why, phase by phase, at the "
                    "end; result.json: each phase's `throughput_caveat`)."], said
    assert "- run 000, run phase:" not in head
    end = md.split("### Throughput to read with care", 1)
    assert len(end) == 2 and md.index("### Throughput to read with care") > first_table
    for k in range(3):
        assert f"- run 00{k}, run phase: {phase['throughput_caveat']}" in end[1]


def test_no_steady_window_is_said():
    # 100 shards, each began 0.44 s after the one before and ran 20 s: no second had all of them
    docs = {i: _doc(i, 1000.0 + 0.44 * i, 20, skew=0.44 * i) for i in range(100)}
    phase = merge_phase("ycsb", RUN["workload"], 100, "run", docs, {})
    assert phase["steady"]["ops_per_s"] is None and phase["throughput_basis"] == "whole phase"
    assert "no steady window" in phase["throughput_caveat"]
    assert "start barrier" in phase["throughput_caveat"]
    assert "no steady window" in summary_markdown(_result(phase)).split("### ")[0]


def _plan(tmp_path, shards, **fanout):
    campaign = {"name": "lead", "target": {"engine": "noop"}, "phases": ["run"],
                "workload": {"recordcount": 10, "operationcount": 10, "threads": shards},
                "fanout": {"shards": shards, **fanout}}
    return service.plan_campaign({"campaign": campaign, "results": str(tmp_path)})


def test_the_local_lead_grows_with_the_shards(tmp_path, monkeypatch):
    monkeypatch.setenv(service.LEAD_PER_SHARD_ENV, "0.45")
    few, many = _plan(tmp_path, 2), _plan(tmp_path, 100)
    ev = {"lead_seconds": 0.5, "phase": "run"}

    def lead(plan):
        return service.start_lead(dict(ev, store=plan["store"], campaign_id=plan["campaign_id"],
                                       run_id=plan["runs"][0]["run_id"]))
    assert lead(few) == 0.5 + 1 * 0.45  # the event's lead for the first shard, 0.45 s for each further one
    assert lead(many) == 0.5 + 99 * 0.45
    before = time.time()
    armed = service.arm(dict(ev, store=many["store"], campaign_id=many["campaign_id"],
                             run_id=many["runs"][0]["run_id"]))
    assert armed["start_at"] >= before + 45
    monkeypatch.delenv(service.LEAD_PER_SHARD_ENV)  # the cloud: the event's lead alone
    monkeypatch.delenv("AWS_EXECUTION_ENV", raising=False)
    assert lead(many) == 0.5
    # local mode (the emulated functions' environment): the CPUs start the shards one after another
    monkeypatch.setenv("AWS_EXECUTION_ENV", "dbswarm-local")
    monkeypatch.setattr(service.os, "cpu_count", lambda: 2)
    assert lead(many) == 0.5 + 99 * 0.45 and lead(few) == 0.5 + 1 * 0.45


def test_a_campaign_sets_its_start_lead(tmp_path, monkeypatch):
    monkeypatch.setenv(service.LEAD_PER_SHARD_ENV, "0.45")
    plan = _plan(tmp_path, 100, start_lead_s=12)
    assert service.start_lead({"lead_seconds": 0.5, "store": plan["store"], "campaign_id": plan["campaign_id"],
                               "run_id": plan["runs"][0]["run_id"]}) == 12
    import pytest

    from dbswarm.campaign.spec import load_campaign
    from dbswarm.errors import CampaignError
    with pytest.raises(CampaignError, match="start_lead_s"):
        load_campaign({"name": "x", "fanout": {"start_lead_s": 0}})


def test_a_load_phase_s_start_skew_is_flagged():
    """Issue 56, item 7: a load whose shards started up to 7.1 s after the barrier, in a phase
    of 10 s, says so as a run phase does (a load's figure is its whole span: no steady-window
    caveat)."""
    docs = {i: dict(_doc(i, 1000.0 + 7.1 * i / 3, 3, skew=0.01 + 7.1 * i / 3), phase="load") for i in range(4)}
    phase = merge_phase("ycsb", RUN["workload"], 4, "load", docs, {})
    caveat = phase["throughput_caveat"]
    assert "7.11 s after the start barrier" in caveat and "no steady window" not in caveat, caveat
    result = _result(phase)
    result["runs"][0]["phases"] = {"load": phase}
    assert f"- run 000, load phase: {caveat}" in summary_markdown(result)
    met = merge_phase("ycsb", RUN["workload"], 4, "load", {i: dict(_doc(i, 1000.0, 3), phase="load")
                                                              for i in range(4)}, {})
    assert "throughput_caveat" not in met


def test_an_operation_s_rate_is_per_second_of_the_measured_window():
    """Issue 56, item 7: an operation's count is after the warm-up: its ops_per_s divides by
    the phase less its warm-up (20 s of 25), not by the whole phase."""
    docs = {}
    for i in range(2):
        d = _doc(i, 1000.0, 25)
        m = Measurement.from_dict(d["measurement"])
        m.operations["READ"].count = 100 * 20  # after the 5 s warm-up
        w = m.warmup = {"READ": type(m.operations["READ"])()}
        w["READ"].count = 100 * 5
        w["READ"].histogram.record_value(200, 500)
        docs[i] = dict(d, measurement=m.to_dict())
    phase = merge_phase("ycsb", {"family": "ycsb", "warmuptime": 5}, 2, "run", docs, {})
    assert phase["duration_s"] == 25 and phase["operations_after_warmup"] == 4000
    assert phase["operations"]["READ"]["ops_per_s"] == 200.0  # 4,000 in 20 s (not 160: 4,000 in 25 s)
