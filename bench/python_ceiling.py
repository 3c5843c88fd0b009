"""How much of the gap to sysbench is dbswarm's, and how much any Python client's?

Three clients in interleaved rounds (sysbench, a bare Python client, dbswarm, sysbench,
...) on the same tables, same threads, same duration: sysbench 1.0.20; the bare Python
client of bench/bare_client.py, which sends the same statements through the same driver
calls dbswarm's bindings end in, with the threads split over as many processes as
dbswarm has shards, and nothing else (no generator objects, no measurement, no binding
layer); and a dbswarm campaign (as in bench/vs_sysbench.py). bare ÷ sysbench is what a
Python client on these drivers can reach at all; dbswarm ÷ bare is what dbswarm's own
Python costs on top.

    python bench/python_ceiling.py --rounds 5 --time 5 --threads 8 --tests oltp_point_select,oltp_read_only
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import vs_sysbench as VS  # noqa: E402
from bench.bare_client import TESTS  # noqa: E402

TOOLS = ("sysbench", "bare", "dbswarm")


def bare_cmd(engine, env, test, a, threads, processes) -> list[str]:
    """bench/bare_client.py on the sbtest tables of ``a`` (the password by file, never in argv)."""
    port = env["DBSWARM_TEST_MYSQL_PORT" if engine == "mysql" else "DBSWARM_TEST_PG_PORT"]
    return [C.PY, str(C.BENCH / "bare_client.py"), "--engine", engine, "--port", port,
            "--password-file", env["DBSWARM_TEST_PASSWORD_FILE"], "--test", test, "--threads", str(threads),
            "--processes", str(min(processes, threads)), "--time", str(a.time), "--tables", str(a.tables),
            "--table-size", str(a.table_size)]


def run_bare(engine, env, test, a, threads, pinned) -> dict:
    cmd = [*C.client_prefix(pinned), *bare_cmd(engine, env, test, a, threads, a.shards or (1 if pinned else C.NCPU))]
    res = C.check(C.run_measured(cmd, timeout=a.time * 3 + 120), f"bare client {test} on {engine}")
    out = json.loads(res["stdout"].strip().splitlines()[-1])
    trx = out["transactions"]
    return {"transactions": trx, "tps": out["tps"], "window_s": out["window_s"], "cpu_s": out["cpu_s"],
            "cpu_s_total": round(res["cpu_s"], 3),
            "cpu_s_per_1000": round(out["cpu_s"] / trx * 1000, 4) if trx else None}


def compare(engine, env, test, a, threads, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    C.log(f"{engine} {test} threads={threads} {mode}: {a.rounds} rounds x (sysbench, bare, dbswarm) x {a.time} s")
    runs = {"sysbench": lambda: VS.run_sysbench(engine, env, test, a, threads, pinned),
            "bare": lambda: run_bare(engine, env, test, a, threads, pinned),
            "dbswarm": lambda: VS.run_dbswarm(engine, env, test, a, threads, pinned)}
    got = {t: [] for t in TOOLS}
    with C.Pinning(env, pinned, engines=(engine,)):
        for i in range(a.rounds):
            for tool in TOOLS:
                got[tool].append(runs[tool]())
            C.log(f"  round {i}: TPS " + ", ".join(f"{t} {got[t][-1]['tps']:,.0f}" for t in TOOLS))
    tps = {t: [r["tps"] for r in got[t]] for t in TOOLS}
    row = {"engine": engine, "test": test, "threads": threads, "mode": mode,
           "tps": {t: C.med(tps[t]) for t in TOOLS},
           "cpu_us_per_trx": {t: C.med([r["cpu_s_per_1000"] * 1000 if r["cpu_s_per_1000"] is not None else None
                                        for r in got[t]]) for t in TOOLS},
           "bare_vs_sysbench": C.ratios(tps["bare"], tps["sysbench"]),
           "dbswarm_vs_sysbench": C.ratios(tps["dbswarm"], tps["sysbench"]),
           "dbswarm_vs_bare": C.ratios(tps["dbswarm"], tps["bare"]),
           # dbswarm run's processes besides the shards' calls: the orchestrating process (state
           # machine, polling, aggregation), the function processes' start-up; and the
           # orchestrating process alone, per second of the campaign
           "dbswarm_not_shard_cpu_s": C.med([r.get("not_shard_cpu_s") for r in got["dbswarm"]]),
           "dbswarm_orchestrator_cpu_s": C.med([r.get("runner_cpu_s") for r in got["dbswarm"]]),
           "dbswarm_wall_s": C.med([r.get("wall_s") for r in got["dbswarm"]]),
           "runs": got, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  bare/sysbench {C.fmt_ratio(row['bare_vs_sysbench'])}, dbswarm/sysbench "
          f"{C.fmt_ratio(row['dbswarm_vs_sysbench'])}, dbswarm/bare {C.fmt_ratio(row['dbswarm_vs_bare'])}")
    return row


def markdown(data: dict) -> str:
    a = data["args"]
    L = ["## What a Python client can reach: sysbench, a bare Python client, dbswarm", "", C.header(data),
         f"- {a['tables']} tables × {a['table_size']:,} rows, {a['threads']} threads, {a['time']} s per run, "
         f"{a['rounds']} interleaved rounds (sysbench, bare, dbswarm, …), uniform ids for all three.",
         "- bare: `bench/bare_client.py`, sysbench's statements through the driver calls dbswarm's bindings end in "
         "(PostgreSQL `PGconn.exec_prepared`, prepared once per connection; MariaDB: mysqlclient's text "
         "statements, `_mysql` `query`, BEGIN / COMMIT too), threads split over as many processes as dbswarm has shards, "
         "nothing else: no generator objects, no per-operation measurement, no binding layer, no error handling. "
         "Its CPU is the processes' CPU over the measured window.",
         "- dbswarm: `dbswarm run` as users run it (`local.run_campaign`, the default install: mysqlclient for "
         "MariaDB), shards: "
         f"{a.get('shards') or 'the default, one per usable CPU: 1 pinned'}; client CPU = the shard calls' own "
         "(workers' cpu_s) net of a one-operation campaign's. \"other CPU\": every process of the campaign "
         "(a cpuacct cgroup) minus the shard calls: the orchestrating process (state machine through moto, "
         "polling, aggregation: its own CPU in brackets) and the function processes' start-up, per campaign.",
         "- ratios: median (min–max) of the per-round TPS ratios. bare ÷ sysbench is the ceiling of a Python "
         "client on these drivers; dbswarm ÷ bare is what dbswarm's own Python costs on top.",
         "- shared: servers and clients on both CPUs; pinned: server `taskset -a -cp 0`, client `taskset -c 1`.",
         "",
         "| engine | test | mode | TPS sysbench | TPS bare | TPS dbswarm | bare ÷ sysbench | dbswarm ÷ sysbench "
         "| dbswarm ÷ bare | CPU µs/trx sysbench | bare | dbswarm | dbswarm other CPU s (orchestrator) "
         "| load avg before→after |",
         "| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in data["comparisons"]:
        label = C.ENGINE_LABELS[r["engine"]]
        if r.get("failed"):
            L.append(f"| {label} | {r['test']} | {r['mode']} | failed: {r['failed']} | | | | | | | | | |")
            continue
        t, c = r["tps"], r["cpu_us_per_trx"]
        other = r.get("dbswarm_not_shard_cpu_s")
        orch = r.get("dbswarm_orchestrator_cpu_s")
        other_text = f"{other:.2f} ({orch:.2f})" if other is not None and orch is not None else "–"
        L.append(f"| {label} | {r['test']} {r.get('threads', '')} thr | {r['mode']} | {t['sysbench']:,.0f} "
                 f"| {t['bare']:,.0f} "
                 f"| {t['dbswarm']:,.0f} | {C.fmt_ratio(r['bare_vs_sysbench'])} "
                 f"| {C.fmt_ratio(r['dbswarm_vs_sysbench'])} | {C.fmt_ratio(r['dbswarm_vs_bare'])} "
                 f"| {c['sysbench']:.0f} | {c['bare']:.0f} | {c['dbswarm']:.0f} | {other_text} "
                 f"| {r['loadavg']['before'][0]:.1f}→{r['loadavg']['after'][0]:.1f} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--threads", default="8", help="client threads, comma-separated (e.g. 16,128)")
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=20_000)
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--tests", default=",".join(TESTS), help=f"any of {', '.join(TESTS)}")
    p.add_argument("--modes", default="shared,pinned", help="shared, pinned or both")
    p.add_argument("--shards", type=int, default=None, help="dbswarm shards and bare processes (default: one per CPU)")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-load", action="store_true", help="the sbtest tables are already loaded")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    tests, modes = C.csv_list(a.tests), C.csv_list(a.modes)
    if not tests or set(tests) - set(TESTS):
        p.error(f"--tests: {a.tests!r}; the bare client has {', '.join(TESTS)}")
    if not modes or set(modes) - {"shared", "pinned"}:
        p.error(f"--modes: {a.modes!r}; use shared, pinned or shared,pinned")
    thread_counts = C.csv_list(a.threads, int)
    if a.rounds < 1 or a.time < 1 or not thread_counts or min(thread_counts) < 1:
        p.error("--rounds, --time and --threads must be at least 1")
    data = C.base_record("python_ceiling", a)
    data["comparisons"] = []
    env = C.start_servers(a.servers_dir)
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_read_write", "tables": a.tables,
                                              "table_size": a.table_size})
        for test in tests:
            for threads in thread_counts:
                for mode in modes:
                    data["comparisons"].append(C.attempt(
                        lambda: compare(engine, env, test, a, threads, mode == "pinned"),
                        engine=engine, test=test, threads=threads, mode=mode))
    C.finish("python_ceiling", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
