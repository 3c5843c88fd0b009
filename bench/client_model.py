"""`dbswarm run` with a thread per connection against one thread multiplexing them
(``fanout.client_model: threads`` / ``multiplexed``, engine/mux.py), and go-ycsb v1.0.1 in the
same rounds: YCSB workloads (zipfian) on MariaDB (mysqlclient) and PostgreSQL (psycopg's
prepared statements), at each thread count, pinned (server on CPU 0, dbswarm's processes
and go-ycsb on CPU 1) and shared (both free on both CPUs).

Rounds alternate (threads, multiplexed, go-ycsb, threads, ...); ratios are per round,
median (min–max). Client CPU per operation: the shard processes' CPU net of their fixed
start-up cost (a 1-event campaign, as bench/vs_ycsb.py measures it); go-ycsb's whole
process. Tables: bench/vs_ycsb.py's (dbswarm and go-ycsb each load their own keys).

    python bench/client_model.py --servers-dir /tmp/dbswarm-bench36-servers --time 8 --rounds 3 \\
        --threads 16,128 --workloads a,c --engines mysql,postgresql

``--sysbench-tests oltp_read_write,oltp_point_select`` compares sysbench's OLTP tests the same
way against sysbench 1.0.20 (``--workloads ''`` for sysbench only): threads, multiplexed
(each event's statements sent one after another by the shard's multiplexer), sysbench; TPS
and client CPU per transaction (bench/vs_sysbench.py's tables, loaded once per engine).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import vs_sysbench as VS  # noqa: E402
from bench import vs_ycsb as Y  # noqa: E402

MODELS = ("threads", "multiplexed")


def compare(engine, env, w, a, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    C.log(f"{engine} workload {w} threads={a.threads} {mode}: {a.rounds} rounds x (threads, multiplexed, go-ycsb)")
    got: dict[str, list] = {"threads": [], "multiplexed": [], "go-ycsb": []}
    with C.Pinning(env, pinned, engines=(engine,)):
        for i in range(a.rounds):
            for model in MODELS:
                got[model].append(Y.run_dbswarm(engine, env, w, argparse.Namespace(**dict(vars(a), client_model=model)),
                                                pinned))
            got["go-ycsb"].append(Y.run_go(engine, env, w, a, pinned))
            C.log(f"  round {i}: ops/s " + ", ".join(f"{k} {v[-1]['ops_per_s']:,.0f}" for k, v in got.items())
                  + "; client µs/op " + ", ".join(f"{k} {v[-1]['cpu_us_per_op']}" for k, v in got.items()))
    th, mx, gy = got["threads"], got["multiplexed"], got["go-ycsb"]

    def col(rows, key):
        return [r.get(key) for r in rows]
    row = {"engine": engine, "workload": w, "threads": a.threads, "mode": mode,
           "ops": {k: C.med(col(v, "ops_per_s")) for k, v in got.items()},
           "cpu_us_per_op": {k: C.med(col(v, "cpu_us_per_op")) for k, v in got.items()},
           "server_cpu_us_per_op": {k: C.med(col(v, "server_cpu_us_per_op")) for k, v in got.items()},
           "p99_us": {k: C.med(col(v, "p99_us")) for k, v in got.items()},
           "mux_vs_threads_ops": C.ratios(col(mx, "ops_per_s"), col(th, "ops_per_s")),
           "mux_vs_threads_cpu": C.ratios(col(mx, "cpu_us_per_op"), col(th, "cpu_us_per_op")),
           "threads_vs_goycsb_ops": C.ratios(col(th, "ops_per_s"), col(gy, "ops_per_s")),
           "mux_vs_goycsb_ops": C.ratios(col(mx, "ops_per_s"), col(gy, "ops_per_s")),
           "mux_vs_goycsb_cpu": C.ratios(col(mx, "cpu_us_per_op"), col(gy, "cpu_us_per_op")),
           "errors": {k: sum(r.get("errors") or 0 for r in v) for k, v in got.items()},
           "runs": got, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  multiplexed ÷ threads: ops {C.fmt_ratio(row['mux_vs_threads_ops'])}, client CPU/op "
          f"{C.fmt_ratio(row['mux_vs_threads_cpu'])}; ÷ go-ycsb: threads {C.fmt_ratio(row['threads_vs_goycsb_ops'])}, "
          f"multiplexed {C.fmt_ratio(row['mux_vs_goycsb_ops'])}")
    return row


def compare_sysbench(engine, env, test, a, threads, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    C.log(f"{engine} sysbench {test} threads={threads} {mode}: {a.rounds} rounds x (threads, multiplexed, sysbench)")
    got: dict[str, list] = {"threads": [], "multiplexed": [], "sysbench": []}
    with C.Pinning(env, pinned, engines=(engine,)):
        for i in range(a.rounds):
            for model in MODELS:
                got[model].append(VS.run_dbswarm(engine, env, test, argparse.Namespace(**dict(vars(a), client_model=model)),
                                                 threads, pinned))
            got["sysbench"].append(VS.run_sysbench(engine, env, test, a, threads, pinned))
            for v in got.values():  # client CPU per transaction, µs (sysbench: its process)
                r = v[-1]
                r["cpu_us_per_trx"] = (round(r["cpu_s_per_1000"] * 1000, 1) if "cpu_s_per_1000" in r else
                                       round(r["cpu_s"] / r["transactions"] * 1e6, 1) if r.get("transactions") else None)
            C.log(f"  round {i}: TPS " + ", ".join(f"{k} {v[-1]['tps']:,.0f}" for k, v in got.items())
                  + "; client µs/trx " + ", ".join(f"{k} {v[-1]['cpu_us_per_trx']}" for k, v in got.items()))
    th, mx, sb = got["threads"], got["multiplexed"], got["sysbench"]

    def col(rows, key):
        return [r.get(key) for r in rows]
    row = {"engine": engine, "workload": f"sysbench {test}", "threads": threads, "mode": mode,
           "ops": {k: C.med(col(v, "tps")) for k, v in got.items()},
           "cpu_us_per_op": {k: C.med(col(v, "cpu_us_per_trx")) for k, v in got.items()},
           "mux_vs_threads_ops": C.ratios(col(mx, "tps"), col(th, "tps")),
           "mux_vs_threads_cpu": C.ratios(col(mx, "cpu_us_per_trx"), col(th, "cpu_us_per_trx")),
           "threads_vs_reference_ops": C.ratios(col(th, "tps"), col(sb, "tps")),
           "mux_vs_reference_ops": C.ratios(col(mx, "tps"), col(sb, "tps")),
           "errors": {k: sum(r.get("errors") or 0 for r in v) for k, v in got.items()},
           "runs": got, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  multiplexed ÷ threads: TPS {C.fmt_ratio(row['mux_vs_threads_ops'])}, client CPU/trx "
          f"{C.fmt_ratio(row['mux_vs_threads_cpu'])}; ÷ sysbench: threads {C.fmt_ratio(row['threads_vs_reference_ops'])}, "
          f"multiplexed {C.fmt_ratio(row['mux_vs_reference_ops'])}")
    return row


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## Client models through `dbswarm run`: threads against multiplexed (issue 36)", "", C.header(data), ""]
    ycsb_rows = [r for r in data["comparisons"] if not str(r.get("workload", "")).startswith("sysbench")]
    if ycsb_rows:
        lines += [f"- YCSB, zipfian, {a['recordcount']:,} records, {a['time']} s per run, {a['rounds']} alternating rounds "
                 "(threads, multiplexed, go-ycsb); pinned: server on CPU 0, clients on CPU 1; shared: both free. Client "
                 "CPU: dbswarm's shard processes net of their start-up (a 1-event campaign), go-ycsb's process. Ratios: "
                 "per round, median (min–max).", "",
                 "| engine | workload | threads | mode | ops/s threads | ops/s multiplexed | ops/s go-ycsb | "
                 "mux ÷ threads ops | mux ÷ threads client CPU/op | threads ÷ go-ycsb | mux ÷ go-ycsb | "
                 "client µs/op threads / mux / go-ycsb | errors threads / mux / go-ycsb* |",
                 "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- | --- | ---: |"]
        lines += _table_rows(ycsb_rows, "go-ycsb", "goycsb", lambda r: r["workload"])
        lines += ["", "\\* go-ycsb's errors are its operations in flight when it is stopped (SIGINT: it has no time "
                  "limit), at most one per thread and run."]
    sb_rows = [r for r in data["comparisons"] if str(r.get("workload", "")).startswith("sysbench")]
    if sb_rows:
        lines += ["", f"sysbench ({a.get('tables')} tables of {a.get('table_size'):,} rows, uniform; client CPU per "
                  "transaction: dbswarm's shard processes net of their start-up, sysbench's process):", "",
                  "| engine | test | threads | mode | TPS threads | TPS multiplexed | TPS sysbench | mux ÷ threads TPS | "
                  "mux ÷ threads client CPU/trx | threads ÷ sysbench | mux ÷ sysbench | client µs/trx threads / mux / "
                  "sysbench | errors threads / mux / sysbench |",
                  "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- | --- | ---: |"]
        lines += _table_rows(sb_rows, "sysbench", "reference", lambda r: r["workload"].split()[-1])
    return "\n".join(lines) + "\n"


def _table_rows(rows, ref: str, vs: str, label) -> list[str]:
    """A table's rows: threads, multiplexed and the reference tool ``ref`` (its ratios under
    ``threads_vs_<vs>_ops`` / ``mux_vs_<vs>_ops``); ``label(row)`` names the workload."""
    out = []
    for r in rows:
        if "error" in r and "ops" not in r:
            out.append(f"| {r.get('engine')} | {r.get('workload')} | {r.get('threads')} | {r.get('mode')} | "
                       f"failed: {str(r['error'])[:120]} | | | | | | | | |")
            continue
        o, c = r["ops"], r["cpu_us_per_op"]
        out.append(f"| {C.ENGINE_LABELS.get(r['engine'], r['engine'])} | {label(r)} | {r['threads']} | {r['mode']} | "
                   f"{Y._num(o['threads'])} | {Y._num(o['multiplexed'])} | {Y._num(o[ref])} | "
                   f"{C.fmt_ratio(r['mux_vs_threads_ops'])} | {C.fmt_ratio(r['mux_vs_threads_cpu'])} | "
                   f"{C.fmt_ratio(r[f'threads_vs_{vs}_ops'])} | {C.fmt_ratio(r[f'mux_vs_{vs}_ops'])} | "
                   f"{_us(c['threads'])} / {_us(c['multiplexed'])} / {_us(c[ref])} | "
                   f"{' / '.join(str(r['errors'][k]) for k in ('threads', 'multiplexed', ref))} |")
    return out


def _us(v) -> str:
    return "—" if v is None else f"{v:.0f}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--recordcount", type=int, default=20_000)
    p.add_argument("--threads", default="16,128", help="client threads, comma-separated")
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--workloads", default="a,c")
    p.add_argument("--modes", default="pinned,shared", help="pinned, shared or both")
    p.add_argument("--shards", type=int, default=None, help="dbswarm's shards (default: one per usable CPU)")
    p.add_argument("--go-startup", type=float, default=0.3)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-load", action="store_true", help="the tables are loaded already (an earlier run)")
    p.add_argument("--sysbench-tests", default="", help="sysbench tests too, e.g. oltp_read_write,oltp_point_select")
    p.add_argument("--tables", type=int, default=8, help="sysbench tables")
    p.add_argument("--table-size", type=int, default=20_000, help="sysbench rows per table")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    a.bare = False
    thread_counts = C.csv_list(a.threads, int)
    if C.csv_list(a.workloads) and not C.GO_YCSB.exists():
        C.check(C.run_measured([str(C.ROOT / "scripts" / "build-go-ycsb")], timeout=1200), "scripts/build-go-ycsb")
    data = C.base_record("client_model", a)
    env = C.start_servers(a.servers_dir)
    data["comparisons"], data["loads"] = [], {}
    for engine in C.csv_list(a.engines):
        ea = argparse.Namespace(**dict(vars(a), threads=thread_counts[0]))
        if not a.no_load and C.csv_list(a.workloads):
            data["loads"][engine] = Y.load(engine, env, ea)
        for w in C.csv_list(a.workloads):
            for threads in thread_counts:
                ta = argparse.Namespace(**dict(vars(ea), threads=threads))
                for mode in C.csv_list(a.modes):
                    pinned = mode == "pinned"
                    row = C.attempt(lambda: compare(engine, env, w, ta, pinned), engine=engine, workload=w,
                                    threads=threads, mode=mode)
                    data["comparisons"].append(row)
        tests = C.csv_list(a.sysbench_tests)
        if tests and not a.no_load:
            data["loads"][f"{engine}-sysbench"] = {k: v for k, v in C.load_with_dbswarm(env, engine, {
                "family": "sysbench", "test": "oltp_read_write", "tables": a.tables, "table_size": a.table_size}).items()
                if k in ("operations_total", "duration_s", "ops_per_s")}
        for test in tests:
            for threads in thread_counts:
                for mode in C.csv_list(a.modes):
                    pinned = mode == "pinned"
                    row = C.attempt(lambda: compare_sysbench(engine, env, test, a, threads, pinned), engine=engine,
                                    workload=f"sysbench {test}", threads=threads, mode=mode)
                    data["comparisons"].append(row)
    C.finish("client_model", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
