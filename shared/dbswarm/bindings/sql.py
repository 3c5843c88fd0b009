"""What the SQL engines share: the YCSB ``usertable`` and the sysbench ``sbtestN`` statements.

An engine subclass supplies the driver calls (``_execute``, ``_fetchall``, ``_fetchone``),
its placeholder, its DDL and its "insert, skip duplicates" form. Statements are built once
per (kind, table) and cached: the per-operation path is a dict lookup and a driver call.
"""
from __future__ import annotations

from typing import Any, Optional

from .base import Binding

KEY = "ycsb_key"


class SqlBinding(Binding):
    placeholder = "?"
    # "INSERT ... skip duplicates": a prefix verb and a suffix (e.g. ON CONFLICT DO NOTHING)
    insert_ignore_verb = "INSERT OR IGNORE INTO"
    insert_ignore_suffix = ""
    key_type = "VARCHAR(255)"
    field_type = "TEXT"

    def __init__(self, conn):
        super().__init__(conn)
        self._sql: dict[Any, str] = {}

    # -- driver hooks ------------------------------------------------------------------
    def _execute(self, sql: str, params=()) -> int:
        """Run a statement; return the affected row count."""
        raise NotImplementedError

    def _fetchall(self, sql: str, params=()) -> list[tuple]:
        raise NotImplementedError

    def _fetchone(self, sql: str, params=()) -> Optional[tuple]:
        rows = self._fetchall(sql, params)
        return rows[0] if rows else None

    def _fetchcount(self, sql: str, params=()) -> int:
        """Run a query and read its whole result; return the number of rows, without
        turning them into Python values where the driver allows it."""
        return len(self._fetchall(sql, params))

    def _executemany(self, sql: str, seq) -> None:
        for params in seq:
            self._execute(sql, params)

    # -- DDL hooks -----------------------------------------------------------------------
    def ycsb_table_ddl(self, table: str, fieldcount: int) -> str:
        cols = ", ".join(f"field{i} {self.field_type}" for i in range(fieldcount))
        return f"CREATE TABLE {table} ({KEY} {self.key_type} PRIMARY KEY, {cols})"

    def sb_table_ddl(self, table_no: int) -> str:
        return (f"CREATE TABLE sbtest{table_no} (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                f"k INTEGER DEFAULT 0 NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
                f"pad CHAR(60) DEFAULT '' NOT NULL)")

    def drop_table(self, table: str) -> None:
        self._execute(f"DROP TABLE IF EXISTS {table}")

    # -- helpers -----------------------------------------------------------------------
    def _ph(self, n: int) -> str:
        return ", ".join([self.placeholder] * n)

    def _stmt(self, key, build) -> str:
        """The statement cached under key, built on first use. (The per-operation methods look
        in ``_sql`` themselves first, so that the builder closure is only made on a miss.)"""
        sql = self._sql.get(key)
        if sql is None:
            sql = self._sql[key] = build()
        return sql

    # -- YCSB --------------------------------------------------------------------------
    def ycsb_create(self, table, fieldcount):
        self.drop_table(table)
        self._execute(self.ycsb_table_ddl(table, fieldcount))

    def ycsb_drop(self, table):
        self.drop_table(table)

    def ycsb_count(self, table):
        return int(self._fetchone(f"SELECT COUNT(*) FROM {table}")[0])

    def _columns(self, fields):
        return "*" if fields is None else ", ".join([KEY, *fields])

    def read(self, table, key, fields, rows=True):
        ck = ("read", table, fields and tuple(fields))
        sql = self._sql.get(ck) or self._stmt(ck, lambda: (
            f"SELECT {self._columns(fields)} FROM {table} WHERE {KEY} = {self.placeholder}"))
        if not rows:
            return self._fetchcount(sql, (key,))
        row = self._fetchone(sql, (key,))
        if row is None:
            return None
        return self._row_dict(row, fields)

    _all_fields: dict[int, tuple] = {}  # row length -> ("field0", ...): built once, not per read

    def _row_dict(self, row, fields):
        if fields is None:
            n = len(row) - 1
            names = self._all_fields.get(n)
            if names is None:
                names = self._all_fields[n] = tuple(f"field{i}" for i in range(n))
        else:
            names = fields
        return dict(zip(names, row[1:]))

    def scan(self, table, startkey, count, fields, rows=True):
        sql = self._stmt(("scan", table, fields and tuple(fields)), lambda: (
            f"SELECT {self._columns(fields)} FROM {table} WHERE {KEY} >= {self.placeholder} "
            f"ORDER BY {KEY} LIMIT {self.placeholder}"))
        if not rows:
            return self._fetchcount(sql, (startkey, count))
        return [self._row_dict(r, fields) | {KEY: r[0]} for r in self._fetchall(sql, (startkey, count))]

    def update(self, table, key, values):
        names = tuple(values)
        ck = ("update", table, names)
        sql = self._sql.get(ck) or self._stmt(ck, lambda: (
            f"UPDATE {table} SET " + ", ".join(f"{n} = {self.placeholder}" for n in names)
            + f" WHERE {KEY} = {self.placeholder}"))
        return self._execute(sql, (*values.values(), key)) > 0

    def insert(self, table, key, values):
        names = tuple(values)
        ck = ("insert", table, names)
        sql = self._sql.get(ck) or self._stmt(ck, lambda: (
            f"INSERT INTO {table} ({KEY}, {', '.join(names)}) VALUES ({self._ph(len(names) + 1)})"))
        self._execute(sql, (key, *values.values()))

    def insert_batch(self, table, rows):
        if not rows:
            return
        names = tuple(rows[0][1])
        n = len(rows)
        sql = self._stmt(("insert_batch", table, names, n), lambda: (
            f"{self.insert_ignore_verb} {table} ({KEY}, {', '.join(names)}) VALUES "
            + ", ".join([f"({self._ph(len(names) + 1)})"] * n) + self.insert_ignore_suffix))
        params = []
        for key, values in rows:
            params.append(key)
            params.extend(values.values())
        self._execute(sql, params)

    def delete(self, table, key):
        sql = self._stmt(("delete", table), lambda: f"DELETE FROM {table} WHERE {KEY} = {self.placeholder}")
        return self._execute(sql, (key,)) > 0

    # -- sysbench ------------------------------------------------------------------------
    def sb_create(self, table_no):
        self.drop_table(f"sbtest{table_no}")
        self._execute(self.sb_table_ddl(table_no))

    def sb_load(self, table_no, rows):
        if not rows:
            return
        n = len(rows)
        sql = self._stmt(("sb_load", table_no, n), lambda: (
            f"{self.insert_ignore_verb} sbtest{table_no} (id, k, c, pad) VALUES "
            + ", ".join([f"({self._ph(4)})"] * n) + self.insert_ignore_suffix))
        self._execute(sql, [v for row in rows for v in row])

    def sb_create_index(self, table_no):
        self._execute(f"CREATE INDEX k_{table_no} ON sbtest{table_no}(k)")

    def sb_drop(self, table_no):
        self.drop_table(f"sbtest{table_no}")

    def sb_count(self, table_no):
        return int(self._fetchone(f"SELECT COUNT(*) FROM sbtest{table_no}")[0])

    def begin(self, writes=True):
        self._execute("BEGIN")

    def commit(self):
        self._execute("COMMIT")

    def rollback(self):
        self._execute("ROLLBACK")

    def _sb(self, kind, table_no, template):
        ck = (kind, table_no)
        return self._sql.get(ck) or self._stmt(ck, lambda: template.format(t=f"sbtest{table_no}", p=self.placeholder))

    def _sb_select(self, kind, table_no, template, params, rows):
        """One of sysbench's SELECTs: its rows, or (rows=False) only their number."""
        sql = self._sb(kind, table_no, template)
        return self._fetchall(sql, params) if rows else self._fetchcount(sql, params)

    def sb_point_select(self, table_no, id_, rows=True):
        return self._sb_select("ps", table_no, "SELECT c FROM {t} WHERE id={p}", (id_,), rows)

    def sb_simple_range(self, table_no, lo, hi, rows=True):
        return self._sb_select("sr", table_no, "SELECT c FROM {t} WHERE id BETWEEN {p} AND {p}", (lo, hi), rows)

    def sb_sum_range(self, table_no, lo, hi, rows=True):
        return self._sb_select("sum", table_no, "SELECT SUM(k) FROM {t} WHERE id BETWEEN {p} AND {p}", (lo, hi), rows)

    def sb_order_range(self, table_no, lo, hi, rows=True):
        return self._sb_select("or", table_no, "SELECT c FROM {t} WHERE id BETWEEN {p} AND {p} ORDER BY c",
                               (lo, hi), rows)

    def sb_distinct_range(self, table_no, lo, hi, rows=True):
        return self._sb_select("dr", table_no, "SELECT DISTINCT c FROM {t} WHERE id BETWEEN {p} AND {p} ORDER BY c",
                               (lo, hi), rows)

    def sb_index_update(self, table_no, id_):
        return self._execute(self._sb("iu", table_no, "UPDATE {t} SET k=k+1 WHERE id={p}"), (id_,))

    def sb_non_index_update(self, table_no, id_, c):
        return self._execute(self._sb("nu", table_no, "UPDATE {t} SET c={p} WHERE id={p}"), (c, id_))

    def sb_delete(self, table_no, id_):
        return self._execute(self._sb("del", table_no, "DELETE FROM {t} WHERE id={p}"), (id_,))

    def sb_insert(self, table_no, id_, k, c, pad):
        return self._execute(self._sb("ins", table_no, "INSERT INTO {t} (id, k, c, pad) VALUES ({p}, {p}, {p}, {p})"),
                             (id_, k, c, pad))
