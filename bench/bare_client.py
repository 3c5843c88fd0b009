"""A bare Python client for sysbench and YCSB: the least any Python client on dbswarm's drivers does.

No generator objects, no measurement, no binding layer: each thread sends the statements
through the same driver calls dbswarm's bindings end in (PostgreSQL: ``PGconn.exec_prepared``
on statements prepared once per connection, BEGIN / COMMIT as ``PGconn.exec_``; MariaDB:
text statements, ``_mysql`` ``query`` + ``store_result`` + ``num_rows``, BEGIN / COMMIT as
``_mysql`` ``query``, as dbswarm's mysqlclient path sends them), reads row counts only
(as dbswarm's sysbench events and YCSB reads, sysbench and go-ycsb's counting do), and
counts transactions (sysbench) or operations (YCSB). Threads are split over processes the
way dbswarm splits them over shards. It prints one JSON line: the transactions or
operations, the measured window and the processes' CPU over that window only (connection
set-up, statement preparation and start-up excluded).

Tests:

- ``oltp_point_select``, ``oltp_read_only``: sysbench's statements on sbtest1..N, uniform ids.
- ``ycsb_c`` (workload c: read only), ``ycsb_b`` (read 0.95, update 0.05) and ``ycsb_a`` (read 0.5,
  update 0.5), zipfian
  requests, on the ``usertable`` (``--table``) of ``--recordcount`` records loaded by
  dbswarm (prepare + load; go-ycsb's own rows beside them are not read): the statements of
  dbswarm's YCSB binding (bindings/sql.py with readallfields, writeallfields false):
  ``SELECT * FROM usertable WHERE ycsb_key = ?`` (rows counted, not converted: dbswarm's
  ``read(..., rows=False)``) and ``UPDATE usertable SET field<i> = ? WHERE ycsb_key = ?``
  (one random field of ``--fieldcount``, a ``--fieldlength`` window of a 64 KiB pool of
  letters and digits, as families/ycsb.py draws it). PostgreSQL prepares them once per
  connection (one UPDATE per field); MariaDB sends them as text statements (the update as
  ``query`` + ``affected_rows``: it has no result set to store).
  Keys: YCSB's, ``"user" + str(fnvhash64(keynum))`` (dbswarm's key_name with insertorder
  hashed, zeropadding 1). The key numbers: YCSB's ScrambledZipfian over [0, recordcount)
  (zipfian constant 0.99 over YCSB's 10^10 items, then fnvhash64(item) % recordcount), drawn
  inline in the thread's loop (no generator object, no method call: one ``random()``, the
  power, one list index for a popular item) with dbswarm's own ``fnvhash64`` and constants
  from shared/dbswarm/families/generators.py; the keys of all records, already encoded (and
  quoted for MariaDB), and of the popular items (below 65,536: half the draws) are built
  before the window, so a popular item costs one list index and any other one hash. Nothing is escaped: the keys and values
  are letters and digits by construction (dbswarm escapes every string).

Used by bench/python_ceiling.py (sysbench) and bench/vs_ycsb.py (YCSB): what is left of the
gap to sysbench / go-ycsb when dbswarm's own Python is taken away. Not a load tool: no
errors are handled, nothing is reported per second.

    python bench/bare_client.py --engine postgresql --port 5432 --password-file F \\
        --test oltp_point_select --threads 8 --processes 2 --time 5 --tables 8 --table-size 20000
    python bench/bare_client.py --engine mysql --port 3306 --password-file F \\
        --test ycsb_c --threads 16 --processes 2 --time 5 --recordcount 20000
"""
from __future__ import annotations

import argparse
import json
import random
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

SYSBENCH_TESTS = ("oltp_point_select", "oltp_read_only")
YCSB_TESTS = ("ycsb_c", "ycsb_b", "ycsb_a")
TESTS = SYSBENCH_TESTS + YCSB_TESTS
YCSB_READ_PROPORTION = {"ycsb_c": 1.0, "ycsb_b": 0.95, "ycsb_a": 0.5}  # the rest are updates
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


# ---- YCSB ------------------------------------------------------------------------------------

POOL_SIZE = 1 << 16  # families/ycsb.py's value pool


