"""What the client-health bookkeeping costs (issue 31; docs/client-health.md): noop operations
per CPU-second of a shard with it and without it.

Each measurement is a fresh process running one shard of ``--threads`` client threads on the
noop engine through ``ShardPhase.execute`` (the threads, the snapshots' machinery, the
recorder) for ``--time`` seconds; "off" replaces the bookkeeping by nothing (the sampler
thread — the 20 Hz wake-up probe and the per-second /proc reads — and each thread's two
schedstat reads per call), "on" is the code as it is. The two alternate, ``--rounds`` times
each, so both see the same host; the figure is the median ratio of the pairs.

    python bench/client_health_cost.py --rounds 7 --time 4 --threads 8
    python bench/client_health_cost.py --blocks 1 --time 90 --threads 8
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


class NoSampler:
    """The bookkeeping's sampler replaced by nothing (the "off" side)."""
    def start(self): pass
    def stop(self): pass
    def series(self): return None
    def wakeup(self): return None


def noop_shard(threads: int, seconds: float, workload: str):
    """One shard's run phase of ``threads`` noop client threads for ``seconds``."""
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine import worker
    wl = {"preset": workload, "recordcount": 10_000, "operationcount": 0, "maxexecutiontime": seconds,
          "threads": threads}
    campaign, runs = load_campaign({"name": "health-cost", "target": {"engine": "noop"}, "workload": wl,
                                    "phases": ["run"], "fanout": {"shards": 1}})
    run = make_plan(campaign, runs, "health-cost", 1).runs[0]
    return worker.ShardPhase(run, run.shards[0], "run", None)


def one(mode: str, threads: int, seconds: float, workload: str) -> dict:
    import resource

    from dbswarm.engine import worker
    from dbswarm.measure import headroom
    if mode == "off":
        worker.headroom.Sampler = NoSampler
        headroom.thread_sched = lambda: None
    sp = noop_shard(threads, seconds, workload)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    outcome = sp.execute()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    done = outcome.measurement.total_ops
    return {"mode": mode, "ops": done, "cpu_s": round(cpu, 3), "ops_per_cpu_s": round(done / cpu, 1),
            "client": {k: v for k, v in (outcome.info.get("client") or {}).items() if k != "series"}}


def blocks(threads: int, seconds: float, block_s: float, workload: str) -> dict:
    """One shard of noop client threads running for ``seconds``; the bookkeeping's sampler
    (the 20 Hz wake-up probe and the per-second /proc reads) switched on and off in
    alternating blocks of ``block_s`` in the same process, the operations per CPU-second of
    each block compared with its neighbours' (blocks resolve what whole processes, ±20 % from
    one to the next on a shared machine, cannot)."""
    import threading

    from dbswarm.engine import worker
    from dbswarm.measure import headroom
    real = headroom.Sampler
    worker.headroom.Sampler = NoSampler
    sp = noop_shard(threads, seconds, workload)
    t = threading.Thread(target=sp.execute, daemon=True)
    t.start()
    time.sleep(1.0)  # connected, running
    rows = []
    on = False
    sampler = None
    end = time.monotonic() + seconds - 2.0
    while time.monotonic() < end:
        if on:
            sampler = real()
            sampler.start()
        c0, n0 = time.process_time(), sum(st.done for st in sp.states)
        time.sleep(block_s)
        c1, n1 = time.process_time(), sum(st.done for st in sp.states)
        if sampler is not None:
            sampler.stop()
            sampler = None
        rows.append((on, (n1 - n0) / max(c1 - c0, 1e-9)))
        on = not on
    sp.stop_event.set()
    t.join(30)
    # each "on" block against the mean of the "off" blocks beside it
    ratios = [r / ((rows[i - 1][1] + rows[i + 1][1]) / 2) for i, (o, r) in enumerate(rows)
              if o and 0 < i < len(rows) - 1]
    return {"blocks": len(rows), "on_over_off_median": round(statistics.median(ratios), 4),
            "on_over_off_quartiles": [round(q, 4) for q in statistics.quantiles(ratios, n=4)],
            "off_ops_per_cpu_s_median": round(statistics.median(r for o, r in rows if not o), 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--time", type=float, default=4.0)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--workload", default="c")
    ap.add_argument("--blocks", type=float, default=0.0,
                    help="instead of whole processes: one process, the sampler on and off in blocks of this many s")
    args = ap.parse_args(argv)
    ctx = mp.get_context("spawn")
    if args.blocks:
        with ctx.Pool(1) as pool:
            out = pool.apply(blocks, (args.threads, args.time, args.blocks, args.workload))
        out.update(threads=args.threads, time_s=args.time, block_s=args.blocks, workload=args.workload,
                   at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        print(json.dumps(out))
        return 0
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
