"""Write the "Targets and where we are" section of BENCHMARKS.md from the newest JSON of
each benchmark in bench/results/ (run after the others; bench/run_all.sh does).

    python bench/verdict.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402


def latest(name):
    """The newest record of a script's own section: runs made with --no-md are side
    experiments (another shard count, one mode only) and are not the suite's figures."""
    for f in sorted(C.RESULTS.glob(f"{name}-*.json"), reverse=True):
        data = json.loads(f.read_text())
        if not (data.get("args") or {}).get("no_md"):
            return data
    return None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return f"{min(values):.2f}–{max(values):.2f}"


def main():
    sb, yc, gc, fs, ag, pc = (latest(n) for n in ("vs_sysbench", "vs_ycsb", "generator_cost", "fanout_scaling",
                                                   "aggregation_cost", "python_ceiling"))
    L = ["| target | reached (this machine, medians of interleaved rounds) | met? |", "| --- | --- | --- |"]
    if sb:
        for mode in ("shared", "pinned"):
            rows = [r for r in sb["comparisons"] if r["mode"] == mode and not r.get("failed")]
            if rows:
                meds = [r["tps_ratio"]["median"] for r in rows]
                L.append(f"| dbswarm / sysbench TPS ≥ 0.9 ({mode}) | {spread(meds)} over {len(rows)} comparisons "
                         f"(engine × test × threads) | {'yes' if min(meds) >= 0.9 else '**no**'} |")
    if pc:  # the context of the two rows above: what a Python client on the same drivers reaches at all
        for mode in ("shared", "pinned"):
            rows = [r for r in pc["comparisons"] if r["mode"] == mode and not r.get("failed")]
            if rows:
                L.append(f"| (context, {mode}) a bare Python client on dbswarm's drivers / sysbench TPS; dbswarm / "
                         f"that client | {spread([r['bare_vs_sysbench']['median'] for r in rows])}; "
                         f"{spread([r['dbswarm_vs_bare']['median'] for r in rows])} over {len(rows)} comparisons "
                         "(engine × test, 8 threads; section \"What a Python client can reach\") | — |")
    if yc:
        for mode in ("shared", "pinned"):
            rows = [r for r in yc["comparisons"] if r["mode"] == mode and r["engine"] != "mongodb"
                    and not r.get("failed")]
            if rows:
                meds = [r["ops_ratio"]["median"] for r in rows]
                L.append(f"| dbswarm / go-ycsb OPS ≥ 0.9 ({mode}, MariaDB + PostgreSQL) | {spread(meds)} over "
                         f"{len(rows)} comparisons | {'yes' if min(meds) >= 0.9 else '**no**'} |")
        rows = [r for r in yc["comparisons"] if r["engine"] == "mongodb" and not r.get("failed")]
        if rows:
            L.append(f"| (FerretDB, server-bound) dbswarm / go-ycsb OPS | {spread([r['ops_ratio']['median'] for r in rows])} "
                     "| — |")
    if gc:
        ip = {k: v["in_process"] for k, v in gc["noop"].items()}
        best = {k: v.get("in_process_best", v["in_process"]) for k, v in gc["noop"].items()}
        per_cpu = {k: 1e6 / v["cpu_us_per_op"] for k, v in ip.items()}
        per_cpu_best = {k: 1e6 / v["cpu_us_per_op"] for k, v in best.items()}
        per_cpu_scaled = {k: 1e6 / v.get("in_process_scaled_median", v["in_process"]["cpu_us_per_op"])
                          for k, v in gc["noop"].items()}
        # an absolute target depends on the CPU: the pure-Python calibration loop of the run says
        # how fast this host was (the hosts of 2026-11-23/24 took 0.23 µs per iteration)
        fastest = (gc.get("calibration") or {}).get("fastest_us")
        calib = (f"calibration loop {fastest} µs per iteration (generator cost section A)" if fastest
                 else "no calibration recorded")
        ycsb = {k: v for k, v in per_cpu.items() if k.startswith("ycsb")}
        ycsb_scaled = {k: v for k, v in per_cpu_scaled.items() if k.startswith("ycsb")}
        L.append("| noop ≥ 200k ops/s per process | ops per CPU-second (1e6 ÷ CPU µs/op, in-process), median "
                 "(best; scaled to the run's fastest CPU moment) of the rounds: "
                 + ", ".join(f"{k} {v / 1000:,.0f}k ({per_cpu_best[k] / 1000:,.0f}k; {per_cpu_scaled[k] / 1000:,.0f}k)"
                             for k, v in per_cpu.items())
                 + f"; this host's speed: {calib} "
                 + f"| every YCSB workload ≥ 200k — median: {'yes' if min(ycsb.values()) >= 200_000 else '**no**'}, "
                 f"scaled: {'yes' if min(ycsb_scaled.values()) >= 200_000 else '**no**'} (sysbench counts "
                 "transactions of up to 20 queries) |")
        ov = [r["overhead_beyond_driver_us"] for r in gc["servers"] if r["engine"] != "mongodb"]
        L.append("| client overhead beyond the driver ≤ 5 µs/op | noop generator + measurement: "
                 + ", ".join(f"{k} {v['cpu_us_per_op']}" for k, v in ip.items() if not k.endswith("read_write"))
                 + f" µs/op; on MariaDB/PostgreSQL (dbswarm − bare driver, single thread): {spread(ov)} µs/op; "
                 + f"{calib} "
                 f"| {'yes' if ov and max(ov) <= 5 else '**no**'} |")
    if fs:
        eff = [r for r in fs["noop"] if r["shards"] <= fs["machine"]["nproc"]]
        L.append("| fan-out efficiency ≥ 0.9 up to the core count | noop: "
                 + ", ".join(f"K={r['shards']} {r['efficiency']:.2f} (CPU efficiency {r['cpu_efficiency']})" for r in eff)
                 + f" | {'yes' if min(r['efficiency'] for r in eff) >= 0.9 else '**no**'} |")
    if ag:
        worst = max(((int(n), w, r) for n, res in ag["results_by_shards"].items() for w, r in res.items()
                     if int(n) == 1000), key=lambda x: x[2]["seconds"], default=None)
        if worst:
            n, w, r = worst
            L.append(f"| aggregation of 1,000 shards (30-min timelines): < 60 s, < 1 GB | {r['seconds']} s, "
                     f"{r['process_maxrss_mb']:,} MB peak RSS ({w}) | "
                     f"{'yes' if r['seconds'] < 60 and r['process_maxrss_mb'] < 1024 else '**no**'} |")
    C.update_section("verdict", "\n".join(L))


if __name__ == "__main__":
    main()