class YcsbKeys:
    """Per process, built before the window: every record's key as the driver takes it
    (bytes; quoted for MariaDB's text statements), YCSB's ScrambledZipfian constants, and the
    popular items' keys, shared by the threads (read only)."""

    def __init__(self, a):
        from dbswarm.families.generators import ScrambledZipfian, fnvhash64, zeta
        theta = 0.99
        self.n = a.recordcount
        quote = b"'%b'" if a.engine == "mysql" else b"%b"
        self.keys = [quote % b"user%d" % fnvhash64(k) for k in range(self.n)]
        self.fnvhash64 = fnvhash64
        self.items, self.zetan = ScrambledZipfian.ITEM_COUNT, ScrambledZipfian.ZETAN
        self.half = 1.0 + 0.5 ** theta
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1 - (2.0 / self.items) ** (1 - theta)) / (1 - zeta(2, theta) / self.zetan)
        # the popular items' keys (below ScrambledZipfian.POPULAR_ITEMS = 65536, half the draws);
        # the others' hashed at every draw (six in ten draws are of items not drawn before)
        self.popular = [self.keys[fnvhash64(i) % self.n] for i in range(ScrambledZipfian.POPULAR_ITEMS)]
        # the update values: windows of one pool of letters and digits per process
        rng = random.Random()
        self.pool = "".join(rng.choices(string.ascii_letters + string.digits, k=POOL_SIZE))
        self.pool = self.pool.encode()
        self.fieldlength = min(a.fieldlength, POOL_SIZE)


def ycsb_pg_thread(a, password):
    """read(key) -> rows; update(field, value, key) -> rows updated."""
    from psycopg import pq
    pg = pq.PGconn.connect(f"host=127.0.0.1 port={a.port} user=dbswarm dbname=dbswarm password={password}".encode())
    if pg.status != pq.ConnStatus.OK:
        raise SystemExit(f"bare_client: PostgreSQL connection failed: {pg.error_message.decode()}")
    statements = {b"r": f"SELECT * FROM {a.table} WHERE ycsb_key = $1"}
    if YCSB_READ_PROPORTION[a.test] < 1:
        statements.update({b"u%d" % f: f"UPDATE {a.table} SET field{f} = $1 WHERE ycsb_key = $2"
                           for f in range(a.fieldcount)})
    for name, sql in statements.items():
        res = pg.prepare(name, sql.encode())
        if res.status != pq.ExecStatus.COMMAND_OK:
            raise SystemExit(f"bare_client: prepare failed: {res.error_message.decode()}")
    exec_prepared = pg.exec_prepared
    updates = [b"u%d" % f for f in range(a.fieldcount)]

    def read(key):
        return exec_prepared(b"r", [key]).ntuples

    def update(field, value, key):
        return exec_prepared(updates[field], [value, key]).command_tuples

    return read, update


def ycsb_mysql_thread(a, password):
    from MySQLdb import _mysql
    conn = _mysql.connect(host="127.0.0.1", port=a.port, user="dbswarm", password=password, database="dbswarm")
    query, store, affected = conn.query, conn.store_result, conn.affected_rows
    select = f"SELECT * FROM {a.table} WHERE ycsb_key = ".encode()
    updates = [f"UPDATE {a.table} SET field{f} = '%b' WHERE ycsb_key = %b".encode() for f in range(a.fieldcount)]

    def read(key):
        query(select + key)
        return store().num_rows()

    def update(field, value, key):
        query(updates[field] % (value, key))
        return affected()

    return read, update


def ycsb_thread_body(a, password, shared: YcsbKeys, ready: threading.Barrier, go: threading.Event,
                     stop_at: list, counts: list, misses: list, i: int):
    read, update = (ycsb_pg_thread if a.engine == "postgresql" else ycsb_mysql_thread)(a, password)
    rnd = random.Random(None if a.seed is None else a.seed + i).random
    keys, n, fnv, popular = shared.keys, shared.n, shared.fnvhash64, shared.popular
    items, zetan, half, eta, alpha = shared.items, shared.zetan, shared.half, shared.eta, shared.alpha
    read_p = YCSB_READ_PROPORTION[a.test]
    pool, flen, fields = shared.pool, shared.fieldlength, a.fieldcount
    span = POOL_SIZE - flen
    ready.wait()
    go.wait()
    end = stop_at[0]
    ops = missed = 0
    while time.monotonic() < end:
        # ScrambledZipfian.next over [0, n), inline
        u = rnd()
        uz = u * zetan
        if uz < 1.0:
            item = 0
        elif uz < half:
            item = 1
        else:
            item = int(items * (eta * u - eta + 1) ** alpha)
        key = popular[item] if item < 65536 else keys[fnv(item) % n]
        if read_p == 1.0 or rnd() < read_p:
            if read(key) == 0:
                missed += 1
        else:
            o = int(rnd() * span)
            if update(int(rnd() * fields), pool[o:o + flen], key) == 0:
                missed += 1
        ops += 1
    counts[i], misses[i] = ops, missed


