"""Concurrency models for the client (issue 36, item 1): OS threads against asyncio.

One client process holds N connections (16, 128, 512) and runs one operation in a closed
loop on every connection for ``--time`` seconds; what is measured is the process's CPU
(user + system, all threads) and its operations over that window only (connecting and a
0.5 s warm-up excluded): client CPU µs per operation and operations per second. Models:

- ``threads-psycopg``: a thread per connection, psycopg's libpq layer (``psycopg.pq``:
  ``exec_prepared`` on statements prepared once per connection; dbswarm's PostgreSQL path);
- ``asyncpg``: one event loop, a task per connection, asyncpg (its statements prepared and
  cached per connection);
- ``psycopg-async``: psycopg's ``AsyncConnection`` (``execute(..., prepare=True)``); for
  the transaction also ``psycopg-async-pipeline`` (the transaction's statements in one
  pipeline: one round trip fewer per statement);
- ``threads-mysqlclient``: a thread per connection, mysqlclient's ``_mysql`` query /
  store_result with client-side formatting (dbswarm's MariaDB text path);
  ``threads-pymysql``: the same with PyMySQL's cursor (the portable fallback);
- ``asyncmy``, ``aiomysql``: one event loop, a task per connection;
- ``threads-pymongo``: a thread per connection over one ``MongoClient`` (pool of N);
  ``pymongo-async``: ``AsyncMongoClient`` (pool of N), a task per connection.

- ``mux-psycopg``, ``mux-mysqlclient``: one thread multiplexing every connection by hand,
  no asyncio: the C drivers' own split calls (libpq's ``send_query_prepared`` /
  ``consume_input`` / ``get_result`` through ``psycopg.pq``; mysqlclient's ``send_query`` /
  ``read_query_result``), an ``epoll`` over the connections' sockets, and each connection's
  operation a list of (send, finish) steps: no task, future or callback per operation.

The event loop is uvloop's where it imports (``--loop asyncio``: the standard one).

``--spread K`` adds, per engine, the threads baseline spread over K processes
(``threads-psycopg-x4``: N connections as 4 processes of N/4 threads, started together and
measured over the same window; CPU and operations summed over the processes, each pinned as
the single process would be): the issue's "threads spread over more processes".

Operations (a 10,000-row table ``cm36`` with sysbench's columns, uniform ids): ``read`` (a
point select by primary key), ``update`` (``k = k + 1`` by primary key), ``trx`` (BEGIN, four
point selects, the update, COMMIT; FerretDB 1.24 has no transactions: the five operations
without one). ``--pinned yes``: the client process pinned to CPU 0 with ``taskset -c 0``
(the servers are not re-pinned: the client alone is confined to one CPU; the servers, and
the other sessions on this shared 2-CPU machine, use both); with ``--pin-servers`` the
servers on CPU 0 and the client on CPU 1 (issue 36's "server pinned to one CPU, clients on
the other": the client's CPU then holds no server backend). Configurations alternate within
a round; the order reverses every round.

    python bench/concurrency_models.py --servers-env /tmp/dbswarm-bench36-servers/env \\
        --time 3 --rounds 2 --conns 16,128,512 --pinned yes,no
"""
from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import random
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

ROWS = 10_000
TABLE = "cm36"
MODELS = {"postgresql": ("threads-psycopg", "asyncpg", "psycopg-async", "psycopg-async-pipeline", "mux-psycopg"),
          "mysql": ("threads-mysqlclient", "threads-pymysql", "asyncmy", "aiomysql", "mux-mysqlclient"),
          "mongodb": ("threads-pymongo", "pymongo-async")}
BASELINE = {"postgresql": "threads-psycopg", "mysql": "threads-mysqlclient", "mongodb": "threads-pymongo"}
OPS = ("read", "update", "trx")
WARMUP = 0.5
PG_READ, PG_UPDATE = "SELECT c FROM cm36 WHERE id = $1", "UPDATE cm36 SET k = k + 1 WHERE id = $1"
MY_READ, MY_UPDATE = "SELECT c FROM cm36 WHERE id = %s", "UPDATE cm36 SET k = k + 1 WHERE id = %s"


