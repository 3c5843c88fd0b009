"""`dbswarm compare BASELINE CANDIDATE`: two sets of results, figure by figure.

Each side is one or more results (repeated runs of one configuration: a campaign with
``repeat: N`` gives N runs, several results give theirs). Runs are matched by their cell
(``000``, a matrix's cells) and phase; each pair's figures — throughput, p50 / p95 / p99 /
p99.9 per operation, the error rate — are judged with the nightly verdict's statistics
(``dbswarm.results.verdict.stats``, as ``regression.judge_campaign`` uses them):

- enough runs for a test (its smallest p below alpha, e.g. 4 against 4): the one-sided
  Mann–Whitney U test each way, the median's change with its bootstrap interval, Holm's
  correction over every figure compared;
- one candidate run against 5 or more baseline runs: the baseline's prediction interval;
- fewer (one run a side): the fixed threshold, as the nightly verdict does against a single
  stored baseline value, and the figure says so (the runs' noise is unknown: per-second
  figures are not samples, seconds of one run are correlated).

A figure is ``worse`` when its change is significant (or, with the fixed threshold, beyond it)
and worse than ``--max-regression``; ``better`` the other way; ``unchanged`` when its change
(its interval, where there is one) stays within the threshold; else ``inconclusive``. A pair
is ``not comparable`` (and says why) when the configurations differ (engine, family, workload,
threads, record count), a phase was client-bound (the load generator's ceiling), the client
models differ, or a phase did not complete.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

from dbswarm.errors import DbswarmError
from dbswarm.measure.recorder import decode_histogram
from dbswarm.results.phase import PhaseResult, phases_of
from dbswarm.results.store import open_store, s3_result_ref
from dbswarm.results.verdict import stats as V
from dbswarm.results.verdict.regression import MIN_PREDICTION_REFERENCE

DEFAULT_MAX_REGRESSION = 0.05
DEFAULT_ALPHA = 0.05
# the error rate's rise, in points, that fails: 0.1 point (a retried deadlock or two is not a
# regression; one call in 200 failing more is)
DEFAULT_ERRORS_THRESHOLD = 0.001
# the exit statuses of `dbswarm compare` (docs/failure-and-safety.md): 4 as `dbswarm run`'s
# regressed; 12 unused elsewhere
EXIT_PASS, EXIT_REGRESSED, EXIT_NOT_COMPARABLE = 0, 4, 12
PERCENTILES = (("p50", "p50_us"), ("p95", "p95_us"), ("p99", "p99_us"), ("p99.9", "p99_9_us"))
METRIC_NAMES = ("throughput", "errors") + tuple(name for name, _ in PERCENTILES)
# the workload keys that say how much data a run works on, per family's spelling
SIZE_KEYS = ("recordcount", "table_size", "tables", "warehouses")


# ---- reading results ---------------------------------------------------------------------------

def read_result(ref: str, results_dir: str = "results") -> tuple[dict, str]:
    """A result.json and where it was read: an ``s3://bucket/campaigns/<id>`` URL (or the
    result.json under it), a result.json, a campaign folder, or a campaign id under
    ``results_dir`` (as `dbswarm show` resolves one)."""
    if ref.startswith("s3://"):
        if "/campaigns/" not in ref or not ref.partition("/campaigns/")[2]:
            raise DbswarmError(f"{ref}: expected s3://bucket[/prefix]/campaigns/<campaign-id>")
        bucket_url, key = s3_result_ref(ref)
        try:
            return open_store(bucket_url).get_json(key), f"{bucket_url}/{key}"
        except KeyError:
            raise DbswarmError(f"no result at {bucket_url}/{key}") from None
    p = Path(ref)
    for c in (p, p / "result.json", Path(results_dir) / ref / "result.json"):
        if c.is_file():
            try:
                doc = json.loads(c.read_text())
            except ValueError as exc:
                raise DbswarmError(f"{c}: not a result.json ({exc})") from None
            if not isinstance(doc, dict) or "runs" not in doc:
                raise DbswarmError(f"{c}: not a dbswarm result.json (no runs)")
            return doc, str(c)
    raise DbswarmError(f"no result found at {ref} (a result.json, a campaign folder, a campaign id under "
                       f"{results_dir}/, or an s3:// URL)")


def read_side(refs: str, results_dir: str = "results") -> list[tuple[dict, str]]:
    """One side of a comparison: ``A,B,C`` (comma-separated references, repeated runs)."""
    names = [x.strip() for x in refs.split(",") if x.strip()]
    if not names:
        raise DbswarmError(f"compare: {refs!r}: expected at least one result")
    return [read_result(x, results_dir) for x in names]


def parse_thresholds(specs: list[str]) -> dict:
    """``["5%", "p99=10%", "READ:p99.9=30%", "errors=0.5%"]`` → {"default": 0.05, "p99": 0.1, ...}.
    A bare value is the default; ``metric=`` one metric (every operation); ``OP:metric=`` one
    operation's. The errors threshold is in percentage points of the error rate."""
    out: dict[str, float] = {"default": DEFAULT_MAX_REGRESSION}
    given: dict[str, str] = {}
    for spec in specs or []:
        key, _, value = spec.rpartition("=")
        text = value.strip()
        try:
            v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise DbswarmError(f"--max-regression {spec}: expected a share like 5% or 0.05") from None
        if not 0 <= v <= 100:
            raise DbswarmError(f"--max-regression {spec}: expected a share between 0% and 10000%")
        metric = key.rpartition(":")[2]
        if key and metric not in METRIC_NAMES:
            raise DbswarmError(f"--max-regression {spec}: unknown metric {metric!r} (one of "
                               f"{', '.join(METRIC_NAMES)}, optionally OPERATION:metric)")
        if (key or "default") in given and out[key or "default"] != v:
            raise DbswarmError(f"--max-regression {spec}: {key or 'the default share'} is also given as "
                               f"--max-regression {given[key or 'default']}: one share each")
        given[key or "default"] = spec
        out[key or "default"] = v
    return out


