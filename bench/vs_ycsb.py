"""dbswarm against go-ycsb v1.0.1 (PingCAP's Go port of YCSB): workloads a, c and S1 (b and f on request) on
MariaDB and PostgreSQL (go-ycsb's `mysql` and `pg` bindings), and on FerretDB (its
`mongodb` binding), interleaved rounds (dbswarm, go-ycsb, ...), same threads, same
recordcount, same duration, same request distribution.

Data: one `usertable` per engine, created by dbswarm's prepare step and loaded by BOTH
tools (dbswarm's load phase, then `go-ycsb load` into the same table; go-ycsb only does
CREATE TABLE IF NOT EXISTS). The two tools hash key numbers differently (dbswarm: Java
YCSB's FNV-1a over the little-endian bytes; go-ycsb: FNV-1a over the big-endian bytes),
so each tool reads and updates the N keys it loaded itself, in one table of 2N rows.
FerretDB: go-ycsb always uses the database `ycsb`, dbswarm the URL's; both collections get
FerretDB's _id GIN index (scripts/ferretdb-index).
S1 (insert only): run phase with insertproportion=1 into `usertable_s1`, emptied (TRUNCATE /
drop) before every single run, so that every run of either tool inserts into an empty
table the keys recordcount, recordcount+1, ...
Workloads a, b and c use requestdistribution=zipfian for both tools (YCSB's definition; note
go-ycsb's own workloads/workloada file says uniform, so it is overridden with -p).
Duration: dbswarm `maxexecutiontime`; go-ycsb v1.0.1 has no time limit, so it runs with a
huge operationcount and gets SIGINT after --time seconds (it then prints its final
report; the few operations cancelled in flight show up as *_ERROR and are left out).
Workloads a, b and c on MariaDB and PostgreSQL have a third client in the same rounds
(dbswarm, go-ycsb, bare, ...): the bare Python client of bench/bare_client.py (`--test
ycsb_c` / `ycsb_a`), dbswarm's statements on dbswarm's keys through the driver calls
dbswarm's bindings end in, zipfian keys drawn inline, nothing else, its threads split over
as many processes as dbswarm has shards (one per usable CPU: 1 pinned), same threads,
recordcount and time; its ops/s are its operations over its measured window, its CPU that
window's. dbswarm ÷ bare is what dbswarm's own Python costs; bare ÷ go-ycsb what a Python
client on these drivers reaches at all (`--no-bare`: without it).

    python bench/vs_ycsb.py --time 60 --rounds 3 --recordcount 100000 --threads 8
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from tests import servers  # noqa: E402  (the harness: admin connections)

WORKLOADS = ("a", "c", "S1")  # and "b", "f" on request (--workloads a,b,c,f)


def _mix(read: float, update: float, insert: float = 0, rmw: float = 0) -> dict:
    """A YCSB operation mix over zipfian keys (YCSB's definition of workloads a, b, c, f)."""
    return {"readproportion": read, "updateproportion": update, "insertproportion": insert, "scanproportion": 0,
            "readmodifywriteproportion": rmw, "requestdistribution": "zipfian"}


PROPS = {"a": _mix(0.5, 0.5), "b": _mix(0.95, 0.05), "c": _mix(1, 0), "f": _mix(0.5, 0, 0, 0.5),
         "S1": _mix(0, 0, 1)}
GO_DB = {"mysql": "mysql", "postgresql": "pg", "mongodb": "mongodb"}
BARE_TESTS = {"a": "ycsb_a", "b": "ycsb_b", "c": "ycsb_c"}  # bench/bare_client.py's YCSB tests (MariaDB and PostgreSQL)


def table_for(w):
    return "usertable_s1" if w == "S1" else "usertable"


def go_props(engine, env):
    pw = C.password(env)
    if engine == "mysql":
        return {"mysql.host": "127.0.0.1", "mysql.port": env["DBSWARM_TEST_MYSQL_PORT"], "mysql.user": "dbswarm",
                "mysql.password": pw, "mysql.db": "dbswarm"}
    if engine == "postgresql":
        return {"pg.host": "127.0.0.1", "pg.port": env["DBSWARM_TEST_PG_PORT"], "pg.user": "dbswarm",
                "pg.password": pw, "pg.db": "dbswarm", "pg.sslmode": "disable"}
    return {"mongodb.url": env["DBSWARM_TEST_MONGO_URL"]}


def go_cmd(command, engine, env, props: dict):
    cmd = [str(C.GO_YCSB), command, GO_DB[engine], "-P", str(C.GO_YCSB_WORKLOADS / "workloada")]
    for k, v in {**go_props(engine, env), **props}.items():
        cmd += ["-p", f"{k}={v}"]
    return cmd


def redact(cmd):
    return [re.sub(r"(password=).*", r"\1***", c) for c in cmd]


_LINE = re.compile(r"^(\w[\w-]*)\s+- Takes\(s\): ([\d.]+), Count: (\d+), OPS: ([\d.]+), Avg\(us\): (\d+), "
                   r"Min\(us\): (\d+), Max\(us\): (\d+), 50th\(us\): (\d+), 90th\(us\): (\d+), 95th\(us\): (\d+), "
                   r"99th\(us\): (\d+)")


def parse_go(text: str) -> dict:
    """The final report (after 'Run finished')."""
    tail = text.split("Run finished", 1)[-1]
    ops = {}
    for line in tail.splitlines():
        m = _LINE.match(line.strip())
        if m:
            name = m.group(1)
            ops[name] = {"takes_s": float(m.group(2)), "count": int(m.group(3)), "ops": float(m.group(4)),
                         "avg_us": int(m.group(5)), "p50_us": int(m.group(8)), "p95_us": int(m.group(10)),
                         "p99_us": int(m.group(11))}
    return ops


def run_go(engine, env, w, a, pinned):
    props = {**PROPS[w], "recordcount": a.recordcount, "operationcount": 1_000_000_000, "threadcount": a.threads,
             "table": table_for(w), "measurement.interval": 1}
    cmd = [*C.client_prefix(pinned), *go_cmd("run", engine, env, props)]
    srv0 = C.server_cpu_s(env, server_engines(engine))
    res = C.run_measured(cmd, timeout=a.time + 120, interrupt_after=a.time + a.go_startup)
    server_cpu = C.server_cpu_s(env, server_engines(engine)) - srv0
    if res["returncode"] not in (0, 1, 130) or "Run finished" not in res["stdout"]:
        raise RuntimeError(f"go-ycsb run failed ({res['returncode']}):\n{res['stdout'][-2000:]}\n{res['stderr'][-2000:]}")
    ops = parse_go(res["stdout"])
    good = {k: v for k, v in ops.items() if k != "TOTAL" and not k.endswith("_ERROR")}
    # go-ycsb measures a read-modify-write's read and update as READ and UPDATE too (its
    # DbWrapper times every call): one operation, counted once
    count = sum(v["count"] for v in good.values()) - 2 * good.get("READ_MODIFY_WRITE", {}).get("count", 0)
    takes = ops.get("TOTAL", {}).get("takes_s") or max(v["takes_s"] for v in good.values())
    errors = sum(v["count"] for k, v in ops.items() if k.endswith("_ERROR"))
    return {"ops": count, "ops_per_s": round(count / takes, 2), "takes_s": takes, "errors": errors,
            "p99_us": ops.get("TOTAL", {}).get("p99_us"), "p50_us": ops.get("TOTAL", {}).get("p50_us"), "per_op": good,
            "cpu_s": round(res["cpu_s"], 3), "wall_s": round(res["wall_s"], 3),
            "cpu_us_per_op": round(res["cpu_s"] / count * 1e6, 1) if count else None,
            "server_cpu_s": round(server_cpu, 2),
            "server_cpu_us_per_op": round(server_cpu / count * 1e6, 1) if count else None}


def dbswarm_campaign(engine, env, w, a) -> dict:
    """The campaign that runs workload ``w`` as run_go does (a.client_model: threads or multiplexed)."""
    wl = {"family": "ycsb", "preset": w, **PROPS[w], "recordcount": a.recordcount, "operationcount": 0,
          "maxexecutiontime": a.time, "threads": a.threads, "table": table_for(w)}
    c = {"name": f"vs-ycsb-{w}", "target": _target(engine, env), "workload": wl, "phases": ["run"]}
    if a.shards:
        c["fanout"] = {"shards": a.shards}
    if getattr(a, "client_model", None):  # bench/client_model.py: threads or multiplexed
        c["fanout"] = {**c.get("fanout", {}), "client_model": a.client_model}
    return c


def run_dbswarm(engine, env, w, a, pinned):
    c = dbswarm_campaign(engine, env, w, a)
    wl = c["workload"]
    srv0 = C.server_cpu_s(env, server_engines(engine))
    s = C.run_dbswarm(c, pinned=pinned, timeout=a.time * 3 + 180)
    server_cpu = C.server_cpu_s(env, server_engines(engine)) - srv0
    fixed = C.fixed_cpu(c["target"], wl, a.threads, a.shards, pinned)
    ph = s["phase"]
    total = ph.get("operations_total") or 0
    return {"ops": total, "ops_per_s": ph.get("ops_per_s"), "steady_ops_per_s": (ph.get("steady") or {}).get("ops_per_s"),
            "duration_s": ph.get("duration_s"), "errors": ph.get("errors_total"),
            "abandoned_threads": (ph.get("abandoned_threads") or {}).get("count", 0),
            "p99_us": (s.get("overall") or {}).get("p99_us"),
            "per_op": {k: {"count": v.get("count"), "p99_us": v.get("p99_us"), "avg_us": v.get("avg_us")}
                       for k, v in (ph.get("operations") or {}).items()},
            "shards": s["shard_count"], "cpu_s": s["shard_cpu_s"], "runner_cpu_s": s["runner_cpu_s"],
            "not_shard_cpu_s": s.get("not_shard_cpu_s"),
            "wall_s": round(s["wall_s"], 3), "status": ph.get("status"), "fixed_cpu_s": fixed,
            "cpu_us_per_op_raw": round(s["shard_cpu_s"] / total * 1e6, 1) if total else None,
            "cpu_us_per_op": round(max(s["shard_cpu_s"] - fixed, 0) / total * 1e6, 1) if total else None,
            "server_cpu_s": round(server_cpu, 2),
            "server_cpu_us_per_op": round(server_cpu / total * 1e6, 1) if total else None}


def bare_cmd(engine, env, w, a, processes) -> list[str]:
    """bench/bare_client.py on dbswarm's keys of usertable (the password by file, never in argv)."""
    port = env["DBSWARM_TEST_MYSQL_PORT" if engine == "mysql" else "DBSWARM_TEST_PG_PORT"]
    return [C.PY, str(C.BENCH / "bare_client.py"), "--engine", engine, "--port", port,
            "--password-file", env["DBSWARM_TEST_PASSWORD_FILE"], "--test", BARE_TESTS[w],
            "--threads", str(a.threads), "--processes", str(min(processes, a.threads)), "--time", str(a.time),
            "--recordcount", str(a.recordcount), "--table", table_for(w)]


def has_bare(engine, w) -> bool:
    return engine in ("mysql", "postgresql") and w in BARE_TESTS


def run_bare(engine, env, w, a, pinned):
    """The bare client with as many processes as dbswarm has shards (--shards, else one per
    usable CPU: 1 pinned, as dbswarm's default)."""
    cmd = [*C.client_prefix(pinned), *bare_cmd(engine, env, w, a, a.shards or (1 if pinned else C.NCPU))]
    srv0 = C.server_cpu_s(env, server_engines(engine))
    res = C.check(C.run_measured(cmd, timeout=a.time * 3 + 120), f"bare client {BARE_TESTS[w]} on {engine}")
    server_cpu = C.server_cpu_s(env, server_engines(engine)) - srv0
    out = json.loads(res["stdout"].strip().splitlines()[-1])
    n = out["operations"]
    return {"ops": n, "ops_per_s": round(out["ops_per_s"], 2), "window_s": round(out["window_s"], 3),
            "not_found": out["not_found"], "processes": len(out["processes"]),
            "cpu_s": round(out["cpu_s"], 3), "cpu_s_total": round(res["cpu_s"], 3),
            "cpu_us_per_op": round(out["cpu_s"] / n * 1e6, 1) if n else None,
            "server_cpu_s": round(server_cpu, 2),
            "server_cpu_us_per_op": round(server_cpu / n * 1e6, 1) if n else None}


def server_engines(engine):
    """The servers whose CPU a run costs (FerretDB keeps its data in PostgreSQL)."""
    return (engine, "postgresql") if engine == "mongodb" else (engine,)



def _target(engine, env):
    t = C.target(engine, env)
    if engine == "mongodb":
        t["options"] = {"ferretdb_backend_url": ferretdb_backend_url(env)}
    return t


ferretdb_backend_url = servers.ferretdb_backend_url


# ---- data ---------------------------------------------------------------------------------------

def admin_sql(engine, env, statements):
    """Statements through the test harness's admin connections (tests/servers.py)."""
    if engine == "mysql":
        con = servers.mysql_admin(env)
        with con.cursor() as cur:
            for s in statements:
                cur.execute(s)
        con.close()
    else:
        with servers.pg_admin(env) as con:
            for s in statements:
                con.execute(s)


def empty_s1(engine, env):
    if engine == "mongodb":
        cl = servers.mongo_admin(env)
        for db in ("dbswarm", "ycsb"):
            cl[db]["usertable_s1"].delete_many({})
        cl.close()
    else:
        admin_sql(engine, env, ["TRUNCATE TABLE usertable_s1"])


def load(engine, env, a):
    """usertable: dbswarm prepare + load, then go-ycsb load of its own keys; usertable_s1: created empty."""
    out = {}
    base = {"family": "ycsb", "recordcount": a.recordcount, "fieldcount": 10, "fieldlength": 100}
    out["dbswarm"] = {k: v for k, v in C.load_with_dbswarm(env, engine, dict(base, table="usertable"),
                                                           threads=a.threads).items()
                      if k in ("operations_total", "duration_s", "ops_per_s")}
    prep = {"name": "bench-prepare-s1", "target": _target(engine, env),
            "workload": dict(base, table="usertable_s1", threads=1), "phases": ["prepare"]}
    C.run_dbswarm(prep)
    if engine == "mongodb":
        cl = servers.mongo_admin(env)
        cl["ycsb"].drop_collection("usertable")
        cl["ycsb"].drop_collection("usertable_s1")
        cl["ycsb"].create_collection("usertable")
        cl["ycsb"].create_collection("usertable_s1")
        cl["dbswarm"]["usertable_s1"].insert_one({"_id": "x"})
        cl["dbswarm"]["usertable_s1"].delete_many({})
        cl.close()
        _ferretdb_index(env, "ycsb", "usertable", "usertable_s1")
        _ferretdb_index(env, "dbswarm", "usertable", "usertable_s1")
    props = {"recordcount": a.recordcount, "threadcount": a.threads, "table": "usertable"}
    res = C.check(C.run_measured(go_cmd("load", engine, env, props), timeout=1800), f"go-ycsb load {engine}")
    go = parse_go(res["stdout"]).get("INSERT", {})
    out["go-ycsb"] = {"count": go.get("count"), "ops": go.get("ops")}
    C.log(f"go-ycsb loaded {engine}: {go.get('count')} rows at {go.get('ops')} ops/s")
    return out


def _ferretdb_index(env, db, *colls):
    cmd = [str(C.ROOT / "scripts" / "ferretdb-index"), "--env", str(Path(env["_DIR"]) / "env"), db, *colls]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"ferretdb-index failed: {r.stderr[-2000:]}")


