"""What the SQL engines share: the ``kv`` capability (YCSB's ``usertable``) built on the
engine's ``sql`` session.

An engine subclass supplies the session's driver calls (``execute``, ``fetchall``,
``fetchone``, ``fetchcount``), its placeholder, its DDL and its "insert, skip duplicates"
form. Statements are built once per (kind, table) and cached: the per-operation path is a
dict lookup and a driver call. SQL workload families bring their own statements
(``families/sysbench.py``) and run them through the same session.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, cast

from dbswarm.bindings.base import Connection, KeyValueBinding, SqlSessionBinding
from dbswarm.bindings.protocols import Split, splits_of

KEY = "ycsb_key"


def reshaped(call: Callable[[Any], Any], shape: Callable[..., tuple], binding: object) -> Callable[..., Any]:
    """``call(params)`` (a statement runner's or row counter's) as ``fn(*args)`` with
    ``params = shape(*args)``, its split form (``binding``'s, protocols.Multiplexing) carried along."""
    def fn(*args: Any) -> Any:
        return call(shape(*args))
    splits = splits_of(binding)
    split = splits.get(call) if splits is not None else None
    if splits is not None and split is not None:
        send = split.send
        splits[fn] = Split(lambda *args: send(shape(*args)), split.finish)
    return fn


def _key_then_values(key: str, values: dict) -> tuple:
    return (key, *values.values())


def _values_then_key(key: str, values: dict) -> tuple:
    return (*values.values(), key)


def _both(startkey: str, n: int) -> tuple:
    return (startkey, n)


class SqlBinding(KeyValueBinding, SqlSessionBinding):
    placeholder = "?"
    # "INSERT ... skip duplicates": a prefix verb and a suffix (e.g. ON CONFLICT DO NOTHING)
    insert_ignore_verb = "INSERT OR IGNORE INTO"
    insert_ignore_suffix = ""
    key_type = "VARCHAR(255)"
    field_type = "TEXT"

    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self._sql: dict[Any, str] = {}

    # -- sql capability: the session (the driver calls are the engine's) -----------------
    def prepare(self, sql: str) -> str:
        """A per-operation statement written with %s placeholders, in this session's form."""
        if self.placeholder != "%s":
            sql = sql.replace("%s", self.placeholder)
        return sql

    # -- DDL hooks -----------------------------------------------------------------------
    def kv_table_ddl(self, table: str, fieldcount: int) -> str:
        cols = ", ".join(f"field{i} {self.field_type}" for i in range(fieldcount))
        return f"CREATE TABLE {table} ({KEY} {self.key_type} PRIMARY KEY, {cols})"

    def drop_table(self, table: str) -> None:
        self.execute(f"DROP TABLE IF EXISTS {table}")

    # -- helpers -----------------------------------------------------------------------
    def _ph(self, n: int) -> str:
        return ", ".join([self.placeholder] * n)

    def _stmt(self, key: tuple, build: Callable[[], str]) -> str:
        """The statement cached under key, built on first use. (The per-operation methods look
        in ``_sql`` themselves first, so that the builder closure is only made on a miss.)"""
        sql = self._sql.get(key)
        if sql is None:
            sql = self._sql[key] = build()
        return sql

    # -- kv capability ---------------------------------------------------------------------
    def create_table(self, table: str, fieldcount: int) -> None:
        self.drop_table(table)
        self.execute(self.kv_table_ddl(table, fieldcount))

    def ensure_table(self, table: str, fieldcount: int) -> None:
        self.execute(self.kv_table_ddl(table, fieldcount).replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1))

    def count(self, table: str) -> int:
        return int(cast(tuple, self.fetchone(f"SELECT COUNT(*) FROM {table}"))[0])  # a count has a row

    def _columns(self, fields: Optional[list[str]]) -> str:
        return "*" if fields is None else ", ".join([KEY, *fields])

    def _read_sql(self, table: str, fields: Optional[list[str]]) -> str:
        return self._stmt(("read", table, fields and tuple(fields)), lambda: (
            f"SELECT {self._columns(fields)} FROM {table} WHERE {KEY} = {self.placeholder}"))

    def _update_sql(self, table: str, names: tuple) -> str:
        return self._stmt(("update", table, names), lambda: (
            f"UPDATE {table} SET " + ", ".join(f"{n} = {self.placeholder}" for n in names)
            + f" WHERE {KEY} = {self.placeholder}"))

    def reader(self, table: str, fields: Optional[list[str]]) -> Callable[[Any], int]:
        sql, fetchcount = self._read_sql(table, fields), self.fetchcount
        return lambda key: fetchcount(sql, (key,))

    def updater(self, table: str, field: str) -> Callable[[Any, Any], Any]:
        sql, execute = self._update_sql(table, (field,)), self.execute
        return lambda value, key: execute(sql, (value, key)) > 0

    # inserts, scans and whole-record updates through the session's statement runner and row
    # counter (so split into send / finish where the session multiplexes: engine.mux), each
    # prepared now, while the client sets up, where the session prepares statements
    def inserter(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]:
        return reshaped(self.statement_runner(self._set_up(self._insert_sql(table, tuple(fields)))), _key_then_values,
                        self)

    def scanner(self, table: str, fields: Optional[list[str]]) -> Callable[[str, int], int]:
        return reshaped(self.row_counter(self._set_up(self._scan_sql(table, fields))), _both, self)

    def row_updater(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]:
        return reshaped(self.statement_runner(self._set_up(self._update_sql(table, tuple(fields)))), _values_then_key,
                        self)

    def _set_up(self, sql: str) -> str:
        """``sql`` prepared on this connection now where the session prepares statements; a
        failure (a missing table) is left to the operation, whose error is classified."""
        try:
            self.prepare_now(sql)
        except Exception:
            pass
        return sql

    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any:
        ck = ("read", table, fields and tuple(fields))
        sql = self._sql.get(ck) or self._read_sql(table, fields)
        if not rows:
            return self.fetchcount(sql, (key,))
        row = self.fetchone(sql, (key,))
        if row is None:
            return None
        return self._row_dict(row, fields)

    _all_fields: dict[int, tuple] = {}  # row length -> ("field0", ...): built once, not per read

    def _row_dict(self, row: tuple, fields: Optional[list[str]]) -> dict:
        if fields is None:
            n = len(row) - 1
            names: Optional[Sequence[str]] = self._all_fields.get(n)
            if names is None:
                names = self._all_fields[n] = tuple(f"field{i}" for i in range(n))
        else:
            names = fields
        return dict(zip(names, row[1:]))

    def _scan_sql(self, table: str, fields: Optional[list[str]]) -> str:
        return self._stmt(("scan", table, fields and tuple(fields)), lambda: (
            f"SELECT {self._columns(fields)} FROM {table} WHERE {KEY} >= {self.placeholder} "
            f"ORDER BY {KEY} LIMIT {self.placeholder}"))

    def _insert_sql(self, table: str, names: tuple) -> str:
        return self._stmt(("insert", table, names), lambda: (
            f"INSERT INTO {table} ({KEY}, {', '.join(names)}) VALUES ({self._ph(len(names) + 1)})"))

    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]], rows: bool = True) -> Any:
        sql = self._scan_sql(table, fields)
        if not rows:
            return self.fetchcount(sql, (startkey, count))
        return [self._row_dict(r, fields) | {KEY: r[0]} for r in self.fetchall(sql, (startkey, count))]

    def update(self, table: str, key: str, values: dict) -> bool:
        names = tuple(values)
        sql = self._sql.get(("update", table, names)) or self._update_sql(table, names)
        return self.execute(sql, (*values.values(), key)) > 0

    def insert(self, table: str, key: str, values: dict) -> None:
        names = tuple(values)
        sql = self._sql.get(("insert", table, names)) or self._insert_sql(table, names)
        self.execute(sql, (key, *values.values()))

    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
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
        self.execute(sql, params)

    def delete(self, table: str, key: str) -> bool:
        sql = self._stmt(("delete", table), lambda: f"DELETE FROM {table} WHERE {KEY} = {self.placeholder}")
        return self.execute(sql, (key,)) > 0

    # -- transactions (sql capability) -----------------------------------------------------
    def begin(self, writes: bool = True) -> None:
        self.execute("BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")