# ---- the processes ---------------------------------------------------------------------------

def thread_body(a, password, ready: threading.Barrier, go: threading.Event, stop_at: list, counts: list,
                misses: list, i: int):
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
    counts, misses = [0] * a.threads, [0] * a.threads
    ready, go = threading.Barrier(a.threads + 1), threading.Event()
    stop_at = [0.0]
    if a.test in YCSB_TESTS:
        shared = YcsbKeys(a)
        body, extra = ycsb_thread_body, (shared,)
    else:
        body, extra = thread_body, ()
    threads = [threading.Thread(target=body, args=(a, password, *extra, ready, go, stop_at, counts, misses, i),
                                daemon=True)
               for i in range(a.threads)]
    for t in threads:
        t.start()
    ready.wait()  # every thread connected and prepared: the window starts now
    cpu0, t0 = time.process_time(), time.monotonic()
    stop_at[0] = t0 + a.time
    go.set()
    for t in threads:
        t.join()
    out = {"count": sum(counts), "window_s": time.monotonic() - t0, "cpu_s": time.process_time() - cpu0}
    if a.test in YCSB_TESTS:  # sysbench's statements are not checked
        out["not_found"] = sum(misses)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", choices=("postgresql", "mysql"), required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--password-file", required=True)
    p.add_argument("--test", choices=TESTS, required=True)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--processes", type=int, default=1, help="split the threads over this many processes")
    p.add_argument("--time", type=float, default=5)
    p.add_argument("--tables", type=int, default=8, help="sysbench: sbtest1..N")
    p.add_argument("--table-size", type=int, default=100_000, help="sysbench: rows per table")
    p.add_argument("--recordcount", type=int, default=100_000, help="YCSB: the records dbswarm loaded")
    p.add_argument("--table", default="usertable", help="YCSB: the table")
    p.add_argument("--fieldcount", type=int, default=10, help="YCSB: fields per record (updates pick one)")
    p.add_argument("--fieldlength", type=int, default=100, help="YCSB: bytes per updated value")
    p.add_argument("--seed", type=int, default=None,
                   help="YCSB: thread i of a process draws from random.Random(seed + i) (default: unseeded)")
    p.add_argument("--mysql-protocol", choices=("text",), default="text",
                   help="MariaDB: mysqlclient's text statements, as dbswarm sends them (the server-side "
                        "prepared path through ctypes was removed in issue 36)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.threads < 1 or a.processes < 1 or a.processes > a.threads:
        p.error(f"--threads {a.threads} over --processes {a.processes}: need 1 <= processes <= threads")
    if a.recordcount < 1 or a.fieldcount < 1 or a.fieldlength < 1 or not a.table.isidentifier():
        p.error("--recordcount, --fieldcount and --fieldlength must be at least 1, --table an identifier")
    password = Path(a.password_file).read_text().strip()
    if a.worker:
        print(json.dumps(worker(a, password)), flush=True)
        return
    # threads split as evenly as dbswarm splits them over shards
    shares = [a.threads // a.processes + (1 if i < a.threads % a.processes else 0) for i in range(a.processes)]
    base = [sys.executable, __file__, "--engine", a.engine, "--port", str(a.port), "--password-file",
            a.password_file, "--test", a.test, "--time", str(a.time), "--tables", str(a.tables),
            "--table-size", str(a.table_size), "--recordcount", str(a.recordcount), "--table", a.table,
            "--fieldcount", str(a.fieldcount), "--fieldlength", str(a.fieldlength),
            "--mysql-protocol", a.mysql_protocol, "--worker"]
    if a.seed is not None:
        base += ["--seed", str(a.seed)]
    procs = [subprocess.Popen([*base, "--threads", str(n)], stdout=subprocess.PIPE, text=True) for n in shares]
    parts = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"bare_client: a worker process failed (exit {proc.returncode})")
        parts.append(json.loads(out))
    window = max(x["window_s"] for x in parts)
    n = sum(x["count"] for x in parts)
    cpu = sum(x["cpu_s"] for x in parts)
    if a.test in YCSB_TESTS:  # reads and updates that found no row (a table not loaded by dbswarm)
        out = {"operations": n, "window_s": window, "ops_per_s": n / window, "cpu_s": cpu,
               "not_found": sum(x["not_found"] for x in parts)}
    else:
        out = {"transactions": n, "window_s": window, "tps": n / window, "cpu_s": cpu}
    print(json.dumps({**out, "processes": parts}))

if __name__ == "__main__":
    main()
