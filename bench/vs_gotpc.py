"""dbswarm's TPC-C against go-tpc v1.0.12 (PingCAP): same database, warehouses, virtual users
and duration, interleaved rounds (dbswarm, go-tpc, dbswarm, go-tpc, ...) on the same data,
on MariaDB and PostgreSQL.

Per engine: go-tpc loads the warehouses (``prepare --no-check``, timed) and dbswarm's
consistency check runs on its data (all twelve conditions: it is just loaded); then dbswarm
loads them again (prepare + load, timed) and go-tpc's ``check`` runs on dbswarm's data; then
the rounds run on dbswarm's data. NOPM of both is read from the database as HammerDB reads it
(the change of sum(d_next_o_id) over the tool's run, divided by the run's time).

    python bench/vs_gotpc.py --warehouses 2 --threads 4 --time 20 --rounds 3

go-tpc is built by scripts/build-go-tpc (a wrapper module requiring github.com/pingcap/go-tpc
v1.0.12, ``go mod tidy && go build``, as ../shared/notes/test-servers.md says); its path: $DBSWARM_GO_TPC,
else ~/.cache/dbswarm/bin/go-tpc-1.0.12, else /opt/go-tpc-build/go-tpc.

Reports: tpmC ratio (dbswarm / go-tpc, both from the clients: go-tpc counts New-Orders
including its rolled-back ones, as dbswarm does), NOPM ratio (database), p90 New-Order ratio,
client CPU seconds per 1,000 transactions of each, load time of each.

``--client-models threads,multiplexed`` runs dbswarm once in each ``fanout.client_model`` per
round (then go-tpc): each against go-tpc, and the last against the first (tpmC, client CPU per
transaction), in the JSON record's ``client_models`` and the log; the table shows the last.

    python bench/vs_gotpc.py --no-load --warehouses 8 --threads 128 --time 10 --rounds 2 --pin \
        --client-models threads,multiplexed
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from bench import common as C  # noqa: E402

GO_TPC_CANDIDATES = [os.environ.get("DBSWARM_GO_TPC"), str(C.CACHE / "bin" / "go-tpc-1.0.12"),
                     "/opt/go-tpc-build/go-tpc"]


def go_tpc() -> str:
    for p in GO_TPC_CANDIDATES:
        if p and os.path.exists(p):
            return p
    raise SystemExit("go-tpc not found: build it with scripts/build-go-tpc (or set DBSWARM_GO_TPC)")


def gotpc_cmd(engine, env, a, threads, *sub):
    pw = C.password(env)
    if engine == "mysql":
        conn = ["-d", "mysql", "-P", env["DBSWARM_TEST_MYSQL_PORT"]]
    else:
        conn = ["-d", "postgres", "-P", env["DBSWARM_TEST_PG_PORT"], "--conn-params", "sslmode=disable"]
    return [go_tpc(), "tpcc", *conn, "-H", "127.0.0.1", "-U", "dbswarm", "-p", pw, "-D", "dbswarm",
            "--warehouses", str(a.warehouses), "-T", str(threads), *sub]


def redact(cmd):
    out, hide = [], False
    for c in cmd:
        out.append("***" if hide else c)
        hide = c == "-p"
    return out


def connect(engine, env):
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    t = C.target(engine, env)
    b = bindings.get(engine)(Connection(engine=engine, url=t["url"], password=C.password(env), options={},
                                        display=engine))
    b.connect()
    return b


def new_orders(engine, env) -> int:
    from dbswarm.families import base as families
    fam = families.get("tpcc")
    b = connect(engine, env)
    try:
        return fam.window_snapshot(b, fam.workload({"family": "tpcc"}), "run")["new_orders"]
    finally:
        b.close()


def parse_gotpc(text: str) -> dict:
    out = {}
    m = re.search(r"tpmC: ([\d.]+), tpmTotal: ([\d.]+)", text)
    if m:
        out["tpmC"], out["tpmTotal"] = float(m.group(1)), float(m.group(2))
    for line in text.splitlines():
        m = re.match(r"\[Summary\] (\w+)\s+- Takes\(s\): ([\d.]+), Count: (\d+), TPM: ([\d.]+).*?90th\(ms\): ([\d.]+)",
                     line)
        if m and not m.group(1).endswith("_ERR"):
            p50 = re.search(r"50th\(ms\): ([\d.]+)", line)
            out.setdefault("types", {})[m.group(1)] = {"count": int(m.group(3)), "tpm": float(m.group(4)),
                                                      "p90_ms": float(m.group(5)),
                                                      "p50_ms": float(p50.group(1)) if p50 else None}
        m = re.match(r"\[Summary\] (\w+)_ERR\s+- Takes\(s\): [\d.]+, Count: (\d+)", line)
        if m:
            out.setdefault("errors", {})[m.group(1)] = int(m.group(2))
    return out


def run_gotpc(engine, env, a, threads, pinned):
    before = new_orders(engine, env)
    cmd = [*C.client_prefix(pinned), *gotpc_cmd(engine, env, a, threads, "--time", f"{a.time}s", "run")]
    res = C.check(C.run_measured(cmd, timeout=a.time * 3 + 120), f"go-tpc run on {engine}")
    after = new_orders(engine, env)
    out = parse_gotpc(res["stdout"])
    trx = sum(t["count"] for t in out.get("types", {}).values())
    out.update(transactions=trx, nopm=round((after - before) * 60 / a.time, 1), cpu_s=round(res["cpu_s"], 3),
               wall_s=round(res["wall_s"], 3), p90_new_order_ms=out.get("types", {}).get("NEW_ORDER", {}).get("p90_ms"),
               cpu_s_per_1000=round(res["cpu_s"] / trx * 1000, 4) if trx else None)
    return out


def dbswarm_campaign(engine, env, a, threads, time_s, shards=None, phases=("run",), model=None):
    c: dict = {"name": "vs-gotpc", "target": C.target(engine, env),
               "workload": {"family": "tpcc", "warehouses": a.warehouses, "threads": threads, "time": time_s},
               "phases": list(phases)}
    if shards:
        c["fanout"] = {"shards": shards}
    if model:
        c.setdefault("fanout", {})["client_model"] = model
    return c


_fixed: dict = {}


def run_dbswarm(engine, env, a, threads, pinned, model=None):
    before = new_orders(engine, env)
    s = C.run_dbswarm(dbswarm_campaign(engine, env, a, threads, a.time, a.shards, model=model), pinned=pinned,
                      timeout=a.time * 3 + 180)
    after = new_orders(engine, env)
    key = (engine, threads, pinned, model)
    if key not in _fixed:  # start-up CPU (spawn, imports, connect): a campaign of one transaction per VU
        c = dbswarm_campaign(engine, env, a, threads, 60, a.shards, model=model)
        c["workload"]["transactions"] = threads
        _fixed[key] = C.run_dbswarm(c, pinned=pinned)["shard_cpu_s"]
    ph = s["phase"]
    t = ph.get("tpcc") or {}
    trx = sum((t.get("transactions") or {}).values())
    return {"tpmC": t.get("tpmC"), "tpmTotal": t.get("tpmTotal"), "transactions": trx,
            "nopm": round((after - before) * 60 / a.time, 1), "p90_new_order_ms": (t.get("p90_ms") or {}).get("NEW_ORDER"),
            "p90_ms": t.get("p90_ms"), "errors": t.get("errors"), "retries": t.get("retries"),
            "duration_s": ph.get("duration_s"), "shards": s["shard_count"], "cpu_s": s["shard_cpu_s"],
            "fixed_cpu_s": _fixed[key], "wall_s": round(s["wall_s"], 3), "status": ph.get("status"),
            "client_model": (ph.get("client") or {}).get("model"),
            "cpu_s_per_1000": round(max(s["shard_cpu_s"] - _fixed[key], 0) / trx * 1000, 4) if trx else None}


def gotpc_check_passed(returncode: int, output: str) -> bool:
    """go-tpc's check passed: it exits 0 even when a condition failed (it prints "execute
    check failed" and goes on), so its output must not say failed either."""
    return returncode == 0 and "failed" not in output.lower()


