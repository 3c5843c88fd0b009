"""A bare Python sysbench client: the least any Python client on dbswarm's drivers does.

No generator objects, no measurement, no binding layer: each thread sends sysbench's
statements for oltp_point_select or oltp_read_only through the same driver calls
dbswarm's bindings end in (PostgreSQL: ``PGconn.exec_prepared`` on statements prepared
once per connection, BEGIN / COMMIT as ``PGconn.exec_``; MariaDB: mysqlclient's
``_mysql`` ``query`` + ``store_result`` + ``num_rows``), reads row counts only (as
dbswarm's sysbench events and sysbench do), and counts transactions. Threads are split
over processes the way dbswarm splits them over shards. It prints one JSON line: the
transactions, the measured window and the processes' CPU over that window only
(connection set-up and start-up excluded).

Used by bench/python_ceiling.py: what is left of the gap to sysbench when dbswarm's own
Python is taken away. Not a load tool: no errors are handled, nothing is reported per
second.

    python bench/bare_client.py --engine postgresql --port 5432 --password-file F \\
        --test oltp_point_select --threads 8 --processes 2 --time 5 --tables 8 --table-size 20000
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

TESTS = ("oltp_point_select", "oltp_read_only")
RANGE = 100  # sysbench's --range_size
RANGES = ("SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
          "SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN {a} AND {b}",
          "SELECT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c",
          "SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN {a} AND {b} ORDER BY c")
POINT = "SELECT c FROM sbtest{t} WHERE id={a}"


def pg_thread(a, password):
    """Per-thread statement calls: select(kind, table, *ids) -> row count; begin(); commit()."""
    from psycopg import pq
    pg = pq.PGconn.connect(f"host=127.0.0.1 port={a.port} user=dbswarm dbname=dbswarm password={password}".encode())
    if pg.status != pq.ConnStatus.OK:
        raise SystemExit(f"bare_client: PostgreSQL connection failed: {pg.error_message.decode()}")
    names = {}
    for t in range(1, a.tables + 1):
        for kind, sql in enumerate((POINT, *RANGES)):
            name = f"s{kind}_{t}".encode()
            res = pg.prepare(name, sql.format(t=t, a="$1", b="$2").encode())
            if res.status != pq.ExecStatus.COMMAND_OK:
                raise SystemExit(f"bare_client: prepare failed: {res.error_message.decode()}")
            names[kind, t] = name
    exec_prepared, exec_ = pg.exec_prepared, pg.exec_

    def select(kind, t, *ids):
        return exec_prepared(names[kind, t], [str(i).encode() for i in ids]).ntuples

    return select, lambda: exec_(b"BEGIN"), lambda: exec_(b"COMMIT")


def mysql_thread(a, password):
    from MySQLdb import _mysql
    conn = _mysql.connect(host="127.0.0.1", port=a.port, user="dbswarm", password=password, database="dbswarm")
    query, store = conn.query, conn.store_result
    sql = [(POINT.format(t="%d", a="%d")).encode()] + [r.format(t="%d", a="%d", b="%d").encode() for r in RANGES]

    def select(kind, t, *ids):
        query(sql[kind] % (t, *ids))
        return store().num_rows()

    return select, lambda: query(b"BEGIN"), lambda: query(b"COMMIT")


def thread_body(a, password, ready: threading.Barrier, go: threading.Event, stop_at: list, counts: list,
                i: int):
    select, begin, commit = (pg_thread if a.engine == "postgresql" else mysql_thread)(a, password)
    rnd = random.Random().random
    tables, size = a.tables, a.table_size
    read_only = a.test == "oltp_read_only"
    ready.wait()
    go.wait()
    end = stop_at[0]
    n = 0
    while time.monotonic() < end:
        if read_only:
            begin()
            t = 1 + int(rnd() * tables)
            for _ in range(10):
                select(0, t, 1 + int(rnd() * size))
            for kind in (1, 2, 3, 4):
                t = 1 + int(rnd() * tables)
                lo = 1 + int(rnd() * size)
                select(kind, t, lo, lo + RANGE - 1)
            commit()
        else:
            select(0, 1 + int(rnd() * tables), 1 + int(rnd() * size))
        n += 1
    counts[i] = n


def worker(a, password) -> dict:
    counts = [0] * a.threads
    ready, go = threading.Barrier(a.threads + 1), threading.Event()
    stop_at = [0.0]
    threads = [threading.Thread(target=thread_body, args=(a, password, ready, go, stop_at, counts, i), daemon=True)
               for i in range(a.threads)]
    for t in threads:
        t.start()
    ready.wait()  # every thread connected and prepared: the window starts now
    cpu0, t0 = time.process_time(), time.monotonic()
    stop_at[0] = t0 + a.time
    go.set()
    for t in threads:
        t.join()
    return {"transactions": sum(counts), "window_s": time.monotonic() - t0, "cpu_s": time.process_time() - cpu0}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=("postgresql", "mysql"), required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--password-file", required=True)
    p.add_argument("--test", choices=TESTS, required=True)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--processes", type=int, default=1, help="split the threads over this many processes")
    p.add_argument("--time", type=float, default=5)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=100_000)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.threads < 1 or a.processes < 1 or a.processes > a.threads:
        p.error(f"--threads {a.threads} over --processes {a.processes}: need 1 <= processes <= threads")
    password = Path(a.password_file).read_text().strip()
    if a.worker:
        print(json.dumps(worker(a, password)), flush=True)
        return
    # threads split as evenly as dbswarm splits them over shards
    shares = [a.threads // a.processes + (1 if i < a.threads % a.processes else 0) for i in range(a.processes)]
    base = [sys.executable, __file__, "--engine", a.engine, "--port", str(a.port), "--password-file",
            a.password_file, "--test", a.test, "--time", str(a.time), "--tables", str(a.tables),
            "--table-size", str(a.table_size), "--worker"]
    procs = [subprocess.Popen([*base, "--threads", str(n)], stdout=subprocess.PIPE, text=True) for n in shares]
    parts = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"bare_client: a worker process failed (exit {proc.returncode})")
        parts.append(json.loads(out))
    window = max(x["window_s"] for x in parts)
    trx = sum(x["transactions"] for x in parts)
    print(json.dumps({"transactions": trx, "window_s": window, "tps": trx / window,
                      "cpu_s": sum(x["cpu_s"] for x in parts), "processes": parts}))


if __name__ == "__main__":
    main()
