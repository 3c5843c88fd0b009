"""Client CPU per operation against threads per shard process (the GIL's cost): the same
client threads (8 by default) as 1, 2, 4 or 8 shard processes, sysbench oltp_point_select on
PostgreSQL and MariaDB, interleaved rounds; with the CPUs shared by client and server, or
pinned apart (server on one CPU, every shard process on the other: `--modes pinned`).

    python bench/threads_per_shard.py --time 5 --rounds 2
    python bench/threads_per_shard.py --time 5 --rounds 3 --shards 1,2,4,8 --modes shared,pinned
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402


def run(engine, env, shards, a, pinned=False):
    wl = {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000,
          "rand_type": "uniform", "threads": a.threads, "time": a.time}
    c = {"name": "threads-per-shard", "target": C.target(engine, env), "workload": wl, "phases": ["run"],
         "fanout": {"shards": shards}}
    s = C.run_dbswarm(c, pinned=pinned)
    fixed = C.fixed_cpu(c["target"], wl, a.threads, shards, pinned)
    trx = s["phase"]["sysbench"]["transactions"]
    return {"shards": shards, "tps": s["phase"]["sysbench"]["tps"], "transactions": trx,
            "cpu_us_per_trx": round(max(s["shard_cpu_s"] - fixed, 0) / trx * 1e6, 1), "fixed_cpu_s": fixed}


def markdown(data):
    a = data["args"]
    L = ["## Threads per shard process (the GIL)", "", C.header(data), "",
         f"{a['threads']} client threads of sysbench oltp_point_select (1 table × 1,000 rows) split over K shard "
         f"processes, {a['time']} s per run, medians of {a['rounds']} interleaved rounds; client CPU net of the "
         "shards' fixed start-up cost.", "",
         "| engine | CPUs | shards K | threads per shard | TPS | client CPU µs per transaction |",
         "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in data["rows"]:
        L.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r.get('mode', 'shared')} | {r['shards']} "
                 f"| {a['threads'] // r['shards']} | {r['tps']:,.0f} | {r['cpu_us_per_trx']:.1f} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--time", type=float, default=5)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--shards", default="1,2,8")
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--modes", default="shared", help="shared, pinned or shared,pinned")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    modes = C.csv_list(a.modes)
    if not modes or set(modes) - {"shared", "pinned"}:
        p.error(f"--modes: {a.modes!r}; use shared, pinned or shared,pinned")
    data = C.base_record("threads_per_shard", a)
    env = C.start_servers(a.servers_dir)
    data["rows"] = []
    for engine in C.csv_list(a.engines):
        C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_point_select", "tables": 1,
                                          "table_size": 1000}, threads=1, shards=1)
        for mode in modes:
            pinned = mode == "pinned"
            samples = {k: [] for k in C.csv_list(a.shards, int)}
            with C.Pinning(env, pinned, engines=(engine,)):
                for _ in range(a.rounds):
                    for k in samples:
                        samples[k].append(run(engine, env, k, a, pinned))
                        C.log(f"{engine} {mode} shards={k}: {samples[k][-1]}")
            for k, rs in samples.items():
                data["rows"].append({"engine": engine, "mode": mode, "shards": k,
                                     "tps": C.med([r["tps"] for r in rs]),
                                     "cpu_us_per_trx": C.med([r["cpu_us_per_trx"] for r in rs]), "rounds": rs})
    C.finish("threads_per_shard", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