# ---- comparison -------------------------------------------------------------------------------

def compare(engine, env, w, a, pinned) -> dict:
    la0 = C.loadavg()
    mode = "pinned" if pinned else "shared"
    bare = a.bare and has_bare(engine, w)
    tools = ("dbswarm", "go-ycsb", "bare") if bare else ("dbswarm", "go-ycsb")
    C.log(f"{engine} workload {w} threads={a.threads} {mode}: {a.rounds} rounds x ({', '.join(tools)}) x {a.time} s")
    between = (lambda: empty_s1(engine, env)) if w == "S1" else None
    runs = {"dbswarm": lambda: run_dbswarm(engine, env, w, a, pinned),
            "go-ycsb": lambda: run_go(engine, env, w, a, pinned),
            "bare": lambda: run_bare(engine, env, w, a, pinned)}
    got = {t: [] for t in tools}
    with C.Pinning(env, pinned, engines=(engine, "postgresql") if engine == "mongodb" else (engine,)):
        for i in range(a.rounds):  # dbswarm, go-ycsb, bare, dbswarm, ...
            for tool in tools:
                if between:
                    between()
                got[tool].append(runs[tool]())
            if bare:
                C.log(f"  round {i}: OPS " + ", ".join(f"{t} {got[t][-1]['ops_per_s']:,.0f}" for t in tools))
    ds, gy, br = got["dbswarm"], got["go-ycsb"], got.get("bare", [])
    ops = {t: [r["ops_per_s"] for r in got[t]] for t in tools}
    row = {"engine": engine, "workload": w, "threads": a.threads, "mode": mode,
           "ops_ratio": C.ratios(ops["dbswarm"], ops["go-ycsb"]),
           "p99_ratio": C.ratios([d["p99_us"] for d in ds], [g["p99_us"] for g in gy]),
           "dbswarm_ops": C.med(ops["dbswarm"]), "goycsb_ops": C.med(ops["go-ycsb"]),
           "dbswarm_p99_us": C.med([d["p99_us"] for d in ds]), "goycsb_p99_us": C.med([g["p99_us"] for g in gy]),
           "dbswarm_cpu_us_per_op": C.med([d["cpu_us_per_op"] for d in ds]),
           "goycsb_cpu_us_per_op": C.med([g["cpu_us_per_op"] for g in gy]),
           "dbswarm_server_cpu_us_per_op": C.med([d["server_cpu_us_per_op"] for d in ds]),
           "goycsb_server_cpu_us_per_op": C.med([g["server_cpu_us_per_op"] for g in gy]),
           # the bare Python client (None where it did not run: FerretDB, S1, --no-bare)
           "bare_ops": C.med(ops["bare"]) if bare else None,
           "dbswarm_vs_bare": C.ratios(ops["dbswarm"], ops["bare"]) if bare else None,
           "bare_vs_goycsb": C.ratios(ops["bare"], ops["go-ycsb"]) if bare else None,
           "bare_cpu_us_per_op": C.med([b["cpu_us_per_op"] for b in br]) if bare else None,
           "bare_server_cpu_us_per_op": C.med([b["server_cpu_us_per_op"] for b in br]) if bare else None,
           "bare_not_found": sum(b["not_found"] for b in br) if bare else None,
           # dbswarm run's processes besides the shards' calls (the orchestrating process, the
           # function processes' start-up), and the orchestrating process alone, per campaign
           "dbswarm_not_shard_cpu_s": C.med([d.get("not_shard_cpu_s") for d in ds]),
           "dbswarm_orchestrator_cpu_s": C.med([d.get("runner_cpu_s") for d in ds]),
           "dbswarm": ds, "go-ycsb": gy, "bare": br, "loadavg": {"before": la0, "after": C.loadavg()}}
    C.log(f"  OPS ratio {C.fmt_ratio(row['ops_ratio'])}  dbswarm {row['dbswarm_ops']:.0f} / go-ycsb "
          f"{row['goycsb_ops']:.0f}; p99 ratio {C.fmt_ratio(row['p99_ratio'])}; CPU µs/op "
          f"{row['dbswarm_cpu_us_per_op']} vs {row['goycsb_cpu_us_per_op']}; server CPU µs/op "
          f"{row['dbswarm_server_cpu_us_per_op']} vs {row['goycsb_server_cpu_us_per_op']}")
    if bare:
        C.log(f"  bare {row['bare_ops']:.0f} ops/s, CPU µs/op {row['bare_cpu_us_per_op']}: dbswarm ÷ bare "
              f"{C.fmt_ratio(row['dbswarm_vs_bare'])}, bare ÷ go-ycsb {C.fmt_ratio(row['bare_vs_goycsb'])}"
              + (f"; {row['bare_not_found']} keys not found (table not loaded by dbswarm?)"
                 if row["bare_not_found"] else ""))
    return row


