"""The cloud cost estimate against a hand calculation, the state transitions against local
mode's execution trace, and the max_cost guard."""
from pathlib import Path

import pytest

from dbswarm.campaign.cost import check_max_cost, estimate
from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import DbswarmError

ROOT = Path(__file__).resolve().parents[2]
PRICES = {"date": "2024-12-01", "region": "us-east-1", "currency": "USD", "lambda_gb_second": 0.0000166667,
          "lambda_request": 0.0000002, "sfn_state_transition": 0.000025, "s3_put": 0.000005, "s3_get": 0.0000004}


def _campaign(**extra):
    return load_campaign({"name": "hand", "target": {"engine": "noop"}, "phases": ["load", "run"],
                          "workload": {"preset": "S2", "recordcount": 100_000, "operationcount": 0,
                                       "maxexecutiontime": 1800, "threads": 32},
                          "fanout": {"threads_per_shard": 8}, **extra})


def test_estimate_matches_a_hand_calculation():
    campaign, runs = _campaign()
    est = estimate(campaign, runs, worker_memory_mb=1024, worker_timeout_s=900, price_table=PRICES)
    # 4 shards. Load: 25,000 rows at 5,000 rows/s = 5 s + 1 s lead: 1 call of 6 + 1 s overhead.
    # Run: 1,800 s + 1 s lead = 1,801 s in calls of 885 s (900 - 15): 3 calls, + 3 s overhead.
    assert est["lambda"]["worker_calls"] == 4 * 1 + 4 * 3
    assert est["lambda"]["worker_seconds"] == 4 * 7 + 4 * 1804
    # + plan (512 MB), aggregate (1,769 MB), 6 prepare/window/arm calls (512 MB), 2 s each
    other = 2 * (0.5 + 1769 / 1024 + 6 * 0.5)
    assert est["lambda"]["gb_seconds"] == round(7244 * 1.0 + other, 1) == 7254.5
    assert est["lambda"]["requests"] == 16 + 8
    # 5 per campaign + 7 for the run + 5 per sharded phase + per shard: 1 + 2 per call
    assert est["step_functions"]["state_transitions"] == 5 + 7 + 2 * 5 + 4 * 3 + 4 * 7 == 62
    assert est["s3"] == {"put_requests": 8 + 2 * 2 + 16, "get_requests": 4 * 2 + 4 * 6}
    total = ((7244 + other) * 0.0000166667 + 24 * 0.0000002 + 62 * 0.000025 + 28 * 0.000005 + 32 * 0.0000004)
    assert est["price"]["total"] == round(total, 4) == 0.1226
    assert est["prices"] == {"date": "2024-12-01", "region": "us-east-1", "currency": "USD"}
    assert any("rows/s per shard" in a for a in est["assumptions"])


def test_state_transitions_and_requests_match_local_mode_trace_of_the_demo():
    # examples/demo.yaml on 2 CPUs: execution.json counted 150 states entered and 52 function
    # calls (plan 1, prepare 30, worker 20, aggregate 1)
    campaign, runs = load_campaign(str(ROOT / "examples" / "demo.yaml"))
    est = estimate(campaign, runs, cpu_count=2, price_table=PRICES)
    assert est["step_functions"]["state_transitions"] == 150
    assert est["lambda"]["requests"] == 52


def test_max_cost_refuses_with_the_estimate_in_the_message(monkeypatch):
    monkeypatch.delenv("DBSWARM_MAX_COST", raising=False)
    campaign, runs = _campaign(max_cost=0.05)
    est = estimate(campaign, runs, worker_memory_mb=1024, worker_timeout_s=900, price_table=PRICES)
    with pytest.raises(DbswarmError) as err:
        check_max_cost(est, campaign.max_cost)
    assert "about 0.1226 USD, over the campaign's max_cost of 0.0500 USD" in str(err.value)
    assert "7,254.5 GB-s" in str(err.value) and "62 state transitions" in str(err.value)
    check_max_cost(est, 1.0)
    monkeypatch.setenv("DBSWARM_MAX_COST", "0.1")
    with pytest.raises(DbswarmError, match="this deployment's cap"):
        check_max_cost(est, 1.0)


def test_validate_prints_the_estimate_and_refuses_over_max_cost(tmp_path, capsys):
    from dbswarm.cli import main
    spec = tmp_path / "c.yaml"
    spec.write_text("name: c\ntarget: {engine: noop}\nmax_cost: 0.0001\n"
                    "workload: {preset: S2, operationcount: 0, maxexecutiontime: 600, threads: 8}\n")
    assert main(["validate", str(spec)]) == 2
    out = capsys.readouterr()
    assert "valid" not in out.out  # refused first: nothing says "valid" before the refusal
    assert "GB-s" in out.err and "state transitions" in out.err and "us-east-1 prices of" in out.err
    assert "dbswarm: max_cost: the campaign would cost about" in out.err
    assert "over the campaign's max_cost of 0.000100 USD" in out.err  # significant digits, not 0.0000
    spec.write_text(spec.read_text().replace("max_cost: 0.0001", "max_cost: 100"))
    assert main(["validate", str(spec)]) == 0
    out = capsys.readouterr()
    assert "valid, 1 run" in out.out and "GB-s" in out.out and "us-east-1 prices of" in out.out


def test_a_search_is_estimated_over_every_step_it_could_run():
    """threads 1, 2, 4, ... 64 (7 geometric steps), 2 refine steps and 4 confirmations (two
    values run 3 times each: stop.peak_samples) counted at 64, the 12 largest (max_steps): runs
    of 8 shards at most (threads_per_shard 8), each the run's 600 s; the sum of the same
    campaigns without a search at those thread counts is the estimate."""
    base = {"name": "peak", "target": {"engine": "noop"}, "phases": ["run"],
            "workload": {"preset": "S2", "recordcount": 1000, "operationcount": 0, "maxexecutiontime": 600},
            "fanout": {"threads_per_shard": 8}}
    campaign, cells = load_campaign({**base, "search": {"key": "threads", "start": 1, "max": 64, "refine": 2}})
    est = estimate(campaign, cells, worker_memory_mb=1024, worker_timeout_s=900, price_table=PRICES)
    values = [64] * 7 + [32, 16, 8, 4, 2]
    shards = sum(max(1, t // 8) for t in values)
    assert est["lambda"]["worker_calls"] == shards                     # 601 s fits one call
    assert est["lambda"]["worker_seconds"] == shards * (600 + 1 + 1)
    assert any("peak search" in a and "upper bound" in a and "12 runs" in a for a in est["assumptions"])
    one_step = estimate(*_one(base, 1), worker_memory_mb=1024, worker_timeout_s=900, price_table=PRICES)
    assert est["price"]["total"] > 12 * one_step["price"]["total"]     # not step 1 only
    # max_steps caps it: 4 steps reach 8 threads at most (1, 2, 4, 8), each within one shard
    campaign, cells = load_campaign({**base, "search": {"key": "threads", "start": 1, "max": 64, "refine": 2,
                                                       "max_steps": 4}})
    est = estimate(campaign, cells, worker_memory_mb=1024, worker_timeout_s=900, price_table=PRICES)
    assert est["lambda"]["worker_calls"] == 4 and any("4 runs" in a for a in est["assumptions"])
    # the campaign's max_cost refuses it before anything runs
    with pytest.raises(DbswarmError, match="max_cost"):
        check_max_cost(est, est["price"]["total"] / 2)


def _one(base, threads):
    return load_campaign({**base, "workload": {**base["workload"], "threads": threads}})