def loads_and_checks(engine, env, a) -> dict:
    """go-tpc prepare (timed) + dbswarm's check on it; dbswarm load (timed) + go-tpc's check on it."""
    from dbswarm.families import base as families
    fam = families.get("tpcc")
    w = fam.workload({"family": "tpcc", "warehouses": a.warehouses})
    out = {}
    b = connect(engine, env)
    try:
        fam.prepare(b, w, "cleanup")
    finally:
        b.close()
    res = C.check(C.run_measured(gotpc_cmd(engine, env, a, a.load_threads, "prepare", "--no-check"), timeout=3600),
                  f"go-tpc prepare on {engine}")
    out["gotpc_load_s"] = round(res["wall_s"], 1)
    out["gotpc_load_cpu_s"] = round(res["cpu_s"], 1)
    b = connect(engine, env)
    try:
        chk = fam.check(b, w, after_load=True)
    finally:
        b.close()
    out["dbswarm_check_on_gotpc_data"] = {k: chk[k] for k in ("passed", "conditions", "failures_total", "seconds")}
    out["dbswarm_check_on_gotpc_data"]["failures"] = chk["failures"][:10]
    C.log(f"{engine}: go-tpc prepare {out['gotpc_load_s']} s; dbswarm check on it: "
          f"{'passed' if chk['passed'] else 'FAILED ' + str(chk['failures'][:3])}")
    t0 = time.time()
    s = C.run_dbswarm(dbswarm_campaign(engine, env, a, a.load_threads, 60, min(2, a.load_threads),
                                       phases=("prepare", "load")), timeout=3600)
    out["dbswarm_load_s"] = round(time.time() - t0, 1)
    out["dbswarm_load_phase_s"] = s["phase"].get("duration_s")
    out["dbswarm_load_cpu_s"] = round(s["shard_cpu_s"], 1)
    res = C.run_measured(gotpc_cmd(engine, env, a, 1, "check"), timeout=3600)
    passed = gotpc_check_passed(res["returncode"], res["stdout"] + res["stderr"])
    out["gotpc_check_on_dbswarm_data"] = {"passed": passed, "seconds": round(res["wall_s"], 1),
                                         "output_tail": (res["stdout"] + res["stderr"])[-600:]}
    C.log(f"{engine}: dbswarm load {out['dbswarm_load_s']} s; go-tpc check on it: "
          f"{'passed' if passed else 'FAILED'}")
    return out


