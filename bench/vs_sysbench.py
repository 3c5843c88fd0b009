"""dbswarm against sysbench 1.0.20: oltp_read_write, oltp_read_only and oltp_point_select on
MariaDB and PostgreSQL, interleaved rounds (dbswarm, sysbench, dbswarm, sysbench, ...) on
the same tables, same threads, same duration, same --rand-type (uniform for both).

The tables are loaded once per engine by dbswarm (prepare + load: sysbench's own schema,
sbtestN with id, k, c, pad and the secondary index k_N created after the load, as
sysbench prepare does); sysbench's `run` works on them unchanged. Each comparison runs
twice: servers and clients sharing both CPUs ("shared"), and the server pinned to CPU 0
with the client pinned to CPU 1 ("pinned").

    python bench/vs_sysbench.py --time 60 --rounds 3 --tables 8 --table-size 100000 --threads 8,32

Reports per comparison: dbswarm TPS / sysbench TPS, QPS ratio, p95 ratio (dbswarm's p95
transaction latency / sysbench's), and client CPU seconds per 1,000 transactions of each
(dbswarm: the shard processes' rusage; sysbench: its process's rusage).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

TESTS = ("oltp_read_write", "oltp_read_only", "oltp_point_select")
RAND_TYPE = "uniform"


def sysbench_cmd(engine, env, test, a, threads):
    pw = C.password(env)
    if engine == "mysql":
        conn = ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={env['DBSWARM_TEST_MYSQL_PORT']}",
                "--mysql-user=dbswarm", f"--mysql-password={pw}", "--mysql-db=dbswarm"]
    else:
        conn = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={env['DBSWARM_TEST_PG_PORT']}",
                "--pgsql-user=dbswarm", f"--pgsql-password={pw}", "--pgsql-db=dbswarm"]
    return [C.SYSBENCH, test, *conn, f"--tables={a.tables}", f"--table-size={a.table_size}",
            f"--threads={threads}", f"--time={a.time}", f"--rand-type={RAND_TYPE}", "--report-interval=1",
            f"--percentile={getattr(a, 'percentile', 95)}", "run"]


def redact(cmd):
    return [re.sub(r"(password=).*", r"\1***", c) for c in cmd]


def parse_sysbench(text: str) -> dict:
    def num(pattern):
        m = re.search(pattern, text)
        return float(m.group(1)) if m else None
    return {"transactions": num(r"transactions:\s+(\d+)"), "tps": num(r"transactions:\s+\d+\s+\(([\d.]+) per sec"),
            "queries": num(r"queries:\s+(\d+)"), "qps": num(r"queries:\s+\d+\s+\(([\d.]+) per sec"),
            "p95_ms": num(r"95th percentile:\s+([\d.]+)"), "p50_ms": num(r"50th percentile:\s+([\d.]+)"), "avg_ms": num(r"avg:\s+([\d.]+)"),
            "total_time_s": num(r"total time:\s+([\d.]+)s"), "errors": num(r"ignored errors:\s+(\d+)"),
            "reconnects": num(r"reconnects:\s+(\d+)")}


def run_sysbench(engine, env, test, a, threads, pinned):
    cmd = [*C.client_prefix(pinned), *sysbench_cmd(engine, env, test, a, threads)]
    res = C.check(C.run_measured(cmd, timeout=a.time * 3 + 120), f"sysbench {test} on {engine}")
    out = parse_sysbench(res["stdout"])
    out["cpu_s"] = round(res["cpu_s"], 3)
    out["wall_s"] = round(res["wall_s"], 3)
    out["cpu_s_per_1000"] = round(res["cpu_s"] / out["transactions"] * 1000, 4) if out["transactions"] else None
    return out


def dbswarm_campaign(engine, env, test, a, threads, shards=None) -> dict:
    """The campaign that runs sysbench's ``test`` as sysbench_cmd does."""
    c = {"name": f"vs-sysbench-{test}", "target": C.target(engine, env),
         "workload": {"family": "sysbench", "test": test, "tables": a.tables, "table_size": a.table_size,
                      "threads": threads, "time": a.time, "rand_type": RAND_TYPE, "report_interval": 1},
         "phases": ["run"]}
    if shards:
        c["fanout"] = {"shards": shards}
    if getattr(a, "client_model", None):  # bench/client_model.py: threads or multiplexed
        c["fanout"] = {**c.get("fanout", {}), "client_model": a.client_model}
    return c