def threshold_of(thresholds: dict, metric: str, op: Optional[str]) -> float:
    if op and f"{op}:{metric}" in thresholds:
        return thresholds[f"{op}:{metric}"]
    if metric == "errors":
        return thresholds.get("errors", DEFAULT_ERRORS_THRESHOLD)
    return thresholds.get(metric, thresholds["default"])


def _config(run: dict) -> dict:
    """What must match for two runs' figures to be comparable."""
    w, t = run.get("workload") or {}, run.get("target") or {}
    out = {"engine": t.get("engine"), "family": w.get("family"), "workload": w.get("name") or w.get("preset"),
           "threads": run.get("threads", w.get("threads"))}
    for k in SIZE_KEYS:
        if w.get(k) is not None:
            out[k] = w[k]
    return out


def collect(side: list[tuple[dict, str]]) -> dict:
    """{(cell, phase): {"samples": [PhaseResult], "configs": [...], "runs": [where from]}} of one
    side's results. A result's baseline-arm runs (``repeat: {baseline}``) and search steps are
    not repetitions of its configuration: left out."""
    out: dict = {}
    for result, where in side:
        for r in result.get("runs") or []:
            if r.get("search_step") or (r.get("arm") or "candidate") != "candidate":
                continue
            cell = str(r.get("cell") or r["run_id"])
            for name, p in phases_of(r):
                if p.operations_total is None:
                    continue  # prepare, or a phase that never ran
                e = out.setdefault((cell, name), {"samples": [], "configs": [], "runs": []})
                e["samples"].append(p)
                e["configs"].append(_config(r))
                e["runs"].append(f"{result.get('campaign_id', where)}/{r['run_id']}")
    return out


# ---- why a pair is not comparable ---------------------------------------------------------------

def _differences(a: dict, b: dict) -> list[str]:
    return [f"{k} {a.get(k)} → {b.get(k)}" for k in dict.fromkeys(list(a) + list(b)) if a.get(k) != b.get(k)]


def not_comparable(base: dict, cand: dict) -> list[str]:
    """Why the two sides' runs of one cell and phase cannot be compared ([] when they can)."""
    why = []
    for label, e in (("baseline", base), ("candidate", cand)):
        for cfg in e["configs"][1:]:
            diff = _differences(e["configs"][0], cfg)
            if diff:
                why.append(f"the {label}'s runs differ among themselves ({', '.join(diff)})")
                break
    diff = _differences(base["configs"][0], cand["configs"][0])
    if diff:
        why.append("different configuration: " + ", ".join(diff))
    models = []
    for label, e in (("baseline", base), ("candidate", cand)):
        for p, run in zip(e["samples"], e["runs"]):
            c = p.client or {}
            if c.get("verdict") == "bound" and not c.get("allowed"):
                why.append(f"client-bound phase in the {label} ({run}): the load generator's ceiling, not the "
                           f"database's ({c.get('reason') or 'client verdict bound'})")
            if p.status not in ("complete", "complete_with_errors", None):
                why.append(f"the {label}'s phase did not complete ({run}: {p.status})")
        models.append(sorted({str((p.client or {}).get("model") or "threads") for p in e["samples"]}))
    if models[0] != models[1]:
        why.append(f"different client model: {', '.join(models[0])} → {', '.join(models[1])}")
    return why


