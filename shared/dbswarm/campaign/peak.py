"""A peak search's settings and what its results say (the planning and the decision are
``dbswarm.campaign.search``'s): ``Search`` and ``Stop``, the campaign file's ``search:``
section; the curve's marks (``summarize``: the peak and the knee); result.json's ``search``
section (``result_section``) and its Markdown tables (``search_markdown``).
"""
from __future__ import annotations

import math
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, model_validator

from dbswarm.families import base as families


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Stop(_Strict):
    gain_below: float = Field(0.05, ge=0, description="throughput gain over the best step so far below this "
                              "fraction ...")
    gain_steps: int = Field(1, ge=1, description="... for this many steps in a row: the plateau")
    p99_ms: Optional[float] = Field(None, gt=0, description="latency SLO: the worst operation's p99 (response time "
                                    "from the intended start at a target rate) above this fails the step")
    error_rate: Optional[float] = Field(0.01, ge=0, le=1, description="failed calls above this fraction fail the step")
    achieved_below: Optional[float] = Field(None, gt=0, le=1, description="rate search: throughput below this "
                                            "fraction of the target rate fails the step")
    confidence: float = Field(0.95, gt=0.5, lt=1, description="a gain counts as below gain_below only when its "
                              "one-sided upper confidence bound is (the noise from the steps' per-second spread and "
                              "their repeated samples)")
    repeats: int = Field(2, ge=0, le=10, description="a step whose gain is below gain_below but not surely "
                         "(inconclusive: within the noise) is run again up to this many times, its samples pooled; "
                         "still inconclusive, it does not stop the growth")
    peak_samples: int = Field(3, ge=1, le=10, description="before the search stops, the values its decision "
                              "rests on (the peak, and the steps a plateau compared with it) are run again until each "
                              "has this many runs: repeated runs of one step differ far more than one run's seconds "
                              "say, so a peak never rests on one run")


class Search(_Strict):
    key: str = Field("threads", description="the workload key stepped: threads (virtual users), or the family's "
                     "rate key (YCSB target, sysbench rate)")
    start: float = Field(1, gt=0)
    factor: float = Field(2.0, gt=1)
    max: float = Field(1024, gt=0)
    max_steps: int = Field(12, ge=2, le=100)
    refine: int = Field(2, ge=0, le=10, description="narrowing steps after the geometric ones")
    stop: Stop = Field(default_factory=Stop)

    @model_validator(mode="after")
    def _range(self) -> Any:
        if self.start > self.max:
            raise ValueError("start is above max")
        return self

    @property
    def integer(self) -> bool:
        return self.key == "threads"


def pooled(samples: list[dict]) -> tuple[float, Optional[float]]:
    """One value's throughput from its samples (runs; a search repeats steps): their mean, and
    its standard error: the larger of the runs' own (each from its per-second spread, ``se``)
    pooled and, from two samples on, the spread between its runs — which the values a search's
    decision rests on always have (``stop.peak_samples``): seconds of one run are correlated,
    and repeated runs of one step differ more than one run's seconds say."""
    k = len(samples)
    mean = sum(s["throughput"] for s in samples) / k
    within = [s["se"] for s in samples if s.get("se") is not None]
    se = math.sqrt(sum(v * v for v in within)) / k if len(within) == k else None
    if k >= 2:
        sd = math.sqrt(sum((s["throughput"] - mean) ** 2 for s in samples) / (k - 1))
        se = max(se or 0.0, sd / math.sqrt(k))
    return mean, se


def by_value(steps: list[dict]) -> dict:
    """Passing steps with a throughput, grouped by value in the order first measured."""
    out: dict = {}
    for s in steps:
        if not s["failed"] and s["throughput"] is not None:
            out.setdefault(s["value"], []).append(s)
    return out


def summarize(search: Search, state: dict) -> dict:
    """The curve's marks: ``peak`` (the highest throughput of a passing value, its samples
    pooled) and ``knee`` (the smallest value whose throughput is within gain_below of the
    peak: where more concurrency stops paying) — the chosen operating point."""
    groups = by_value(state["steps"])
    if not groups:
        return {"peak": None, "knee": None}

    def mark(samples: Any) -> Any:
        first = samples[0]
        out = {k: first[k] for k in ("value", "run_id", "throughput", "p99_us")}
        if len(samples) > 1:
            mean, se = pooled(samples)
            out["throughput"] = round(mean, 2)
            out["samples"] = len(samples)
            if se is not None:
                out["se"] = round(se, 2)
        return out
    marks = sorted((mark(v) for v in groups.values()), key=lambda m: m["value"])
    peak = max(marks, key=lambda m: m["throughput"])
    knee = next(m for m in marks if m["throughput"] >= (1 - search.stop.gain_below) * peak["throughput"])
    return {"peak": peak, "knee": knee}


