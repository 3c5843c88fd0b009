"""MariaDB's SQL prepared statements: ``PREPARE`` once per connection, ``EXECUTE ... USING``
literals at every operation, over the text protocol every MySQL driver speaks.

Why: MariaDB parses a text statement at every execution; sysbench and go-ycsb prepare theirs
on the server, so text statements cost dbswarm's server CPU that theirs does not (the pinned
shortfall of issue 36). The binary protocol's prepared statements need a driver API: mysqlclient
has none, MySQL Connector/Python's C extension leaks its result metadata at every execution,
MariaDB Connector/Python costs the client 1.1-1.9x mysqlclient's CPU per statement
(docs/benchmarks.md, "MariaDB: prepared statements against text statements"). SQL-level
``PREPARE`` needs none: since MariaDB 10.2.3, ``EXECUTE stmt USING`` takes expressions, so the
parameters go as the same escaped literals a text statement carries, and the server parses only
the short ``EXECUTE`` and runs the statement it prepared. Measured on one connection (point
selects by primary key, 3 rounds of 30,000): server CPU per statement 64-89 us against text's
72-102 (-11 to -14 %), client CPU 36-42 against 37-49 us.

Only on MariaDB: MySQL's ``EXECUTE ... USING`` takes user variables only (a ``SET`` per
execution: a second statement). A statement runs prepared when the family marked it
(``Binding.prepare``, ``options.prepare``, default true) and it has parameters. The server's
statement digests name the prepared statement (``EXECUTE `dbswarm_select_3` USING ?``), so its
kind stays known to the client-health verdict (bindings/mysql.py ``_statement_times``).
"""
from __future__ import annotations

import re
from typing import Callable, Optional

DESCRIPTION = ("server-side: SQL PREPARE once per connection, EXECUTE ... USING literals (MariaDB >= 10.2.3; "
               "text protocol; statements cached)")
NAME_PREFIX = "dbswarm_"
# the server refused to prepare a statement for good: too many prepared statements on the server
# (max_prepared_stmt_count), a statement the prepared protocol does not support; it then runs as text
_FOR_GOOD = {1461, 1295}
_VERSION = re.compile(r"(?:5\.5\.5-)?(\d+)\.(\d+)\.(\d+)")


def server_supports(server_info: Optional[str]) -> bool:
    """Whether a server (its version string) runs ``EXECUTE ... USING`` with literals: MariaDB
    10.2.3 or later (a MariaDB server may present itself as ``5.5.5-10.x`` to old clients)."""
    info = server_info or ""
    m = _VERSION.match(info)
    if m is None or "mariadb" not in info.lower():
        return False
    return tuple(int(p) for p in m.groups()) >= (10, 2, 3)


def statement_kind(sql: str) -> str:
    """The statement's first word, lower case (select, update, insert, delete ...)."""
    word = sql.lstrip().split(None, 1)[0] if sql.strip() else "statement"
    return word.lower() if word.isalpha() else "statement"


def server_error_code(exc: BaseException) -> Optional[int]:
    """The server's error code of a MySQLdb or PyMySQL error (``args[0]`` below 2000: the
    client library's own errors, such as a lost connection, are 2000 and up), else None."""
    code = exc.args[0] if exc.args else None
    return code if isinstance(code, int) and 0 < code < 2000 else None


class ServerPrepared:
    """One connection's prepared statements: ``text(sql)`` is what to send for a statement
    with ``%s`` placeholders (``EXECUTE dbswarm_select_1 USING %s, %s`` once prepared, else the
    statement itself), ``prepare_now(sql)`` prepares one ahead of its first use.

    ``hot``: the binding's per-operation statements (the set grows as families mark theirs);
    ``prepare(name, statement)``: sends ``PREPARE name FROM 'statement'`` on the connection (the
    statement quoted by the driver's own escaping) and reads its reply, raising the driver's
    error; ``error_code(exc)``: the server's error code of such an error, or None.
    A refusal the server would repeat (``_FOR_GOOD``) makes the statement text for the life of
    the connection; any other refusal (a table not created yet) runs this execution as text —
    which then fails or succeeds as text would — and is tried again at the next one."""
    __slots__ = ("hot", "_prepare_on_server", "_code", "_text", "_n")

    def __init__(self, hot: set, prepare: Callable[[str, str], None],
                 error_code: Callable[[BaseException], Optional[int]]):
        self.hot, self._prepare_on_server, self._code = hot, prepare, error_code
        self._text: dict[str, str] = {}  # statement -> what to send (decided for this connection)
        self._n = 0

    def text(self, sql: str) -> str:
        t = self._text.get(sql)
        if t is None:
            t = sql
            if sql in self.hot and "%s" in sql and "%%" not in sql:
                t = self._prepare(sql)
        return t

    def settled(self, sql: str) -> bool:
        """Whether what ``text(sql)`` returns holds for the rest of the connection (a driver
        caches it then)."""
        return sql in self._text or sql not in self.hot or "%s" not in sql or "%%" in sql

    def prepare_now(self, sql: str) -> bool:
        """Prepare a marked statement now (a client thread's set-up); True when it was. A
        refusal raises as the statement would (the caller's set-up decides)."""
        if sql in self._text or sql not in self.hot or "%s" not in sql or "%%" in sql:
            return False
        return self._prepare(sql, quietly=False) != sql

    def _prepare(self, sql: str, quietly: bool = True) -> str:
        self._n += 1
        name = f"{NAME_PREFIX}{statement_kind(sql)}_{self._n}"
        try:
            self._prepare_on_server(name, sql.replace("%s", "?"))
        except Exception as exc:
            code = self._code(exc)
            if code is None:  # not the server's refusal (a lost connection): the binding's to classify
                raise
            if code in _FOR_GOOD:
                self._text[sql] = sql
            elif not quietly:
                raise
            return sql
        t = self._text[sql] = f"EXECUTE {name} USING " + ", ".join(["%s"] * sql.count("%s"))
        return t

