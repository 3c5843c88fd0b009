"""How the reference clients' CPU per operation grows with their connections (issue 36's bar).

Issue 36 asks for a client whose CPU per operation at 128 and 512 connections stays within
15 % of that at 16. docs/concurrency.md measured every Python model (threads, asyncio, more
processes, one thread multiplexing the sockets): all grow. This measures the tools dbswarm is
compared with, on the same machine and the same shape: sysbench 1.0.20 (C and LuaJIT, a thread
per connection) running oltp_point_select, go-ycsb v1.0.1 (Go: goroutines on the runtime's
epoll netpoller) running workload c (zipfian point reads), on MariaDB and PostgreSQL, and on
PostgreSQL pgbench 15 (C on libpq, ``-j 1``: one thread multiplexing every connection with
ppoll, the model of dbswarm's multiplexer without Python) running its select-only script
(``-S -M prepared``: one primary-key read per transaction, ``pgbench -i -s 2``'s 200,000
accounts), the server pinned to CPU 0 and the client to CPU 1.

CPU per operation without the start-up (512 connections take a while to open): every
configuration runs twice, ``--short`` and ``--long`` seconds; the client's CPU (its process,
wait4) and operations of the short run are taken from the long one's, so what is left is the
steady state's: (cpu_long - cpu_short) / (ops_long - ops_short).

    python bench/reference_growth.py --servers-dir /tmp/dbswarm-bench36-servers --rounds 2

The servers need max_connections above 512 (``DBSWARM_TEST_MYSQL_OPTIONS=--max-connections=1200
scripts/test-servers start DIR``).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import vs_sysbench as VS  # noqa: E402
from bench import vs_ycsb as VY  # noqa: E402

TOOLS = ("sysbench", "go-ycsb", "pgbench")
PGBENCH = Path("/usr/lib/postgresql/15/bin/pgbench")
PGBENCH_SCALE = 2  # 200,000 accounts


def sysbench_run(engine, env, a, n, seconds) -> dict:
    args = SimpleNamespace(tables=1, table_size=a.table_size, time=int(seconds))
    out = VS.run_sysbench(engine, env, "oltp_point_select", args, n, True)
    return {"ops": out["transactions"], "cpu_s": out["cpu_s"], "errors": out.get("errors")}


def goycsb_run(engine, env, a, n, seconds) -> dict:
    args = SimpleNamespace(recordcount=a.recordcount, threads=n, time=seconds, go_startup=a.go_startup)
    out = VY.run_go(engine, env, "c", args, True)
    return {"ops": out["ops"], "cpu_s": out["cpu_s"], "errors": out.get("errors")}


def pgbench_env(env) -> dict:
    """pgbench's environment: the server and user, the password through PGPASSWORD (never argv)."""
    return {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": env["DBSWARM_TEST_PG_PORT"], "PGUSER": "dbswarm",
            "PGDATABASE": "dbswarm", "PGPASSWORD": C.password(env)}


def pgbench_load(env) -> None:
    res = C.run_measured([str(PGBENCH), "-i", "-q", "-s", str(PGBENCH_SCALE)], env=pgbench_env(env), timeout=600)
    C.check(res, "pgbench -i")


def pgbench_run(engine, env, a, n, seconds) -> dict:
    cmd = [*C.client_prefix(True), str(PGBENCH), "-n", "-S", "-M", "prepared", "-c", str(n), "-j", "1",
           "-T", str(int(seconds))]
    res = C.check(C.run_measured(cmd, env=pgbench_env(env), timeout=seconds * 3 + 180), f"pgbench -c {n}")
    m = re.search(r"number of transactions actually processed: (\d+)", res["stdout"])
    if not m:
        raise RuntimeError(f"pgbench printed no transaction count: {res['stdout'][-500:]}")
    failed = re.search(r"number of failed transactions: (\d+)", res["stdout"])
    return {"ops": int(m.group(1)), "cpu_s": res["cpu_s"], "errors": int(failed.group(1)) if failed else 0}


RUNS = {"sysbench": sysbench_run, "go-ycsb": goycsb_run, "pgbench": pgbench_run}
ENGINES_OF = {"pgbench": ("postgresql",)}  # a tool that speaks one engine's protocol only


def one(engine, env, a, tool, n) -> dict:
    with C.Pinning(env, True, engines=(engine,)):
        short = RUNS[tool](engine, env, a, n, a.short)
        long = RUNS[tool](engine, env, a, n, a.long)
    d_ops, d_cpu = long["ops"] - short["ops"], long["cpu_s"] - short["cpu_s"]
    return {"engine": engine, "tool": tool, "conns": n, "short": short, "long": long,
            "ops_per_s": round(d_ops / (a.long - a.short), 1),
            "cpu_us_per_op": round(d_cpu / d_ops * 1e6, 2) if d_ops > 0 else None,
            "client_busy": round(d_cpu / (a.long - a.short), 3), "loadavg": C.loadavg()}