def result_section(doc: dict) -> dict:
    """result.json's ``search``: per cell, the curve (every step, by value), the stop and its
    reason, the peak and the knee (report.html draws the curve from ``cells[].curve``)."""
    search = Search.model_validate(doc["spec"])
    cells = []
    for c in doc["cells"]:
        marks = summarize(search, c) if c["steps"] else {"peak": None, "knee": None}
        cells.append({"cell": c["cell"], "key": search.key, "done": c.get("phase") == "done",
                      "instance": _instance(c), "workload": _workload_name(c), "stop": c.get("stop"), **marks,
                      "curve": sorted(c["steps"], key=lambda s: s["value"]),
                      "order": [s["value"] for s in c["steps"]]})
    return {"key": search.key, "spec": doc["spec"], "cells": cells}


def _instance(cell: dict) -> str:
    target = cell.get("target") or {}
    return target.get("label") or target.get("engine") or ""


def _workload_name(cell: dict) -> str:
    w = cell.get("workload") or {}
    try:
        return families.get(w["family"]).workload(w).name
    except Exception:  # an old search.json or an unknown family: the table still renders
        return w.get("name") or w.get("preset") or w.get("test") or ""


def peak_table(section: dict) -> list[str]:
    """The white-paper table of a search: the peak and the knee per instance class and
    workload, one row per searched cell."""
    cells = [c for c in section["cells"] if c.get("peak")]
    if not cells:
        return []
    key = section["key"]
    lines = ["", f"### Peak per instance class and workload (search over {key})", "",
             f"| instance | workload | peak ops/s | at {key} | p99 ms at peak | knee {key} | ops/s at knee | stopped |",
             "|---|---|---|---|---|---|---|---|"]
    for c in sorted(cells, key=lambda c: (c.get("instance") or "", c.get("workload") or "")):
        pk, kn = c["peak"], c["knee"]
        p99 = f"{pk['p99_us'] / 1000:.2f}" if pk.get("p99_us") is not None else ""
        lines.append(f"| {c.get('instance') or c['cell']} | {c.get('workload') or ''} | {pk['throughput']:,.0f} | "
                     f"{pk['value']:g} | {p99} | {kn['value']:g} | {kn['throughput']:,.0f} | "
                     f"{(c.get('stop') or {}).get('rule', 'not finished')} |")
    return lines


def search_markdown(section: dict) -> list[str]:
    lines = peak_table(section)
    for c in section["cells"]:
        key = c["key"]
        stop = c.get("stop") or {}
        lines += ["", f"### Peak search over {key}: {c['cell']}", "",
                  f"Stopped: **{stop.get('rule', 'not finished')}**: {stop.get('reason', '')}."]
        if c.get("peak"):
            pk = c["peak"]
            runs = f" (± {pk['se']:,.0f}, {pk['samples']} runs)" if pk.get("samples") and pk.get("se") is not None \
                else " (one run)" if not pk.get("samples") else f" ({pk['samples']} runs)"
            lines.append(f"Peak: {pk['throughput']:,.0f} ops/s{runs} at {key} {pk['value']:g}; knee (the "
                         f"smallest {key} within the gain threshold of the peak): {c['knee']['value']:g} "
                         f"({c['knee']['throughput']:,.0f} ops/s).")
        lines += ["", f"| {key} | run | shards | ops/s | gain | worst p99 ms | error rate | achieved | step | "
                  "mark |", "|---|---|---|---|---|---|---|---|---|---|"]
        for s in c["curve"]:
            marks = [m for m in ("peak", "knee") if c.get(m) and c[m]["value"] == s["value"]]
            gain = f"{s['gain']:+.1%}" if s.get("gain") is not None else ""
            if s.get("gain_upper") is not None:  # the noise-aware test (campaign.search.gain_tests)
                gain += f" (≤ {s['gain_upper']:+.1%}, {s['gain_test']})"
            if s.get("se") is not None and s.get("throughput") is not None:
                gain = f"±{s['se']:,.0f}/s; {gain}" if gain else f"±{s['se']:,.0f}/s"
            p99 = f"{s['p99_us'] / 1000:.2f}" if s.get("p99_us") is not None else ""
            err = f"{s['error_rate']:.2%}" if s.get("error_rate") is not None else ""
            ach = f"{s['achieved']:.0%}" if s.get("achieved") is not None else ""
            thr = f"{s['throughput']:,.0f}" if s.get("throughput") is not None else ""
            lines.append(f"| {s['value']:g} | {s['run_id']} | {s['shards']} | {thr} | {gain} | {p99} | {err} | "
                         f"{ach} | {s.get('kind', '')} | {' '.join(marks)}{' ✗ ' + s['failed'] if s['failed'] else ''} |")
    return lines
