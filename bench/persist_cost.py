"""What a running shard's periodic persistence costs in throughput: the same `dbswarm run`
campaign (YCSB c, zipfian, on the records dbswarm loads) with the shards writing what they
measured every DBSWARM_PERSIST_INTERVAL_S seconds (the default, 15) and with that turned off
(0: a shard writes only at its call's end), interleaved rounds; ops/s of the whole run phase,
its ratio (persisting ÷ off), and the slowest second of the run's timeline away from its two
edges (the dip a write causes, if any).

    python bench/persist_cost.py --time 40 --rounds 3 --threads 16,128 --engines postgresql,mysql
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

ENV = "DBSWARM_PERSIST_INTERVAL_S"


def run(engine, env, threads, a, interval: str) -> dict:
    wl = {"family": "ycsb", "preset": "c", "recordcount": a.recordcount, "operationcount": 0,
          "maxexecutiontime": a.time, "threads": threads, "table": "usertable"}
    c = {"name": "persist-cost", "target": C.target(engine, env), "workload": wl, "phases": ["run"]}
    results = tempfile.mkdtemp(prefix="dbswarm-persist-cost-")
    saved = os.environ.get(ENV)
    os.environ[ENV] = interval
    try:
        s = C.run_dbswarm(c, results_dir=results, timeout=a.time * 3 + 180)
        series = {}
        for path in Path(results).glob("*/timeseries.csv"):
            for row in csv.DictReader(path.open()):
                if row["phase"] == "run":
                    series[int(row["second"])] = series.get(int(row["second"]), 0) + int(row["count"] or 0)
    finally:
        if saved is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = saved
        shutil.rmtree(results, ignore_errors=True)
    inner = [series[k] for k in sorted(series)[2:-2]]  # the ramp-up and the end left out
    ph = s["phase"]
    return {"ops_per_s": ph.get("ops_per_s"), "ops": ph.get("operations_total"), "shards": s["shard_count"],
            "slowest_second": min(inner) if inner else None,
            "median_second": C.med(inner) if inner else None}


def markdown(data):
    a = data["args"]
    L = ["## Periodic persistence of a running shard", "", C.header(data), "",
         f"YCSB c (zipfian, {a['recordcount']:,} records) for {a['time']:g} s through `dbswarm run`, CPUs shared, "
         f"the default shard count; the shards persisting every {a['interval']} s against not persisting "
         f"(`{ENV}=0`), medians of {a['rounds']} interleaved rounds. Slowest second: the run's timeline (every shard "
         "added), its first two and last two seconds left out, as a share of its median second.", "",
         "| engine | threads | ops/s persisting | ops/s off | ratio (single rounds) | slowest second, persisting | "
         "slowest second, off |",
         "| --- | ---: | ---: | ---: | --- | ---: | ---: |"]
    for r in data["rows"]:
        L.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['threads']} | {r['on']:,.0f} | {r['off']:,.0f} "
                 f"| {C.fmt_ratio(r['ratio'])} | {r['slowest_on']:.2f} | {r['slowest_off']:.2f} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=float, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", default="16,128")
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--recordcount", type=int, default=20000)
    p.add_argument("--interval", default="15", help="the persisting side's DBSWARM_PERSIST_INTERVAL_S")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    if a.time <= 2 * float(a.interval):
        p.error(f"--time {a.time:g} must exceed two intervals ({a.interval} s) to see a write")
    data = C.base_record("persist_cost", a)
    env = C.start_servers(a.servers_dir)
    data["rows"] = []
    for engine in C.csv_list(a.engines):
        C.load_with_dbswarm(env, engine, {"family": "ycsb", "preset": "c", "recordcount": a.recordcount,
                                          "table": "usertable"})
        for threads in C.csv_list(a.threads, int):
            on, off = [], []
            for i in range(a.rounds):
                for side, out in ((a.interval, on), ("0", off))[:: 1 if i % 2 == 0 else -1]:
                    out.append(run(engine, env, threads, a, side))
                    C.log(f"{engine} {threads} threads, {ENV}={side}: {out[-1]}")
            data["rows"].append({
                "engine": engine, "threads": threads,
                "on": C.med([r["ops_per_s"] for r in on]), "off": C.med([r["ops_per_s"] for r in off]),
                "ratio": C.ratios([r["ops_per_s"] for r in on], [r["ops_per_s"] for r in off]),
                "slowest_on": C.med([r["slowest_second"] / r["median_second"] for r in on]),
                "slowest_off": C.med([r["slowest_second"] / r["median_second"] for r in off]),
                "persisting": on, "off_rounds": off})
    C.finish("persist_cost", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