def applies(model, op) -> bool:
    return model != "psycopg-async-pipeline" or op == "trx"


def spread_of(model) -> tuple[str, int]:
    """'threads-psycopg-x4' -> ('threads-psycopg', 4); any other model -> (model, 1)."""
    base, _, k = model.rpartition("-x")
    return (base, int(k)) if base and k.isdigit() else (model, 1)


# ---- setup (the parent) ---------------------------------------------------------------------------

def setup(env):
    pw = C.password(env)
    rows = [(i, random.randrange(ROWS), "%0120d" % i, "%060d" % i) for i in range(1, ROWS + 1)]
    import psycopg
    with psycopg.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_PG_PORT"]), user="dbswarm", password=pw,
                         dbname="dbswarm", autocommit=True) as pg:
        pg.execute(f"DROP TABLE IF EXISTS {TABLE}")
        pg.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, k int NOT NULL, c char(120), pad char(60))")
        with pg.cursor().copy(f"COPY {TABLE} FROM STDIN") as cp:
            for r in rows:
                cp.write_row(r)
    import MySQLdb
    my = MySQLdb.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm", password=pw,
                         database="dbswarm", autocommit=True)
    cur = my.cursor()
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    cur.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, k int NOT NULL, c char(120), pad char(60)) ENGINE=InnoDB")
    for i in range(0, ROWS, 1000):
        cur.executemany(f"INSERT INTO {TABLE} VALUES (%s, %s, %s, %s)", rows[i:i + 1000])
    my.close()
    import pymongo
    mc = pymongo.MongoClient(env["DBSWARM_TEST_MONGO_URL"])
    coll = mc.get_default_database()[TABLE]
    coll.drop()
    coll.insert_many([{"_id": i, "k": k, "c": c, "pad": pad} for i, k, c, pad in rows])
    mc.close()
    C.log(f"loaded {ROWS} rows into {TABLE} on PostgreSQL, MariaDB and FerretDB")


# ---- the child: one configuration -----------------------------------------------------------------

class Window:
    """Counts per worker, and the measured window: CPU and operations between its marks."""

    def __init__(self, n):
        self.counts = [0] * n
        self.errors = [0] * n
        self.stop = False

    def mark(self):
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return time.perf_counter(), ru.ru_utime + ru.ru_stime, sum(self.counts)

    def measure(self, go: threading.Event, seconds: float, start_at: float = 0.0):
        """Start the workers (``go``) at ``start_at`` if given (processes spread: all start
        then), let them warm up, mark the window of ``seconds``, stop them: (late, m0, m1)."""
        late = time.time() - start_at if start_at else 0.0
        if late < 0:
            time.sleep(-late)
        go.set()
        time.sleep(WARMUP)
        m0 = self.mark()
        time.sleep(seconds)
        m1 = self.mark()
        self.stop = True
        return late, m0, m1

    def result(self, m0, m1) -> dict:
        wall, cpu, ops = m1[0] - m0[0], m1[1] - m0[1], m1[2] - m0[2]
        return {"ops": ops, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "errors": sum(self.errors),
                "ops_per_s": round(ops / wall) if wall else None,
                "cpu_us_per_op": round(cpu / ops * 1e6, 1) if ops else None}


def _operations(read, update, send) -> dict:
    """A driver's three measured operations: a point read, a one-field update, and the
    sysbench-like transaction of four reads and an update (in BEGIN / COMMIT sent by ``send``;
    None: the engine's operations, not wrapped)."""
    def trx(conn, rnd):
        if send is not None:
            send(conn, "BEGIN")
        for _ in range(4):
            read(conn, rnd)
        update(conn, rnd)
        if send is not None:
            send(conn, "COMMIT")
    return {"read": read, "update": update, "trx": trx}


