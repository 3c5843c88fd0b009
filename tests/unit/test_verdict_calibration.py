"""bench/verdict_calibration.py's pure parts (issue 56 item 5): the ground truth of a dbswarm run
from its round's native run, the confusion matrix and its rates, the stability count, the
figures read from a dbswarm summary (bench/dbswarm_run.py's client verdict), and the set of
configurations the calibration covers."""
import pytest

from bench import dbswarm_run
from bench import verdict_calibration as V


def run(throughput, latency_ms):
    return {"throughput": throughput, "latency_ms": latency_ms}


@pytest.mark.parametrize("dbswarm, native, limited", [
    (run(850, 1.0), run(1000, 1.0), True),     # below 0.9 x the native throughput
    (run(900, 1.0), run(1000, 1.0), False),    # exactly 0.9: not below
    (run(950, 1.6), run(1000, 1.0), True),     # equal throughput (within 10 %), latency > 1.5 x
    (run(950, 1.5), run(1000, 1.0), False),    # latency exactly 1.5 x: not above
    (run(1200, 1.6), run(1000, 1.0), False),   # faster than the native tool: latency not compared
    (run(950, None), run(1000, 1.0), False),   # no latency of dbswarm's: throughput alone
    (run(500, 1.0), run(1000, None), True),
])
def test_ground_truth_from_the_paired_figures(dbswarm, native, limited):
    truth = V.client_limited(dbswarm, native)
    assert truth["limited"] is limited
    assert truth["throughput_ratio"] == round(dbswarm["throughput"] / native["throughput"], 3)


def test_no_native_throughput_is_no_ground_truth():
    for native in (run(0, 1.0), run(None, 1.0)):
        assert V.client_limited(run(100, 1.0), native)["limited"] is None


def test_the_confusion_matrix_and_its_rates():
    pairs = ([("bound", True)] * 3 + [("bound", False)] + [("near", True)] + [("contended", False)] * 2
             + [("ok", False)] * 6 + [("ok", True)] + [("unmeasured", None)])
    cf = V.confusion(pairs)
    m = cf["matrix"]
    assert m["bound"] == {"limited": 3, "not_limited": 1}
    assert m["near"] == {"limited": 1, "not_limited": 0}          # near: a row of its own
    assert m["contended"] == {"limited": 0, "not_limited": 2}     # contended too
    assert m["ok"] == {"limited": 1, "not_limited": 6}
    assert m["unmeasured"] == {"limited": 0, "not_limited": 0}
    assert (cf["limited"], cf["not_limited"], cf["unknown_truth"]) == (5, 9, 1)
    assert (cf["false_alarms"], cf["false_alarm_rate"]) == (1, round(1 / 9, 4))
    assert (cf["misses"], cf["miss_rate"]) == (2, 0.4)             # near and ok among the limited


def test_rates_are_none_without_runs_of_their_kind():
    cf = V.confusion([("ok", False)])
    assert cf["false_alarm_rate"] == 0 and cf["miss_rate"] is None
    assert V.confusion([])["false_alarm_rate"] is None


@pytest.mark.parametrize("verdicts, mode, count, stable", [
    (["ok", "ok", "near", "ok", "ok"], "ok", 4, True),
    (["ok", "near", "near", "ok", "bound"], "ok", 2, False),
    (["bound"] * 3 + ["near"] * 2, "bound", 3, False),
    (["contended"] * 5, "contended", 5, True),
    (["ok", "near"], "ok", 1, False),          # 2 runs: both alike (4 of 5's share, rounded up)
    (["ok"] * 8 + ["near"] * 2, "ok", 8, True),
])
def test_stability_is_the_verdicts_mode_count(verdicts, mode, count, stable):
    s = V.stability(verdicts)
    assert (s["mode"], s["count"], s["runs"], s["stable"]) == (mode, count, len(verdicts), stable)
    assert V.stability([])["stable"] is None