# ---- the figures ---------------------------------------------------------------------------------

def _latency(op: dict) -> dict:
    return op.get("intended") or op  # at a target rate, from the intended start (no coordinated omission)


def figure_values(samples: list[PhaseResult]) -> dict:
    """{(metric, op or None): [one value per run]} of a side's samples of one phase."""
    out: dict = {}
    for p in samples:
        if p.throughput is not None:
            out.setdefault(("throughput", None), []).append(float(p.throughput))
        out.setdefault(("errors", None), []).append(float(p.error_rate or 0.0))
        for op, s in sorted((p.operations or {}).items()):
            lat = _latency(s)
            for name, key in PERCENTILES:
                if lat.get(key) is not None:
                    out.setdefault((name, op), []).append(float(lat[key]))
        for op, lat in statement_latencies(p).items():
            for name, key in PERCENTILES:
                if lat.get(key) is not None:
                    out.setdefault((name, op), []).append(float(lat[key]))
    return out


def statement_latencies(phase: PhaseResult) -> dict:
    """The per-statement latencies of a family that has them (custom workloads: its ``custom``
    section), as operations' figures: {"<transaction>.<n>": {"p50_us", "p95_us", "p99_us"}} (the
    section keeps milliseconds and no p99.9)."""
    out = {}
    section = phase.family("custom") or {}
    for name, txn in sorted((section.get("transactions") or {}).items()):
        for st in txn.get("statements") or []:
            lat = st.get("latency") or {}
            out[f"{name}.{st.get('statement')}"] = {f"{k}_us": lat[f"{k}_ms"] * 1000 for k in ("p50", "p95", "p99")
                                                    if lat.get(f"{k}_ms") is not None}
    return out


def _label(metric: str, op: Optional[str]) -> str:
    return metric if op is None else f"{op} {metric}"


def judge_figure(metric: str, op: Optional[str], base: list[float], cand: list[float], threshold: float,
                 alpha: float, seed: int) -> dict:
    """One figure's statistics (before Holm's correction, which ``finish`` applies over every
    tested figure)."""
    higher = metric == "throughput"
    d: dict[str, Any] = {"figure": _label(metric, op), "metric": metric, "operation": op,
                         "higher_is_better": higher, "baseline": V.median(base), "candidate": V.median(cand),
                         "n_baseline": len(base), "n_candidate": len(cand), "threshold": threshold}
    if metric == "errors":
        # a count's share: the difference in percentage points against its threshold (not tested)
        diff = d["candidate"] - d["baseline"]
        d.update(change=round(diff, 6), change_unit="points", method="threshold",
                 verdict="worse" if diff > threshold else "better" if -diff > threshold else "unchanged")
        d["why"] = (f"error rate {d['baseline']:.2%} → {d['candidate']:.2%} ({diff * 100:+.2f} points; "
                    f"threshold {threshold * 100:.2g} points)")
        return d
    ref = d["baseline"]
    d["change"] = round(d["candidate"] / ref - 1, 4) if ref else None
    if d["change"] is None:
        d.update(method="none", verdict="not comparable", why="the baseline's figure is 0")
        return d
    if V.min_p(len(cand), len(base)) < alpha:
        worse = V.judge(cand, base, higher, alpha=alpha, min_effect=threshold, seed=seed)
        better = V.mann_whitney(cand, base, "greater" if higher else "less")
        d.update(method="statistical", ci=worse["ci"], confidence=worse["confidence"], p_worse=worse["p"],
                 p_better=round(better["p"], 6), cliffs_delta=worse["cliffs_delta"], test=worse["test"])
    elif len(cand) == 1 and len(base) >= MIN_PREDICTION_REFERENCE:
        worse = V.predict(cand[0], base, higher)
        better = V.predict(cand[0], base, not higher)
        d.update(method="prediction", p_worse=worse["p"], p_better=better["p"], test=worse["test"])
    else:
        d["method"] = "threshold"
    return d


def _worse_by(d: dict) -> float:
    return -d["change"] if d["higher_is_better"] else d["change"]


