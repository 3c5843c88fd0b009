"""The custom family's statement check before any load or run (issue 54): every SQL statement of
the workload prepared on one connection, so that a statement the server rejects (a misspelt
column, a missing table, a syntax error) is named — transaction, statement index, the server's
message — before the fan-out instead of as errors of every shard.

How each engine is asked, without running the statement:
- PostgreSQL: the protocol-level Parse the run itself sends (the binding's ``prepare_now``);
  with ``options.prepare: false``, SQL ``PREPARE ... AS`` then ``DEALLOCATE``;
- MySQL / MariaDB: ``PREPARE ... FROM @text`` (the statement's text goes in as a parameter of
  ``SET``), then ``DEALLOCATE PREPARE``; a statement kind the server cannot prepare is not checked;
- SQLite: ``EXPLAIN`` of the statement (compiled, not run).

``temporary``: the workload's own tables created first as TEMPORARY tables of the session (they
hide a table of the same name and vanish with the connection): ``dbswarm validate`` checks the
statements before the campaign has created anything.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from dbswarm.families.custom import model as M

MYSQL_NOT_PREPARABLE = 1295  # ER_UNSUPPORTED_PS: "This command is not supported in the prepared statement protocol"
_CREATE_TABLE = re.compile(r"^\s*create\s+table\s+(if\s+not\s+exists\s+)?", re.I)


def _message(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()  # PostgreSQL's LINE 1: ... ^ pointer after the message left out
    return (" ".join(lines[0].split()) if lines else type(exc).__name__)[:300]


def _temporary_ddl(sql: str, dialect: str) -> str:
    """A CREATE TABLE statement made a session's temporary table (ValueError where it is not one)."""
    if not _CREATE_TABLE.match(sql):
        raise ValueError("not a CREATE TABLE statement")
    return _CREATE_TABLE.sub("CREATE TEMPORARY TABLE ", sql, count=1)


def _create_temporary(b: Any, w: M.CustomWorkload, create_table_sql: Callable[..., str]) -> list[str]:
    """The workload's own tables as temporary ones; problems where one cannot be created."""
    out = []
    for name, table in w.tables.items():
        if table.existing:
            continue
        where = f"workload.tables.{name}" + (".ddl" if table.ddl is not None else ".columns")
        try:
            b.execute(_temporary_ddl(create_table_sql(name, table, b.dialect, b.table_options), b.dialect))
        except Exception as exc:
            _recover(b)
            out.append(f"{where}: {b.dialect} rejects the table: {_message(exc)}")
    return out


def _recover(b: Any) -> None:
    try:
        if b.transaction_failed() if hasattr(b, "transaction_failed") else False:
            b.rollback()
    except Exception:
        pass


def _prepare_one(b: Any, text: str, n: int, k: int) -> bool:
    """Prepare ``text`` (``%s`` placeholders) on the server; raises the server's error. False
    when this kind of statement cannot be prepared there (not checked)."""
    dialect = b.dialect
    if dialect == "postgresql":
        sql = b.prepare(text)
        if b.prepare_now(sql):
            return True
        parts = text.split("%s")
        numbered = parts[0] + "".join(f"${i}{p}" for i, p in enumerate(parts[1:], 1))
        b.execute(f"PREPARE dbswarm_check_{k} AS {numbered}")
        b.execute(f"DEALLOCATE dbswarm_check_{k}")
        return True
    if dialect == "mysql":
        b.execute("SET @dbswarm_check = %s", (text.replace("%s", "?"),))
        try:
            b.execute("PREPARE dbswarm_check FROM @dbswarm_check")
        except Exception as exc:
            if getattr(exc, "args", (None,))[0] == MYSQL_NOT_PREPARABLE:
                return False
            raise
        b.execute("DEALLOCATE PREPARE dbswarm_check")
        return True
    if dialect == "sqlite":
        b.fetchall(b.prepare("EXPLAIN " + text), (None,) * n)
        return True
    return False


def check_statements(b: Any, w: M.CustomWorkload, create_table_sql: Callable[..., str],
                     temporary: bool = False) -> list[str]:
    """Problems ("workload.transactions.<name>.statements[<i>].sql: <dialect> rejects it: <the
    server's message>") of the SQL statements the server rejects, prepared on ``b`` (connected);
    [] when all were accepted (or the workload is a document one)."""
    if w.documents:
        return []
    out = _create_temporary(b, w, create_table_sql) if temporary else []
    if out:
        return out  # a table not created: its statements would be refused for that
    k = 0
    for name, tx in w.transactions.items():
        for i, st in enumerate(tx.statements):
            texts = M.statement_texts(st)
            if b.dialect not in texts:
                continue
            text, params = M.parse_statement(texts[b.dialect])
            k += 1
            try:
                _prepare_one(b, text, len(params), k)
            except Exception as exc:
                _recover(b)
                where = f"workload.transactions.{name}.statements[{i}].sql" + (
                    f".{b.dialect}" if isinstance(st.sql, dict) else "")
                out.append(f"{where}: {b.dialect} rejects it: {_message(exc)} (statement: "
                           f"{' '.join(texts[b.dialect].split())[:160]})")
    return out
