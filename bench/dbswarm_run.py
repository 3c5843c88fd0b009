"""Run one dbswarm campaign the way users run it and report what the benchmarks need.

    python bench/dbswarm_run.py CAMPAIGN.json RESULTS_DIR OUT.json

Mode (environment DBSWARM_BENCH_MODE):
  fanout              the lower-level service functions, in the state machine's order:
                      service.plan_campaign, prepare_run, every shard's service.run_shard in
                      its own spawned process (waited for, so RUSAGE_CHILDREN is exactly the
                      shards' CPU), aggregate_campaign. Used by the benchmarks because
                      local.run_campaign now executes the state machine through moto: its
                      orchestration costs seconds per campaign, burns CPU beside the shards
                      during the run, and runs the shards in forkserver processes whose CPU
                      this process cannot attribute (bench/fanout_scaling.py measures both).
  campaign            dbswarm.run.runtime.local.run_campaign(campaign, RESULTS_DIR, show_progress=False):
                      exactly `dbswarm run` (the default of the benchmarks since issue 21).
                      shard_cpu_s is the shard calls' own CPU as the workers record it (the
                      result's client_cpu_s); the CPU of every process of the campaign is
                      counted by the caller (bench/common.run_dbswarm: a cpuacct cgroup).

OUT.json: the merged phase of the campaign's only run (histograms and timeline left out),
``overall`` (all operation types merged: count, p50/p95/p99), ``shard_cpu_s`` (user+sys of
the shard processes: RUSAGE_CHILDREN around the campaign) and ``runner_cpu_s`` (this
process: planning, polling, aggregation, imports).
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time


def _cpu(ru):
    return ru.ru_utime + ru.ru_stime


def _shard_entry(event):
    import faulthandler
    import signal

    from dbswarm.run.runtime import service
    # bench/common.run_measured sends SIGUSR1 before it kills a campaign that overran its
    # timeout: the stacks of every thread land in the campaign's stderr
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    service.run_shard(event)


def run_fanout(campaign: dict, results_dir: str) -> dict:
    """The campaign flow of the state machine, step by step, without it
    (service.run_steps), every shard of a phase in its own spawned process running
    service.run_shard, exactly what the worker function runs."""
    import multiprocessing as mp

    from dbswarm.run.runtime import service
    ctx = mp.get_context("spawn")

    def run_shards(event, shard_count):
        procs = [ctx.Process(target=_shard_entry, args=(dict(event, shard=i),)) for i in range(shard_count)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
    return service.run_steps(campaign, results_dir, run_shards, lead_seconds=1.0)


VERDICT_KEYS = ("verdict", "reason", "allowed", "allowed_by", "strict", "waited_for_others", "model", "cpu_share",
                "loop_share", "runqueue_share", "wakeup_share", "lock_wait_intervals", "bound_shards", "near_shards")


def client_verdict(client) -> dict:
    """The phase's client verdict and what it rests on (no per-second series), or
    ``unmeasured`` where the phase has no client section."""
    if not isinstance(client, dict):
        return {"verdict": "unmeasured", "signals": {}}
    out = {k: client.get(k) for k in VERDICT_KEYS}
    out["signals"] = {i: {"verdict": s.get("verdict"), "signals": s.get("signals") or {}}
                      for i, s in (client.get("shards") or {}).items()}
    return out


def main():
    if sys.argv[1:] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cpath, results_dir, out_path = sys.argv[1:4]
    campaign = json.loads(open(cpath).read())
    mode = os.environ.get("DBSWARM_BENCH_MODE", "campaign")
    t_import = time.perf_counter()
    from dbswarm.measure.recorder import decode_histogram, new_histogram
    from dbswarm.run.runtime import local
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    if mode == "fanout":
        agg = run_fanout(campaign, results_dir)
    else:
        agg = local.run_campaign(campaign, results_dir, show_progress=False, log=lambda *a, **k: None)
    wall = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    store = agg["store"]
    root = store[len("file://"):] if store.startswith("file://") else store
    result = json.loads(open(os.path.join(root, agg["campaign_id"], "result.json")).read())
    run = result["runs"][0]
    phase_name = "run" if "run" in campaign.get("phases", ["run"]) else "load"
    ph = dict(run["phases"].get(phase_name) or {})
    overall = None
    hists = ph.pop("histograms", None) or {}
    by_op = {}
    if hists:
        h = new_histogram()
        for op, text in hists.items():
            if text:
                one = decode_histogram(text)
                h.add(one)
                if one.get_total_count():
                    by_op[op] = {"p50_us": one.get_value_at_percentile(50), "avg_us": round(one.get_mean_value(), 1)}
        if h.get_total_count():
            overall = {"calls": h.get_total_count(), "avg_us": round(h.get_mean_value(), 1),
                       **{f"p{p}_us": h.get_value_at_percentile(p) for p in (50, 95, 99, 99.9)}}
    tl = ph.pop("timeline", None) or {}
    ops_per_second = []
    if tl.get("ops"):
        n = max(len(v) for v in tl["ops"].values())
        ops_per_second = [sum(v[i] if i < len(v) else 0 for v in tl["ops"].values()) for i in range(n)]
    self_ru = resource.getrusage(resource.RUSAGE_SELF)
    out = {"mode": mode, "campaign_id": agg["campaign_id"], "status": agg.get("status"),
           "phase": ph, "overall": overall, "latency_by_op": by_op,
           "client_verdict": client_verdict(ph.get("client")), "ops_per_second": ops_per_second,
           # fanout: the spawned shard processes (waited for here); campaign: the shard calls' own
           # CPU as the workers record it (segments' cpu_s, start-up not included)
           "shard_cpu_s": round(_cpu(c1) - _cpu(c0), 4) if mode == "fanout" else ph.get("client_cpu_s", 0.0),
           "shard_cpu_user_s": round(c1.ru_utime - c0.ru_utime, 4),
           "shard_cpu_sys_s": round(c1.ru_stime - c0.ru_stime, 4),
           "runner_cpu_s": round(_cpu(self_ru), 4), "campaign_wall_s": round(wall, 3),
           "import_s": round(t0 - t_import, 3), "shard_count": run["shard_count"]}
    with open(out_path, "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
