"""sysbench 1.0's tables and statements per dialect (oltp_common.lua), for the sysbench family
(``families.sysbench``), as ``families/tpcc/sql.py`` is TPC-C's."""
from __future__ import annotations

from typing import Any

# {t}: the table's name, {n}: its number, {options}: the session's table options (MySQL's
# ENGINE=), %s: a parameter. A string is every dialect's; a dict names each dialect.
SQL: dict[str, Any] = {  # a str, or {dialect: str}
    "create": {
        "sqlite": "CREATE TABLE {t} (id INTEGER PRIMARY KEY AUTOINCREMENT, k INTEGER DEFAULT 0 NOT NULL, "
                  "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)",
        "mysql": "CREATE TABLE {t} (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, "
                 "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)){options}",
        "postgresql": "CREATE TABLE {t} (id SERIAL, k INTEGER DEFAULT '0' NOT NULL, "
                      "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))",
    },
    "drop": "DROP TABLE IF EXISTS {t}",
    "count": "SELECT COUNT(*) FROM {t}",
    # built again by a resumed campaign: no error when it exists (MySQL has no IF NOT EXISTS)
    "create_index": {"sqlite": "CREATE INDEX IF NOT EXISTS k_{n} ON {t}(k)",
                     "postgresql": "CREATE INDEX IF NOT EXISTS k_{n} ON {t}(k)",
                     "mysql": "CREATE INDEX k_{n} ON {t}(k)"},
    "index_exists": {"mysql": "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() "
                              "AND table_name = %s AND index_name = %s"},
    # the load: rows of (id, k, c, pad), existing ids skipped (a resumed load is idempotent)
    "load": {"sqlite": "INSERT OR IGNORE INTO {t} (id, k, c, pad) VALUES {rows}",
             "mysql": "INSERT IGNORE INTO {t} (id, k, c, pad) VALUES {rows}",
             "postgresql": "INSERT INTO {t} (id, k, c, pad) VALUES {rows} ON CONFLICT DO NOTHING"},
    "point_select": "SELECT c FROM {t} WHERE id=%s",
    "simple_range": "SELECT c FROM {t} WHERE id BETWEEN %s AND %s",
    "sum_range": "SELECT SUM(k) FROM {t} WHERE id BETWEEN %s AND %s",
    "order_range": "SELECT c FROM {t} WHERE id BETWEEN %s AND %s ORDER BY c",
    "distinct_range": "SELECT DISTINCT c FROM {t} WHERE id BETWEEN %s AND %s ORDER BY c",
    "index_update": "UPDATE {t} SET k=k+1 WHERE id=%s",
    "non_index_update": "UPDATE {t} SET c=%s WHERE id=%s",
    "delete": "DELETE FROM {t} WHERE id=%s",
    "insert": "INSERT INTO {t} (id, k, c, pad) VALUES (%s, %s, %s, %s)",
}


# the per-operation statements: prepared on a session, one per table, at their first use
PER_OPERATION = ("point_select", "simple_range", "sum_range", "order_range", "distinct_range", "index_update",
                 "non_index_update", "delete", "insert")
# the SELECTs, run by the session's query_counter (the others, writes, by its statement_runner)
SELECTS = frozenset(("point_select", "simple_range", "sum_range", "order_range", "distinct_range"))


def sql_text(kind: str, dialect: str) -> str:
    s = SQL[kind]
    return s if isinstance(s, str) else s[dialect]