def _decide(d: dict, alpha: float) -> None:
    """The verdict of one figure whose p-values (if any) are adjusted."""
    if d["method"] == "none" or d["metric"] == "errors":
        return
    w, thr = _worse_by(d), d["threshold"]
    change = f"{d['change']:+.1%}"
    if d["method"] == "threshold":
        d["verdict"] = "worse" if w > thr else "better" if -w > thr else "unchanged"
        d["why"] = f"{change}, {'beyond' if d['verdict'] != 'unchanged' else 'within'} the {thr:.0%} threshold"
        return
    pw, pb = d["p_worse_adjusted"], d["p_better_adjusted"]
    if pw < alpha and w > thr:
        d["verdict"] = "worse"
    elif pb < alpha and -w > thr:
        d["verdict"] = "better"
    else:
        ci = d.get("ci")
        inside = (max(abs(ci[0]), abs(ci[1])) if ci else abs(d["change"])) <= thr
        d["verdict"] = "unchanged" if inside else "inconclusive"
    ci_text = (f", {d['confidence']:.0%} CI {d['ci'][0]:+.1%} … {d['ci'][1]:+.1%}" if d.get("ci") else "")
    p = pb if d["verdict"] == "better" else pw
    what = {"worse": "worse beyond", "better": "better beyond", "unchanged": "within",
            "inconclusive": "not shown beyond the noise; the interval reaches past"}[d["verdict"]]
    d["why"] = f"{change}{ci_text}, p {p:.3g} (Holm) vs alpha {alpha:g}: {what} the {thr:.0%} threshold"


def method_note(pair: dict, tested: int, alpha: float) -> str:
    """How a pair's figures were judged, said once per pair."""
    n_b, n_c = len(pair["baseline_runs"]), len(pair["candidate_runs"])
    methods = set(pair["methods"])
    if "statistical" in methods:
        return (f"{n_b} vs {n_c} runs: one-sided Mann–Whitney U each way, the median's change with its 95 % "
                f"bootstrap interval, Holm's correction over the {tested} figures tested (the nightly verdict's "
                "statistics)")
    if "prediction" in methods:
        return (f"1 run against {n_b}: the baseline's prediction interval (Student's t), Holm's correction over "
                f"the {tested} figures tested (the nightly verdict's test of one run against its history)")
    if "threshold" in methods:
        return (f"{n_b} vs {n_c} run(s): too few for a test (its smallest p, {V.min_p(n_c, n_b):.3g}, is not below "
                f"alpha {alpha:g}): the fixed threshold decides, as the nightly verdict does against a single "
                "stored value; the runs' noise is unknown (per-second figures are not samples: seconds of one "
                "run are correlated). Repeat the runs (repeat: 5) for a test")
    return ""


def _holm(figures: list[dict], key: str) -> None:
    tested = [d for d in figures if d.get("method") in ("statistical", "prediction")]
    for d, adj in zip(tested, V.holm([d[key] for d in tested])):
        d[key + "_adjusted"] = round(adj, 6)


# ---- the comparison ----------------------------------------------------------------------------

def compare(baseline: list[tuple[dict, str]], candidate: list[tuple[dict, str]], thresholds: Optional[dict] = None,
            alpha: float = DEFAULT_ALPHA, seed: int = 0, spectra: bool = False) -> dict:
    """The comparison document (``dbswarm compare --format json``): per cell and phase, its
    figures and their verdicts; the overall verdict and the exit status. ``spectra``: each
    pair's latency percentile spectra too, per operation and side (the HTML page draws them)."""
    thresholds = thresholds or {"default": DEFAULT_MAX_REGRESSION}
    base, cand = collect(baseline), collect(candidate)
    pairs: list[dict] = []
    for key in sorted(set(base) | set(cand), key=lambda k: (k[0], _phase_order(k[1]))):
        cell, phase = key
        b, c = base.get(key), cand.get(key)
        pair: dict[str, Any] = {"run": cell, "phase": phase, "baseline_runs": (b or {}).get("runs", []),
                                "candidate_runs": (c or {}).get("runs", []), "figures": []}
        if b is None or c is None:
            pair["not_comparable"] = [f"run {cell}'s {phase} phase is only in the "
                                      f"{'candidate' if b is None else 'baseline'}"]
        else:
            pair["not_comparable"] = not_comparable(b, c)
            pair["config"] = b["configs"][0]
            bv, cv = figure_values(b["samples"]), figure_values(c["samples"])
            statements = {op for p in b["samples"] + c["samples"] for op in statement_latencies(p)}
            for fkey in list(dict.fromkeys(list(bv) + list(cv))):
                metric, op = fkey
                if fkey not in bv or fkey not in cv:
                    pair["figures"].append({"figure": _label(metric, op), "metric": metric, "operation": op,
                                            "verdict": "not comparable", "method": "none",
                                            "why": f"only in the {'baseline' if fkey in bv else 'candidate'}"})
                    continue
                pair["figures"].append(judge_figure(metric, op, bv[fkey], cv[fkey],
                                                    threshold_of(thresholds, metric, op), alpha, seed))
                if op in statements:  # a drill-down: corrected among the statements (finish)
                    pair["figures"][-1]["level"] = "statement"
        pair["comparable"] = not pair["not_comparable"]
        if spectra:
            pair["spectra"] = side_spectra(b, c)
        pairs.append(pair)
    return finish(pairs, baseline, candidate, thresholds, alpha)