def test_figures_and_verdict_from_a_dbswarm_summary():
    client = {"verdict": "bound", "allowed": False, "reason": "r", "cpu_share": 0.95,
              "shards": {"0": {"verdict": "bound", "signals": {"cpu_share": "bound"}, "cpu_share": 0.95}},
              "series": {"0": []}}
    summary = {"phase": {"sysbench": {"tps": 500.0}, "status": "complete", "errors_total": 0, "client": client},
               "latency_by_op": {"TRANSACTION": {"p50_us": 2500, "avg_us": 3000.0}},
               "client_verdict": dbswarm_run.client_verdict(client)}
    f = V.figures(V.BY_NAME[V.QUICK[0]], summary)
    assert (f["throughput"], f["latency_ms"], f["verdict"]) == (500.0, 2.5, "bound")
    assert f["client"]["signals"] == {"0": {"verdict": "bound", "signals": {"cpu_share": "bound"}}}
    assert f["client"]["allowed"] is False and "series" not in f["client"]
    pg = V.figures(V.BY_NAME[V.QUICK[1]], {"phase": {"throughput": 80.0},
                                          "latency_by_op": {"tpcb_like": {"p50_us": 9000, "avg_us": 12000.0}}})
    assert (pg["throughput"], pg["latency_ms"], pg["verdict"]) == (80.0, 12.0, "unmeasured")  # pgbench: means
    assert dbswarm_run.client_verdict(None) == {"verdict": "unmeasured", "signals": {}}


def test_the_configurations_cover_what_the_calibration_needs():
    cfgs = V.CONFIGS
    assert len(cfgs) >= 20 and len(V.BY_NAME) == len(cfgs)
    assert {c["family"] for c in cfgs} == {"sysbench", "ycsb", "tpcc", "pgbench"}
    assert {c["engine"] for c in cfgs} == {"postgresql", "mysql", "mongodb"}
    assert min(c["threads"] for c in cfgs) == 8 and max(c["threads"] for c in cfgs) == 256
    assert {c["pinned"] for c in cfgs} == {True, False} and {c["model"] for c in cfgs} == {"threads", "multiplexed"}
    assert len(V.QUICK) == 2 and set(V.QUICK) <= set(V.STABILITY) <= set(V.BY_NAME)


def test_bad_options_name_what_is_wrong(capsys):
    with pytest.raises(SystemExit):
        V.main(["--configs", "sysbench-nope"])
    assert "unknown ['sysbench-nope']" in capsys.readouterr().err


def test_the_section_renders_from_a_record(tmp_path, capsys):
    record = {"command": "python bench/verdict_calibration.py --quick", "date": "2026-12-02T02:42:19+00:00",
              "machine": {"nproc": 2, "cpu_model": "x", "memory_gb": 1, "kernel": "k", "python": "3"},
              "loadavg": {"before": [1, 1, 1], "after": [2, 2, 2]},
              "args": {"rounds": 1, "time": 5, "quick": True},
              "configs": [{"name": V.QUICK[1], "failed": "RuntimeError: pgbench failed"}],
              "confusion": V.confusion([("bound", False), ("near", True)]),
              "stability": [{"name": V.QUICK[0], **V.stability(["ok", "ok"])}]}
    path = tmp_path / "record.json"
    path.write_text(V.C.record_text(record))
    V.main(["--render", str(path)])
    md = capsys.readouterr().out
    assert "| bound | 0 | 1 |" in md and "| near | 1 | 0 |" in md and "| contended | 0 | 0 |" in md
    assert "False alarms (bound, not client-limited): 1 of 1 (100.0%)" in md
    assert "misses (client-limited, not bound): 1 of 1 (100.0%)" in md
    assert "smoke run" in md and f"| {V.QUICK[1]} | failed: RuntimeError: pgbench failed | | |" in md
    assert f"| {V.QUICK[0]} | ok, ok | ok (2) | True |" in md