def compare(engine, env, a, threads, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    C.log(f"{engine} threads={threads} {mode}: {a.rounds} rounds x (dbswarm, go-tpc) x {a.time} s")
    models = C.csv_list(a.client_models) if a.client_models else [None]
    by_model: dict = {m: [] for m in models}
    with C.Pinning(env, pinned, engines=(engine,)):
        gs = []
        for i in range(a.rounds):  # (dbswarm in each client model, go-tpc), round after round
            for m in models:
                by_model[m].append(run_dbswarm(engine, env, a, threads, pinned, m))
            gs.append(run_gotpc(engine, env, a, threads, pinned))
            if a.client_models:
                C.log(f"  round {i}: tpmC " + ", ".join(f"{m} {by_model[m][-1]['tpmC']:,.0f} "
                                                      f"({by_model[m][-1]['client_model']})" for m in models)
                      + f", go-tpc {gs[-1].get('tpmC') or 0:,.0f}; CPU s/1k trx "
                      + ", ".join(f"{m} {by_model[m][-1]['cpu_s_per_1000']}" for m in models)
                      + f", go-tpc {gs[-1]['cpu_s_per_1000']}")
    ds = by_model[models[-1]]
    row = {"engine": engine, "threads": threads, "mode": mode,
           "tpmC_ratio": C.ratios([d["tpmC"] for d in ds], [g.get("tpmC") for g in gs]),
           "nopm_ratio": C.ratios([d["nopm"] for d in ds], [g["nopm"] for g in gs]),
           "p90_new_order_ratio": C.ratios([d["p90_new_order_ms"] for d in ds], [g["p90_new_order_ms"] for g in gs]),
           "dbswarm_tpmC": C.med([d["tpmC"] for d in ds]), "gotpc_tpmC": C.med([g.get("tpmC") for g in gs]),
           "dbswarm_nopm": C.med([d["nopm"] for d in ds]), "gotpc_nopm": C.med([g["nopm"] for g in gs]),
           "dbswarm_cpu_s_per_1000": C.med([d["cpu_s_per_1000"] for d in ds]),
           "gotpc_cpu_s_per_1000": C.med([g["cpu_s_per_1000"] for g in gs]),
           "dbswarm": ds, "gotpc": gs, "loadavg": {"before": la0, "after": C.loadavg()}}
    if a.client_models:  # each model against go-tpc, and the last against the first
        first = by_model[models[0]]
        row["client_models"] = {m: {
            "tpmC": C.med([d["tpmC"] for d in rs]), "cpu_s_per_1000": C.med([d["cpu_s_per_1000"] for d in rs]),
            "tpmC_ratio": C.ratios([d["tpmC"] for d in rs], [g.get("tpmC") for g in gs]),
            "vs_first_tpmC": C.ratios([d["tpmC"] for d in rs], [d["tpmC"] for d in first]),
            "vs_first_cpu": C.ratios([d["cpu_s_per_1000"] for d in rs], [d["cpu_s_per_1000"] for d in first]),
            "ran": sorted({str(d["client_model"]) for d in rs}), "runs": rs} for m, rs in by_model.items()}
        for m, r in row["client_models"].items():
            C.log(f"  {m} (ran {'/'.join(r['ran'])}): tpmC ÷ go-tpc {C.fmt_ratio(r['tpmC_ratio'])}; ÷ {models[0]}: "
                  f"tpmC {C.fmt_ratio(r['vs_first_tpmC'])}, CPU/trx {C.fmt_ratio(r['vs_first_cpu'])}")
    C.log(f"  tpmC ratio {C.fmt_ratio(row['tpmC_ratio'])}  dbswarm {row['dbswarm_tpmC']:.0f} / go-tpc "
          f"{row['gotpc_tpmC']:.0f}; NOPM ratio {C.fmt_ratio(row['nopm_ratio'])}; CPU s/1000 trx "
          f"{row['dbswarm_cpu_s_per_1000']} vs {row['gotpc_cpu_s_per_1000']}")
    return row


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## dbswarm TPC-C vs go-tpc 1.0.12", "", C.header(data),
             f"- {a['warehouses']} warehouses, {a['time']} s per run, {a['rounds']} interleaved rounds (dbswarm, "
             f"go-tpc, …) on the same data (dbswarm's load), keying/think times off in both; dbswarm runs a "
             f"campaign with phases [run] through {C.DBSWARM_MODE_TEXT}; shards: "
             f"{a.get('shards') or 'the default, one per CPU the client may use'}.",
             "- tpmC: New-Orders per minute counted by each client (both include the 1% rolled back by design); "
             "NOPM: the change of sum(d_next_o_id) read from the database around each tool's run ÷ its time "
             "(HammerDB's figure; includes each tool's connect time, the same for both). Ratios: median (min–max) "
             "of dbswarm / go-tpc over the rounds; p90 ratio > 1: dbswarm's New-Orders slower. CPU: client CPU "
             "seconds per 1,000 transactions (dbswarm: shard processes minus their start-up cost).",
             f"- go-tpc command: `{data.get('gotpc_command_example', '')}`",
             "",
             "| engine | VUs | mode | tpmC dbswarm | tpmC go-tpc | tpmC ratio | NOPM ratio | p90 New-Order ratio "
             "| CPU s/1k trx dbswarm | CPU s/1k trx go-tpc | load avg before→after |",
             "| --- | --- | --- | ---: | ---: | --- | --- | --- | ---: | ---: | --- |"]
    for r in data["comparisons"]:
        if r.get("failed"):
            lines.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['threads']} | {r['mode']} | failed: {r['failed']} "
                         "| | | | | | | |")
            continue
        lines.append(
            f"| {C.ENGINE_LABELS[r['engine']]} | {r['threads']} | {r['mode']} | {r['dbswarm_tpmC']:,.0f} "
            f"| {r['gotpc_tpmC']:,.0f} | {C.fmt_ratio(r['tpmC_ratio'])} | {C.fmt_ratio(r['nopm_ratio'])} "
            f"| {C.fmt_ratio(r['p90_new_order_ratio'])} | {r['dbswarm_cpu_s_per_1000']} | {r['gotpc_cpu_s_per_1000']} "
            f"| {r['loadavg']['before'][0]:.1f}→{r['loadavg']['after'][0]:.1f} |")
    lines += ["", "| engine | load: go-tpc prepare s | load: dbswarm s (phase s) | dbswarm check on go-tpc's data "
              "| go-tpc check on dbswarm's data |", "| --- | ---: | ---: | --- | --- |"]
    for engine, l in (data.get("loads") or {}).items():
        if l.get("failed"):
            lines.append(f"| {C.ENGINE_LABELS[engine]} | failed: {l['failed']} | | | |")
            continue
        dc, gc = l["dbswarm_check_on_gotpc_data"], l["gotpc_check_on_dbswarm_data"]
        lines.append(f"| {C.ENGINE_LABELS[engine]} | {l['gotpc_load_s']} | {l['dbswarm_load_s']} "
                     f"({l['dbswarm_load_phase_s']}) | {'passed' if dc['passed'] else 'FAILED'} "
                     f"({len(dc['conditions'])} conditions) | {'passed' if gc['passed'] else 'FAILED'} |")
    if data.get("notes"):
        lines += ["", data["notes"]]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warehouses", type=int, default=2)
    p.add_argument("--threads", default="4")
    p.add_argument("--time", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--load-threads", type=int, default=2)
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--pin", action="store_true", help="also pinned (server CPU 0, client CPU 1)")
    p.add_argument("--shards", type=int, default=None)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-load", action="store_true", help="the warehouses are already loaded (by dbswarm)")
    p.add_argument("--no-md", action="store_true")
    p.add_argument("--client-models", default="",
                   help="dbswarm in each of these fanout.client_model values in every round, e.g. threads,multiplexed "
                        "(the table shows the last; default: dbswarm's default)")
    p.add_argument("--notes", default="", help="a paragraph for the section (findings)")
    a = p.parse_args(argv)
    data = C.base_record("vs_gotpc", a)
    env = C.start_servers(a.servers_dir)
    data["gotpc_command_example"] = " ".join(redact(gotpc_cmd("mysql", env, a, 4, "--time", f"{a.time}s", "run")))
    data["comparisons"], data["loads"] = [], {}
    data["notes"] = a.notes
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            data["loads"][engine] = C.attempt(lambda: loads_and_checks(engine, env, a), engine=engine)
        for t in C.csv_list(a.threads, int):
            for pinned in ([False, True] if a.pin else [False]):
                data["comparisons"].append(C.attempt(lambda: compare(engine, env, a, t, pinned), engine=engine,
                                                     threads=t, mode="pinned" if pinned else "shared"))
    C.finish("vs_gotpc", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
