"""bench/concurrency_models.py's multiplexed model (issue 36: one thread, the C drivers' split
calls over epoll) does on the real servers what the threads model does: every connection's
operations complete without an error, and each transaction of seven steps (BEGIN, four reads,
the update, COMMIT) commits its update. Its figures are only worth recording if so."""
from __future__ import annotations

import pytest

from bench import concurrency_models as CM
from tests import servers

pytestmark = [pytest.mark.servers]

ROWS = 200
TABLE = "cm36_mux_test"


@pytest.fixture()
def small_table(monkeypatch):
    """A table of ROWS rows with k = 0 on PostgreSQL and MariaDB, the model's statements aimed at it."""
    env = servers.start()
    with servers.pg_admin(env) as pg:
        pg.execute(f"DROP TABLE IF EXISTS {TABLE}")
        pg.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, k int NOT NULL, c char(120), pad char(60))")
        pg.execute(f"INSERT INTO {TABLE} SELECT i, 0, 'c', 'p' FROM generate_series(1, {ROWS}) AS i")
    my = servers.mysql_admin(env)
    with my.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cur.execute(f"CREATE TABLE {TABLE} (id int PRIMARY KEY, k int NOT NULL, c char(120), pad char(60)) "
                    "ENGINE=InnoDB")
        cur.executemany(f"INSERT INTO {TABLE} VALUES (%s, 0, 'c', 'p')", [(i,) for i in range(1, ROWS + 1)])
    monkeypatch.setattr(CM, "ROWS", ROWS)
    for name in ("PG_READ", "PG_UPDATE", "MY_READ", "MY_UPDATE"):
        monkeypatch.setattr(CM, name, getattr(CM, name).replace("cm36", TABLE))
    yield env
    with servers.pg_admin(env) as pg:
        pg.execute(f"DROP TABLE {TABLE}")
    with my.cursor() as cur:
        cur.execute(f"DROP TABLE {TABLE}")
    my.close()


def _k_sum(env, engine) -> int:
    if engine == "postgresql":
        with servers.pg_admin(env) as pg:
            return int(pg.execute(f"SELECT sum(k) FROM {TABLE}").fetchone()[0])
    my = servers.mysql_admin(env)
    try:
        with my.cursor() as cur:
            cur.execute(f"SELECT sum(k) FROM {TABLE}")
            return int(cur.fetchone()[0])
    finally:
        my.close()


@pytest.mark.parametrize("engine,model", [("postgresql", "mux-psycopg"), ("mysql", "mux-mysqlclient")])
def test_the_multiplexed_loop_runs_reads_and_committed_transactions(small_table, engine, model):
    env = small_table
    pw = servers.password(env)
    reads = CM.run_mux(model, "read", 8, 0.3, env, pw)
    assert reads["errors"] == 0 and reads["ops"] > 8, reads  # every connection went round more than once
    trx = CM.run_mux(model, "trx", 8, 0.3, env, pw)
    assert trx["errors"] == 0 and trx["ops"] > 0, trx
    # each counted transaction committed its one update (k + 1); those of the warm-up and any
    # committed as the loop stopped add to the sum, none may be missing from it
    assert _k_sum(env, engine) >= trx["ops"]
