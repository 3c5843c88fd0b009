"""Fan-out scaling: K = 1, 2, 4, ... shard processes.

1. noop binding, one client thread per shard (YCSB c): aggregate ops/s against K and the
   efficiency ops(K) / (K × ops(1)) up to the CPU count (beyond it the shards share CPUs;
   the line shows what oversubscription costs). Also ops per CPU-second (1e6 / CPU µs per
   op), which does not depend on how much CPU the noisy machine left us.
2. MariaDB, YCSB c, --threads-per-shard client threads per shard: ops/s against K until
   the server saturates (ops/s grows by less than 5% from one K to the next, or K reaches
   --max-mysql-shards).
3. The local mode's orchestration: the same noop campaign through
   `dbswarm.run.runtime.local.run_campaign` (moto's Step Functions engine, forkserver processes)
   and through the service functions (bench/dbswarm_run.py, fanout mode): wall time,
   the orchestrating process's CPU, and the throughput the shards reach beside it.

    python bench/fanout_scaling.py --time 10
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

NOOP_C = {"family": "ycsb", "preset": "c", "recordcount": 100_000, "operationcount": 0}


def run_k(target, k, threads, seconds, recordcount=None, mode=None) -> dict:
    wl = dict(NOOP_C, maxexecutiontime=seconds, threads=threads)
    if recordcount:
        wl["recordcount"] = recordcount
    c = {"name": f"fanout-{k}", "target": target, "workload": wl, "phases": ["run"], "fanout": {"shards": k}}
    old = os.environ.get("DBSWARM_BENCH_MODE")
    if mode:
        os.environ["DBSWARM_BENCH_MODE"] = mode
    try:
        s = C.run_dbswarm(c, timeout=seconds * 4 + 300)
    finally:
        if mode:
            if old is None:
                os.environ.pop("DBSWARM_BENCH_MODE", None)
            else:
                os.environ["DBSWARM_BENCH_MODE"] = old
    ph = s["phase"]
    ops = ph.get("operations_total") or 0
    fixed = C.fixed_cpu(target, wl, threads, k) if s["shard_cpu_s"] else 0.0
    net_cpu = max(s["shard_cpu_s"] - fixed, 0)
    return {"shards": k, "threads": threads, "ops": ops, "ops_per_s": ph.get("ops_per_s"),
            "steady_ops_per_s": (ph.get("steady") or {}).get("ops_per_s"), "duration_s": ph.get("duration_s"),
            "start_skew_max_s": (ph.get("start_skew_s") or {}).get("max"),
            "shard_cpu_s": s["shard_cpu_s"], "fixed_cpu_s": fixed, "runner_cpu_s": s["runner_cpu_s"],
            "campaign_wall_s": s["campaign_wall_s"], "wall_s": round(s["wall_s"], 2), "mode": s["mode"],
            "cpu_us_per_op": round(net_cpu / ops * 1e6, 2) if ops and net_cpu else None,
            "ops_per_cpu_s": round(ops / net_cpu) if ops and net_cpu else None,
            "loadavg": C.loadavg()}


def markdown(data):
    a = data["args"]
    L = ["## Fan-out scaling", "", C.header(data), "",
         f"### noop binding, YCSB c, one thread per shard, {a['time']} s per point", "",
         "efficiency = ops/s(K) ÷ (K × ops/s(1)); the machine has "
         f"{data['machine']['nproc']} CPUs, so K beyond that shares them. ops per CPU-second = operations ÷ the "
         "shards' CPU net of start-up: the per-process capacity, independent of how much CPU the shared machine "
         "gave us.", "",
         f"Medians of {a['rounds']} interleaved rounds (K = 1, 2, 4, … then again); efficiency min–max in brackets. "
         "CPU efficiency = ops per CPU-second(K) ÷ ops per CPU-second(1).", "",
         "| shards K | ops/s | efficiency | ops per CPU-second | CPU efficiency | CPU µs/op | start skew max s "
         "| load avg (1 min) |",
         "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["noop"]:
        L.append(f"| {r['shards']} | {r['ops_per_s']:,.0f} | {r['efficiency']:.2f} ({r['efficiency_min']:.2f}–"
                 f"{r['efficiency_max']:.2f}) | {r['ops_per_cpu_s'] or 0:,.0f} | {r['cpu_efficiency']} "
                 f"| {r['cpu_us_per_op']} | {r['start_skew_max_s']} | {r['loadavg'][0]:.1f} |")
    L += ["", f"### MariaDB, YCSB c, {a['threads_per_shard']} threads per shard, {a['mysql_recordcount']:,} records",
          "", "| shards K | threads | ops/s | gain vs previous K | client CPU µs/op | load avg (1 min) |",
          "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    prev = None
    for r in data["mysql"]:
        gain = f"{r['ops_per_s'] / prev:.2f}×" if prev else "—"
        L.append(f"| {r['shards']} | {r['threads']} | {r['ops_per_s']:,.0f} | {gain} | {r['cpu_us_per_op']} "
                 f"| {r['loadavg'][0]:.1f} |")
        prev = r["ops_per_s"]
    if data.get("mysql_saturated_at"):
        L.append(f"\nSaturated at K = {data['mysql_saturated_at']} (less than 5% more ops/s than the K before).")
    o = data.get("orchestration")
    if o:
        L += ["", f"### local mode orchestration (noop, YCSB c, {o['shards']} shards × 1 thread, {a['time']} s, "
                  f"medians of {a['rounds']} interleaved rounds)", "",
              f"ops/s ratio run_campaign ÷ service functions: {C.fmt_ratio(o['ops_ratio_campaign_vs_fanout'])}", "",
              "| path | ops/s | campaign wall s | orchestrating process CPU s | shard CPU s |",
              "| --- | ---: | ---: | ---: | ---: |"]
        for name in ("campaign", "fanout"):
            r = o[name]
            L.append(f"| {'`local.run_campaign` (state machine via moto)' if name == 'campaign' else 'service functions (bench/dbswarm_run.py)'} "
                     f"| {r['ops_per_s']:,.0f} | {r['campaign_wall_s']:.1f} | {r['runner_cpu_s']:.2f} "
                     f"| {format(r['shard_cpu_s'], '.2f') if name == 'fanout' else 'not attributable (forkserver children)'} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=float, default=10)
    p.add_argument("--max-shards", type=int, default=max(4, 2 * C.NCPU))
    p.add_argument("--rounds", type=int, default=3, help="interleaved repetitions of the noop and orchestration points")
    p.add_argument("--threads-per-shard", type=int, default=4)
    p.add_argument("--max-mysql-shards", type=int, default=8)
    p.add_argument("--mysql-recordcount", type=int, default=10_000)
    p.add_argument("--no-mysql", action="store_true")
    p.add_argument("--no-orchestration", action="store_true")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    data = C.base_record("fanout_scaling", a)
    ks, k = [], 1
    while k <= a.max_shards:
        ks.append(k)
        k *= 2
    noop = {"engine": "noop"}
    samples = {k: [] for k in ks}
    for rnd in range(a.rounds):          # K = 1, 2, 4, ..., then again: interleaved rounds
        for k in ks:
            r = run_k(noop, k, k, a.time)
            C.log(f"noop round {rnd + 1} K={k}: {r['ops_per_s']:,.0f} ops/s, {r['cpu_us_per_op']} µs/op")
            samples[k].append(r)
    data["noop"] = []
    base = C.med([r["ops_per_s"] for r in samples[1]])
    base_cpu = C.med([r["ops_per_cpu_s"] for r in samples[1]])
    for k in ks:
        rs = samples[k]
        row = dict(rs[len(rs) // 2])
        row["rounds"] = rs
        row["ops_per_s"] = C.med([r["ops_per_s"] for r in rs])
        row["ops_per_cpu_s"] = C.med([r["ops_per_cpu_s"] for r in rs])
        row["cpu_us_per_op"] = round(C.med([r["cpu_us_per_op"] for r in rs]), 2)
        effs = [r["ops_per_s"] / (k * base) for r in rs]
        row["efficiency"] = round(C.med(effs), 3)
        row["efficiency_min"], row["efficiency_max"] = round(min(effs), 3), round(max(effs), 3)
        row["cpu_efficiency"] = round(row["ops_per_cpu_s"] / base_cpu, 3) if base_cpu and row["ops_per_cpu_s"] else None
        data["noop"].append(row)
    data["mysql"] = []
    if not a.no_mysql:
        env = C.start_servers(a.servers_dir)
        t = C.target("mysql", env)
        C.load_with_dbswarm(env, "mysql", {"family": "ycsb", "recordcount": a.mysql_recordcount, "table": "usertable"})
        k, prev = 1, None
        while k <= a.max_mysql_shards:
            r = run_k(t, k, k * a.threads_per_shard, a.time, recordcount=a.mysql_recordcount)
            C.log(f"mysql K={k} threads={r['threads']}: {r['ops_per_s']:,.0f} ops/s")
            data["mysql"].append(r)
            if prev and r["ops_per_s"] < prev * 1.05:
                data["mysql_saturated_at"] = k
                break
            prev = r["ops_per_s"]
            k *= 2
    if not a.no_orchestration:
        o = {"shards": min(2, C.NCPU)}
        runs = {"campaign": [], "fanout": []}
        for _round in range(a.rounds):
            for mode in ("campaign", "fanout"):
                r = run_k(noop, o["shards"], o["shards"], a.time, mode=mode)
                C.log(f"orchestration {mode}: {r['ops_per_s']:,.0f} ops/s, wall {r['campaign_wall_s']} s, "
                      f"runner CPU {r['runner_cpu_s']} s")
                runs[mode].append(r)
        for mode, rs in runs.items():
            o[mode] = {"rounds": rs, **{k: C.med([r[k] for r in rs]) for k in
                                        ("ops_per_s", "campaign_wall_s", "runner_cpu_s", "shard_cpu_s")}}
        o["ops_ratio_campaign_vs_fanout"] = C.ratios([r["ops_per_s"] for r in runs["campaign"]],
                                                     [r["ops_per_s"] for r in runs["fanout"]])
        data["orchestration"] = o
    C.finish("fanout_scaling", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
