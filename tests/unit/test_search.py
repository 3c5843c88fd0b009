"""The peak search's decision (search.decide) on each stop rule, planning a search whose max no
shard can carry, and a next step that cannot be planned; the interleaving of repeat."""
import pytest

from dbswarm.campaign import peak
from dbswarm.campaign import search as S
from dbswarm.campaign.plan import make_plan
from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import CampaignError
from dbswarm.results.phase import PhaseResult


def _step(search, value, throughput, p99_ms=1.0, error_rate=0.0, status="complete"):
    phase = {"status": status, "throughput": throughput, "error_rate": error_rate,
             "operations": {"READ": {"p99_us": p99_ms * 1000}}}
    return {**S.step_figures(search, value, f"run-{value:g}", PhaseResult.of(phase), 1), "kind": "grow"}


def _decide(search, figures):
    state = {"steps": [_step(search, *f) if isinstance(f, tuple) else f for f in figures], "phase": "grow"}
    return S.decide(search, state), state


def test_the_p99_slo_stops_the_growth_and_narrows_below_it():
    search = S.Search(stop={"p99_ms": 50, "peak_samples": 1})
    nxt, state = _decide(search, [(1, 100, 10), (2, 190, 20)])
    assert nxt == 4 and "stop" not in state                          # passing, still gaining: grow
    nxt, state = _decide(search, [(1, 100, 10), (2, 190, 20), (4, 350, 80)])
    assert state["stop"]["rule"] == "failure" and "p99 80.0 ms > 50 ms" in state["stop"]["reason"]
    assert nxt == 3                                                  # between the last passing and the failing
    assert S.summarize(search, state)["peak"]["value"] == 2          # a failing step is never the peak


def test_the_error_rate_stops_the_growth():
    search = S.Search(stop={"error_rate": 0.01, "peak_samples": 1})
    nxt, state = _decide(search, [(1, 100), (2, 190), (4, 380, 1.0, 0.05)])
    assert state["stop"]["rule"] == "failure" and "error rate 5.00% > 1.00%" in state["stop"]["reason"]
    assert nxt == 3


def test_a_rate_search_grows_the_target_and_stops_when_the_rate_is_not_achieved():
    search = S.Search(key="target", start=1000, max=100_000, stop={"achieved_below": 0.9, "peak_samples": 1})
    assert not search.integer
    nxt, state = _decide(search, [(1000, 995), (2000, 1990)])
    assert nxt == 4000 and state["steps"][1]["achieved"] == pytest.approx(0.995)
    nxt, state = _decide(search, [(1000, 995), (2000, 1990), (4000, 2500)])
    assert state["stop"]["rule"] == "failure" and "is 62% of the 4000/s target (< 90%)" in state["stop"]["reason"]
    assert nxt == pytest.approx(2828.427)                             # the geometric midpoint, not rounded to int


def test_an_incomplete_step_counts_as_failing():
    search = S.Search(stop={"peak_samples": 1})
    step = _step(search, 4, 380, status="incomplete")
    assert step["failed"] == "the run did not complete (incomplete)"
    nxt, state = _decide(search, [(1, 100), (2, 190), step])
    assert state["stop"]["rule"] == "failure" and nxt == 3


def _search_campaign(tmp_path, **fanout):
    return {"name": "s", "seed": 1, "phases": ["run"], "target": {"engine": "noop"},
            "workload": {"preset": "S6", "recordcount": 100, "operationcount": 0, "maxexecutiontime": 1},
            "fanout": fanout, "search": {"key": "threads", "start": 1, "max": 4096, "max_steps": 14}}


def test_plan_refuses_a_search_max_no_shard_can_carry(tmp_path):
    from dbswarm.run.runtime.service import plan_campaign
    with pytest.raises(CampaignError) as err:
        plan_campaign({"campaign": _search_campaign(tmp_path, shards=1), "results": str(tmp_path)})
    assert "search.max: threads 4096" in str(err.value) and "client threads in one shard" in str(err.value)
    assert not list(tmp_path.iterdir())                               # refused before anything is written
    # spread over shards, the same max plans
    out = plan_campaign({"campaign": _search_campaign(tmp_path, threads_per_shard=512), "results": str(tmp_path)})
    assert out["search"] and out["runs"][0]["shard_count"] == 1


