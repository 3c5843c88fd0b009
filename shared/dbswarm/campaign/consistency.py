"""Keys each valid alone but not together (issue 57, item 9): every problem names both fields.

``campaign_problems`` needs only the validated campaign (reported with the workloads' own
problems, so that one validation says everything); ``run_problems`` needs its runs too.
Neither imports the campaign model (``spec`` calls them): they read its attributes.
"""
from __future__ import annotations

import math
from typing import Any

from dbswarm.errors import did_you_mean
from dbswarm.families.tpcc.model import PRESETS as TPCC_PRESETS

# the metrics results.thresholds may name: those the regression verdict reads
# (results.verdict.regression.METRICS, a test keeps the two the same; the campaign file is below
# the results, so it names them rather than import them)
THRESHOLD_METRICS = ("throughput", "read_p99_us", "write_p99_us", "read_avg_us", "write_avg_us")
THRESHOLD_KEYS = (*THRESHOLD_METRICS, "default")


def campaign_problems(campaign: Any) -> list[str]:
    """Problems between sections of the campaign: results, search, repeat, fanout, phases."""
    return (_results_problems(campaign.results) + _search_problems(campaign)
            + _repeat_problems(campaign) + _fanout_problems(campaign.fanout))


def _results_problems(results: Any) -> list[str]:
    out = []
    if results.save_baseline and not results.baseline:
        out.append("results.save_baseline: true needs results.baseline, the name to store it under (without it "
                   "nothing is saved)")
    verdict = results.verdict
    if verdict.recent > verdict.history_runs:
        out.append(f"results.verdict.recent: {verdict.recent} campaigns is more than results.verdict.history_runs "
                   f"({verdict.history_runs}), the campaigns read: change points among campaigns never read")
    for metric, limit in results.thresholds.items():
        if metric not in THRESHOLD_KEYS:
            out.append(f"results.thresholds.{metric}: unknown metric{did_you_mean(metric, THRESHOLD_KEYS)}; one of "
                       f"{', '.join(THRESHOLD_KEYS)}")
        elif not (math.isfinite(limit) and limit >= 0):
            out.append(f"results.thresholds.{metric}: {limit:g} is not an allowed regression (a fraction >= 0, "
                       "e.g. 0.1 for 10 %)")
    return out


def _search_problems(campaign: Any) -> list[str]:
    search = campaign.search
    if search is None:
        return []
    out = []
    if "run" not in campaign.phases:
        out.append(f"search: steps the run phase, but phases ({', '.join(campaign.phases)}) has none: nothing "
                   "would be measured")
    if search.key in campaign.matrix:
        out.append(f"search.key: {search.key} is also a matrix axis (matrix.{search.key}): the search steps it "
                   "itself; drop the axis or search another key")
    if search.key == "threads" and min(search.start, search.max) < 1:
        field = "start" if search.start < 1 else "max"
        out.append(f"search.{field}: {getattr(search, field):g} threads with search.key threads (whole numbers "
                   "from 1)")
    if search.key == "threads" and search.stop.achieved_below is not None:
        out.append("search.stop.achieved_below: judges a rate search (search.key the family's rate key, e.g. "
                   "YCSB target), not search.key threads")
    return out


def _repeat_problems(campaign: Any) -> list[str]:
    rep = campaign.repeat
    if rep is None or rep.baseline is None:
        return []
    if not rep.baseline.target and not rep.baseline.workload:
        return ["repeat.baseline: gives neither target nor workload keys: the baseline would run the candidate's "
                "configuration"]
    return []


def _fanout_problems(fanout: Any) -> list[str]:
    out = []
    given = fanout.model_fields_set
    if "headroom" in given and fanout.threads_per_shard != "auto":
        out.append("fanout.headroom: applies to fanout.threads_per_shard: auto only (it is "
                   f"{fanout.threads_per_shard or 'unset'}): it would be ignored")
    if "adaptive_max" in given and not fanout.adaptive:
        out.append("fanout.adaptive_max: applies with fanout.adaptive: true only: it would be ignored")
    return out


def run_problems(campaign: Any, runs: list) -> list[str]:
    """Problems between the runs and the campaign's phases and repeat (a search's max that no
    shard can carry: the plan's, ``campaign.search``)."""
    out: list[str] = []
    for run in runs:
        w = run.workload
        checks = list(getattr(w, "check", None) or [])
        preset_checks = _preset_checks(w)
        for stage in checks:
            phase = stage.removeprefix("after_")
            if phase not in campaign.phases and checks != preset_checks:
                out.append(f"workload.check: {stage} runs after the {phase} phase, which phases "
                           f"({', '.join(campaign.phases)}) leaves out: it would never run")
    base = campaign.repeat.baseline if campaign.repeat else None
    if base is not None and (base.target or base.workload):   # else campaign_problems said it
        out += _same_baseline_problems(runs)
    return sorted(set(out), key=out.index)


def _preset_checks(w: Any) -> list:
    """The checks a TPC-C preset set (a preset's own checks are not the user's to reconcile)."""
    preset: dict = (TPCC_PRESETS.get(getattr(w, "preset", None) or "") if w.family == "tpcc" else None) or {}
    checks: Any = preset.get("check") or []
    return list(checks)


def _same_baseline_problems(runs: list) -> list[str]:
    """A repeated run whose baseline configuration is the candidate's: nothing to compare."""
    by_cell: dict = {}
    for run in runs:
        if run.arm in ("baseline", "candidate") and run.repeat == 1:
            by_cell.setdefault(run.cell, {})[run.arm] = run
    for cell, arms in by_cell.items():
        base, cand = arms.get("baseline"), arms.get("candidate")
        if base is None or cand is None:
            continue
        if base.target == cand.target and base.workload == cand.workload:
            return [f"repeat.baseline: the same target and workload as the candidate's in cell {cell} (the keys "
                    "it gives have the run's own values): the comparison would measure one configuration twice"]
    return []