def run_dbswarm(engine, env, test, a, threads, pinned):
    c = dbswarm_campaign(engine, env, test, a, threads, a.shards)
    s = C.run_dbswarm(c, pinned=pinned, timeout=a.time * 3 + 180)
    fixed = C.fixed_cpu(c["target"], c["workload"], threads, a.shards, pinned)
    ph = s["phase"]
    sb = ph.get("sysbench") or {}
    trx = sb.get("transactions") or 0
    return {"transactions": trx, "tps": sb.get("tps"), "queries": sb.get("queries"), "qps": sb.get("qps"),
            "p95_ms": sb.get("latency_p95_ms"), "avg_ms": sb.get("latency_avg_ms"), "errors": sb.get("errors"),
            "duration_s": ph.get("duration_s"), "steady_ops_per_s": (ph.get("steady") or {}).get("ops_per_s"),
            "abandoned_threads": (ph.get("abandoned_threads") or {}).get("count", 0),
            "shards": s["shard_count"], "cpu_s": s["shard_cpu_s"], "runner_cpu_s": s["runner_cpu_s"],
            "not_shard_cpu_s": s.get("not_shard_cpu_s"), "all_cpu_s": s.get("all_cpu_s"),
            "wall_s": round(s["wall_s"], 3), "status": ph.get("status"), "fixed_cpu_s": fixed,
            "cpu_s_per_1000_raw": round(s["shard_cpu_s"] / trx * 1000, 4) if trx else None,
            "cpu_s_per_1000": round(max(s["shard_cpu_s"] - fixed, 0) / trx * 1000, 4) if trx else None}


def with_server_cpu(engine, env, run, window_s: float) -> dict:
    """``run()``'s record with the server's CPU over it (/proc: every server process, PostgreSQL's
    exited backends included), in all and per transaction: dbswarm's includes its connections'
    set-up (PREPAREs, the window's counter reads), sysbench's its own; and ``server_busy``, the
    server's mean CPU share over the busiest ``window_s`` seconds (C.ServerBusy: 1.0 pinned = no
    idle time in the window)."""
    srv0 = C.server_cpu_s(env, (engine,))
    with C.ServerBusy(env, (engine,)) as busy:
        out = run()
    cpu = C.server_cpu_s(env, (engine,)) - srv0
    out["server_busy"] = busy.top(window_s)
    trx = out.get("transactions") or 0
    out["server_cpu_s"] = round(cpu, 2)
    out["server_cpu_ms_per_trx"] = round(cpu / trx * 1000, 3) if trx else None
    return out


