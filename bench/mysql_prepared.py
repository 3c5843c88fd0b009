"""Would binary-protocol prepared statements make MariaDB cheaper, for the client or the server?

sysbench sends its MariaDB statements as server-side prepared statements
(``--db-ps-mode=auto``): the server parses each once. dbswarm's MySQL drivers (PyMySQL,
mysqlclient) only have the text protocol, so every statement is parsed again. Two Python
drivers do speak the binary protocol: MariaDB Connector/Python (``pip install mariadb``,
C, on libmariadb) and MySQL Connector/Python (``pip install mysql-connector-python``,
its C extension). This script measures a bare single-thread loop of sysbench's point
select through each, interleaved with mysqlclient's text path (dbswarm's fastest MySQL
path today): client CPU (this thread's) and server CPU (the mariadbd process's) per
statement, and the prepared-statement commands the server received per statement (does
the driver really reuse a prepared statement?). Drivers that are not installed are
reported as such and skipped.

    python bench/mysql_prepared.py --rounds 5 --time 3
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

TABLE_SIZE = 10_000


def _connect_args(env):
    return {"host": "127.0.0.1", "port": int(env["DBSWARM_TEST_MYSQL_PORT"]), "user": "dbswarm",
            "password": C.password(env), "database": "dbswarm"}


def mysqlclient_text(env):
    from MySQLdb import _mysql
    conn = _mysql.connect(**_connect_args(env))
    query, store = conn.query, conn.store_result

    def op(i):
        query(b"SELECT c FROM bench_ps WHERE id=%d" % i)
        return store().fetch_row(0)
    return op, conn.close


def mariadb_binary(env):
    import mariadb
    conn = mariadb.connect(**_connect_args(env))
    cur = conn.cursor(prepared=True, binary=True)
    execute, fetchall = cur.execute, cur.fetchall

    def op(i):
        execute("SELECT c FROM bench_ps WHERE id=?", (i,))
        return fetchall()
    return op, conn.close


def mysql_connector_binary(env):
    import mysql.connector
    conn = mysql.connector.connect(**_connect_args(env))
    cur = conn.cursor(prepared=True)
    execute, fetchall = cur.execute, cur.fetchall

    def op(i):
        execute("SELECT c FROM bench_ps WHERE id=%s", (i,))
        return fetchall()
    return op, conn.close


VARIANTS = {  # name -> (its distribution on PyPI, the loop's factory)
    "mysqlclient, text protocol (dbswarm's path)": ("mysqlclient", mysqlclient_text),
    "MariaDB Connector/Python, binary prepared": ("mariadb", mariadb_binary),
    "MySQL Connector/Python (C ext.), binary prepared": ("mysql-connector-python", mysql_connector_binary),
}


def version_of(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    dist = VARIANTS[name][0]
    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return f"{dist} (not installed)"


COUNTERS = ("Com_stmt_prepare", "Com_stmt_execute", "Com_stmt_close")


def counters(monitor) -> dict:
    """The server's prepared-statement commands so far (what each driver really sends)."""
    monitor.query(b"SHOW GLOBAL STATUS WHERE Variable_name IN ('" + "','".join(COUNTERS).encode() + b"')")
    return {k.decode(): int(v) for k, v in monitor.store_result().fetch_row(0)}


def measure(make, env, seconds: float, server_pid: int, monitor) -> dict:
    op, close = make(env)
    rnd = random.Random().random
    try:
        op(1)
        n = 0
        k0 = counters(monitor)
        c0, s0, end = time.thread_time(), C.process_cpu_s(server_pid), time.perf_counter() + seconds
        while time.perf_counter() < end:
            for _ in range(50):
                op(1 + int(rnd() * TABLE_SIZE))
            n += 50
        client, server = time.thread_time() - c0, C.process_cpu_s(server_pid) - s0
        k1 = counters(monitor)
    finally:
        close()
    return {"statements": n, "client_us": round(client / n * 1e6, 1), "server_us": round(server / n * 1e6, 1),
            "per_statement": {k: round((k1[k] - k0[k]) / n, 2) for k in COUNTERS}}


def markdown(data: dict) -> str:
    a = data["args"]
    L = ["## MariaDB: binary-protocol prepared statements from Python", "", C.header(data), "",
         f"sysbench's point select (`SELECT c FROM t WHERE id=?`, {TABLE_SIZE:,} rows) in a bare single-thread loop "
         f"per driver, {a['time']:g} s per measurement, {a['rounds']} rounds alternating the drivers. Client: this "
         "thread's CPU per statement; server: the mariadbd process's CPU per statement (it serves nobody else "
         "meanwhile). Median (min–max). Server commands: the server's `Com_stmt_prepare` / `Com_stmt_execute` / "
         "`Com_stmt_close` per statement (a driver that reuses its prepared statement shows 0 / 1 / 0).", "",
         "| driver | version | client CPU µs/statement | server CPU µs/statement | server commands per statement "
         "(prepare / execute / close) |", "| --- | --- | --- | --- | --- |"]
    for r in data["rows"]:
        if r.get("skipped"):
            L.append(f"| {r['driver']} | {r['version']} | skipped: {r['skipped']} | | |")
            continue
        c, s, k = r["client_us"], r["server_us"], r["per_statement"]
        L.append(f"| {r['driver']} | {r['version']} | {C.med(c):.1f} ({min(c):.1f}–{max(c):.1f}) "
                 f"| {C.med(s):.1f} ({min(s):.1f}–{max(s):.1f}) "
                 f"| {' / '.join(f'{k[x]:g}' for x in COUNTERS)} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--time", type=float, default=3)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    if a.rounds < 1 or a.time <= 0:
        p.error("--rounds must be at least 1 and --time positive")
    data = C.base_record("mysql_prepared", a)
    env = C.start_servers(a.servers_dir)
    server_pid = C.server_pids(env, "mysql")[0]
    from MySQLdb import _mysql
    conn = _mysql.connect(**_connect_args(env))
    conn.query(b"DROP TABLE IF EXISTS bench_ps")
    conn.query(b"CREATE TABLE bench_ps (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, "
               b"pad CHAR(60) NOT NULL)")
    conn.query(b"INSERT INTO bench_ps SELECT seq, seq, REPEAT('c', 119), REPEAT('p', 59) FROM seq_1_to_%d"
               % TABLE_SIZE)
    usable, rows = {}, []
    for name, (_, make) in VARIANTS.items():
        try:
            measure(make, env, 0.2, server_pid, conn)  # imports, connects, warms the statement
            usable[name] = {"driver": name, "version": version_of(name), "client_us": [], "server_us": []}
        except Exception as exc:  # not installed, or its library does not load here: say so
            hint = f" (pip install {VARIANTS[name][0]})" if isinstance(exc, ImportError) else ""
            rows.append({"driver": name, "version": version_of(name),
                         "skipped": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}{hint}"})
            C.log(f"{name}: skipped ({rows[-1]['skipped']})")
    for i in range(a.rounds):
        for name, row in usable.items():
            r = measure(VARIANTS[name][1], env, a.time, server_pid, conn)
            row["per_statement"] = r["per_statement"]
            row["client_us"].append(r["client_us"])
            row["server_us"].append(r["server_us"])
            C.log(f"round {i} {name}: client {r['client_us']} µs, server {r['server_us']} µs per statement")
    conn.query(b"DROP TABLE IF EXISTS bench_ps")
    conn.close()
    data["rows"] = [*usable.values(), *rows]
    C.finish("mysql_prepared", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