def _pg_connector(env, pw):
    """connect() -> a libpq connection (psycopg.pq) with the read and the update prepared as r and u."""
    from psycopg import pq
    dsn = (f"host=127.0.0.1 port={env['DBSWARM_TEST_PG_PORT']} user=dbswarm dbname=dbswarm "
           f"password={pw}").encode()

    def connect():
        pg = pq.PGconn.connect(dsn)
        if pg.status != pq.ConnStatus.OK:
            raise RuntimeError(pg.error_message.decode())
        for name, sql in ((b"r", PG_READ), (b"u", PG_UPDATE)):
            pg.prepare(name, sql.encode())
        return pg
    return connect


def _mysqlclient_connector(env, pw):
    """connect() -> a mysqlclient ``_mysql`` connection."""
    from MySQLdb import _mysql

    def connect():
        return _mysql.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm",
                              password=pw, database="dbswarm")
    return connect


def _threads_psycopg(env, pw, coll):
    from psycopg import pq
    connect = _pg_connector(env, pw)
    ok_r, ok_c = pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK

    def read(pg, rnd):
        if pg.exec_prepared(b"r", [b"%d" % rnd.randint(1, ROWS)]).status != ok_r:
            raise RuntimeError(pg.error_message.decode())

    def update(pg, rnd):
        if pg.exec_prepared(b"u", [b"%d" % rnd.randint(1, ROWS)]).status != ok_c:
            raise RuntimeError(pg.error_message.decode())

    return connect, _operations(read, update, lambda pg, sql: pg.exec_(sql.encode()))


def _threads_mysqlclient(env, pw, coll):
    connect = _mysqlclient_connector(env, pw)
    rb, ub = MY_READ.replace("%s", "%d").encode(), MY_UPDATE.replace("%s", "%d").encode()

    def read(db, rnd):
        db.query(rb % rnd.randint(1, ROWS))
        db.store_result().fetch_row(0)

    def update(db, rnd):
        db.query(ub % rnd.randint(1, ROWS))
        db.affected_rows()

    return connect, _operations(read, update, lambda db, sql: db.query(sql.encode()))


def _threads_pymysql(env, pw, coll):
    import pymysql

    def connect():
        return pymysql.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm",
                               password=pw, database="dbswarm", autocommit=True).cursor()

    def read(cur, rnd):
        cur.execute(MY_READ, (rnd.randint(1, ROWS),))
        cur.fetchall()

    def update(cur, rnd):
        cur.execute(MY_UPDATE, (rnd.randint(1, ROWS),))

    return connect, _operations(read, update, lambda cur, sql: cur.execute(sql))


def _threads_pymongo(env, pw, coll):
    def connect():
        return coll

    def read(c, rnd):
        c.find_one({"_id": rnd.randint(1, ROWS)})

    def update(c, rnd):
        c.update_one({"_id": rnd.randint(1, ROWS)}, {"$inc": {"k": 1}})

    return connect, _operations(read, update, None)


THREAD_MODELS = {"threads-psycopg": _threads_psycopg, "threads-mysqlclient": _threads_mysqlclient, "threads-pymysql": _threads_pymysql, "threads-pymongo": _threads_pymongo}


def thread_ops(model, env, pw, coll=None):
    """(connect() -> per-connection state, {op: fn(state, rnd)})."""
    return THREAD_MODELS[model](env, pw, coll)


def run_threads(model, op, n, seconds, env, pw, start_at=0.0) -> dict:
    client = coll = None
    if model == "threads-pymongo":
        import pymongo
        client = pymongo.MongoClient(env["DBSWARM_TEST_MONGO_URL"], maxPoolSize=n, minPoolSize=n)
        coll = client.get_default_database()[TABLE]
    connect, ops = thread_ops(model, env, pw, coll)
    fn, w = ops[op], Window(n)
    ready, go = threading.Barrier(n + 1), threading.Event()

    def worker(i):
        rnd = random.Random(i)
        state = connect()
        if model == "threads-pymongo":
            fn(state, rnd)  # a pooled connection of its own before the window
        ready.wait()
        go.wait()
        counts, errors = w.counts, w.errors
        while not w.stop:
            try:
                fn(state, rnd)
                counts[i] += 1
            except Exception:
                errors[i] += 1
    ts = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    ready.wait(timeout=300)
    late, m0, m1 = w.measure(go, seconds, start_at)
    for t in ts:
        t.join(timeout=60)
    if client is not None:
        client.close()
    return {**w.result(m0, m1), **({"late_s": round(max(0.0, late), 3)} if start_at else {})}


