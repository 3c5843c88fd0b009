"""pgbench's TPC-B-like transaction against the same transaction written as a dbswarm custom
workload (examples/custom-pgbench-tpcb.yaml), on the tables `pgbench -i` made, alternating.

pgbench runs `-M prepared` (dbswarm sends the custom family's statements as server-side
prepared statements on PostgreSQL: Parse once per connection, then Bind/Execute), `-j 1` (one
client process: dbswarm's one shard), `-n` (no vacuum between runs), `-r` (per-statement
latency). dbswarm runs `dbswarm run` (run_campaign, one shard of all the clients). With
`--pinned`, the server runs on CPU 0 and both clients on CPU 1. Reports TPS (dbswarm's over its
steady window; pgbench's excludes connection time), the ratio, and both tools' per-statement
mean latencies side by side; writes bench/results/vs_pgbench-<date>.json. ``--client-models
threads,multiplexed`` runs dbswarm in each client model after every pgbench run (one ratio each).

    python bench/vs_pgbench.py --clients 16,64 --time 20 --rounds 3 --scale 10 --pinned \
        --client-models threads,multiplexed
"""
from __future__ import annotations

import argparse
import copy
import glob
import re
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import common as C  # noqa: E402

EXAMPLE = C.ROOT / "examples" / "custom-pgbench-tpcb.yaml"


def _pgbench() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pgbench"))
    if not found:
        raise SystemExit("pgbench not found (Debian: postgresql-15 ships it)")
    return found[-1]


def _conn(env: dict) -> tuple[list[str], dict]:
    m = re.match(r"postgresql://([^@]+)@([^:/]+):(\d+)/([^?]+)", env["DBSWARM_TEST_PG_URL"])
    assert m, env["DBSWARM_TEST_PG_URL"]
    user, host, port, db = m.groups()
    penv = dict(C.os.environ, PGPASSWORD=C.password(env))
    return ["-h", host, "-p", port, "-U", user, db], penv


def pgbench_run(env: dict, clients: int, seconds: int, pinned: bool) -> dict:
    conn, penv = _conn(env)
    cmd = [*C.client_prefix(pinned), _pgbench(), "-M", "prepared", "-n", "-r", "-c", str(clients), "-j", "1",
           "-T", str(seconds), *conn]
    res = C.check(C.run_measured(cmd, env=penv, timeout=seconds * 4 + 120), "pgbench")
    tps = float(re.search(r"tps = ([\d.]+) \(without initial connection time\)", res["stdout"]).group(1))
    statements = [(float(ms), sql.strip()) for ms, sql in
                  re.findall(r"^\s+([\d.]+)\s+\d+\s+(\S.*)$", res["stdout"], re.M)]
    avg = re.search(r"latency average = ([\d.]+) ms", res["stdout"])
    return {"tps": tps, "statement_ms": statements, "cpu_s": res["cpu_s"],
            "latency_avg_ms": float(avg.group(1)) if avg else None}


def init_tables(env: dict, scale: int) -> None:
    """pgbench -i -s SCALE: the tables both tools run on."""
    conn, penv = _conn(env)
    C.log(f"pgbench -i -s {scale}")
    subprocess.run([_pgbench(), "-i", "-q", "-s", str(scale), *conn], env=penv, check=True, capture_output=True)


def dbswarm_campaign(env: dict, clients: int, seconds: int, scale: int, model: str) -> dict:
    """The example's workload at ``scale`` with ``clients`` threads in one shard."""
    doc = yaml.safe_load(EXAMPLE.read_text())
    w = copy.deepcopy(doc["workload"])
    w["generators"]["aid"]["max"] = 100000 * scale
    w["generators"]["bid"]["max"] = scale
    w["generators"]["tid"]["max"] = 10 * scale
    w.update(time=seconds, threads=clients)
    campaign = {"name": f"vs-pgbench-{clients}", "seed": doc.get("seed", 0),
                "target": C.target("postgresql", env), "workload": w, "phases": ["run"],
                "fanout": {"shards": 1, "client_model": model}, "results": {"allow_client_bound": True}}
    return campaign


def _dbswarm_run(env: dict, clients: int, seconds: int, pinned: bool, scale: int, model: str) -> dict:
    campaign = dbswarm_campaign(env, clients, seconds, scale, model)
    summary = C.run_dbswarm(campaign, pinned=pinned, timeout=seconds * 4 + 300)
    phase = summary["phase"]
    custom = phase.get("custom") or {}
    txn = (custom.get("transactions") or {}).get("tpcb_like") or {}
    statements = [(s["latency"]["avg_ms"], s["sql"]) for s in txn.get("statements") or [] if s.get("latency")]
    return {"tps": phase["throughput"], "client_model": (phase.get("client") or {}).get("model"),
            "tps_whole_phase": txn.get("tps"), "statement_ms": statements,
            "shard_cpu_s": summary.get("shard_cpu_s"), "errors": phase.get("errors_total"),
            "retries": txn.get("retries"), "transactions": txn.get("count")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", default="16,64")
    ap.add_argument("--time", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--pinned", action="store_true")
    ap.add_argument("--client-models", default=None,
                    help="fanout.client_model of dbswarm's runs, comma-separated: each alternates with pgbench in "
                         "every round (default: the example's, else auto)")
    args = ap.parse_args()
    models = C.csv_list(args.client_models, str) if args.client_models else [
        (yaml.safe_load(EXAMPLE.read_text()).get("fanout") or {}).get("client_model", "auto")]
    env = C.start_servers()
    init_tables(env, args.scale)
    data = C.base_record("vs_pgbench", args)
    data["rows"] = []
    data["client_models"] = models
    with C.Pinning(env, args.pinned, engines=("postgresql",)):
        for clients in C.csv_list(args.clients, int):
            pg: list = []
            ds: dict = {m: [] for m in models}
            for r in range(args.rounds):  # alternating: pgbench, dbswarm (each model), pgbench, ...
                pg.append(pgbench_run(env, clients, args.time, args.pinned))
                for m in models:
                    ds[m].append(_dbswarm_run(env, clients, args.time, args.pinned, args.scale, m))
                    C.log(f"{clients} clients, round {r + 1}: pgbench {pg[-1]['tps']:.0f} tps, dbswarm ({m}) "
                          f"{ds[m][-1]['tps']:.0f} tps ({ds[m][-1]['tps'] / pg[-1]['tps']:.2f})")
            for m in models:
                ratio = C.ratios([d["tps"] for d in ds[m]], [p["tps"] for p in pg])
                data["rows"].append({"clients": clients, "client_model": m, "pgbench": pg, "dbswarm": ds[m],
                                     "ratio": ratio, "pgbench_tps_median": statistics.median(p["tps"] for p in pg),
                                     "dbswarm_tps_median": statistics.median(d["tps"] for d in ds[m])})
                C.log(f"{clients} clients, {m}: dbswarm ÷ pgbench {C.fmt_ratio(ratio)}")
    data["loadavg_after"] = C.loadavg()
    path = C.write_json("vs_pgbench", data)
    print(f"record: {path}")


if __name__ == "__main__":
    main()
