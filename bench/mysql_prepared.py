"""MariaDB: server-side prepared statements against text statements, through `dbswarm run`.

Issue 36, item 3: is the prepared-statement fast path worth a dependency? Modes, alternated
round by round (ratios in one run on a shared, loaded machine):

- ``text``: mysqlclient, ``options.prepare: false`` (every statement formatted client-side);
- ``prepared``: mysqlclient, ``options.prepare: true`` — on a revision that prepared on the
  server (run it from a worktree: ``PYTHONPATH=WORKTREE/shared:WORKTREE``): d1db372 to
  f5dcf4b, the ctypes path into libmariadb (bindings/mysql_stmt.py); 1a2982d, SQL PREPARE
  once per connection and ``EXECUTE ... USING`` literals (bindings/mysql_prepared.py). Both
  were measured with this script and removed. Since 2026-11-29 HEAD prepares again: the binary
  protocol spoken on mysqlclient's own connection (bindings/mysql_binary.py).

Workloads: YCSB c and a (uniform, 20,000 records) and sysbench oltp_read_only (2 tables ×
10,000 rows), at 16 and 128 threads, loaded once into their own database (``--database``,
created on the server) so that the shared test servers' tables are not touched. Client CPU
is the shard processes' (net of a campaign's fixed start-up cost), server CPU is mariadbd's
(/proc), both per operation (sysbench: per transaction).

With ``--bare``, also the driver alone (no dbswarm) in one process of N threads, point
selects by key on the YCSB table: mysqlclient text (``_mysql`` query/store_result), and
MariaDB Connector/Python (``mariadb`` package, binary protocol: ``cursor(binary=True)``)
if it imports.

    python bench/mysql_prepared.py --servers-env "$(cat /tmp/servers.out)" --time 5 --rounds 3
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

YCSB = {"family": "ycsb", "recordcount": 20_000, "requestdistribution": "uniform", "table": "usertable"}
SYSBENCH = {"family": "sysbench", "tables": 2, "table_size": 10_000, "rand_type": "uniform"}
WORKLOADS = {"ycsb-c": dict(YCSB, preset="c"), "ycsb-a": dict(YCSB, preset="a"),
             "sysbench-oltp_read_only": dict(SYSBENCH, test="oltp_read_only"),
             "sysbench-oltp_read_write": dict(SYSBENCH, test="oltp_read_write")}


def target(env, database, prepare: bool) -> dict:
    t = C.target("mysql", env)
    t["url"] = t["url"].rsplit("/", 1)[0] + "/" + database
    # shared_tables: this script's own database; an interrupted run's table lock must not
    # hold the next run off for 10 minutes
    t["options"] = {"driver": "mysqlclient", "prepare": prepare, "shared_tables": True}
    return t


def create_database(env, database):
    import MySQLdb
    db = MySQLdb.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm",
                         password=C.password(env))
    db.cursor().execute(f"CREATE DATABASE IF NOT EXISTS {database}")
    db.close()


def load(env, a):
    create_database(env, a.database)
    for name, wl in (("ycsb-c", WORKLOADS["ycsb-c"]), ("sysbench", WORKLOADS["sysbench-oltp_read_only"])):
        c = {"name": "bench-load", "target": target(env, a.database, False), "workload": dict(wl, threads=8),
             "phases": ["prepare", "load"], "fanout": {"shards": 2}}
        ph = C.run_dbswarm(c, timeout=1800)["phase"]
        if ph.get("status") != "complete":
            raise RuntimeError(f"load of {name}: {ph.get('status')} {ph.get('errors')}")
        C.log(f"loaded {name}: {ph['operations_total']} rows")


def one(env, a, name, threads, mode) -> dict:
    wl = dict(WORKLOADS[name], threads=threads)
    if wl["family"] == "ycsb":
        wl.update(operationcount=0, maxexecutiontime=a.time)
    else:
        wl.update(time=a.time)
    tgt = target(env, a.database, mode == "prepared")
    c = {"name": f"mysql-prepared-{name}", "target": tgt, "workload": wl, "phases": ["run"]}
    with C.Pinning(env, a.pinned, engines=("mysql",)):
        srv0 = C.server_cpu_s(env, ["mysql"])
        s = C.run_dbswarm(c, pinned=a.pinned, timeout=a.time * 3 + 240)
        server = C.server_cpu_s(env, ["mysql"]) - srv0
    fixed = C.fixed_cpu(tgt, wl, threads, None, a.pinned)
    ph = s["phase"]
    if wl["family"] == "sysbench":
        n, rate = ph["sysbench"]["transactions"], ph["sysbench"]["tps"]
    else:
        n, rate = ph["operations_total"], ph["ops_per_s"]
    return {"workload": name, "threads": threads, "mode": mode, "n": n, "rate": rate,
            "errors": ph.get("errors_total"),
            "prepared_statements": (s.get("binding_settings") or ph.get("binding_settings") or {}).get(
                "prepared_statements"),
            "client_us": round(max(s["shard_cpu_s"] - fixed, 0) / n * 1e6, 1) if n else None,
            "server_us": round(server / n * 1e6, 1) if n else None, "loadavg": C.loadavg()}


# ---- the driver alone ---------------------------------------------------------------------------

def bare_child(kind, port, password, threads, seconds, recordcount):
    """In its own process: ``threads`` connections, point selects by key for ``seconds``;
    prints ops and the process's CPU seconds."""
    import random
    stop = threading.Event()
    counts = [0] * threads
    sql = "SELECT * FROM usertable WHERE YCSB_KEY = %s"

    def connect():
        if kind == "mariadb":
            import mariadb
            return mariadb.connect(host="127.0.0.1", port=port, user="dbswarm", password=password,
                                   database=a_db, autocommit=True)
        import MySQLdb
        return MySQLdb.connect(host="127.0.0.1", port=port, user="dbswarm", password=password, database=a_db,
                               autocommit=True)
    conns = [connect() for _ in range(threads)]

    def loop(i):
        rnd = random.Random(i)
        db, n = conns[i], 0
        if kind == "mariadb":
            cur = db.cursor(binary=True)  # 2.0: the binary protocol (prepared, cached)
            while not stop.is_set():
                cur.execute(sql.replace("%s", "?"), (f"user{rnd.randrange(recordcount)}",))
                cur.fetchall()
                n += 1
        else:
            from MySQLdb import _mysql
            query, store, lit = _mysql.connection.query.__get__(db), db.store_result, db.string_literal
            b = sql.encode()
            while not stop.is_set():
                query(b % lit(f"user{rnd.randrange(recordcount)}".encode()))
                store().fetch_row(0)
                n += 1
        counts[i] = n
    ts = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    print(json.dumps({"ops": sum(counts), "cpu_s": cpu, "wall_s": wall}))