def summarise(rows, conns) -> list[dict]:
    out = []
    for engine in dict.fromkeys(r["engine"] for r in rows):
        for tool in TOOLS:
            def col(key, n):
                return [r[key] for r in rows if r["engine"] == engine and r["tool"] == tool  # noqa: B023
                        and r["conns"] == n and r.get(key)]
            per = {n: col("cpu_us_per_op", n) for n in conns}
            if not all(per.values()):
                continue
            med = {n: round(C.med(v), 1) for n, v in per.items()}
            base = med[conns[0]]
            rates = {n: C.med(col("ops_per_s", n)) for n in conns}
            out.append({"engine": engine, "tool": tool, "cpu_us_per_op": med, "rounds": per, "ops_per_s": rates,
                        "growth": {n: round(med[n] / base, 2) for n in conns[1:]}})
    return out


def markdown(data) -> str:
    conns = data["conns"]
    L = ["## How the reference clients' CPU per operation grows with connections (issue 36)", "",
         C.header(data), "",
         f"Client CPU µs per operation in the steady state (runs of {data['args']['short']} and "
         f"{data['args']['long']} s, the difference), medians of {data['args']['rounds']} rounds; the server "
         "on CPU 0, the client on CPU 1. sysbench: oltp_point_select (1 table); go-ycsb: workload c, zipfian; "
         "pgbench: -S -M prepared -j 1 (one thread multiplexing the connections, C). "
         "Growth: ÷ the figure at the fewest connections (issue 36's bar for dbswarm: within 1.15).", "",
         "| engine | client | " + " | ".join(f"{n} conns µs/op (rounds)" for n in conns) + " | "
         + " | ".join(f"{n} ÷ {conns[0]}" for n in conns[1:]) + " | ops/s " + " / ".join(map(str, conns)) + " |",
         "| --- | --- | " + " | ".join("---:" for _ in conns) + " | " + " | ".join("---:" for _ in conns[1:])
         + " | ---: |"]
    for s in data["summary"]:
        # (read back from its JSON, the per-connection maps have str keys)
        s = {k: {int(n): x for n, x in v.items()} if isinstance(v, dict) else v for k, v in s.items()}
        L.append(f"| {C.ENGINE_LABELS[s['engine']]} | {s['tool']} | "
                 + " | ".join(f"{s['cpu_us_per_op'][n]} ({', '.join(str(x) for x in s['rounds'][n])})" for n in conns)
                 + " | " + " | ".join(f"{s['growth'][n]}" for n in conns[1:]) + " | "
                 + " / ".join(f"{s['ops_per_s'][n]:.0f}" for n in conns) + " |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers-dir", default="/tmp/dbswarm-bench36-servers")
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--tools", default=",".join(TOOLS))
    p.add_argument("--conns", default="16,128,512")
    p.add_argument("--short", type=float, default=2)
    p.add_argument("--long", type=float, default=6)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--table-size", type=int, default=10_000, help="sysbench: rows of sbtest1")
    p.add_argument("--recordcount", type=int, default=20_000, help="go-ycsb: records of usertable")
    p.add_argument("--go-startup", type=float, default=1.0, help="go-ycsb: seconds before its run starts")
    p.add_argument("--no-load", action="store_true")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    if not 0 < a.short < a.long:
        p.error("--short must be below --long")
    conns = C.csv_list(a.conns, int)
    data = C.base_record("reference_growth", a)
    data["conns"] = conns
    env = C.start_servers(a.servers_dir)
    engines, tools = C.csv_list(a.engines), C.csv_list(a.tools)
    if not a.no_load:
        for engine in engines:
            if "sysbench" in tools:
                C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_read_write", "tables": 1,
                                                  "table_size": a.table_size})
            if "go-ycsb" in tools:
                VY.load(engine, env, SimpleNamespace(recordcount=a.recordcount, threads=16))
            if "pgbench" in tools and engine in ENGINES_OF["pgbench"]:
                pgbench_load(env)
    rows = []
    for r in range(a.rounds):
        for engine in engines:
            for tool in tools:
                if engine not in ENGINES_OF.get(tool, (engine,)):
                    continue
                for n in (conns if r % 2 == 0 else conns[::-1]):
                    rows.append(C.attempt(lambda: one(engine, env, a, tool, n), engine=engine, tool=tool, conns=n))
                    C.log(f"{engine} {tool} {n}: {rows[-1].get('cpu_us_per_op')} µs/op, "
                          f"{rows[-1].get('ops_per_s')} ops/s, client busy {rows[-1].get('client_busy')}")
    data["rows"] = rows
    data["summary"] = summarise([x for x in rows if "failed" not in x], conns)
    C.finish("reference_growth", data, markdown, write_md=not a.no_md)
    print(markdown(data))


if __name__ == "__main__":
    main()
