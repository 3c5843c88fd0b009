"""The stop instant's last operations, two revisions side by side, at many connections a shard.

At the stop instant each connection has one operation in flight. Until b862958 a client
closed its connection as soon as its own loop ended, while the others' last operations were
still in flight, and the server (PostgreSQL: a backend's exit; MariaDB: a session's end)
spent its CPU on those ends: at 512 connections on one server CPU the last operations took
6-7 s, which their latencies and the window's length reported as the database's.

Each measurement is one `dbswarm run` campaign (bench/dbswarm_run.py, campaign mode: the
state machine through moto, every function in its own process) of YCSB workload c (zipfian,
bench/vs_ycsb.py's table), one shard, the server pinned to CPU 0 and the client to CPU 1,
run in a fresh process importing the revision's code (bench/ab_revisions.py's worktrees);
rounds alternate base, head. Recorded per campaign: the window's length, operations per
second, the shard's CPU per operation over the window, p99 / p99.9 / max, and the timeline's
mean latency in the last whole second against the median second's.

    python bench/stop_edge.py --base edddc3f --servers-dir /tmp/dbswarm-bench36-servers \\
        --engines postgresql,mysql --threads 128,512 --models multiplexed,threads --rounds 2 --time 5

The tables must hold bench/vs_ycsb.py's 20,000 records (a run of bench/client_model.py or
bench/vs_ycsb.py loads them). PostgreSQL needs max_connections above the largest thread
count (bench/stop_edge.py does not change the server's settings).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import ab_revisions as AB  # noqa: E402
from bench import common as C  # noqa: E402

# runs inside the revision's tree: one campaign, prints one JSON line
PROBE = r"""
import glob, json, statistics, sys, tempfile
from bench import common as C, vs_ycsb as Y
engine, threads, model, seconds, servers_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
env = C.start_servers(servers_dir)
wl = {"family": "ycsb", "preset": "c", **Y.PROPS["c"], "recordcount": 20000, "operationcount": 0,
      "maxexecutiontime": seconds, "threads": threads, "table": Y.table_for("c")}
c = {"name": "stop-edge", "target": Y._target(engine, env), "workload": wl, "phases": ["run"],
     "fanout": {"shards": 1, "client_model": model}}
rd = tempfile.mkdtemp(prefix="stop-edge-")
s = C.run_dbswarm(c, pinned=True, results_dir=rd, timeout=seconds * 3 + 300)
res = json.load(open(glob.glob(rd + "/*/result.json")[0]))
ph = res["runs"][0]["phases"]["run"]
tl = ph["timeline"]
n = max(len(v) for v in tl["ops"].values())
ops = [sum(v[i] if i < len(v) else 0 for v in tl["ops"].values()) for i in range(n)]
mean_ms = [round(l / o / 1000, 2) if o else None for o, l in zip(ops, tl["latency_us"])]
seconds_with_ops = [i for i, o in enumerate(ops) if o]
last = seconds_with_ops[-1]
whole = [m for i, m in enumerate(mean_ms) if m is not None and seconds_with_ops[0] < i < last]
total = ph.get("operations_total") or 0
ov = s.get("overall") or {}
print(json.dumps({"duration_s": ph.get("duration_s"), "ops_per_s": ph.get("ops_per_s"), "ops": total,
                  "cpu_us_per_op": round(s["shard_cpu_s"] / total * 1e6, 1) if total else None,
                  "p99_ms": (ov.get("p99_us") or 0) / 1000, "p999_ms": (ov.get("p99.9_us") or 0) / 1000,
                  "last_second_mean_ms": mean_ms[last], "median_second_mean_ms": statistics.median(whole) if whole else None,
                  "ops_per_second": ops, "mean_ms_per_second": mean_ms}))
"""


def probe(path: Path, engine: str, threads: int, model: str, seconds: int, servers_dir: str) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{path / 'shared'}{os.pathsep}{path}")
    res = subprocess.run([sys.executable, "-c", PROBE, engine, str(threads), model, str(seconds), servers_dir],
                         cwd=path, env=env, capture_output=True, text=True, timeout=seconds * 6 + 600)
    if res.returncode:
        raise RuntimeError(f"{engine} {threads} {model} in {path} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


KEYS = ("duration_s", "ops_per_s", "cpu_us_per_op", "p99_ms", "p999_ms", "last_second_mean_ms",
        "median_second_mean_ms")


def _fmt(x) -> str:
    if x is None:
        return "—"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def markdown(data: dict) -> str:
    a = data["args"]
    L = [f"## The stop instant's last operations: {data['base']} → {data['head']}", "", C.header(data), "",
         f"`dbswarm run`, YCSB c zipfian, one shard, server on CPU 0, client on CPU 1, {a['time']} s, "
         f"{a['rounds']} alternating rounds (base, head); medians, base → head.", "",
         "| engine | threads | model | window s | ops/s | client CPU µs/op | p99 ms | p99.9 ms "
         "| last second's mean ms | median second's mean ms |",
         "| --- | ---: | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in data["rows"]:
        cells = [f"{_fmt(r['base'][k])} → {_fmt(r['head'][k])}" for k in KEYS]
        L.append(f"| {r['engine']} | {r['threads']} | {r['model']} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="the revision before the change (a git worktree is made for it)")
    p.add_argument("--head", default=".", help='the revision after ("." = the working tree)')
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--threads", default="128,512")
    p.add_argument("--models", default="multiplexed,threads")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    (bpath, bsha), (hpath, hsha) = AB.tree(a.base), AB.tree(a.head)
    env = C.start_servers(a.servers_dir)
    data = {**C.base_record("stop_edge", a), "base": bsha, "head": hsha, "rows": []}
    for engine in C.csv_list(a.engines):
        with C.Pinning(env, True, engines=(engine,)):
            for threads in C.csv_list(a.threads, int):
                for model in C.csv_list(a.models):
                    runs: dict[str, list] = {"base": [], "head": []}
                    for i in range(a.rounds):
                        for label, path in (("base", bpath), ("head", hpath)):
                            runs[label].append(probe(path, engine, threads, model, a.time, a.servers_dir))
                            r = runs[label][-1]
                            C.log(f"{engine} {threads} {model} round {i} {label}: " + ", ".join(f"{k} {r[k]}" for k in KEYS))
                    row = {"engine": engine, "threads": threads, "model": model, "runs": runs,
                           **{label: {k: C.med([r[k] for r in rs if r[k] is not None]) for k in KEYS}
                              for label, rs in runs.items()}}
                    data["rows"].append(row)
    C.finish("stop_edge", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