a_db = "dbswarm"


def bare(env, a, kind, threads) -> dict:
    cmd = [C.PY, __file__, "--bare-child", kind, "--database", a.database, "--servers-env", a.servers_env,
           "--threads", str(threads), "--time", str(a.time)]
    srv0 = C.server_cpu_s(env, ["mysql"])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=a.time * 4 + 120)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    server = C.server_cpu_s(env, ["mysql"]) - srv0
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if not r["ops"]:
        raise RuntimeError(f"{kind}: no operation completed: {out.stderr[-1500:]}")
    return {"workload": "bare point select", "threads": threads, "mode": kind, "n": r["ops"],
            "rate": round(r["ops"] / r["wall_s"]), "client_us": round(r["cpu_s"] / r["ops"] * 1e6, 1),
            "server_us": round(server / r["ops"] * 1e6, 1), "loadavg": C.loadavg()}


def markdown(data) -> str:
    a = data["args"]
    L = ["## MariaDB: prepared statements against text statements (issue 36)", "", C.header(data), "",
         f"`dbswarm run` (mysqlclient; `options.prepare` true: the revision's server-side path, false: text "
         f"statements), {a['time']} s per run, {a['rounds']} alternating rounds; ratios per round "
         "prepared / text, median (min–max). Client: the shard processes' CPU net of start-up; server: "
         "mariadbd's CPU. Per operation (sysbench: per transaction). "
         + ("Pinned: mariadbd on CPU 0, dbswarm on CPU 1." if a.get("pinned") else
            "CPUs shared (the servers are the shared test servers: not pinned)."), "",
         "| workload | threads | rate text | rate ratio | client µs text | client ratio | server µs text | "
         "server ratio |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in data["summary"]:
        L.append(f"| {row['workload']} | {row['threads']} | {row['rate_text']} | {C.fmt_ratio(row['rate'])} | "
                 f"{row['client_text']} | {C.fmt_ratio(row['client'])} | {row['server_text']} | "
                 f"{C.fmt_ratio(row['server'])} |")
    return "\n".join(L)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers-env", required=True, help="the test servers' env file")
    p.add_argument("--database", default="dbswarm_bench36")
    p.add_argument("--time", type=float, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", default="16,128")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--modes", default="prepared,text", help="first/second of every ratio")
    p.add_argument("--bare", default="", help="driver-only modes, e.g. mysqlclient,mariadb")
    p.add_argument("--pinned", action="store_true",
                   help="the server on CPU 0, dbswarm on CPU 1 (issue 36's shape); default: CPUs shared")
    p.add_argument("--no-load", action="store_true")
    p.add_argument("--no-md", action="store_true")
    p.add_argument("--bare-child", default="")
    a = p.parse_args()
    env = C.read_env(a.servers_env)
    env["_DIR"] = env["DBSWARM_TEST_DIR"]
    if a.bare_child:
        global a_db
        a_db = a.database
        bare_child(a.bare_child, int(env["DBSWARM_TEST_MYSQL_PORT"]), C.password(env), int(a.threads), a.time,
                   YCSB["recordcount"])
        return
    data = C.base_record("mysql_prepared", a)
    if not a.no_load:
        load(env, a)
    modes, bmodes = C.csv_list(a.modes), C.csv_list(a.bare)
    rows = []
    for r in range(a.rounds):
        for threads in C.csv_list(a.threads, int):
            for name in C.csv_list(a.workloads):
                order = modes if r % 2 == 0 else modes[::-1]
                for mode in order:
                    rows.append(C.attempt(lambda: one(env, a, name, threads, mode), workload=name,
                                          threads=threads, mode=mode))
                    C.log(json.dumps(rows[-1]))
            if bmodes:
                for mode in (bmodes if r % 2 == 0 else bmodes[::-1]):
                    rows.append(C.attempt(lambda: bare(env, a, mode, threads), workload="bare point select",
                                          threads=threads, mode=mode))
                    C.log(json.dumps(rows[-1]))
    data["rows"] = rows
    summary = []
    for ms in ([modes] if len(modes) == 2 else []) + ([bmodes] if len(bmodes) == 2 else []):
        keys = {(x["workload"], x["threads"]) for x in rows if x.get("mode") in ms and "failed" not in x}
        for w, t in sorted(keys):
            def col(mode, k):
                return [x.get(k) for x in rows if x.get("mode") == mode and x["workload"] == w and x["threads"] == t]
            summary.append({"workload": w, "threads": t, "modes": ms,
                            "rate_text": C.med(col(ms[1], "rate")), "client_text": C.med(col(ms[1], "client_us")),
                            "server_text": C.med(col(ms[1], "server_us")),
                            "rate": C.ratios(col(ms[0], "rate"), col(ms[1], "rate")),
                            "client": C.ratios(col(ms[0], "client_us"), col(ms[1], "client_us")),
                            "server": C.ratios(col(ms[0], "server_us"), col(ms[1], "server_us"))})
    data["summary"] = summary
    C.finish("mysql_prepared", data, markdown, write_md=not a.no_md)
    print(markdown(data))


if __name__ == "__main__":
    main()
