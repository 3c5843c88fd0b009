"""Aggregation cost: merging N (default 1,000) shard results, each with an hour's
per-second timeline, full HdrHistograms and per-interval histograms (``--intervals``: 6 s is
the default report_interval of an hour's run, 1 s the finest), as the Aggregate function (a Lambda: < 1 GB, < 60 s) does.

Synthetic but realistic shard documents (the exact shape service.run_shard writes:
measurement.to_dict() of a Measurement with READ and UPDATE OperationStats whose
histograms hold a log-normal latency spread over ~2,000 distinct values from 100 µs to
~1 s, a 1,800-second timeline with per-second counts for both operations, errors and
latency sums, and per second and operation a latency histogram drawn from the same
log-normal spread at ~300 operations per second: measure.IntervalTable, as the worker
writes it) are written into a LocalStore under a plan of one run with N shards. Then,
each in a fresh Python process measured with os.wait4 (peak RSS = ru_maxrss):

- merge:     dbswarm.results.aggregate.aggregate(plan, store) — read every shard file and
             merge_phase (the merged result document);
- aggregate: dbswarm.run.runtime.service.aggregate_campaign(event) — the whole Aggregate step:
             the merge plus result.json, result.csv, timeseries.csv, summary.md, report.html.

    python bench/aggregation_cost.py --shards 1000 --seconds 3600 --intervals 6,1
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

CHILD = r'''
import json, resource, sys, time, tracemalloc
sys.path.insert(0, {root!r})
what, store_root, cid = sys.argv[1:4]
t0 = time.perf_counter()
from dbswarm.results.aggregate import aggregate
from dbswarm.results.store import LocalStore, load_plan
from dbswarm.run.runtime import service
t_import = time.perf_counter() - t0
store = LocalStore(store_root)
t1 = time.perf_counter()
if what == "merge":
    plan = load_plan(store, cid)
    result = aggregate(plan, store)
    ph = result["runs"][0]["phases"]["run"]
if what.startswith("merge"):
    check = {{"operations_total": ph["operations_total"], "status": ph["status"],
             "timeline_seconds": len(ph["timeline"]["ops"]["READ"]), "p99_read": ph["operations"]["READ"]["p99_us"],
             "intervals": ph["intervals"]["intervals"], "interval_ops": sum(ph["intervals"]["all"]["count"])}}
else:
    out = service.aggregate_campaign({{"store": store.url, "campaign_id": cid}})
    check = {{"status": out["status"]}}
sec = time.perf_counter() - t1
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"seconds": round(sec, 3), "import_s": round(t_import, 3), "maxrss_mb": round(ru.ru_maxrss / 1024, 1),
                  "cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "check": check}}))
'''


def synthetic_shard(i: int, seconds: int, start: int, rng: random.Random, interval_s: int = 1) -> dict:
    from dbswarm.measure.recorder import Measurement, OperationStats
    m = Measurement()
    for op, median_us in (("READ", 800), ("UPDATE", 1500)):
        s = OperationStats()
        counts = {}
        # ~2,000 distinct values, log-normal around the median, tail to ~1 s
        for _ in range(2000):
            v = int(min(max(rng.lognormvariate(0, 0.9) * median_us, 50), 2_000_000))
            counts[v] = counts.get(v, 0) + rng.randint(1, 400)
        for v, c in counts.items():
            s.histogram.record_value(v, c)
        s.count = s.histogram.get_total_count()
        s.errors = rng.randint(0, 3)
        m.operations[op] = s
        per_sec = s.count // seconds
        m.timeline.ops[op] = [max(0, per_sec + rng.randint(-per_sec // 10, per_sec // 10)) for _ in range(seconds)]
    m.timeline.start = start + rng.randint(0, 1)
    # per-interval histograms: each second one of 40 profiles of ~300 log-normal operations
    from dbswarm.measure.recorder import IntervalTable, interval_bucket
    for op, median_us in (("READ", 800), ("UPDATE", 1500)):
        profiles = []
        for _ in range(40):
            b: dict = {}
            for _ in range(300):
                k = interval_bucket(int(min(max(rng.lognormvariate(0, 0.9) * median_us, 50), 2_000_000)))
                b[k] = b.get(k, 0) + 1
            profiles.append(b)
        intervals: dict = {}
        for sec in range(m.timeline.start, m.timeline.start + seconds):
            row = intervals.setdefault(sec // interval_s, {})
            for k, c in rng.choice(profiles).items():
                row[k] = row.get(k, 0) + c
        m.timeline.interval_s = interval_s
        m.timeline.hist[op] = IntervalTable.of(intervals)
    m.timeline.errors = [1 if rng.random() < 0.001 else 0 for _ in range(seconds)]
    m.timeline.latency_us = [rng.randint(100_000, 2_000_000) for _ in range(seconds)]
    m.errors = {"READ:retryable:deadlock": 1} if i % 50 == 0 else {}
    m.counters = {"reconnects": i % 3}
    return m.to_dict()


def build(root: Path, shards: int, seconds: int, seed: int = 1, interval_s: int = 1) -> tuple[str, dict]:
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign, redacted_campaign
    from dbswarm.documents import ShardResult
    from dbswarm.results import aggregate as agg
    from dbswarm.results.store import LocalStore
    campaign, runs = load_campaign({"name": "agg-cost", "target": {"engine": "noop"},
                                    "workload": {"family": "ycsb", "preset": "a", "threads": shards,
                                                 "recordcount": 1_000_000, "operationcount": 0,
                                                 "maxexecutiontime": seconds},
                                    "phases": ["run"], "fanout": {"shards": shards, "max_shards": max(shards, 1000)}})
    cid = "agg-cost"
    plan = make_plan(campaign, runs, cid, shards)
    store = LocalStore(str(root))
    store.put_json(store.key(cid, "plan.json"), plan.to_dict())
    store.put_json(store.key(cid, "campaign.json"), redacted_campaign(campaign))
    run = plan.runs[0]
    assert run.shard_count == shards, (run.shard_count, shards)
    rng = random.Random(seed)
    start = int(time.time()) - seconds - 10
    sizes = []
    # shards of a well-armed phase differ only by their seeds: build 20 distinct documents
    # and reuse them (each file is still read, decoded and merged on its own)
    templates = [synthetic_shard(i, seconds, start, rng, interval_s) for i in range(min(20, shards))]
    for i in range(shards):
        doc = ShardResult(campaign_id=cid, run_id=run.run_id, phase="run", shard=i, threads=1,
                          binding={"engine": "noop", "is_real_database": False, "settings": {}},
                          started_at=start + 0.01 * (i % 7), start_skew_s=0.001 * (i % 5), segments=[],
                          ended_at=start + seconds + 0.01 * (i % 3), status="done",
                          measurement=templates[i % len(templates)]).to_dict()
        key = agg.shard_key(store, cid, run.run_id, "run", i)
        store.put_json(key, doc)
        sizes.append(os.path.getsize(store.location(key)))  # a LocalStore key's path
    return cid, {"files": shards, "bytes_total": sum(sizes), "bytes_per_shard": round(sum(sizes) / len(sizes))}


def measure(what: str, root: Path, cid: str) -> dict:
    code = CHILD.format(root=str(C.ROOT / "shared"))
    res = C.check(C.run_measured([C.PY, "-c", code, what, str(root), cid], timeout=1800), f"aggregation {what}")
    out = json.loads(res["stdout"].strip().splitlines()[-1])
    out["process_wall_s"] = round(res["wall_s"], 3)
    out["process_maxrss_mb"] = round(res["maxrss_kb"] / 1024, 1)
    return out


NOTE = ("Reading: the per-interval histograms are most of the cost (the same merge without them, 30-minute timelines, took 3.9 s for 1,000 shards). "
        "Measured 2026-11-29: at the default report_interval (an hour's run: 6 s) 1,000 shard-hours merge in ~11 CPU-s and ~125 MB; at 1-second "
        "intervals in ~33 CPU-s and ~285 MB (the whole Aggregate step 37 s): within the 60 s and 1 GB this table asks for and a Lambda's 15 "
        "minutes. On 2026-11-25 the same step took 75 s at 1-second intervals, most of the difference the host's speed that day (the calibration "
        "loop of bench/generator_cost.py: 0.26-0.30 µs an iteration then, 0.17 µs on 2026-11-29). The cost is rows × 896 buckets of C int64 per "
        "operation per shard, decoded and added by HdrHistogram's C codec (`pyhdrh`, ~20 ns an entry). The synthetic 1-second shard file is "
        "smaller than the 6-second one because its rows repeat 40 profiles, which zlib finds; real 1-second rows do not repeat, so expect more "
        "bytes per shard-hour there.")


def markdown(data):
    a = data["args"]
    L = ["## Aggregation cost", "", C.header(data), "",
         "Synthetic shard results (READ + UPDATE HdrHistograms of ~2,000 distinct values each, a "
         f"{a['seconds']:,}-second per-second timeline, and per-interval histograms of both operations, "
         "`measure.IntervalTable`, at ~300 operations per second each), in a local store; the shard file's "
         "size is the per-interval histograms' cost per shard-hour. Each step in a fresh process; peak RSS from "
         "wait4's ru_maxrss. Lambda limits: 15 minutes, up to 10 GB (the template's Aggregate function: 1 GB); "
         "the last column asks for < 60 s and < 1 GB.", "",
         "| shards × interval: step | bytes per shard file | seconds | peak RSS MB | CPU s | < 60 s and < 1 GB |",
         "| --- | ---: | ---: | ---: | ---: | --- |"]
    labels = {"merge": "read + merge (`aggregate.aggregate`)",
              "aggregate": "whole Aggregate step (`service.aggregate_campaign`: merge + 5 reports)"}
    for key, results in data["results_by_shards"].items():
        shards, interval = (str(key).split(":") + ["1"])[:2]
        size = data["inputs"][key]["bytes_per_shard"]
        for what, r in results.items():
            fits = "yes" if r["seconds"] < 60 and r["process_maxrss_mb"] < 1024 else "**no**"
            L.append(f"| {int(shards):,} shards × {interval} s intervals: {labels[what]} | {size:,} | {r['seconds']} "
                     f"| {r['process_maxrss_mb']:,} | {r['cpu_s']} | {fits} |")
    L += ["", NOTE]
    if data.get("notes"):
        L += [""] + data["notes"]
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shards", default="1000", help="comma-separated shard counts (e.g. 1000,4000)")
    p.add_argument("--seconds", type=int, default=3600)
    p.add_argument("--keep", action="store_true", help="keep the synthetic store")
    p.add_argument("--intervals", default="6,1", help="report_interval seconds of the per-interval histograms")
    p.add_argument("--steps", default="merge,aggregate")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    data = C.base_record("aggregation_cost", a)
    data["results_by_shards"], data["inputs"] = {}, {}
    for n, interval in [(n, i) for n in C.csv_list(a.shards, int) for i in C.csv_list(a.intervals, int)]:
        root = Path(tempfile.mkdtemp(prefix="dbswarm-aggcost-"))
        label = f"{n}:{interval}"
        try:
            t0 = time.perf_counter()
            cid, inp = build(root, n, a.seconds, interval_s=interval)
            inp["build_s"] = round(time.perf_counter() - t0, 1)
            data["inputs"][label] = inp
            C.log(f"built {n} shard files ({inp['bytes_total'] / 1e6:.0f} MB) in {inp['build_s']} s")
            res = data["results_by_shards"][label] = {}
            for what in C.csv_list(a.steps):
                res[what] = r = measure(what, root, cid)
                C.log(f"{n} shards {what}: {r['seconds']} s, peak RSS {r['process_maxrss_mb']} MB, CPU {r['cpu_s']} s, "
                      f"{r['check']}")
        finally:
            if not a.keep:
                shutil.rmtree(root, ignore_errors=True)
            else:
                C.log(f"kept {root}")
    C.finish("aggregation_cost", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
