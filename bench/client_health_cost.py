"""What the client-health bookkeeping costs (issue 31; docs/client-health.md): noop operations
per CPU-second of a shard with it and without it.

Each measurement is a fresh process running one shard of ``--threads`` client threads on the
noop engine through ``ShardPhase.execute`` (the threads, the snapshots' machinery, the
recorder) for ``--time`` seconds; "off" replaces the bookkeeping by nothing (the sampler
thread — the 20 Hz wake-up probe and the per-second /proc reads — and each thread's two
schedstat reads per call), "on" is the code as it is. The two alternate, ``--rounds`` times
each, so both see the same host; the figure is the median ratio of the pairs.

    python bench/client_health_cost.py --rounds 7 --time 4 --threads 8
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def one(mode: str, threads: int, seconds: float, workload: str) -> dict:
    import resource
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine import worker
    from dbswarm.measure import headroom
    if mode == "off":
        class NoSampler:
            def start(self): pass
            def stop(self): pass
            def series(self): return None
            def wakeup(self): return None
        worker.headroom.Sampler = NoSampler
        headroom.thread_sched = lambda: None
    wl = {"preset": workload, "recordcount": 10_000, "operationcount": 0, "maxexecutiontime": seconds,
          "threads": threads}
    campaign, runs = load_campaign({"name": "health-cost", "target": {"engine": "noop"}, "workload": wl,
                                    "phases": ["run"], "fanout": {"shards": 1}})
    run = make_plan(campaign, runs, "health-cost", 1).runs[0]
    sp = worker.ShardPhase(run, run.shards[0], "run", None)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    outcome = sp.execute()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    done = outcome.measurement.total_ops
    return {"mode": mode, "ops": done, "cpu_s": round(cpu, 3), "ops_per_cpu_s": round(done / cpu, 1),
            "client": {k: v for k, v in (outcome.info.get("client") or {}).items() if k != "series"}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--time", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--workload", default="c")
    args = ap.parse_args(argv)
    ctx = mp.get_context("spawn")
    pairs = []
    for r in range(args.rounds):
        got = {}
        for mode in (("off", "on") if r % 2 == 0 else ("on", "off")):
            with ctx.Pool(1) as pool:
                got[mode] = pool.apply(one, (mode, args.threads, args.time, args.workload))
        pairs.append(got)
        print(json.dumps({m: {k: v for k, v in g.items() if k != "client"} for m, g in got.items()}), flush=True)
    ratios = [p["on"]["ops_per_cpu_s"] / p["off"]["ops_per_cpu_s"] for p in pairs]
    out = {"rounds": args.rounds, "time_s": args.time, "threads": args.threads, "workload": args.workload,
           "on_ops_per_cpu_s": statistics.median(p["on"]["ops_per_cpu_s"] for p in pairs),
           "off_ops_per_cpu_s": statistics.median(p["off"]["ops_per_cpu_s"] for p in pairs),
           "on_over_off_median": round(statistics.median(ratios), 4),
           "on_over_off_range": [round(min(ratios), 4), round(max(ratios), 4)],
           "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
