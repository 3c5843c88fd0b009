"""Regression check against a stored baseline (baselines/<name>.json).

A metric regresses when it is worse than the baseline by more than its threshold
(default 10%): throughput lower, latency higher. The verdict and every delta go into the
campaign's result.json and summary.md.
"""
from __future__ import annotations

import time

from .report import write_reports

DEFAULT_THRESHOLD = 0.10
# metric -> (how to read it from a run's phase, True when higher is better)
METRICS = {
    "throughput": (lambda p: p.get("throughput"), True),
    "read_p99_us": (lambda p: (p.get("read_latency") or {}).get("p99_us"), False),
    "write_p99_us": (lambda p: (p.get("write_latency") or {}).get("p99_us"), False),
    "read_avg_us": (lambda p: (p.get("read_latency") or {}).get("avg_us"), False),
    "write_avg_us": (lambda p: (p.get("write_latency") or {}).get("avg_us"), False),
}


def metrics_of(result: dict) -> dict:
    """{run_id: {metric: value}} from the run phase (or load when no run phase)."""
    out = {}
    for r in result["runs"]:
        p = r["phases"].get("run") or r["phases"].get("load") or {}
        if "operations_total" not in p:
            continue
        out[r["run_id"]] = {m: get(p) for m, (get, _) in METRICS.items() if get(p) is not None}
    return out


def compare_metrics(baseline: dict, current: dict, thresholds: dict) -> list[dict]:
    deltas = []
    for run_id, base in baseline.items():
        now = current.get(run_id)
        if now is None:
            deltas.append({"run_id": run_id, "metric": "run", "baseline": "present", "value": "missing",
                           "change": -1.0, "threshold": 0.0, "regressed": True})
            continue
        for metric, bval in base.items():
            if metric not in now or metric not in METRICS or not bval:
                continue
            higher_better = METRICS[metric][1]
            value = now[metric]
            change = (value - bval) / bval
            worse = -change if higher_better else change
            limit = float(thresholds.get(metric, thresholds.get("default", DEFAULT_THRESHOLD)))
            deltas.append({"run_id": run_id, "metric": metric, "baseline": bval, "value": value,
                           "change": round(change, 4), "threshold": limit, "regressed": worse > limit})
    return deltas


def compare_with_baseline(store, campaign_id, baseline, thresholds, save_baseline=False) -> dict:
    result_key = store.key(campaign_id, "result.json")
    result = store.get_json(result_key)
    current = metrics_of(result)
    out = {"campaign_id": campaign_id, "baseline": baseline}
    if baseline:
        try:
            base_doc = store.get_json(f"baselines/{baseline}.json")
        except KeyError:
            base_doc = None
        if base_doc is None:
            out.update(verdict="no-baseline", deltas=[], regressions=0)
        else:
            deltas = compare_metrics(base_doc["metrics"], current, thresholds)
            regressions = sum(d["regressed"] for d in deltas)
            out.update(verdict="regressed" if regressions else "pass", deltas=deltas, regressions=regressions,
                       baseline_campaign=base_doc.get("campaign_id"))
        result["compare"] = {k: out[k] for k in ("baseline", "verdict", "deltas")}
        if out["verdict"] == "regressed":
            result["status"] = "regressed"
        write_reports(store, campaign_id, result)
    else:
        out.update(verdict="not-compared", deltas=[], regressions=0)
    if save_baseline and baseline and out["verdict"] != "regressed":
        store.put_json(f"baselines/{baseline}.json", {"schema_version": 1, "campaign_id": campaign_id,
                                                      "saved_at": time.time(), "metrics": current})
        out["baseline_saved"] = True
    return {k: v for k, v in out.items() if k != "deltas"} | {"deltas": len(out["deltas"])}
