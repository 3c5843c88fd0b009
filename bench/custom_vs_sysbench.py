"""sysbench's oltp_point_select and oltp_read_only written as custom workload files
(examples/custom-sysbench-point-select.yaml, examples/custom-sysbench-read-only.yaml) against the
built-in sysbench family running the same tests, on the same server and tables, alternating
(built-in, custom, built-in, ...), both through `dbswarm run` with the same threads, shards,
seconds and uniform ids (issue 54's acceptance: TPS / QPS within noise).

The tables (sbtest1..4) are loaded once per engine by the sysbench family. QPS counts what
sysbench counts: every statement, BEGIN and COMMIT included (the custom family's statements
plus two per transaction where it runs them in one: oltp_read_only). Writes
bench/results/custom_vs_sysbench-<date>.json.

    python bench/custom_vs_sysbench.py --time 20 --rounds 3 --threads 8 --engines postgresql,mysql
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import common as C  # noqa: E402

TABLES = 4  # the example files' tables: sbtest1..sbtest4
FILES = {"oltp_point_select": "custom-sysbench-point-select.yaml", "oltp_read_only": "custom-sysbench-read-only.yaml"}


def builtin(engine, env, test, a, threads) -> dict:
    c = {"name": f"builtin-{test}", "target": C.target(engine, env), "phases": ["run"],
         "workload": {"family": "sysbench", "test": test, "tables": TABLES, "table_size": a.table_size,
                      "threads": threads, "time": a.time, "rand_type": "uniform"},
         "fanout": {"shards": a.shards}, "results": {"allow_client_bound": True}}
    ph = C.run_dbswarm(c, timeout=a.time * 4 + 180)["phase"]
    sb = ph.get("sysbench") or {}
    return {"tps": sb.get("tps"), "qps": sb.get("qps"), "transactions": sb.get("transactions"),
            "errors": ph.get("errors_total")}


def custom(engine, env, test, a, threads) -> dict:
    doc = yaml.safe_load((C.ROOT / "examples" / FILES[test]).read_text())
    w = copy.deepcopy(doc["workload"])
    w["generators"]["id"]["max"] = a.table_size
    w.update(time=a.time, threads=threads)
    c = {"name": f"custom-{test}", "seed": doc.get("seed", 0), "target": C.target(engine, env), "workload": w,
         "phases": ["run"], "fanout": {"shards": a.shards}, "results": {"allow_client_bound": True}}
    ph = C.run_dbswarm(c, timeout=a.time * 4 + 180)["phase"]
    s = ph.get("custom") or {}
    txns = s.get("transactions") or {}
    in_txn = all(t.get("transaction", True) for t in doc["workload"]["transactions"].values())
    statements = sum(st["count"] for t in txns.values() for st in t["statements"])
    n = s.get("total") or 0
    seconds = s.get("seconds") or 0
    queries = statements + (2 * n if in_txn else 0)  # sysbench counts BEGIN and COMMIT as queries
    return {"tps": s.get("tps"), "qps": round(queries / seconds, 2) if seconds else None, "transactions": n,
            "errors": ph.get("errors_total")}


def compare(engine, env, test, a, threads) -> dict:
    la0 = C.loadavg()
    C.log(f"{engine} {test} threads={threads}: {a.rounds} rounds x (built-in, custom) x {a.time} s")
    bs, cs = C.interleave(a.rounds, lambda i: builtin(engine, env, test, a, threads),
                          lambda i: custom(engine, env, test, a, threads))
    row = {"engine": engine, "test": test, "threads": threads,
           "tps_ratio": C.ratios([c["tps"] for c in cs], [b["tps"] for b in bs]),
           "qps_ratio": C.ratios([c["qps"] for c in cs], [b["qps"] for b in bs]),
           "builtin_tps": C.med([b["tps"] for b in bs]), "custom_tps": C.med([c["tps"] for c in cs]),
           "builtin": bs, "custom": cs, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  custom / built-in TPS {C.fmt_ratio(row['tps_ratio'])}, QPS {C.fmt_ratio(row['qps_ratio'])}")
    return row


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## Custom workload files against the built-in sysbench family", "", C.header(data),
             f"- {TABLES} tables × {a['table_size']:,} rows, {a['time']} s per run, {a['rounds']} alternating rounds, "
             f"{a['shards']} shard(s), uniform ids; ratio cells: median (min–max) of custom / built-in.", "",
             "| engine | test | threads | TPS built-in | TPS custom | TPS ratio | QPS ratio | load avg before→after |",
             "| --- | --- | --- | ---: | ---: | --- | --- | --- |"]
    for r in data["comparisons"]:
        if r.get("failed"):
            lines.append(f"| {r['engine']} | {r['test']} | {r['threads']} | failed: {r['failed']} | | | | |")
            continue
        lines.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['test']} | {r['threads']} | {r['builtin_tps']:,.0f} "
                     f"| {r['custom_tps']:,.0f} | {C.fmt_ratio(r['tps_ratio'])} | {C.fmt_ratio(r['qps_ratio'])} "
                     f"| {r['loadavg']['before'][0]:.1f}→{r['loadavg']['after'][0]:.1f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--table-size", type=int, default=100_000)
    p.add_argument("--threads", default="8")
    p.add_argument("--shards", type=int, default=1)
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--tests", default=",".join(FILES))
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-load", action="store_true", help="the tables are already loaded")
    a = p.parse_args(argv)
    data = C.base_record("custom_vs_sysbench", a)
    env = C.start_servers(a.servers_dir)
    data["comparisons"] = []
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_read_only", "tables": TABLES,
                                              "table_size": a.table_size})
        for test in C.csv_list(a.tests):
            for t in C.csv_list(a.threads, int):
                data["comparisons"].append(C.attempt(lambda: compare(engine, env, test, a, t), engine=engine,
                                                     test=test, threads=t))
    C.finish("custom_vs_sysbench", data, markdown)


if __name__ == "__main__":
    main()