async def _asyncpg(model, env, pw, n):
    import asyncpg

    async def connect():
        return await asyncpg.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_PG_PORT"]), user="dbswarm",
                                     password=pw, database="dbswarm")

    async def read(c, rnd):
        await c.fetch(PG_READ, rnd.randint(1, ROWS))

    async def update(c, rnd):
        await c.execute(PG_UPDATE, rnd.randint(1, ROWS))

    async def trx(c, rnd):
        async with c.transaction():
            for _ in range(4):
                await read(c, rnd)
            await update(c, rnd)

    async def close(c):
        await c.close()
    return connect, {"read": read, "update": update, "trx": trx}, close


async def _psycopg_async(model, env, pw, n):
    import psycopg
    r, u = PG_READ.replace("$1", "%s"), PG_UPDATE.replace("$1", "%s")

    async def connect():
        return await psycopg.AsyncConnection.connect(
            host="127.0.0.1", port=int(env["DBSWARM_TEST_PG_PORT"]), user="dbswarm", password=pw,
            dbname="dbswarm", autocommit=True)

    async def read(c, rnd):
        cur = await c.execute(r, (rnd.randint(1, ROWS),), prepare=True)
        await cur.fetchall()

    async def update(c, rnd):
        await c.execute(u, (rnd.randint(1, ROWS),), prepare=True)

    async def trx(c, rnd):
        if model == "psycopg-async-pipeline":
            async with c.pipeline():
                await c.execute("BEGIN")
                curs = [await c.execute(r, (rnd.randint(1, ROWS),), prepare=True) for _ in range(4)]
                await c.execute(u, (rnd.randint(1, ROWS),), prepare=True)
                await c.execute("COMMIT")
            for cur in curs:
                await cur.fetchall()
            return
        async with c.transaction():
            for _ in range(4):
                await read(c, rnd)
            await update(c, rnd)

    async def close(c):
        await c.close()
    return connect, {"read": read, "update": update, "trx": trx}, close


async def _asyncmy(model, env, pw, n):
    mod = __import__(model)

    async def connect():
        conn = await mod.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm",
                                 password=pw, db="dbswarm", autocommit=True)
        cur = conn.cursor()
        if asyncio.iscoroutine(cur) or isinstance(cur, asyncio.Future):  # aiomysql: a coroutine
            cur = await cur
        return conn, cur

    async def read(c, rnd):
        cur = c[1]
        await cur.execute(MY_READ, (rnd.randint(1, ROWS),))
        await cur.fetchall()

    async def update(c, rnd):
        await c[1].execute(MY_UPDATE, (rnd.randint(1, ROWS),))

    async def trx(c, rnd):
        await c[1].execute("BEGIN")
        for _ in range(4):
            await read(c, rnd)
        await update(c, rnd)
        await c[1].execute("COMMIT")

    async def close(c):
        c[0].close()
    return connect, {"read": read, "update": update, "trx": trx}, close


async def _pymongo_async(model, env, pw, n):
    from pymongo import AsyncMongoClient
    client = AsyncMongoClient(env["DBSWARM_TEST_MONGO_URL"], maxPoolSize=n, minPoolSize=n)
    coll = client.get_default_database()[TABLE]

    async def connect():
        await coll.find_one({"_id": 1})
        return coll

    async def read(c, rnd):
        await c.find_one({"_id": rnd.randint(1, ROWS)})

    async def update(c, rnd):
        await c.update_one({"_id": rnd.randint(1, ROWS)}, {"$inc": {"k": 1}})

    async def trx(c, rnd):
        for _ in range(4):
            await read(c, rnd)
        await update(c, rnd)
    closed = []

    async def close(c):
        if not closed:
            closed.append(1)
            await client.close()
    return connect, {"read": read, "update": update, "trx": trx}, close


