"""Where a YCSB read's client CPU goes, layer by layer: one thread, in-process, on a real server.

Five ways to do the same read (``SELECT * FROM usertable WHERE ycsb_key = …``, the row read
from the server, only its presence counted), each adding one of dbswarm's layers to the one
before, timed in interleaved rounds by the thread's own CPU clock (the server's CPU is not in
it):

1. ``driver``   the call the binding ends in, on a connection of its own (MariaDB: ``_mysql``
                ``query`` + ``store_result().num_rows()`` on a pre-formatted statement;
                PostgreSQL: ``PGconn.exec_prepared``): what bench/bare_client.py does per read;
2. ``session``  the binding's session call, ``binding.fetchcount(sql, (key,))`` (parameter
                formatting or conversion, the statement's cache);
3. ``binding``  ``binding.read(table, key, None, rows=False)`` (the statement built per table and
                field list, looked up in the binding's cache);
4. ``measured`` ``Measured.call("READ", binding.read, …)``: the one timing wrapper (two clock
                reads, the per-second latency dict, error classification on failure);
5. ``client``   the YCSB family's operations through the engine's operation loop, as the worker
                runs them (``OperationLoop.run``, one operation per call here): the zipfian
                key drawn from the thread's random stream and looked up, ``Binding.reader``'s
                one driver call (not 2-4), timed into the recorder's lane. So this row is not 4
                plus a layer any more: it is compared with 1 (``driver ÷ client``).

The servers run on CPU 0 and this process on CPU 1 (``--no-pin``: both anywhere): unpinned,
a client thread and its server backend sometimes share a core and sometimes not, and the same
layer's rounds then differ by half (seen: 16 against 25 µs for the driver call).

Keys of 1–4 are drawn uniformly from the loaded ones with an uncounted ``random.Random``; 5
uses the workload's own zipfian chooser. The differences between rows are what each layer
costs between two round trips (cold caches after every wait: about three times what the same
code costs in a tight loop; see BENCHMARKS.md).

    python bench/client_layers.py --rounds 9 --ops 2000 [--engines mysql,postgresql] [--no-load]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from bench import common as C  # noqa: E402

LAYERS = ("driver", "session", "binding", "measured", "client")
TABLE = "usertable"


def _driver_read(engine: str, env: dict, keys: list[str]):
    """The driver-level read of bare_client.py on its own connection: a function of a key index."""
    from urllib.parse import urlparse
    u = urlparse(C.target(engine, env)["url"])
    pw = C.password(env)
    if engine == "mysql":
        from MySQLdb import _mysql
        conn = _mysql.connect(host=u.hostname, port=u.port, user=u.username, password=pw,
                              database=u.path.lstrip("/"))
        query, store = conn.query, conn.store_result
        stmts = [f"SELECT * FROM {TABLE} WHERE ycsb_key = '{k}'".encode() for k in keys]  # keys: letters, digits

        def read(i):
            query(stmts[i])
            return store().num_rows()
        return read, conn.close
    from psycopg import pq
    pg = pq.PGconn.connect(f"host={u.hostname} port={u.port} user={u.username} dbname={u.path.lstrip('/')} "
                           f"password={pw}".encode())
    if pg.status != pq.ConnStatus.OK:
        raise SystemExit(f"client_layers: PostgreSQL connection failed: {pg.error_message.decode()}")
    pg.prepare(b"r", f"SELECT * FROM {TABLE} WHERE ycsb_key = $1".encode())
    bkeys = [[k.encode()] for k in keys]
    exec_prepared = pg.exec_prepared

    def read(i):
        return exec_prepared(b"r", bkeys[i]).ntuples
    return read, pg.finish


def measure(engine: str, env: dict, a) -> dict:
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.engine.calls import Measured
    from dbswarm.engine.loop import OperationLoop
    from dbswarm.families import base as families
    from dbswarm.families.base import ThreadContext
    from dbswarm.families.stream import RandomStream
    from dbswarm.families.ycsb import key_name
    from dbswarm.measure.recorder import Recorder

    t = C.target(engine, env)
    b = bindings.get(engine)(Connection(engine=engine, url=t["url"], password=C.password(env),
                                        options=t.get("options", {}), display=engine))
    b.connect()
    rec = Recorder(1)
    m = Measured(b, rec)
    fam = families.get("ycsb")
    w = fam.workload({"preset": "c", "recordcount": a.recordcount, "operationcount": 0, "maxexecutiontime": 60,
                                 "threads": 1})
    client = fam.run_client(w, ThreadContext(m=m, rng=RandomStream(a.seed), thread=0, threads=1))
    run_one = OperationLoop(client, m).run
    keys = [key_name(i, False, 0) for i in range(a.recordcount)]
    sql = b.prepare(f"SELECT * FROM {TABLE} WHERE ycsb_key = {b.placeholder}")
    driver_read, close_driver = _driver_read(engine, env, keys)
    pick = random.Random(a.seed).random
    n = a.recordcount
    read, fetchcount, call = b.read, b.fetchcount, m.call
    layers = {
        "driver": lambda: driver_read(int(pick() * n)),
        "session": lambda: fetchcount(sql, (keys[int(pick() * n)],)),
        "binding": lambda: read(TABLE, keys[int(pick() * n)], None, False),
        "measured": lambda: call("READ", read, TABLE, keys[int(pick() * n)], None, False),
        "client": lambda: run_one(0, 1),
    }
    for f in layers.values():  # warm: statements prepared, caches filled; every read must find its row
        for _ in range(200):
            f()
    if driver_read(0) != 1 or b.read(TABLE, keys[-1], None, False) != 1:
        raise SystemExit(f"client_layers: {engine}: {TABLE} lacks the {n} records (load them: drop --no-load)")
    cpu = {k: [] for k in layers}
    for r in range(a.rounds):
        for k, f in (layers.items() if r % 2 == 0 else reversed(list(layers.items()))):
            c0 = time.thread_time()
            for _ in range(a.ops):
                f()
            cpu[k].append((time.thread_time() - c0) / a.ops * 1e6)
    b.close()
    close_driver()
    rec.flush()
    errors = sum(rec.m.errors.values())
    med = {k: round(statistics.median(v), 2) for k, v in cpu.items()}
    # what each layer adds to the one before; the client step (the hot path) against the driver call
    steps = {k: round(med[k] - med[LAYERS[i - 1] if k != "client" else "driver"], 2)
             for i, k in enumerate(LAYERS) if i}
    C.log(f"{engine}: " + ", ".join(f"{k} {v} µs" for k, v in med.items()) + f"; errors {errors}")
    return {"engine": engine, "cpu_us_per_op": med, "added_by_layer_us": steps,
            "client_vs_driver": round(med["driver"] / med["client"], 3), "rounds": cpu, "errors": errors}


def markdown(data: dict) -> str:
    a = data["args"]
    L = [C.header(data), "",
         f"One thread, in-process, {a['rounds']} interleaved rounds × {a['ops']:,} reads per layer, "
         f"{a['recordcount']:,} records, " + ("CPUs shared" if a.get("no_pin") else "servers on CPU 0, the client on CPU 1")
         + "; the thread's own CPU per read (medians). Rows 2–4 each add one layer to the row "
         "above; `client` is the YCSB step as the worker runs it (its hot path: the key, the binding's "
         "reader, the recorder's lane), compared with `driver` (bench/client_layers.py's docstring).", "",
         "| layer | " + " | ".join(C.ENGINE_LABELS[r["engine"]] + " µs/read (added)" for r in data["engines"]) + " |",
         "| --- |" + " --- |" * len(data["engines"])]
    for k in LAYERS:
        cells = []
        for r in data["engines"]:
            add = r["added_by_layer_us"].get(k)
            cells.append(f"{r['cpu_us_per_op'][k]}" + (f" (+{add}{' on driver' if k == 'client' else ''})"
                                                        if add is not None else ""))
        L.append(f"| {k} | " + " | ".join(cells) + " |")
    L += ["", "driver ÷ client (the share of a bare driver loop's speed one client thread keeps when the client "
          "is the bottleneck): " + ", ".join(f"{C.ENGINE_LABELS[r['engine']]} {r['client_vs_driver']}"
                                             for r in data["engines"]) + "."]
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--ops", type=int, default=2000)
    p.add_argument("--recordcount", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--no-load", action="store_true", help="usertable already holds --recordcount records")
    p.add_argument("--no-pin", action="store_true", help="servers and this process on any CPU")
    p.add_argument("--no-md", action="store_true")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    a = p.parse_args(argv)
    env = C.start_servers(a.servers_dir)
    data = C.base_record("client_layers", a)
    data["engines"] = []
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            C.load_with_dbswarm(env, engine, {"preset": "c", "recordcount": a.recordcount})
        with C.Pinning(env, not a.no_pin, (engine,)):  # before connecting: new backends inherit it
            if not a.no_pin:
                os.sched_setaffinity(0, {int(C.CLIENT_CPUS)})
            try:
                data["engines"].append(measure(engine, env, a))
            finally:
                os.sched_setaffinity(0, set(range(C.NCPU)))
    path = C.finish("client_layers", data, markdown, write_md=not a.no_md)
    C.log(f"wrote {path}")


if __name__ == "__main__":
    main()
