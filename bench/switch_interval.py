"""Does the GIL's switch interval change what a shard's threads cost?

A shard's client threads hand the GIL over at every blocking driver call; a thread whose
response has arrived while another holds the GIL waits, and after the switch interval
(Python's default 5 ms) forces a hand-over. This script runs the same campaign (sysbench
oltp_point_select, THREADS threads in one shard) with each interval, alternated over the
rounds, and reports the shard's client CPU per transaction and its TPS. The interval is
set in every process of the campaign by a ``sitecustomize`` module on PYTHONPATH (bench
only: dbswarm itself does not change it).

    python bench/switch_interval.py --intervals 0.005,0.05 --rounds 5 --engines postgresql,mysql
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import generator_cost as G  # noqa: E402

WORKLOAD = {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000,
            "rand_type": "uniform"}


def with_interval(seconds: float, fn):
    """fn() with every Python process it starts switching the GIL every ``seconds``."""
    saved = os.environ.get("PYTHONPATH")
    with tempfile.TemporaryDirectory(prefix="dbswarm-switch-") as d:
        Path(d, "sitecustomize.py").write_text(f"import sys\nsys.setswitchinterval({seconds!r})\n")
        os.environ["PYTHONPATH"] = d + (os.pathsep + saved if saved else "")
        try:
            return fn()
        finally:
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved


def markdown(data: dict) -> str:
    a = data["args"]
    L = ["## GIL switch interval", "", C.header(data), "",
         f"sysbench oltp_point_select (1 table × 1,000 rows), {a['threads']} threads in one shard, {a['time']:g} s "
         f"campaigns, {a['rounds']} rounds alternating the intervals; client CPU per transaction (shard processes, "
         "net of start-up) and TPS: median (min–max).", "",
         "| engine | switch interval | CPU µs per transaction | TPS |", "| --- | ---: | --- | --- |"]
    for r in data["rows"]:
        cpu, tps = r["cpu_us_per_op"], r["ops_per_s"]
        L.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['interval_s'] * 1000:g} ms | {C.med(cpu):.1f} "
                 f"({min(cpu):.1f}–{max(cpu):.1f}) | {C.med(tps):,.0f} ({min(tps):,.0f}–{max(tps):,.0f}) |")
    return "\n".join(L) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--intervals", default="0.005,0.05", help="seconds, comma-separated (Python's default: 0.005)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--time", type=float, default=4)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    try:
        intervals = C.csv_list(a.intervals, float)
    except ValueError:
        p.error(f"--intervals: {a.intervals!r} is not a comma-separated list of seconds")
    if not intervals or min(intervals) <= 0:
        p.error("--intervals: every interval must be a positive number of seconds")
    data = C.base_record("switch_interval", a)
    data["rows"] = []
    env = C.start_servers(a.servers_dir)
    for engine in C.csv_list(a.engines):
        target = C.target(engine, env)
        C.load_with_dbswarm(env, engine, WORKLOAD, threads=1, shards=1)
        rows = {v: {"engine": engine, "interval_s": v, "cpu_us_per_op": [], "ops_per_s": []} for v in intervals}
        for _ in range(a.rounds):
            for v in intervals:
                r = with_interval(v, lambda: G.campaign(target, WORKLOAD, a.time, a.threads, 1))
                rows[v]["cpu_us_per_op"].append(r["cpu_us_per_op"])
                rows[v]["ops_per_s"].append(r["ops_per_s"])
                C.log(f"{engine} interval {v * 1000:g} ms: {r['cpu_us_per_op']} µs/trx, {r['ops_per_s']:,.0f} TPS")
        data["rows"].extend(rows.values())
    C.finish("switch_interval", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
