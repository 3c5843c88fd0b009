"""dbswarm.results.compare's decisions on figures whose noise is set by the test: which method
judges a pair for its run counts (the nightly verdict's: a test, the prediction interval, the
fixed threshold), Holm's correction over the figures, the thresholds, and results in a bucket.
Real campaigns: tests/e2e/test_compare.py."""
import json
import random

import pytest

from dbswarm.errors import DbswarmError
from dbswarm.results import compare as C
from dbswarm.results.report import compare_view


def _phase(throughput: float, p50: float, model: str = "threads") -> dict:
    lat = {"p50_us": p50, "p95_us": p50 * 1.5, "p99_us": p50 * 2, "p99_9_us": p50 * 3}
    return {"status": "complete", "operations_total": 1000, "throughput": throughput, "error_rate": 0.0,
            "operations": {"READ": dict(lat)}, "client": {"verdict": "ok", "model": model}}


def _result(cid: str, phases: list[dict], threads: int = 4) -> tuple[dict, str]:
    runs = [{"run_id": f"{i:03d}-r{i + 1}", "cell": "000", "threads": threads, "phases": {"run": p},
             "target": {"engine": "postgresql"}, "workload": {"family": "ycsb", "name": "a", "recordcount": 1000}}
            for i, p in enumerate(phases)]
    return {"campaign_id": cid, "name": "x", "status": "complete", "runs": runs}, cid


def _side(cid: str, n: int, level: float, spread: float = 0.02, seed: int = 1, **kw) -> tuple[dict, str]:
    rng = random.Random(seed)
    return _result(cid, [_phase(1000 * level * rng.uniform(1 - spread, 1 + spread),
                                2000 / level * rng.uniform(1 - spread, 1 + spread)) for _ in range(n)], **kw)


def _figures(doc: dict) -> dict:
    (pair,) = doc["pairs"]
    return {d["figure"]: d for d in pair["figures"]}


def test_thresholds_default_per_metric_and_per_operation():
    t = C.parse_thresholds(["3%", "p99=10%", "READ:p99.9=0.3", "errors=0.5%"])
    assert t == {"default": 0.03, "p99": 0.1, "READ:p99.9": 0.3, "errors": 0.005}
    assert C.threshold_of(t, "p99.9", "READ") == 0.3 and C.threshold_of(t, "p99.9", "UPDATE") == 0.03
    assert C.threshold_of(t, "throughput", None) == 0.03 and C.threshold_of({"default": 0.05}, "errors", None) == 0.001
    for bad, says in (("p42=5%", "unknown metric 'p42'"), ("five", "expected a share"), ("-5%", "between")):
        with pytest.raises(DbswarmError, match=says):
            C.parse_thresholds([bad])


def test_one_run_a_side_is_judged_by_the_fixed_threshold_and_says_so():
    doc = C.compare([_side("a", 1, 1.0)], [_side("b", 1, 0.8)])
    f = _figures(doc)
    assert f["throughput"]["method"] == "threshold" and f["throughput"]["verdict"] == "worse"
    assert doc["exit_status"] == C.EXIT_REGRESSED
    note = doc["pairs"][0]["method_note"]
    assert "too few for a test" in note and "fixed threshold" in note and "noise is unknown" in note
    assert "fixed threshold" in compare_view.terminal_text(doc)
    # within the threshold: unchanged, exit 0
    doc = C.compare([_side("a", 1, 1.0)], [_side("b", 1, 0.97)], {"default": 0.05})
    assert _figures(doc)["throughput"]["verdict"] == "unchanged" and doc["exit_status"] == 0


def test_the_error_rate_in_points():
    a, b = _side("a", 1, 1.0), _side("b", 1, 1.0)
    b[0]["runs"][0]["phases"]["run"]["error_rate"] = 0.0005  # +0.05 point: within the default 0.1
    assert _figures(C.compare([a], [b]))["errors"]["verdict"] == "unchanged"
    b[0]["runs"][0]["phases"]["run"]["error_rate"] = 0.02
    doc = C.compare([a], [b], C.parse_thresholds(["50%"]))
    assert _figures(doc)["errors"]["verdict"] == "worse" and doc["exit_status"] == C.EXIT_REGRESSED
    assert "+2.00 points" in _figures(doc)["errors"]["why"]
    assert _figures(C.compare([a], [b], C.parse_thresholds(["errors=5%"])))["errors"]["verdict"] == "unchanged"


def test_one_run_against_five_is_judged_by_the_prediction_interval():
    doc = C.compare([_side("a", 5, 1.0)], [_side("b", 1, 0.7, seed=9)])
    d = _figures(doc)["throughput"]
    assert d["method"] == "prediction" and d["verdict"] == "worse" and d["p_worse_adjusted"] < 0.05
    assert "prediction interval" in doc["pairs"][0]["method_note"]


def test_five_against_five_a_test_each_way_with_holm_over_the_figures():
    doc = C.compare([_side("a", 5, 1.0)], [_side("b", 5, 0.8, seed=2)])
    f = _figures(doc)
    assert f["throughput"]["method"] == "statistical" and f["throughput"]["verdict"] == "worse"
    assert f["READ p50"]["verdict"] == "worse" and f["READ p50"]["ci"][0] > 0.05
    tested = sum(d["method"] == "statistical" for d in f.values())
    assert tested == 5  # throughput and READ's four percentiles (the error rate is not tested)
    assert f["throughput"]["p_worse_adjusted"] == pytest.approx(min(1.0, tested * f["throughput"]["p_worse"]),
                                                                rel=1e-3)
    doc = C.compare([_side("a", 5, 1.0)], [_side("b", 5, 1.25, seed=2)])
    assert {d["verdict"] for d in _figures(doc).values() if d["metric"] != "errors"} == {"better"}
    assert doc["exit_status"] == 0
    # 4 against 4: a test is possible (smallest p 1/70) but not past Holm's correction over 5 figures
    doc = C.compare([_side("a", 4, 1.0)], [_side("b", 4, 0.8, seed=2)])
    assert {d["verdict"] for d in _figures(doc).values() if d["metric"] != "errors"} == {"inconclusive"}
    assert doc["exit_status"] == 0


