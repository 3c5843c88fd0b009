"""Driver paths, measured side by side: what the hot-path changes of the driver choice
are worth, with the old path put back for the comparison (the library is not touched).

Each pair is measured in-process (the worker's thread body, ShardPhase._thread_main, in
the main thread; see generator_cost.py), interleaved rounds (before, after, before, ...),
CPU µs per operation (process CPU / operations; sysbench: per transaction):

- mysql-driver: the MariaDB binding with ``target.options.driver: pymysql`` (pure Python,
  the portable default) against ``mysqlclient`` (MySQLdb on libmariadb in C, statements
  through ``_mysql``: bindings/mysqlclient.py). The binding's own option, no monkeypatch.
  Needs ``pip install mysqlclient`` (scripts/install --test installs it); reported as not
  measured otherwise.
- pg-libpq: the PostgreSQL binding's prepared statements through a psycopg cursor
  (``cursor.execute(sql, params, prepare=True)``, the binding's path until 2026-11-23,
  put back by a monkeypatch) against the binding as it is (``PGconn.exec_prepared`` and a
  ``Transformer`` per statement: bindings/postgresql.py).

    python bench/hot_path_patches.py --time 5 --rounds 3
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench.generator_cost import YCSB_RECORDS, in_process  # noqa: E402


def mysqlclient_available():
    try:
        import MySQLdb  # noqa: F401
        return True
    except ImportError:
        return False


@contextlib.contextmanager
def mysql_driver(target: dict, driver: str):
    """Inside the block, ``target`` (the dict the in-process runs build their campaign
    from) has ``options.driver: DRIVER``."""
    options = target.setdefault("options", {})
    saved = options.get("driver")
    options["driver"] = driver
    try:
        yield
    finally:
        options["driver"] = saved


@contextlib.contextmanager
def psycopg_cursor_path():
    """The PostgreSQL binding's hot statements through a psycopg cursor with
    ``prepare=True`` (its previous code), instead of ``psycopg.pq``."""
    from dbswarm.bindings import postgresql as pgb
    cls = pgb.PostgresBinding
    saved = cls._execute, cls._fetchall, cls._fetchone, cls.begin, cls.commit

    def run(self, sql, params):
        cur = self.cur
        if params:
            cur.execute(sql, params, prepare=sql in self._hot)
        else:
            cur.execute(sql)
        return cur

    cls._execute = lambda self, sql, params=(): run(self, sql, params).rowcount
    cls._fetchall = lambda self, sql, params=(): run(self, sql, params).fetchall()
    cls._fetchone = lambda self, sql, params=(): run(self, sql, params).fetchone()
    cls.begin = lambda self, writes=True: self.cur.execute("BEGIN")
    cls.commit = lambda self: self.cur.execute("COMMIT")
    try:
        yield
    finally:
        cls._execute, cls._fetchall, cls._fetchone, cls.begin, cls.commit = saved


def measure_pair(label, run, before, after, rounds) -> dict:
    """``before`` / ``after``: context-manager factories; rounds interleaved."""
    b_runs, a_runs = [], []
    for _ in range(rounds):
        with before():
            b_runs.append(run())
        with after():
            a_runs.append(run())
    b = statistics.median(r["cpu_us_per_op"] for r in b_runs)
    p = statistics.median(r["cpu_us_per_op"] for r in a_runs)
    out = {"label": label, "cpu_us_per_op_before": round(b, 2), "cpu_us_per_op_after": round(p, 2),
           "ratio_after_before": C.ratios([r["cpu_us_per_op"] for r in a_runs], [r["cpu_us_per_op"] for r in b_runs]),
           "ops_per_s_before": statistics.median(r["ops_per_s"] for r in b_runs),
           "ops_per_s_after": statistics.median(r["ops_per_s"] for r in a_runs),
           "rounds_before": b_runs, "rounds_after": a_runs}
    C.log(f"{label}: {b:.2f} -> {p:.2f} µs/op ({C.fmt_ratio(out['ratio_after_before'])})")
    return out


def markdown(data):
    a = data["args"]
    L = ["## Driver paths, measured side by side", "", C.header(data), "",
         f"In-process loop (one client thread, main thread), {a['time']} s per measurement, {a['rounds']} interleaved "
         "rounds (before, after). CPU µs per operation (sysbench: per transaction), median; ratio = after ÷ before, "
         "median (min–max). mysql-driver: before = PyMySQL, after = mysqlclient (`options.driver`). pg-libpq: "
         "before = psycopg cursor `execute(prepare=True)`, after = the binding's `psycopg.pq` path.", "",
         "| change | workload | CPU µs/op before | after | ratio after/before | ops/s before → after |",
         "| --- | --- | ---: | ---: | --- | --- |"]
    for r in data["patches"]:
        if r.get("skipped"):
            L.append(f"| {r['patch']} | {r['label']} | — | — | not measured: {r['skipped']} | |")
            continue
        L.append(f"| {r['patch']} | {r['label']} | {r['cpu_us_per_op_before']} | {r['cpu_us_per_op_after']} "
                 f"| {C.fmt_ratio(r['ratio_after_before'])} | {r['ops_per_s_before']:,.0f} → {r['ops_per_s_after']:,.0f} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=float, default=5)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    data = C.base_record("hot_path_patches", a)
    data["patches"] = []
    env = C.start_servers(a.servers_dir)
    pw = C.password(env)
    ycsb = {"family": "ycsb", "preset": "c", "recordcount": YCSB_RECORDS, "requestdistribution": "uniform"}
    point = {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000,
             "rand_type": "uniform"}
    rw = {"family": "sysbench", "test": "oltp_read_write", "tables": 1, "table_size": 1000, "rand_type": "uniform"}
    for engine in ("postgresql", "mysql"):
        C.load_with_dbswarm(env, engine, dict(ycsb, table="usertable"))
        C.load_with_dbswarm(env, engine, point, threads=1, shards=1)
        t = C.target(engine, env)
        if engine == "postgresql":
            patch, before, after = "pg-libpq", psycopg_cursor_path, contextlib.nullcontext
        elif mysqlclient_available():
            patch = "mysql-driver"
            before, after = (lambda: mysql_driver(t, "pymysql")), (lambda: mysql_driver(t, "mysqlclient"))
        else:
            data["patches"].append({"patch": "mysql-driver", "label": "MariaDB",
                                    "skipped": "mysqlclient not installed"})
            continue
        for kind, wl in (("ycsb-c", ycsb), ("sysbench-oltp_point_select", point), ("sysbench-oltp_read_write", rw)):
            r = measure_pair(f"{C.ENGINE_LABELS[engine]} {kind}", lambda wl=wl: in_process(t, wl, a.time, pw),
                             before, after, a.rounds)
            r["patch"] = patch
            data["patches"].append(r)
    C.finish("hot_path_patches", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