ASYNC_MODELS = {"asyncpg": _asyncpg, "psycopg-async": _psycopg_async, "psycopg-async-pipeline": _psycopg_async, "asyncmy": _asyncmy, "aiomysql": _asyncmy, "pymongo-async": _pymongo_async}


# ---- one thread multiplexing every connection: the C drivers' split calls over epoll ------------

def _mux_psycopg(env, pw):
    from psycopg import pq
    connect = _pg_connector(env, pw)
    bad = (pq.ExecStatus.FATAL_ERROR, pq.ExecStatus.BAD_RESPONSE)

    def finish(pg) -> bool:
        """The socket is readable: True once the statement's results are all in (libpq's
        get_result returned None), False while more of them is to come."""
        pg.consume_input()
        while not pg.is_busy():
            res = pg.get_result()
            if res is None:
                return True
            if res.status in bad:
                raise RuntimeError(pg.error_message.decode())
        return False

    def read(pg, rnd):
        pg.send_query_prepared(b"r", [b"%d" % rnd.randint(1, ROWS)])

    def update(pg, rnd):
        pg.send_query_prepared(b"u", [b"%d" % rnd.randint(1, ROWS)])

    def sender(sql):
        return lambda pg, rnd: pg.send_query(sql)
    steps = {"read": [(read, finish)], "update": [(update, finish)],
             "trx": [(sender(b"BEGIN"), finish), *[(read, finish)] * 4, (update, finish), (sender(b"COMMIT"), finish)]}
    return connect, steps, lambda pg: pg.socket, lambda pg: pg.finish()


def _mux_mysqlclient(env, pw):
    connect = _mysqlclient_connector(env, pw)
    rb, ub = MY_READ.replace("%s", "%d").encode(), MY_UPDATE.replace("%s", "%d").encode()

    def read(db, rnd):
        db.send_query(rb % rnd.randint(1, ROWS))

    def update(db, rnd):
        db.send_query(ub % rnd.randint(1, ROWS))

    def finish_rows(db) -> bool:  # readable: the (small) answer is in; read_query_result reads it
        db.read_query_result()
        db.store_result().fetch_row(0)
        return True

    def finish_count(db) -> bool:
        db.read_query_result()
        db.affected_rows()
        return True

    def sender(sql):
        return lambda db, rnd: db.send_query(sql)
    steps = {"read": [(read, finish_rows)], "update": [(update, finish_count)],
             "trx": [(sender(b"BEGIN"), finish_count), *[(read, finish_rows)] * 4, (update, finish_count),
                     (sender(b"COMMIT"), finish_count)]}
    return connect, steps, lambda db: db.fileno(), lambda db: db.close()


MUX_MODELS = {"mux-psycopg": _mux_psycopg, "mux-mysqlclient": _mux_mysqlclient}


def run_mux(model, op, n, seconds, env, pw, start_at=0.0) -> dict:
    """N connections in one thread: each connection's operation a list of (send, finish) steps;
    the thread sends a step, waits in epoll for any connection's answer, finishes that step and
    sends the connection's next one (the next operation's first after its last)."""
    import select
    connect, all_steps, fileno, close = MUX_MODELS[model](env, pw)
    steps, w = all_steps[op], Window(n)
    states = [connect() for _ in range(n)]
    rnds = [random.Random(i) for i in range(n)]
    go = threading.Event()

    def loop():
        ep, index, pos, counts, errors = select.epoll(), {}, [0] * n, w.counts, w.errors
        for i, s in enumerate(states):
            index[fileno(s)] = i
            ep.register(fileno(s), select.EPOLLIN)
        go.wait()
        for i, s in enumerate(states):
            steps[0][0](s, rnds[i])
        last, poll = len(steps) - 1, ep.poll
        while not w.stop:
            for fd, _ in poll(0.1):
                i = index[fd]
                k = pos[i]
                try:
                    if not steps[k][1](states[i]):
                        continue
                    if k == last:
                        counts[i] += 1
                        k = 0
                    else:
                        k += 1
                except Exception:
                    errors[i] += 1
                    k = 0
                pos[i] = k
                steps[k][0](states[i], rnds[i])
    t = threading.Thread(target=loop, daemon=True)
    t.start()
    late, m0, m1 = w.measure(go, seconds, start_at)
    t.join(timeout=60)
    for s in states:  # a transaction cut short by the stop rolls back now, not when collected
        close(s)
    return {**w.result(m0, m1), **({"late_s": round(max(0.0, late), 3)} if start_at else {})}