def _num(v) -> str:
    return "—" if v is None else f"{v:,.0f}"


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## dbswarm vs go-ycsb v1.0.1", "", C.header(data),
             f"- usertable: {a['recordcount']:,} records per tool (both tools' keys in one table), fieldcount 10 × "
             f"100 bytes; {a['threads']} threads; {a['time']} s per run; {a['rounds']} interleaved rounds; "
             f"requestdistribution zipfian for a and c; S1 = insertproportion 1 into an emptied table before every run.",
             "- OPS ratio: dbswarm ops/s (all operations / the phase's span) ÷ go-ycsb's TOTAL OPS; p99 ratio: "
             "p99 of all operations merged (dbswarm) ÷ go-ycsb's TOTAL 99th. Median (min–max) over the rounds. "
             "CPU µs/op: client process CPU (user+sys) per operation, median; dbswarm's is the shard processes' "
             "CPU minus their fixed start-up cost (a 1-operation campaign with the same shards; raw in the JSON). "
             "Server CPU µs/op: the server processes' CPU over the run (/proc; PostgreSQL's backends included, "
             "FerretDB's with its PostgreSQL) per operation, median; it includes connecting (dbswarm: also the "
             "campaign's preparation; a campaign of one operation per thread costs the server 0.00–0.05 s) and the "
             "server's background work.",
             "- bare: `bench/bare_client.py --test ycsb_c` / `ycsb_a` (workloads c and a on MariaDB and "
             "PostgreSQL), in the same rounds (dbswarm, go-ycsb, bare, …): dbswarm's statements on dbswarm's keys "
             "through the driver calls dbswarm's bindings end in (PostgreSQL `PGconn.exec_prepared`, prepared once "
             "per connection; MariaDB: mysqlclient's text statements), zipfian keys "
             "drawn inline (YCSB's ScrambledZipfian, dbswarm's fnvhash64), threads split over as many processes as "
             "dbswarm has shards, nothing else: no generator objects, no per-operation measurement, no binding "
             "layer, no error handling. OPS: its operations over its measured window; CPU µs/op: its processes' CPU "
             "over that window per operation. dbswarm ÷ bare is what dbswarm's own Python costs; bare ÷ go-ycsb "
             "(in the JSON) what a Python client on these drivers reaches at all. — where it did not run.",
             "- The protocols on the server's side. MariaDB: go-ycsb's binding runs every statement as a "
             "server-side prepared statement (cached per connection: `getAndCacheStmt`); dbswarm sends text "
             "statements, which the server parses every time (d1db372 to issue 36 it prepared them through ctypes "
             "into libmariadb: removed; since 2026-11-29 the binary protocol on mysqlclient's connection, "
             "docs/decisions/0006-mariadb-binary-protocol.md). PostgreSQL: both prepare once, but libpq's "
             "`PQexecPrepared` (psycopg's path, and sysbench's) sends Bind, Describe, Execute, Sync, so the server "
             "builds the row description at every execution; go-ycsb's lib/pq sends Bind, Execute, Sync.",
             f"- dbswarm runs through {C.DBSWARM_MODE_TEXT}.",
             "- FerretDB 1.24 (MongoDB wire protocol over PostgreSQL) is the limit there, not the clients: "
             "its numbers show the binding works, not what the client can do.",
             "",
             "| engine | workload | threads | mode | OPS dbswarm | OPS go-ycsb | OPS bare | OPS ratio | "
             "dbswarm ÷ bare | p99 µs dbswarm | p99 µs go-ycsb | p99 ratio | CPU µs/op dbswarm | CPU µs/op go-ycsb | "
             "CPU µs/op bare | server CPU µs/op dbswarm | server CPU µs/op go-ycsb | load avg before→after |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: "
             "| ---: | --- |"]
    for r in data["comparisons"]:
        if r.get("failed"):
            lines.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['workload']} | {r['threads']} | {r['mode']} "
                         f"| failed: {r['failed']} | | | | | | | | | | | | | |")
            continue
        lines.append(
            f"| {C.ENGINE_LABELS[r['engine']]} | {r['workload']} | {r['threads']} | {r['mode']} | {r['dbswarm_ops']:,.0f} "
            f"| {r['goycsb_ops']:,.0f} | {_num(r.get('bare_ops'))} | {C.fmt_ratio(r['ops_ratio'])} "
            f"| {C.fmt_ratio(r['dbswarm_vs_bare']) if r.get('dbswarm_vs_bare') else '—'} | {r['dbswarm_p99_us']:,.0f} "
            f"| {r['goycsb_p99_us']:,.0f} | {C.fmt_ratio(r['p99_ratio'])} | {r['dbswarm_cpu_us_per_op']:.0f} "
            f"| {r['goycsb_cpu_us_per_op']:.0f} | {_num(r.get('bare_cpu_us_per_op'))} "
            f"| {_num(r.get('dbswarm_server_cpu_us_per_op'))} "
            f"| {_num(r.get('goycsb_server_cpu_us_per_op'))} "
            f"| {r['loadavg']['before'][0]:.1f}→{r['loadavg']['after'][0]:.1f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=int, default=60)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--recordcount", type=int, default=100_000)
    p.add_argument("--threads", default="8", help="client threads, comma-separated (e.g. 16,128)")
    p.add_argument("--engines", default="mysql,postgresql,mongodb")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--pin", dest="pin", action="store_true", default=True)
    p.add_argument("--no-pin", dest="pin", action="store_false")
    p.add_argument("--pinned-only", action="store_true",
                   help="only the pinned runs (FerretDB, shared only, is then skipped); e.g. with --shards "
                        "to compare threads and processes on the client's one CPU")
    p.add_argument("--ferretdb-recordcount", type=int, default=2000,
                   help="records on FerretDB (slow server); FerretDB runs shared only")
    p.add_argument("--shards", type=int, default=None)
    p.add_argument("--go-startup", type=float, default=0.3,
                   help="seconds go-ycsb needs before its first operation (added before the SIGINT)")
    p.add_argument("--bare", dest="bare", action="store_true", default=True,
                   help="the bare Python client (bench/bare_client.py) in the same rounds, workloads a and c on "
                        "MariaDB and PostgreSQL (the default)")
    p.add_argument("--no-bare", dest="bare", action="store_false")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    thread_counts = C.csv_list(a.threads, int)
    if not thread_counts or min(thread_counts) < 1:
        p.error(f"--threads: {a.threads!r}; one or more whole numbers >= 1")
    if not C.GO_YCSB.exists():
        C.check(C.run_measured([str(C.ROOT / "scripts" / "build-go-ycsb")], timeout=1200), "scripts/build-go-ycsb")
    data = C.base_record("vs_ycsb", a)
    env = C.start_servers(a.servers_dir)
    data["goycsb_command_example"] = " ".join(redact(go_cmd("run", "mysql", env, {**PROPS["a"], "threadcount": thread_counts[0]})))
    data["comparisons"], data["loads"] = [], {}
    for engine in C.csv_list(a.engines):
        ea = argparse.Namespace(**dict(vars(a), threads=thread_counts[0]))  # loads with the first count
        if engine == "mongodb":
            ea.recordcount = a.ferretdb_recordcount
        data["loads"][engine] = load(engine, env, ea)
        for w in C.csv_list(a.workloads):
            if a.pinned_only:
                modes = [] if engine == "mongodb" else [True]
            else:
                modes = [False, True] if a.pin and engine != "mongodb" else [False]
            for threads in thread_counts:
                ta = argparse.Namespace(**dict(vars(ea), threads=threads))
                for pinned in modes:
                    row = C.attempt(lambda: compare(engine, env, w, ta, pinned), engine=engine, workload=w,
                                    threads=threads, mode="pinned" if pinned else "shared")
                    row["recordcount"] = ta.recordcount
                    data["comparisons"].append(row)
    C.finish("vs_ycsb", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