def compare(engine, env, test, a, threads, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    window = max(1, a.time - 2)  # the measured seconds of both tools, their first and last left out
    C.log(f"{engine} {test} threads={threads} {mode}: {a.rounds} rounds x (dbswarm, sysbench) x {a.time} s")
    with C.Pinning(env, pinned, engines=(engine,)):
        ds, sb = C.interleave(
            a.rounds, lambda i: with_server_cpu(engine, env, lambda: run_dbswarm(engine, env, test, a, threads, pinned),
                                                window),
            lambda i: with_server_cpu(engine, env, lambda: run_sysbench(engine, env, test, a, threads, pinned), window))
    row = {"engine": engine, "test": test, "threads": threads, "mode": mode,
           "tps_ratio": C.ratios([d["tps"] for d in ds], [s["tps"] for s in sb]),
           "qps_ratio": C.ratios([d["qps"] for d in ds], [s["qps"] for s in sb]),
           "p95_ratio": C.ratios([d["p95_ms"] for d in ds], [s["p95_ms"] for s in sb]),
           "dbswarm_tps": C.med([d["tps"] for d in ds]), "sysbench_tps": C.med([s["tps"] for s in sb]),
           "dbswarm_cpu_s_per_1000": C.med([d["cpu_s_per_1000"] for d in ds]),
           "sysbench_cpu_s_per_1000": C.med([s["cpu_s_per_1000"] for s in sb]),
           "dbswarm_server_cpu_ms_per_trx": C.med([d["server_cpu_ms_per_trx"] for d in ds]),
           "sysbench_server_cpu_ms_per_trx": C.med([s["server_cpu_ms_per_trx"] for s in sb]),
           "dbswarm_server_busy": C.med([d["server_busy"] for d in ds if d.get("server_busy") is not None]),
           "sysbench_server_busy": C.med([s["server_busy"] for s in sb if s.get("server_busy") is not None]),
           "dbswarm": ds, "sysbench": sb, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  TPS ratio {C.fmt_ratio(row['tps_ratio'])}  dbswarm {row['dbswarm_tps']:.0f} / sysbench "
          f"{row['sysbench_tps']:.0f}; CPU s/1000 trx {row['dbswarm_cpu_s_per_1000']:.3g} vs "
          f"{row['sysbench_cpu_s_per_1000']:.3g}; server CPU ms/trx {_num(row['dbswarm_server_cpu_ms_per_trx'])} vs "
          f"{_num(row['sysbench_server_cpu_ms_per_trx'])}; server busy {_busy(row)}")
    return row


def _num(x) -> str:
    return "–" if x is None else f"{x:.3g}"


def _busy(row) -> str:
    d, s = row.get("dbswarm_server_busy"), row.get("sysbench_server_busy")
    return "–" if d is None or s is None else f"{d:.2f} / {s:.2f}"  # records before 2026-11-28 night: none


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## dbswarm vs sysbench 1.0.20", "", C.header(data),
             f"- {a['tables']} tables × {a['table_size']:,} rows, {a['time']} s per run, {a['rounds']} interleaved "
             f"rounds (dbswarm, sysbench, …), `--rand-type=uniform` for both (dbswarm `rand_type: uniform`); "
             f"tables loaded once per engine by dbswarm (sysbench's schema); dbswarm runs a campaign with "
             f"phases [run] through {C.DBSWARM_MODE_TEXT}; shards: {a.get('shards') or 'the default, one per CPU the client may use (pinned: 1)'}.",
             "- ratio cells: median (min–max) over the rounds of dbswarm / sysbench; p95 ratio > 1 means dbswarm "
             "saw slower transactions. CPU: client CPU seconds (user+sys) per 1,000 transactions, median; "
             "dbswarm's is the shard processes' CPU minus their fixed start-up cost (spawn, imports, connect: "
             "a 1-event campaign with the same shards; raw figures in the JSON), sysbench's its process's.",
             "- shared: servers and clients on both CPUs; pinned: server `taskset -a -cp 0`, client `taskset -c 1`.",
             "- server busy: the server's mean CPU share over the busiest (time − 2) s of each run, sampled every "
             "0.5 s, median, dbswarm / sysbench (pinned: 1.00 = no idle time in the window; a TPS gap at 1.00 / "
             "1.00 is the server's CPU per transaction).",
             "",
             "| engine | test | threads | mode | TPS dbswarm | TPS sysbench | TPS ratio | QPS ratio | p95 ratio "
             "| CPU s/1k trx dbswarm | CPU s/1k trx sysbench | server busy | load avg before→after |",
             "| --- | --- | --- | --- | ---: | ---: | --- | --- | --- | ---: | ---: | --- | --- |"]
    for r in data["comparisons"]:
        if r.get("failed"):
            lines.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['test']} | {r['threads']} | {r['mode']} "
                         f"| failed: {r['failed']} | | | | | | | | |")
            continue
        lines.append(
            f"| {C.ENGINE_LABELS[r['engine']]} | {r['test']} | {r['threads']} | {r['mode']} | {r['dbswarm_tps']:,.0f} "
            f"| {r['sysbench_tps']:,.0f} | {C.fmt_ratio(r['tps_ratio'])} | {C.fmt_ratio(r['qps_ratio'])} "
            f"| {C.fmt_ratio(r['p95_ratio'])} | {r['dbswarm_cpu_s_per_1000']:.3g} | {r['sysbench_cpu_s_per_1000']:.3g} "
            f"| {_busy(r)} | {r['loadavg']['before'][0]:.1f}→{r['loadavg']['after'][0]:.1f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=100_000)
    p.add_argument("--threads", default="8,32")
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--tests", default=",".join(TESTS))
    p.add_argument("--pin", dest="pin", action="store_true", default=True,
                   help="run every comparison shared AND pinned (default)")
    p.add_argument("--no-pin", dest="pin", action="store_false", help="shared only")
    p.add_argument("--pinned-threads", default=None,
                   help="threads for which the pinned comparison runs (default: all of --threads)")
    p.add_argument("--shards", type=int, default=None, help="dbswarm shards (default: dbswarm's, one per CPU)")
    p.add_argument("--pinned-only", action="store_true", help="the pinned comparisons only")
    p.add_argument("--client-model", choices=("auto", "threads", "multiplexed"), default=None,
                   help="dbswarm's fanout.client_model (default: the campaign's default, auto)")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-load", action="store_true", help="the tables are already loaded")
    p.add_argument("--no-md", action="store_true", help="no markdown section")
    a = p.parse_args(argv)
    data = C.base_record("vs_sysbench", a)
    env = C.start_servers(a.servers_dir)
    threads = C.csv_list(a.threads, int)
    pinned_threads = C.csv_list(a.pinned_threads, int) if a.pinned_threads else threads
    data["comparisons"] = []
    data["sysbench_command_example"] = " ".join(redact(sysbench_cmd("mysql", env, "oltp_read_write", a, threads[0])))
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            data.setdefault("loads", {})[engine] = {
                k: v for k, v in C.load_with_dbswarm(env, engine, {
                    "family": "sysbench", "test": "oltp_read_write", "tables": a.tables,
                    "table_size": a.table_size}).items() if k in ("operations_total", "duration_s", "ops_per_s")}
        for test in C.csv_list(a.tests):
            for t in threads:
                modes = [False, True] if a.pin and t in pinned_threads else [False]
                for pinned in ([m for m in modes if m] if a.pinned_only else modes):
                    data["comparisons"].append(C.attempt(
                        lambda: compare(engine, env, test, a, t, pinned), engine=engine, test=test, threads=t,
                        mode="pinned" if pinned else "shared"))
    C.finish("vs_sysbench", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