async def async_ops(model, env, pw, n):
    """(connect() coroutine -> state, {op: async fn(state, rnd)}, close(state) coroutine)."""
    return await ASYNC_MODELS[model](model, env, pw, n)


async def run_async(model, op, n, seconds, env, pw) -> dict:
    connect, ops, close = await async_ops(model, env, pw, n)
    sem = asyncio.Semaphore(32)

    async def one():
        async with sem:
            return await connect()
    states = await asyncio.gather(*[one() for _ in range(n)])
    fn, w = ops[op], Window(n)

    async def worker(i):
        rnd, state, counts, errors = random.Random(i), states[i], w.counts, w.errors
        while not w.stop:
            try:
                await fn(state, rnd)
                counts[i] += 1
            except Exception:
                errors[i] += 1
                await asyncio.sleep(0.01)  # a failing call may not have yielded: let the loop run
    tasks = [asyncio.ensure_future(worker(i)) for i in range(n)]
    await asyncio.sleep(WARMUP)
    m0 = w.mark()
    await asyncio.sleep(seconds)
    m1 = w.mark()
    w.stop = True
    await asyncio.gather(*tasks)
    for s in states:
        await close(s)
    return w.result(m0, m1)


def child(a):
    env = C.read_env(a.servers_env)
    pw = C.password(env)
    if a.child.startswith("threads-"):
        out = run_threads(a.child, a.op, a.n, a.time, env, pw, a.start_at)
    elif a.child.startswith("mux-"):
        out = run_mux(a.child, a.op, a.n, a.time, env, pw, a.start_at)
    else:
        coro = run_async(a.child, a.op, a.n, a.time, env, pw)
        if a.loop == "uvloop":
            import uvloop
            out = uvloop.run(coro)
        else:
            out = asyncio.run(coro)
    print(json.dumps(out))


# ---- the parent ---------------------------------------------------------------------------------

def loop_name(a) -> str:
    if a.loop == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return "asyncio"
    return a.loop


def one_run(a, engine, model, op, n, pinned) -> dict:
    base, k = spread_of(model)
    # --pin-servers: the client on CLIENT_CPUS, the servers on SERVER_CPUS (the shape);
    # else the client alone on CPU 0, the servers free
    prefix = (C.client_prefix(True) if a.pin_servers else ["taskset", "-c", "0"]) if pinned else []
    cmd = [*prefix, C.PY, __file__, "--child", base, "--op", op,
           "--n", str(n // k), "--time", str(a.time), "--servers-env", a.servers_env, "--loop", loop_name(a)]
    if k > 1:  # every process connects, then all start at once: one window
        cmd += ["--start-at", str(time.time() + 5 + n / 50)]
    if a.pin_servers:
        C.pin_servers(a.env, C.SERVER_CPUS if pinned else None, (engine,))
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(k)]
    parts = []
    try:
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=a.time * 10 + 30 + n / 10)
            if proc.returncode:
                raise RuntimeError(stderr.strip()[-1500:])
            parts.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:  # one process failed or hung: the others must not run on into the next configuration
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if k == 1:
        r = parts[0]
    else:
        ops, cpu = sum(p["ops"] for p in parts), sum(p["cpu_s"] for p in parts)
        r = {"ops": ops, "wall_s": max(p["wall_s"] for p in parts), "cpu_s": round(cpu, 3),
             "errors": sum(p["errors"] for p in parts), "ops_per_s": sum(p["ops_per_s"] or 0 for p in parts),
             "cpu_us_per_op": round(cpu / ops * 1e6, 1) if ops else None,
             "processes": k, "late_s": max(p.get("late_s", 0.0) for p in parts)}
        if r["late_s"] > WARMUP:  # a process connected well after the common start: windows apart
            raise RuntimeError(f"a process of {k} started {r['late_s']} s after the others")
    if not r["ops"]:
        raise RuntimeError(f"no operation completed ({r['errors']} errors)")
    return {"engine": engine, "model": model, "op": op, "conns": n, "pinned": pinned, **r, "loadavg": C.loadavg()}