def test_a_next_step_that_cannot_be_planned_stops_the_search_as_its_max(tmp_path):
    """A deployment's MaxShards reached mid-search (one shard per thread): the step over it is a
    max stop, not a failed execution."""
    campaign, cells = load_campaign(_search_campaign(tmp_path, threads_per_shard=1) | {"search": {
        "key": "threads", "start": 1, "max": 64}})
    runs, doc = S.first_step(campaign, cells)
    plan = make_plan(campaign, runs, "c1", sqlite_url=None)
    values = []
    while True:
        last = plan.runs[-1]
        values.append(last.search_step["value"])
        phase = PhaseResult.of({"status": "complete", "throughput": 100.0 * last.threads, "error_rate": 0.0,
                                "operations": {}})
        new = S.advance(doc, plan, last, phase, campaign.model_dump(mode="json"), max_shards=4)
        if new is None:
            break
        assert new.shard_count <= 4
        plan.runs.append(new)
    cell, = doc["cells"]
    assert values == [1, 2, 4] and cell["phase"] == "done"
    assert cell["stop"]["rule"] == "max" and "threads 8 cannot be planned" in cell["stop"]["reason"]
    assert "MaxShards" in cell["stop"]["reason"]


def test_repeat_with_a_baseline_configuration_runs_b_a_b_a():
    campaign, runs = load_campaign({
        "name": "r", "seed": 3, "target": {"engine": "noop"},
        "workload": {"preset": "S6", "recordcount": 100, "operationcount": 100, "threads": 1},
        "matrix": {"threads": [1, 2]},
        "repeat": {"count": 2, "baseline": {"workload": {"operationcount": 50}}}})
    assert [(r.repeat, r.cell, r.arm) for r in runs] == [
        (1, runs[0].cell, "baseline"), (1, runs[0].cell, "candidate"),
        (1, runs[2].cell, "baseline"), (1, runs[2].cell, "candidate"),
        (2, runs[0].cell, "baseline"), (2, runs[0].cell, "candidate"),
        (2, runs[2].cell, "baseline"), (2, runs[2].cell, "candidate")]
    assert runs[0].cell != runs[2].cell
    assert [r.workload.operationcount for r in runs[:2]] == [50, 100]
    # each cell's runs, either arm and every repetition, draw the same operations
    assert len({r.seed_index for r in runs if r.cell == runs[0].cell}) == 1


def test_the_peak_table_has_a_row_per_instance_class_and_workload(tmp_path):
    campaign, cells = load_campaign({
        "name": "wp", "seed": 1, "phases": ["run"], "target": {"engine": "noop", "label": "db.r6g.large"},
        "workload": {"preset": "S2", "recordcount": 100, "operationcount": 0, "maxexecutiontime": 1},
        "matrix": {"preset": ["S2", "S6"]}, "search": {"key": "threads", "start": 1, "max": 8}})
    search = S.Search.model_validate(campaign.search.model_dump())
    _, doc = S.first_step(campaign, cells)
    for c, scale in zip(doc["cells"], (100, 300)):
        # out of order, as the narrowing runs them: the table sorts by value
        c["steps"] = [_step(search, v, t * scale) for v, t in ((1, 1), (2, 1.9), (8, 2.0), (4, 3.0), (3, 2.95))]
        c["stop"], c["phase"] = {"rule": "plateau", "reason": "r", "at": 8}, "done"
    md = "\n".join(peak.search_markdown(peak.result_section(doc)))
    assert "### Peak per instance class and workload (search over threads)" in md
    assert "| db.r6g.large | S2 | 300 | 4 | 1.00 | 3 | 295 | plateau |" in md
    assert "| db.r6g.large | S6 | 900 | 4 | 1.00 | 3 | 885 | plateau |" in md
    curve = md.split("### Peak search over threads")[1]
    assert [line.split("|")[1].strip() for line in curve.splitlines() if line.startswith("| ")][1:] == \
        ["1", "2", "3", "4", "8"]