def side_spectra(base: Optional[dict], cand: Optional[dict]) -> dict:
    """{"x": grid, "operations": {op: {"baseline": [µs], "candidate": [µs]}}}: each side's runs'
    histograms of an operation merged, read at percentiles 1 - 1/x (x on 8 points per decade, as
    report.html's spectrum; None past what a side's count resolves)."""
    merged: dict = {}
    for label, e in (("baseline", base), ("candidate", cand)):
        for p in (e or {}).get("samples", []):
            for op, text in (p.histograms or {}).items():
                if not text:
                    continue
                h = merged.setdefault(op, {}).get(label)
                if h is None:
                    merged[op][label] = decode_histogram(text)
                else:
                    h.decode_and_add(text)
    top = max((h.get_total_count() for sides in merged.values() for h in sides.values()), default=0)
    if top < 2:
        return {}
    grid = [10 ** (k / 8) for k in range(int(math.log10(top) * 8) + 1)]
    return {"x": grid, "operations": {
        op: {label: [h.get_value_at_percentile(100.0 * (1 - 1 / x)) if x <= h.get_total_count() else None
                     for x in grid] for label, h in sides.items()} for op, sides in sorted(merged.items())}}


def _phase_order(name: str) -> int:
    return {"load": 0, "run": 1}.get(name, 2)


def finish(pairs: list[dict], baseline: list[tuple[dict, str]], candidate: list[tuple[dict, str]], thresholds: dict, alpha: float) -> dict:
    figures = [d for p in pairs if p["comparable"] for d in p["figures"]]
    # Holm's correction within two families: the phase's own figures (throughput, errors, each
    # operation's percentiles), and its statements' (a custom workload's drill-down), so that a
    # workload of many statements does not take the power to see a change of its transactions
    for family in ([d for d in figures if d.get("level") != "statement"],
                   [d for d in figures if d.get("level") == "statement"]):
        _holm(family, "p_worse")
        _holm(family, "p_better")
    for d in figures:
        _decide(d, alpha)
    for p in pairs:
        if not p["comparable"]:
            for d in p["figures"]:
                d["verdict"], d["why"] = "not comparable", "; ".join(p["not_comparable"])
        p["methods"] = sorted({d["method"] for d in p["figures"] if d["method"] != "none"})
        p["method_note"] = method_note(p, sum(d["method"] in ("statistical", "prediction") for d in figures), alpha)
        p["verdict"] = ("not comparable" if not p["comparable"] else
                        "worse" if any(d["verdict"] == "worse" for d in p["figures"]) else "pass")
    regressions = [f"run {p['run']}, {p['phase']} phase, {d['figure']}: {d['why']}"
                   for p in pairs if p["comparable"] for d in p["figures"] if d["verdict"] == "worse"]
    apart = [f"run {p['run']}, {p['phase']} phase: not comparable: {'; '.join(p['not_comparable'])}"
             for p in pairs if not p["comparable"]]
    if regressions:
        verdict, status = "regressed", EXIT_REGRESSED
    elif apart or not pairs:
        verdict, status = "not comparable", EXIT_NOT_COMPARABLE
        if not pairs:
            apart = ["no measured phase on either side"]
    else:
        verdict, status = "pass", EXIT_PASS
    return {"kind": "dbswarm-compare", "schema_version": 1,
            "baseline": [_side_doc(r, w) for r, w in baseline], "candidate": [_side_doc(r, w) for r, w in candidate],
            "alpha": alpha, "thresholds": thresholds, "verdict": verdict, "exit_status": status,
            "regressions": regressions, "not_comparable": apart, "pairs": pairs}


def _side_doc(result: dict, where: str) -> dict:
    return {"campaign_id": result.get("campaign_id"), "name": result.get("name"), "status": result.get("status"),
            "location": where, "runs": len(result.get("runs") or [])}