def summarise(rows):
    out = []
    keys = sorted({(r["engine"], r["op"], r["conns"], r["pinned"]) for r in rows if "failed" not in r},
                  key=lambda k: (list(MODELS).index(k[0]), OPS.index(k[1]), k[2], not k[3]))
    for e, op, n, pinned in keys:
        def col(model, k, e=e, op=op, n=n, pinned=pinned):
            return [r.get(k) for r in rows if "failed" not in r and r["model"] == model and r["engine"] == e
                    and r["op"] == op and r["conns"] == n and r["pinned"] == pinned]
        base = BASELINE[e]
        for model in MODELS[e]:
            if not applies(model, op) or not col(model, "ops"):
                continue
            # per-round ratios need the same rounds on both sides
            out.append({"engine": e, "op": op, "conns": n, "pinned": pinned, "model": model,
                        "cpu_us_per_op": C.med(col(model, "cpu_us_per_op")),
                        "cpu_range": [min(col(model, "cpu_us_per_op")), max(col(model, "cpu_us_per_op"))],
                        "ops_per_s": C.med(col(model, "ops_per_s")),
                        "cpu_vs_threads": C.ratios(col(model, "cpu_us_per_op"), col(base, "cpu_us_per_op")),
                        "rate_vs_threads": C.ratios(col(model, "ops_per_s"), col(base, "ops_per_s")),
                        "errors": sum(col(model, "errors"))})
    return out


