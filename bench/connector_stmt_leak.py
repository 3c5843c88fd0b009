"""MySQL Connector/Python's prepared-statement API: the client memory each execution keeps.

Issue 36, item 3 asks for MariaDB's server-side prepared statements through a driver's
supported API. MySQL Connector/Python (the Lambda layer's MariaDB driver) has one in its C
extension (``_mysql_connector.MySQL.stmt_prepare`` / ``stmt_execute``, under its
``cursor(prepared=True)``). Through `dbswarm run` it saved MariaDB 8–10 % of its CPU per
sysbench transaction (docs/benchmarks.md, "MariaDB: prepared statements against text
statements"), but a run of 30–60 minutes executes millions of statements per shard: this
script measures the client's resident memory per 20,000 executions on one connection:

- ``select``: a point select's ``stmt_execute``, its row fetched, its result freed;
- ``update``: a one-row UPDATE's ``stmt_execute`` (no result set);
- ``select, re-prepared every 1,000``: the statement closed and prepared again every
  1,000 executions (does closing give the memory back?);
- ``text select``: the same point select as a text ``query`` (the control: what dbswarm runs).

    python bench/connector_stmt_leak.py --servers-dir /tmp/dbswarm-bench-servers --executions 20000
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

TABLE = b"connector_leak"


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def connect(env: dict):
    """A ``_mysql_connector.MySQL`` connection (autocommit), as the binding's ``connector`` driver makes it."""
    from dbswarm.bindings.mysql import parse_mysql_url
    from dbswarm.bindings.mysqlconnector import ConnectorDriver
    return ConnectorDriver().connect(parse_mysql_url(env["DBSWARM_TEST_MYSQL_URL"]), C.password(env), None, 10)


def drain(result) -> None:
    """A connection's or a prepared statement's result read and freed (both have the same calls)."""
    if result.have_result_set:
        while result.fetch_row() is not None:
            pass
        result.free_result()


def measure(db, mode: str, n: int) -> float:
    """MB of resident memory the process gained over ``n`` executions in ``mode``."""
    qa: list = []  # no query attributes
    sql = (b"UPDATE %b SET v = v WHERE id = ?" if mode == "update" else b"SELECT v FROM %b WHERE id = ?") % TABLE
    st = None if mode == "text select" else db.stmt_prepare(sql)
    recycle = 1000 if mode.startswith("select, re-prepared") else 0
    before = rss_mb()
    for i in range(n):
        key = i % 1000 + 1
        if st is None:
            db.query(sql.replace(b"?", b"%d" % key))
            drain(db)
            continue
        if recycle and i and i % recycle == 0:
            st.stmt_close()
            st = db.stmt_prepare(sql)
        st.stmt_execute(key, query_attrs=qa)
        drain(st)
    if st is not None:
        st.stmt_close()
    return rss_mb() - before


MODES = ("text select", "select", "update", "select, re-prepared every 1,000")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--executions", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args()
    env = C.start_servers(a.servers_dir)
    import mysql.connector
    data = C.base_record("connector_stmt_leak", a)
    data["driver"] = f"mysql-connector-python {mysql.connector.__version__} (C extension _mysql_connector)"
    db = connect(env)
    for sql in (b"DROP TABLE IF EXISTS %b" % TABLE, b"CREATE TABLE %b (id INT PRIMARY KEY, v VARCHAR(100))" % TABLE,
                b"INSERT INTO %b VALUES " % TABLE + b", ".join(b"(%d, '%b')" % (i, b"x" * 100) for i in range(1, 1001))):
        db.query(sql)
        drain(db)
    rows = {m: [] for m in MODES}
    try:
        for r in range(a.rounds):
            for m in MODES:
                mb = measure(db, m, a.executions)
                rows[m].append(round(mb, 2))
                C.log(f"round {r + 1} {m}: +{mb:.2f} MB over {a.executions:,} executions")
    finally:
        db.query(b"DROP TABLE %b" % TABLE)
        db.close()
    data["results"] = {m: {"mb_per_run": v, "bytes_per_execution": round(C.med(v) * 1e6 / a.executions)}
                       for m, v in rows.items()}
    C.finish("connector_stmt_leak", data, section_md, write_md=not a.no_md)


def section_md(d: dict) -> str:
    a = d["args"]
    out = ["## MySQL Connector/Python's prepared statements: client memory per execution (issue 36)", "",
           C.header(d), f"- driver: {d['driver']}", "",
           f"Resident memory the client process gained over {a['executions']:,} executions on one connection "
           f"(one 1,000-row table, keys 1–1,000), {a['rounds']} rounds:", "",
           "| mode | MB per run | bytes per execution (median) |", "| --- | --- | ---: |"]
    for m, r in d["results"].items():
        out.append(f"| {m} | {', '.join(str(x) for x in r['mb_per_run'])} | {r['bytes_per_execution']:,} |")
    return "\n".join(out)


if __name__ == "__main__":
    main()
