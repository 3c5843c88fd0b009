"""The regression verdict of a campaign (the compare step).

Per matrix cell and metric, this campaign's samples (one per run: ``repeat: N`` gives N)
are judged against a reference, chosen in this order:

1. the baseline configuration measured in this campaign (``repeat: {count, baseline}``,
   interleaved B A B A …);
2. the history of this campaign's name (``history/<name>/``, one document per compared
   campaign), from its newest change point on: the stable segment the present is compared
   with;
3. the stored baseline (``baselines/<name>.json``).

With enough samples for the test to say anything (its smallest p-value below alpha), the
verdict is statistical (``dbswarm.results.verdict.stats.judge``: Mann–Whitney U, one-sided; the median's
change with a bootstrap interval; Cliff's delta; Holm's correction over every metric and
cell). One run against its history is judged by the history's prediction interval; too
little history is "inconclusive" (which does not fail); against a single stored baseline
value the fixed threshold (``results.thresholds``, default 10 %) decides, and the result says
so. Over the history, E-Divisive means
marks change points (those among the ``recent`` newest campaigns are marked); one on tonight's
runs whose later segment is worse fails the verdict. Everything goes into result.json (``compare``) and summary.md.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from dbswarm.measure.headroom import limits_figures
from dbswarm.results.phase import PhaseResult, main_phase
from dbswarm.results.report.files import MODEL_NOT_RECORDED, write_reports
from dbswarm.results.report.files import short_number as _num
from dbswarm.results.store import RESULT_DOC, Store, baseline_key, campaign_key, history_prefix
from dbswarm.results.verdict import stats as V

DEFAULT_THRESHOLD = 0.10
# metric -> (how to read it from a run's phase, True when higher is better); read_latency and
# write_latency merge the operations the run's family declares reads and writes (aggregate.merge_phase)
METRICS: dict[str, tuple[Callable[[PhaseResult], Optional[float]], bool]] = {
    "throughput": (lambda p: p.throughput, True),
    "read_p99_us": (lambda p: (p.read_latency or {}).get("p99_us"), False),
    "write_p99_us": (lambda p: (p.write_latency or {}).get("p99_us"), False),
    "read_avg_us": (lambda p: (p.read_latency or {}).get("avg_us"), False),
    "write_avg_us": (lambda p: (p.write_latency or {}).get("avg_us"), False),
}
MIN_PREDICTION_REFERENCE = 5  # history runs a single run tonight is judged against (prediction interval)
JUDGED = ("throughput", "read_p99_us", "write_p99_us")  # the statistical verdict's metrics (avg follows p99)
HISTORY_SCHEMA_VERSION = 1


def _phase(run: dict) -> Optional[PhaseResult]:
    return main_phase(run)


def metrics_of(result: dict) -> dict:
    """{cell: {metric: value}} of the candidate runs' run phase (load when no run phase):
    the median over repetitions."""
    return {cell: {m: V.median(v) for m, v in ms.items()}
            for cell, ms in samples_of(result).get("candidate", {}).items()}


def samples_of(result: dict) -> dict:
    """{arm: {cell: {metric: [one value per run]}}}: arm candidate (every run when there is
    no baseline configuration) or baseline."""
    out: dict = {}
    for r in result["runs"]:
        p = _phase(r)
        if p is None or p.operations_total is None or p.status not in ("complete", None):
            continue
        if r.get("search_step"):
            continue  # a search's steps are not repetitions of one configuration
        cell = r.get("cell") or r["run_id"]
        arm = r.get("arm") or "candidate"
        for m, (get, _) in METRICS.items():
            v = get(p)
            if v is not None:
                out.setdefault(arm, {}).setdefault(cell, {}).setdefault(m, []).append(v)
    return out


def client_models_of(result: dict) -> dict:
    """{cell: the client model its candidate runs ran (``client.model``: threads or
    multiplexed)}, where the result says."""
    out: dict = {}
    for r in result.get("runs") or []:
        if r.get("search_step") or (r.get("arm") or "candidate") != "candidate":
            continue
        p = _phase(r)
        model = p.client.get("model") if p is not None else None
        if model:
            out.setdefault(r.get("cell") or r["run_id"], model)
    return out


def client_model_changes(result: dict, history: list[dict]) -> list[dict]:
    """The cells whose client model tonight differs from the newest history campaign that
    holds the cell: [{run_id, before, now, campaign_id}] (``before`` None: that campaign did not
    record it — history written before 2026-11-28 — and tonight's is not the old default)."""
    out = []
    for cell, now in client_models_of(result).items():
        for doc in reversed(history):
            if cell not in (doc.get("samples") or {}):
                continue
            before = (doc.get("client_models") or {}).get(cell)
            if before != now and (before is not None or now != "threads"):
                out.append({"run_id": cell, "before": before, "now": now, "campaign_id": doc.get("campaign_id")})
            break
    return out


def _model_note(change: dict) -> str:
    before = change["before"] or MODEL_NOT_RECORDED
    return (f"the client model changed: {before} → {change['now']} (newest reference campaign "
            f"{change['campaign_id']}): the reference was measured by another client")


def _threshold_delta(cell: str, metric: str, values: list[float], ref: list[float], thresholds: dict,
                     source: Optional[str]) -> dict:
    higher_better = METRICS[metric][1]
    value, bval = V.median(values), V.median(ref)
    change = (value - bval) / bval if bval else 0.0
    worse = -change if higher_better else change
    limit = float(thresholds.get(metric, thresholds.get("default", DEFAULT_THRESHOLD)))
    return {"run_id": cell, "metric": metric, "baseline": bval, "value": value, "change": round(change, 4),
            "threshold": limit, "regressed": worse > limit, "method": "threshold", "reference": source,
            "n": len(values), "n_reference": len(ref),
            "why": f"{cell} {metric}: {'regressed' if worse > limit else 'no regression'}: {_num(bval)} → "
                   f"{_num(value)} ({change:+.1%}); {len(values)} vs {len(ref)} sample(s) of {source}: too few for "
                   f"a test (smallest p {V.min_p(len(values), len(ref)):.3g}); fixed threshold {limit:.0%}"}


# ---- the history -------------------------------------------------------------------------------

def read_history(store: Store, name: str, limit: int) -> list[dict]:
    keys = [k for k in store.list(history_prefix(name)) if k.endswith(".json")][-limit:]
    out = []
    for k in keys:
        try:
            out.append(store.get_json(k))
        except (KeyError, ValueError):
            continue
    return out


def append_history(store: Store, name: str, result: dict, samples: dict, verdict: str,
                   regressions: Optional[list] = None, held: Optional[list] = None) -> str:
    """The campaign's samples in the history, with its verdict and what regressed and how
    (``regressions``: [{run_id, metric, method}]) and what was worse than the reference but at
    a level already reported (``held``: [{run_id, metric}]). Those samples stay out of the
    later nights' reference until a person accepts the level (``dbswarm baseline accept``) or
    a change point says it moved."""
    at = result.get("created_at") or time.time()
    key = f"{history_prefix(name)}{at:017.6f}-{result['campaign_id']}.json"
    store.put_json(key, {"schema_version": HISTORY_SCHEMA_VERSION, "campaign_id": result["campaign_id"], "at": at,
                         "verdict": verdict, "samples": samples, "regressed": list(regressions or []),
                         "held": list(held or []), "client_models": client_models_of(result)})
    return key


def history_keys(store: Store, name: str) -> list[str]:
    return [k for k in store.list(history_prefix(name)) if k.endswith(".json")]


def accept_level(store: Store, name: str, campaign_id: Optional[str] = None, note: str = "") -> dict:
    """``dbswarm baseline accept``: a person says the level of a flagged night is the new normal.
    Its samples (and the held nights after it at that level) re-enter the reference, which
    starts there from the next night on. Without ``campaign_id``: the newest night that regressed
    (the start of the level; the nights held at it after are accepted with it)."""
    from dbswarm.errors import DbswarmError  # noqa: PLC0415
    keys = history_keys(store, name)
    if not keys:
        raise DbswarmError(f"baseline accept: no history for the campaign name {name!r} "
                           f"(looked under {store.location(history_prefix(name))})")
    docs = [(k, store.get_json(k)) for k in keys]
    flagged = [(k, d) for k, d in docs if d.get("regressed") or ("regressed" not in d and _flags(d))]
    if campaign_id:
        chosen = [(k, d) for k, d in docs if d.get("campaign_id") == campaign_id]
        if not chosen:
            raise DbswarmError(f"baseline accept: campaign_id: {campaign_id!r} is not in the history of {name!r}")
    else:
        chosen = flagged[-1:]
        if not chosen:
            raise DbswarmError(f"baseline accept: the history of {name!r} has no flagged night to accept")
    key, doc = chosen[-1]
    doc["accepted"] = {"at": time.time(), "note": note}
    store.put_json(key, doc)
    return {"name": name, "campaign_id": doc["campaign_id"], "key": key,
            "flags": [f"{r['run_id']} {r['metric']}" for r in _flags(doc)]}


def _flags(doc: dict) -> list[dict]:
    """What a history document holds out of the reference: [{run_id, metric}] ("*": every one,
    a document written before what regressed was recorded)."""
    if "regressed" not in doc:
        return [{"run_id": "*", "metric": "*"}] if doc.get("verdict") == "regressed" else []
    return list(doc.get("regressed") or []) + list(doc.get("held") or [])


def _held(doc: dict, cell: str, metric: str) -> bool:
    return any(f.get("run_id") in (cell, "*") and f.get("metric") in (metric, "*") for f in _flags(doc))


EVIDENCE = ("statistical", "prediction", "change point")  # the methods whose regression moves a reference


def regressions_of(doc: dict) -> list[dict]:
    """What a verdict document found regressed, per run and metric, and by which method."""
    out = [{"run_id": d["run_id"], "metric": d["metric"], "method": d["method"]}
           for d in doc.get("deltas") or [] if d.get("regressed")]
    out += [{"run_id": c["run_id"], "metric": c["metric"], "method": "change point"}
            for c in doc.get("change_points") or [] if c.get("regressed")]
    return out


def held_of(doc: dict) -> list[dict]:
    """The deltas worse than their reference but at a level already reported (not a new
    regression): they stay out of the reference as the flagged night does."""
    return [{"run_id": d["run_id"], "metric": d["metric"]} for d in doc.get("deltas") or [] if d.get("held")]


def _series(history: list[dict], cell: str, metric: str) -> tuple[list, list]:
    """The history's samples of one cell and metric, oldest first: (values, campaign of each)."""
    values, owners = [], []
    for h in history:
        for v in ((h.get("samples") or {}).get(cell) or {}).get(metric) or []:
            values.append(v)
            owners.append(h["campaign_id"])
    return values, owners


def _reference(hist: list[float], owners: list, history: list[dict], alpha: float, seed: Any, cell: str,
               metric: str) -> tuple:
    """The reference segment of one cell and metric: (its indexes in ``hist``, the index it
    starts from, the held-out indexes, the level reported by the newest flagged night still
    held out as (median, campaign) or None).

    It starts at the history's newest change point (found in the history alone: a change at
    the present must not shrink the reference to its edge) or after the newest night a person
    accepted (``dbswarm baseline accept``). A night flagged in this run and metric (or held at
    a reported level) stays out of it: a −49 % night must not widen the reference so that the
    next drop passes. It re-enters only when the level it showed is the new normal: held nights
    after the newest change point that are nearer its later level than its earlier one, or the
    run of held nights that starts at the accepted night."""
    by_id = {h["campaign_id"]: h for h in history}
    held = [_held(by_id[o], cell, metric) for o in owners]
    accepted = [bool(by_id[o].get("accepted")) for o in owners]
    cps = V.e_divisive(hist, alpha=alpha / 2, seed=seed)
    newest = max(cps, key=lambda cp: cp["index"]) if cps else None
    start = newest["index"] if newest else 0
    readmit = set()
    if newest and not any(accepted[start:]):
        # the change point says the level moved: the held nights at its later level are that level
        before, after = newest["before_median"], newest["after_median"]
        readmit = {k for k in range(start, len(hist)) if held[k] and abs(hist[k] - after) < abs(hist[k] - before)}
    if any(accepted):
        start = max(start, max(k for k, a in enumerate(accepted) if a))
        k = start
        while k < len(hist) and (held[k] or accepted[k]):  # the accepted night and the held run after it
            readmit.add(k)
            k += 1
    out = [k for k in range(len(hist)) if held[k] and k not in readmit]
    ref = [k for k in range(start, len(hist)) if k not in out]
    known = None
    later = [k for k in out if k >= start]
    evidence = [k for k in later if _reported(by_id[owners[k]], cell, metric)]
    if evidence:
        first = min(k for k in later if owners[k] == owners[evidence[-1]])
        if all(k in out for k in range(first, len(hist))):
            # every night since stayed at the reported level: tonight there is not a new regression;
            # a night back at the reference's level since ends it (the next drop is a new one)
            known = (V.median([hist[k] for k in later if k >= first]), owners[evidence[-1]])
    return ref, start, out, known


def _reported(doc: dict, cell: str, metric: str) -> bool:
    """A night whose regression in this run and metric a test showed (its level is the one
    reported); a fixed-threshold alarm, or one in another metric, sets no level."""
    if doc.get("verdict") != "regressed":
        return False
    if "regressed" not in doc:
        return True
    return any(r.get("run_id") == cell and r.get("metric") == metric and r.get("method") in EVIDENCE
               for r in doc["regressed"])


# ---- the verdict ------------------------------------------------------------------------------

def judge_campaign(result: dict, history: list[dict], base_doc: Optional[dict], thresholds: dict, settings: dict,  # noqa: C901
                   baseline_name: Optional[str] = None) -> dict:
    """The verdict document (result.json's ``compare``) from the result, the history (oldest
    first, this campaign not in it) and the stored baseline (or None)."""
    alpha = float(settings.get("alpha", 0.05))
    min_effect = float(settings.get("min_effect", 0.02))
    recent = int(settings.get("recent", 5))
    samples = samples_of(result)
    current = samples.get("candidate", {})
    in_campaign = samples.get("baseline")
    use_history = bool(history) and not in_campaign
    # with the history, two detectors share the false-alarm budget (Bonferroni): the test of the
    # present against the stable segment, and the change points among the newest campaigns
    alpha_test = alpha / 2 if use_history else alpha
    seed = int(result.get("seed") or 0)
    deltas, stats, change_points, series = [], [], [], []
    base_metrics = (base_doc or {}).get("metrics") or {}
    base_samples = (base_doc or {}).get("samples") or {}
    for cell, metrics in current.items():
        for metric, values in metrics.items():
            if metric not in JUDGED and not (metric in (base_metrics.get(cell) or {}) and not in_campaign):
                continue
            ref, source, known = None, None, None
            if in_campaign:
                ref = (in_campaign.get(cell) or {}).get(metric)
                source = "baseline configuration, interleaved in this campaign"
            else:
                if use_history:
                    hist, owners = _series(history, cell, metric)
                    if hist:
                        change_points += _change_points(hist, owners, values, result, cell, metric, history,
                                                        alpha, min_effect, recent, seed)
                        idx, start, out, known = _reference(hist, owners, history, alpha, seed, cell, metric)
                        ref = [hist[k] for k in idx]
                        series.append(_series_doc(cell, metric, hist, owners, values, result, start, idx, out,
                                                  [c for c in change_points if c["run_id"] == cell
                                                   and c["metric"] == metric]))
                        since = owners[start] if start < len(owners) else result["campaign_id"]
                        source = (f"history/{result['name']}/ since {since} ({len(ref)} sample(s)"
                                  + (f"; {len(out)} flagged night sample(s) held out" if out else "") + ")")
                short_history = ref is None or len(hist) < MIN_PREDICTION_REFERENCE
                if (short_history and not _testable(values, ref, alpha_test)) and cell in base_metrics:
                    ref = base_samples.get(cell, {}).get(metric) or (
                        [base_metrics[cell][metric]] if metric in base_metrics[cell] else None)
                    source = f"baseline {baseline_name}"
            if not ref:
                continue
            if V.min_p(len(values), len(ref)) < alpha_test:
                j = V.judge(values, ref, METRICS[metric][1], alpha=alpha_test, min_effect=min_effect, seed=seed)
                d = {"run_id": cell, "metric": metric, "baseline": j["reference_median"], "value": j["median"],
                     "change": j["change"], "threshold": min_effect, "method": "statistical", "reference": source,
                     **{k: j[k] for k in ("n", "n_reference", "ci", "confidence", "p", "test", "cliffs_delta",
                                          "worse_by")}}
                stats.append(d)
            elif _testable(values, ref, alpha_test):
                j = V.predict(values[0], ref, METRICS[metric][1])
                d = {"run_id": cell, "metric": metric, "baseline": j["reference_median"], "value": j["median"],
                     "change": j["change"], "threshold": min_effect, "method": "prediction", "reference": source,
                     **{k: j[k] for k in ("n", "n_reference", "p", "test", "worse_by", "mean_reference",
                                          "sd_reference")}}
                stats.append(d)
            elif (source or "").startswith("history/"):
                d = {"run_id": cell, "metric": metric, "baseline": V.median(ref), "value": V.median(values),
                     "change": round(V.median(values) / V.median(ref) - 1, 4) if V.median(ref) else 0.0,
                     "threshold": min_effect, "method": "inconclusive", "reference": source,
                     "n": len(values), "n_reference": len(ref), "regressed": False,
                     "why": f"{cell} {metric}: inconclusive: {len(values)} vs {len(ref)} sample(s) of {source} "
                            f"are too few for a test (a run needs {MIN_PREDICTION_REFERENCE} to be judged alone)"}
            else:
                d = _threshold_delta(cell, metric, values, ref, thresholds, source)
            if known is not None and d["method"] in ("statistical", "prediction"):
                d["reported_level"] = {"value": known[0], "campaign_id": known[1]}
            deltas.append(d)
    if stats:
        for d, p_adj in zip(stats, V.holm([d["p"] for d in stats])):
            d["p_adjusted"] = round(p_adj, 6)
            d["alpha"] = alpha_test
            d["regressed"] = bool(p_adj < alpha_test and (d["worse_by"] or 0) > min_effect)
            d["why"] = _why(d)
            known = d.get("reported_level")
            if d["regressed"] and known:
                level, higher = known["value"], METRICS[d["metric"]][1]
                beyond = ((level - d["value"]) if higher else (d["value"] - level)) / level if level else 0.0
                if beyond <= min_effect:
                    d["regressed"], d["held"] = False, True
                    d["why"] += (f"; at the level already reported on {known['campaign_id']} ({_num(level)}, "
                                 f"{-beyond if higher else beyond:+.1%}): not a new regression, and held out of "
                                 f"the reference until `dbswarm baseline accept {result['name']}` or a change point")
                else:
                    d["why"] += f"; beyond the level reported on {known['campaign_id']} ({_num(level)})"
    for cell in base_metrics:
        if cell not in current and not in_campaign:
            deltas.append({"run_id": cell, "metric": "run", "baseline": "present", "value": "missing",
                           "change": -1.0, "threshold": 0.0, "regressed": True, "method": "threshold",
                           "why": "the baseline's run is missing from this campaign"})
    regressed = [d for d in deltas if d["regressed"]] + [c for c in change_points if c["regressed"]]
    if not deltas and not change_points:
        verdict = "no-baseline"
    elif regressed:
        verdict = "regressed"
    elif all(d["method"] == "inconclusive" for d in deltas):
        verdict = "inconclusive"  # not a failed execution: there is nothing yet to judge against
    else:
        verdict = "pass"
    # a campaign judged against nights measured by another client model (a default that changed,
    # a campaign edited): said on each of its cells' history deltas, and in the document
    changes = client_model_changes(result, history) if use_history else []
    for change in changes:
        for d in deltas:
            if d["run_id"] == change["run_id"] and str(d.get("reference") or "").startswith("history/"):
                d["why"] = f"{d.get('why') or ''}; {_model_note(change)}".lstrip("; ")
    reasons = [d["why"] if "why" in d else "" for d in deltas if d["regressed"]]
    reasons += [f"{c['run_id']} {c['metric']}: change point at {c['campaign_id']} (p {c['p']:.3f}), median "
                f"{_num(c['before_median'])} → {_num(c['after_median'])} ({c['change']:+.1%})"
                for c in change_points if c["regressed"]]
    return {"baseline": baseline_name, "verdict": verdict, "deltas": deltas, "change_points": change_points,
            "reasons": reasons, "alpha": alpha, "min_effect": min_effect, "series": series,
            "history": {"campaigns": len(history), "name": result["name"]} if use_history else None,
            "client_model_changes": changes}


def _testable(values: list[float], ref: Optional[list[float]], alpha_test: float) -> bool:
    """Whether a test can say anything: Mann–Whitney's smallest p below alpha, or one run against
    enough history for a prediction interval."""
    if not ref:
        return False
    return V.min_p(len(values), len(ref)) < alpha_test or (len(values) == 1
                                                           and len(ref) >= MIN_PREDICTION_REFERENCE)


def _change_points(hist: list[float], owners: list, values: list[float], result: dict, cell: str, metric: str,
                   history: list[dict], alpha: float, min_effect: float, recent: int, seed: Any) -> list[dict]:
    """E-Divisive over the history plus tonight. A change point fails the verdict only when it
    falls on tonight's runs: one among the recent campaigns was either reported on its night
    or tonight is judged against the level after it (the stable segment), so the nights after a
    single drop, each at the new level, no longer fail again."""
    out = []
    first_new = len(hist)
    newest = [h["campaign_id"] for h in history][-(recent - 1):] if recent > 1 else []
    for cp in V.e_divisive(hist + values, alpha=alpha / 2, seed=seed):
        i = cp["index"]
        at = owners[i] if i < len(owners) else result["campaign_id"]
        worse = (-(cp["change"] or 0) if METRICS[metric][1] else (cp["change"] or 0))
        out.append({"run_id": cell, "metric": metric, "index": i, "campaign_id": at, "p": cp["p"],
                    "before_median": cp["before_median"], "after_median": cp["after_median"],
                    "change": round(cp["change"], 4) if cp["change"] is not None else None,
                    "recent": i >= first_new or at in newest, "tonight": i >= first_new,
                    "regressed": bool(i >= first_new and worse > min_effect)})
    return out


def _series_doc(cell: str, metric: str, hist: list[float], owners: list, values: list[float], result: dict,
                reference_from: Any, reference: Any, held_out: Any, cps: list[dict]) -> dict:
    """The compared series for the report's history chart: every sample oldest first (the
    history, then tonight's), the campaign of each, where tonight and the reference start, the
    indexes of exactly the samples compared with (``reference``) and of the flagged nights
    held out of it, and the change points' indexes."""
    return {"run_id": cell, "metric": metric, "values": list(hist) + list(values),
            "campaigns": list(owners) + [result["campaign_id"]] * len(values), "tonight_from": len(hist),
            "reference_from": reference_from, "reference": list(reference), "held_out": list(held_out),
            "change_points": [c["index"] for c in cps],
            "regressed_change_points": [c["index"] for c in cps if c["regressed"]]}


def _why(d: dict) -> str:
    if d["method"] == "prediction":
        state = "regressed" if d["regressed"] else "no regression"
        return (f"{d['run_id']} {d['metric']}: {state}: one run {_num(d['value'])} against median "
                f"{_num(d['baseline'])} ({d['change']:+.1%}), {d['test']} p {d['p_adjusted']:.3g} (Holm) "
                f"vs alpha {d['alpha']:g}, 1 vs {d['n_reference']} runs ({d['reference']})")
    ci = f", {d['confidence']:.0%} CI {d['ci'][0]:+.1%} … {d['ci'][1]:+.1%}" if d.get("ci") else ""
    state = "regressed" if d["regressed"] else "no regression"
    return (f"{d['run_id']} {d['metric']}: {state}: median {_num(d['baseline'])} → {_num(d['value'])} "
            f"({d['change']:+.1%}{ci}), Mann–Whitney p {d['p_adjusted']:.3g} (Holm) vs alpha {d['alpha']:g}, "
            f"Cliff's delta {d['cliffs_delta']:+.2f}, {d['n']} vs {d['n_reference']} runs ({d['reference']})")


def client_bound_reasons(result: dict) -> list[str]:
    """The run phases whose load generator was the bottleneck (client verdict bound, not
    allowed): a regression verdict refuses to compare them."""
    out = []
    for r in result.get("runs", []):
        run = (r.get("phases") or {}).get("run")
        c = PhaseResult.of(run).client if run else {}
        if limits_figures(c):
            out.append(f"run {r['run_id']}: {c.get('reason', 'the load generator was the bottleneck')}")
    return out


def compare_with_baseline(store: Store, campaign_id: str, baseline: Optional[str], thresholds: dict,
                          save_baseline: bool = False) -> dict:
    result_key = campaign_key(store, campaign_id, RESULT_DOC)
    result = store.get_json(result_key)
    settings = (((result.get("campaign") or {}).get("results") or {}).get("verdict") or {})
    use_history = settings.get("history", True)
    history = read_history(store, result["name"], int(settings.get("history_runs", 60))) if use_history else []
    base_doc = None
    if baseline:
        try:
            base_doc = store.get_json(baseline_key(baseline))
        except KeyError:
            base_doc = None
    out: dict[str, Any] = {"campaign_id": campaign_id, "baseline": baseline}
    bound = client_bound_reasons(result)
    if bound:
        # the load generator's ceiling is not the database's: nothing to compare, nothing kept
        # in the history or saved as a baseline (docs/client-health.md)
        doc: dict[str, Any] = {"baseline": baseline, "verdict": "client-bound", "deltas": [], "change_points": [],
                               "reasons": [f"not compared: {b}" for b in bound], "series": [], "history": None}
        result["compare"] = doc
        write_reports(store, campaign_id, result)
        return out | {"verdict": "client-bound", "regressions": 0, "reasons": doc["reasons"][:5], "deltas": 0,
                      "cause": "; ".join(doc["reasons"])[:4000], "fail": False}
    doc = judge_campaign(result, history, base_doc, thresholds or {}, settings, baseline)
    result["compare"] = doc
    if doc["verdict"] == "regressed":
        result["status"] = "regressed"
    samples = samples_of(result).get("candidate", {})
    if use_history and samples and result["status"] in ("complete", "regressed"):
        out["history_key"] = append_history(store, result["name"], result, samples, doc["verdict"],
                                            regressions_of(doc), held_of(doc))
    write_reports(store, campaign_id, result)
    out.update(verdict=doc["verdict"], regressions=sum(bool(d["regressed"]) for d in doc["deltas"])
               + sum(c["regressed"] for c in doc["change_points"]), reasons=doc["reasons"][:5])
    # the state machine fails the execution on ``fail``: a regression, or an inconclusive night
    # when the campaign asks (results.verdict.fail_inconclusive: a nightly job that must not pass
    # blind)
    out["fail"] = doc["verdict"] == "regressed" or (doc["verdict"] == "inconclusive"
                                                    and bool(settings.get("fail_inconclusive")))
    # the execution's failure cause (the Regressed state's CausePath): why, in a few lines
    out["cause"] = (("; ".join(r for r in doc["reasons"] if r) or f"verdict {doc['verdict']}")
                    + f" (result.json compare, campaign {campaign_id})")[:4000]
    if save_baseline and baseline and doc["verdict"] != "regressed":
        store.put_json(baseline_key(baseline), {"schema_version": 1, "campaign_id": campaign_id,
                                                "saved_at": time.time(), "metrics": metrics_of(result),
                                                "samples": samples})
        out["baseline_saved"] = True
    return out | {"deltas": len(doc["deltas"])}