def markdown(data) -> str:
    a = data["args"]
    L = ["## Concurrency models: client CPU per operation at 16-512 connections (issue 36)", "",
         C.header(data), "",
         f"One client process, N connections, {a['time']} s window per run (after connecting and a 0.5 s "
         f"warm-up), {a['rounds']} rounds, configurations alternating and the order reversed every round. "
         f"Event loop: {loop_name(argparse.Namespace(**a))}. CPU: the client process's user + system "
         "time over the window, per operation (trx: per transaction). Ratios: against the engine's threads "
         "baseline in the same round, median (min–max); < 1 is cheaper / slower. Pinned: the client "
         "alone on CPU 0 (`taskset -c 0`), servers free.", "",
         "| engine | op | N | client pinned | model | CPU µs/op (range) | CPU vs threads | ops/s | "
         "ops/s vs threads | errors |", "| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for s in data["summary"]:
        L.append(f"| {C.ENGINE_LABELS[s['engine']]} | {s['op']} | {s['conns']} | {'yes' if s['pinned'] else 'no'} | "
                 f"{s['model']} | {s['cpu_us_per_op']:.0f} ({s['cpu_range'][0]:.0f}–{s['cpu_range'][1]:.0f}) | "
                 f"{C.fmt_ratio(s['cpu_vs_threads'])} | {s['ops_per_s']:.0f} | {C.fmt_ratio(s['rate_vs_threads'])} | "
                 f"{s['errors']} |")
    failed = [r for r in data["rows"] if "failed" in r]
    if failed:
        L += ["", "Failed runs: " + "; ".join(f"{r['engine']} {r['model']} {r['op']} N={r['conns']}: {r['failed']}"
                                             for r in failed)]
    return "\n".join(L)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers-env", required=True, help="env file of a server set (scripts/test-servers)")
    p.add_argument("--engines", default="postgresql,mysql,mongodb")
    p.add_argument("--models", default="", help="only these models (default: every model of each engine)")
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--conns", default="16,128,512")
    p.add_argument("--pinned", default="yes,no")
    p.add_argument("--time", type=float, default=3)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--loop", default="uvloop", choices=("uvloop", "asyncio"))
    p.add_argument("--no-setup", action="store_true")
    p.add_argument("--later-models", default="",
                   help="rounds after the first: only these models (the first round's clear losers left out)")
    p.add_argument("--later-conns", default="", help="rounds after the first: only these connection counts")
    p.add_argument("--later-pinned", default="", help="rounds after the first: only these pinnings (yes, no)")
    p.add_argument("--skip", default="", help="configurations left out, ENGINE/OP/CONNS patterns (fnmatch), e.g. "
                   "'mongodb/update/512'")
    p.add_argument("--reuse", default="", help="a log of an interrupted run: its first-round rows are kept")
    p.add_argument("--child", default="")
    p.add_argument("--op", default="read")
    p.add_argument("--n", type=int, default=16)
    p.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--spread", default="", help="also the threads baseline spread over K processes, e.g. 4 or 2,4 "
                   "(models such as threads-psycopg-x4)")
    p.add_argument("--pin-servers", action="store_true", help="pinned runs: the servers on CPU 0 and the client on "
                   "CPU 1 (default: the client alone on CPU 0, the servers on both)")
    a = p.parse_args()
    if a.child:
        return child(a)
    for k in C.csv_list(a.spread, int):
        for e in MODELS:
            MODELS[e] += (f"{BASELINE[e]}-x{k}",)
    env = a.env = C.read_env(a.servers_env)
    env.setdefault("_DIR", env.get("DBSWARM_TEST_DIR") or str(Path(a.servers_env).parent))  # the pid files
    if not a.no_setup:
        setup(env)
    data = C.base_record("concurrency_models", a)
    only = set(C.csv_list(a.models))
    configs = [(e, m, op, n, pin == "yes") for e in C.csv_list(a.engines) for op in C.csv_list(a.ops)
               for n in C.csv_list(a.conns, int) for pin in C.csv_list(a.pinned)
               for m in MODELS[e] if applies(m, op) and (not only or m in only)]
    rows = []
    reused = {}
    if a.reuse:  # the log's result lines: '<time> {json}'
        for line in Path(a.reuse).read_text(errors="replace").splitlines():
            if '{"engine"' in line and '"ops"' in line:
                row = json.loads(line[line.index("{"):])
                reused[row["engine"], row["model"], row["op"], row["conns"], row["pinned"]] = row
    later = set(C.csv_list(a.later_models))
    skip = C.csv_list(a.skip)
    later_n, later_pin = set(C.csv_list(a.later_conns, int)), set(C.csv_list(a.later_pinned))
    for r in range(a.rounds):
        for cfg in (configs if r % 2 == 0 else configs[::-1]):
            e, m, op, n, pinned = cfg
            if r > 0 and ((later and m not in later) or (later_n and n not in later_n)
                          or (later_pin and ("yes" if pinned else "no") not in later_pin)):
                continue
            if any(fnmatch.fnmatch(f"{e}/{op}/{n}", pat) for pat in skip):
                continue
            if r == 0 and cfg in reused:
                rows.append(dict(reused[cfg], reused=True))
                continue
            rows.append(C.attempt(lambda cfg=cfg: one_run(a, *cfg), engine=e, model=m, op=op, conns=n,
                                  pinned=pinned))
            C.log(json.dumps({k: v for k, v in rows[-1].items() if k != "loadavg"}))
    if a.pin_servers:
        C.pin_servers(env, None, C.csv_list(a.engines))
    data["rows"] = rows
    data["summary"] = summarise(rows)
    C.finish("concurrency_models", data, markdown, write_md=False)
    print(markdown(data))


if __name__ == "__main__":
    main()
