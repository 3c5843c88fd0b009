"""Measured effect of proposed hot-path changes, applied as monkeypatches in this process
(the library files are not touched; the lead applies what wins), and of the mysql
binding's driver option.

Each patch is measured in-process (the worker's thread body, ShardPhase._thread_main, in
the main thread; see generator_cost.py) with and without the patch, interleaved rounds,
CPU µs per operation (process CPU / operations):

- sysbench-random: the sysbench client's uniform numbers with ``lo + int(random() * n)``
  (one C call) instead of ``random.randint``/``randrange`` (five Python frames each):
  SysbenchUniform.next, SysbenchClient.table, SysbenchClient._digits and the INSERT's k.
  Same distribution (53-bit floats; the bias for n < 2**32 is < 2**-21).
- row-dict: SqlBinding._row_dict with the field-name list cached per row length instead
  of ten f-strings per read (YCSB reads of all fields, PostgreSQL and MariaDB).
- mysqlclient: the MariaDB binding with ``target.options.driver: mysqlclient`` (MySQLdb,
  libmariadb in C) against ``driver: pymysql`` (pure Python): no monkeypatch any more, the
  binding's own option (same SQL, same cursor calls; bindings/mysqlclient.py). Needs
  ``pip install mysqlclient`` (and libmariadb-dev to build it); reported as not
  available otherwise.

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
from bench.generator_cost import NOOP_WORKLOADS, YCSB_RECORDS, in_process  # noqa: E402


@contextlib.contextmanager
def sysbench_random_patch():
    from dbswarm.workloads import generators, sysbench
    saved = (generators.SysbenchUniform.next, sysbench.SysbenchClient.table, sysbench.SysbenchClient._digits,
             sysbench.SysbenchClient._event)

    def uniform_next(self):
        return self.lo + int(self.rng.random() * (self.hi - self.lo + 1))

    def table(self):
        return 1 + int(self.rng.random() * self.w.tables)

    def _digits(self, groups):
        o = int(self.rng.random() * (sysbench._POOL - 11 * groups))
        p = self.pool
        return "-".join([p[o + 11 * i:o + 11 * i + 11] for i in range(groups)])

    original_event = sysbench.SysbenchClient._event

    def _event(self, b, q):
        # the INSERT's k: rng.randint(1, table_size) -> 1 + int(random() * table_size)
        rng = self.rng
        real = rng.randint
        rng.randint = lambda lo, hi: lo + int(rng.random() * (hi - lo + 1))
        try:
            return original_event(self, b, q)
        finally:
            rng.randint = real
    generators.SysbenchUniform.next = uniform_next
    sysbench.SysbenchClient.table = table
    sysbench.SysbenchClient._digits = _digits
    try:
        yield
    finally:
        (generators.SysbenchUniform.next, sysbench.SysbenchClient.table, sysbench.SysbenchClient._digits,
         sysbench.SysbenchClient._event) = saved


@contextlib.contextmanager
def row_dict_patch():
    """SqlBinding._row_dict builds the list of field names ("field0" ... "field9", ten
    f-strings) on every read of all fields; cache it per row length."""
    from dbswarm.bindings import sql
    saved = sql.SqlBinding._row_dict
    names_by_len: dict = {}

    def _row_dict(self, row, fields):
        if fields is None:
            n = len(row) - 1
            names = names_by_len.get(n)
            if names is None:
                names = names_by_len[n] = tuple(f"field{i}" for i in range(n))
        else:
            names = fields
        return dict(zip(names, row[1:]))
    sql.SqlBinding._row_dict = _row_dict
    try:
        yield
    finally:
        sql.SqlBinding._row_dict = saved


def mysqlclient_available():
    try:
        import MySQLdb  # noqa: F401
        return True
    except ImportError:
        return False


@contextlib.contextmanager
def mysqlclient_patch(target: dict):
    """The real option, not a monkeypatch: inside the block, ``target`` (the dict the
    in-process runs build their campaign from) has ``options.driver: mysqlclient``;
    outside it, ``pymysql``."""
    options = target.setdefault("options", {})
    options["driver"] = "mysqlclient"
    try:
        yield
    finally:
        options["driver"] = "pymysql"


def measure_pair(label, run, patch, rounds) -> dict:
    base, patched = [], []
    for _ in range(rounds):
        base.append(run())
        with patch():
            patched.append(run())
    b = statistics.median(r["cpu_us_per_op"] for r in base)
    p = statistics.median(r["cpu_us_per_op"] for r in patched)
    out = {"label": label, "cpu_us_per_op_before": round(b, 2), "cpu_us_per_op_after": round(p, 2),
           "ratio_after_before": C.ratios([r["cpu_us_per_op"] for r in patched], [r["cpu_us_per_op"] for r in base]),
           "ops_per_s_before": statistics.median(r["ops_per_s"] for r in base),
           "ops_per_s_after": statistics.median(r["ops_per_s"] for r in patched),
           "rounds_before": base, "rounds_after": patched}
    C.log(f"{label}: {b:.2f} -> {p:.2f} µs/op ({C.fmt_ratio(out['ratio_after_before'])})")
    return out


def markdown(data):
    a = data["args"]
    L = ["## Proposed hot-path changes, measured (monkeypatched in the bench process; mysqlclient: the "
         "binding's driver option)", "", C.header(data), "",
         f"In-process loop (one client thread, main thread), {a['time']} s per measurement, {a['rounds']} interleaved "
         "rounds (without, with). CPU µs per operation (sysbench: per transaction), median; ratio = with ÷ without, "
         "median (min–max).", "",
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
    noop = {"engine": "noop"}
    for name in ("sysbench-oltp_read_write", "sysbench-oltp_point_select"):
        wl = NOOP_WORKLOADS[name]
        r = measure_pair(f"noop {name}", lambda: in_process(noop, wl, a.time), sysbench_random_patch, a.rounds)
        r["patch"] = "sysbench-random"
        data["patches"].append(r)
    env = C.start_servers(a.servers_dir)
    ycsb_pg = {"family": "ycsb", "preset": "c", "recordcount": YCSB_RECORDS, "requestdistribution": "uniform"}
    for engine in ("postgresql", "mysql"):
        t = C.target(engine, env)
        pw = C.password(env)
        C.load_with_dbswarm(env, engine, dict(ycsb_pg, table="usertable"))
        r = measure_pair(f"{C.ENGINE_LABELS[engine]} ycsb-c", lambda: in_process(t, ycsb_pg, a.time, pw),
                         row_dict_patch, a.rounds)
        r["patch"] = "row-dict"
        data["patches"].append(r)
    if mysqlclient_available():
        t = dict(C.target("mysql", env), options={"driver": "pymysql"})  # mysqlclient_patch switches it
        pw = C.password(env)
        ycsb = {"family": "ycsb", "preset": "c", "recordcount": YCSB_RECORDS, "requestdistribution": "uniform"}
        sb = {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000, "rand_type": "uniform"}
        C.load_with_dbswarm(env, "mysql", sb, threads=1, shards=1)
        rw = {"family": "sysbench", "test": "oltp_read_write", "tables": 1, "table_size": 1000, "rand_type": "uniform"}
        for label, wl in (("MariaDB ycsb-c", ycsb), ("MariaDB sysbench-oltp_point_select", sb),
                          ("MariaDB sysbench-oltp_read_write", rw)):
            r = measure_pair(label, lambda wl=wl: in_process(t, wl, a.time, pw),
                             lambda: mysqlclient_patch(t), a.rounds)
            r["patch"] = "mysqlclient"
            data["patches"].append(r)
    else:
        data["patches"].append({"patch": "mysqlclient", "label": "MariaDB", "skipped": "mysqlclient not installed"})
    C.finish("hot_path_patches", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
