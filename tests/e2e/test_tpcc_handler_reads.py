"""MariaDB's TPC-C New-Order reads what go-tpc's reads: its stock update is one single-table
UPDATE by primary key (a CASE per column) instead of a multi-table UPDATE joined to a UNION ALL
of the rows, which MariaDB executed with 4.2 handler reads a line (the derived table scanned,
each row read again by position) against go-tpc's one UPDATE per line (1 a line): 146 handler
reads per New-Order against 115."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dbswarm.families.tpcc import sql as S
from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers, pytest.mark.slow]


def test_the_new_order_stock_update_reads_one_row_a_line_and_the_run_stays_consistent(tmp_path):
    import pymysql
    env = servers.start()
    port = int(env["DBSWARM_TEST_MYSQL_URL"].rsplit(":", 1)[1].split("/")[0])
    admin = pymysql.connect(host="127.0.0.1", port=port, user="dbswarm", password=servers.password(env))
    admin.cursor().execute("DROP DATABASE IF EXISTS dbswarm_tpcc_reads")
    admin.cursor().execute("CREATE DATABASE dbswarm_tpcc_reads")
    admin.close()
    target = servers.target("mysql", env)
    target["url"] = target["url"].rsplit("/", 1)[0] + "/dbswarm_tpcc_reads"
    campaign = {"name": "tpcc-reads", "seed": 1, "target": target, "fanout": {"shards": 1},
                "workload": {"family": "tpcc", "warehouses": 1, "threads": 2, "time": 3, "check": ["after_run"]},
                "phases": ["prepare", "load", "run"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert result["status"] == "complete", result["status"]
    assert result["runs"][0]["checks"]["after_run"]["passed"]  # the CASE form keeps every condition
    assert result["runs"][0]["phases"]["run"]["tpcc"]["transactions"]["NEW_ORDER"] > 0

    conn = pymysql.connect(host="127.0.0.1", port=port, user="dbswarm", password=servers.password(env),
                           database="dbswarm_tpcc_reads", autocommit=False)
    cur = conn.cursor()
    items = random.Random(1).sample(range(1, 100_001), 10)
    cur.execute(f"SELECT s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 "
                f"AND s_i_id IN ({', '.join(['%s'] * 10)})", items)
    before = {r[0]: r[1:] for r in cur.fetchall()}
    rows = []
    for k, i in enumerate(items):
        rows += (1, i, 20 + k, k + 1, 1, k % 2)  # (w, i, quantity, ytd added, orders added, remote added)
    cur.execute("FLUSH STATUS")
    cur.execute(S.new_order_stock_update(10, "mysql"), S.stock_update_args(rows, "mysql"))
    assert cur.rowcount == 10
    cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%'")
    reads = {k: int(v) for k, v in cur.fetchall()}
    cur.execute(f"SELECT s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = 1 "
                f"AND s_i_id IN ({', '.join(['%s'] * 10)})", items)
    after = {r[0]: r[1:] for r in cur.fetchall()}
    conn.rollback()
    conn.close()
    # one read a line, as go-tpc's UPDATE ... WHERE s_i_id = ? AND s_w_id = ? per line (the
    # joined form: 10 by key, 10 again by position, 22 scanning the derived table)
    assert reads["Handler_read_rnd"] == 0 and reads["Handler_read_rnd_next"] == 0, reads
    assert sum(reads.values()) <= 10, reads
    for k, i in enumerate(items):
        q, ytd, cnt, remote = before[i]
        assert after[i] == (20 + k, ytd + k + 1, cnt + 1, remote + k % 2)