def test_the_same_distribution_is_rarely_flagged():
    """5 against 5 runs of one distribution (±10 % uniform noise): over 40 seeds no figure is
    flagged worse (Holm's correction and the 5 % threshold: a false alarm needs both)."""
    alarms = 0
    for seed in range(40):
        doc = C.compare([_side("a", 5, 1.0, 0.1, seed=seed)], [_side("b", 5, 1.0, 0.1, seed=seed + 1000)])
        alarms += doc["exit_status"] != 0
    assert alarms <= 1, alarms


def test_what_is_not_comparable():
    doc = C.compare([_side("a", 3, 1.0)], [_side("b", 3, 1.0, threads=8)])
    assert doc["exit_status"] == C.EXIT_NOT_COMPARABLE and doc["verdict"] == "not comparable"
    assert doc["not_comparable"] == ["run 000, run phase: not comparable: different configuration: threads 4 → 8"]
    assert all(d["verdict"] == "not comparable" for d in _figures(doc).values())
    mixed = _result("m", [_phase(1000, 2000), _phase(1000, 2000, model="multiplexed")])
    doc = C.compare([mixed], [_side("b", 2, 1.0)])
    assert "different client model: multiplexed, threads → threads" in doc["not_comparable"][0]
    only = _side("a", 2, 1.0)
    other = json.loads(json.dumps(only[0]))
    for r in other["runs"]:
        r["phases"]["load"] = r["phases"].pop("run")
    doc = C.compare([only], [(other, "o")])
    assert sorted(doc["not_comparable"]) == [
        "run 000, load phase: not comparable: run 000's load phase is only in the candidate",
        "run 000, run phase: not comparable: run 000's run phase is only in the baseline"]
    # a regression found elsewhere wins over a pair that cannot be compared: exit 4
    a, b = _side("a", 1, 1.0), _side("b", 1, 0.5)
    b[0]["runs"].append({**b[0]["runs"][0], "run_id": "001", "cell": "001", "threads": 8})
    a[0]["runs"].append({**a[0]["runs"][0], "run_id": "001", "cell": "001"})
    doc = C.compare([a], [b])
    assert doc["exit_status"] == C.EXIT_REGRESSED and len(doc["not_comparable"]) == 1


def test_the_terminal_fits_80_columns_with_long_names():
    res, cid = _side("a-very-long-campaign-id-20261201T000000-abcd" * 2, 1, 1.0)
    for r in res["runs"]:
        r["phases"]["run"]["operations"] = {"Order-Status-With-A-Long-Name": r["phases"]["run"]["operations"]["READ"]}
    doc = C.compare([(res, cid)], [(res, cid)])
    text = compare_view.terminal_text(doc)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert doc["exit_status"] == 0


def test_a_result_in_a_bucket(monkeypatch):
    from moto import mock_aws

    from dbswarm.results.store import open_store
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for var in ("DBSWARM_S3_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(var, raising=False)
    with mock_aws():
        import boto3
        boto3.client("s3").create_bucket(Bucket="res")
        doc, _ = _side("cid-1", 1, 1.0)
        open_store("s3://res/team").put_json("campaigns/cid-1/result.json", doc)
        for ref in ("s3://res/team/campaigns/cid-1", "s3://res/team/campaigns/cid-1/",
                    "s3://res/team/campaigns/cid-1/result.json"):
            got, where = C.read_result(ref)
            assert got["campaign_id"] == "cid-1" and where == "s3://res/team/campaigns/cid-1/result.json"
        with pytest.raises(DbswarmError, match="no result at s3://res/team/campaigns/cid-2/result.json"):
            C.read_result("s3://res/team/campaigns/cid-2")


def test_docs_ci_shows_the_workflow_file_as_it_is():
    """docs/ci.md's workflow is examples/github-actions.yml verbatim (the file the e2e test runs)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "ci.md").read_text()
    block = doc.split("```yaml\n")[-1].split("```")[0]
    assert block == (root / "examples" / "github-actions.yml").read_text()


def test_a_custom_workload_s_statements_are_compared_one_by_one():
    """Per statement (the custom family's section), beside the transactions: a statement three
    times slower is flagged worse under its own name, the others not."""
    def with_statements(side, slow: float):
        doc, cid = side
        rng = random.Random(cid)
        for run in doc["runs"]:
            stmts = [{"statement": i, "latency": {"p50_ms": ms * rng.uniform(0.98, 1.02), "p95_ms": ms * 1.5,
                                                   "p99_ms": ms * 2 * rng.uniform(0.98, 1.02)}}
                     for i, ms in enumerate((0.5, 1.0 * slow, 0.4))]
            run["phases"]["run"]["custom"] = {"transactions": {"tpcb": {"statements": stmts}}}
        return doc, cid
    doc = C.compare([with_statements(_side("a", 5, 1.0, seed=3), 1.0)],
                    [with_statements(_side("b", 5, 1.0, seed=4), 3.0)])
    f = _figures(doc)
    assert f["tpcb.1 p99"]["verdict"] == "worse" and f["tpcb.1 p50"]["verdict"] == "worse"
    assert f["tpcb.0 p99"]["verdict"] != "worse" and f["tpcb.2 p50"]["verdict"] != "worse"
