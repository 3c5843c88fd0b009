"""Server-side prepared statements (MariaDB's binary protocol) on a mysqlclient connection.

Why: sysbench prepares its statements on the server (``--db-ps-mode=auto``) and go-ycsb
binds to statements prepared once per connection; a text statement is parsed by the server
at every execution. With the server on its own CPU (the white papers' set-up: the clients
on other machines) the server is the bound, and the parse is what separated a Python client
from sysbench: oltp_read_only, MariaDB, 16 threads, 713 against 839 µs of server CPU per
transaction, 1,396 against 1,193 TPS, the client's CPU 286 against 314 µs (BENCHMARKS.md).

How: mysqlclient has no prepared-statement API, but it runs on libmariadb (MariaDB
Connector/C), which has one (``mysql_stmt_*``). The ``MYSQL`` handle mysqlclient opened is
the first member of its connection object (``_mysql_ConnectionObject``: ``PyObject_HEAD``,
then ``MYSQL connection``); this module calls libmariadb's statement functions on it through
``ctypes``, so mysqlclient keeps connecting, text statements, results and errors. The handle
is checked before use (libmariadb's ``mysql_thread_id`` and ``mysql_get_server_info`` on it
must equal the connection's own): a layout that does not match means no prepared statements,
never a wrong pointer. MySQL Connector/Python's C extension has prepared statements too, but
leaks ~575 bytes per execution (its result metadata and bind buffers are never freed: 11 MB
per 20,000 executions, measured), which a 60-minute run cannot afford.

What runs prepared: the statements the binding marks as per-operation (``_hot``: a family's
``prepare()``, the kv statements) with at most MAX_PARAMS parameters of types int, bool,
float, str, bytes or None, through ``execute`` (the affected rows) and ``fetchcount`` (rows
read into libmariadb's buffer, not converted); rows that are returned (``fetchall``,
``fetchone``) and anything else take mysqlclient's text path. A statement the server will not
prepare (a missing table, ``max_prepared_stmt_count`` reached) runs as text on that connection.

Lifetime: a statement handle is freed (``mysql_stmt_close``) when the last reference to its
``Prepared`` goes, and only after its connection was closed (``mysql_close`` detaches every
statement of the connection, so freeing sends nothing and touches no connection another
thread might be using); a call on a statement of a closed connection fails with libmariadb's
"server gone" error, never on freed memory.
"""
from __future__ import annotations

import ctypes
from typing import Optional

MAX_PARAMS = 32  # batches of rows (the load phase) stay text: one statement per batch size
INT64 = 1 << 63   # a LONGLONG parameter holds [-2^63, 2^63): other ints go as text (ctypes would wrap them)

# enum_field_types
_LONGLONG, _DOUBLE, _NULL, _STRING, _BLOB = 8, 5, 6, 254, 252

_vp, _ul = ctypes.c_void_p, ctypes.c_ulong


class Bind(ctypes.Structure):
    """libmariadb's ``MYSQL_BIND`` (mariadb_stmt.h, Connector/C 3.x)."""
    _fields_ = [("length", ctypes.POINTER(_ul)), ("is_null", _vp), ("buffer", _vp), ("error", _vp),
                ("u", _vp), ("store_param_func", _vp), ("fetch_result", _vp), ("skip_result", _vp),
                ("buffer_length", _ul), ("offset", _ul), ("length_value", _ul),
                ("flags", ctypes.c_uint), ("pack_length", ctypes.c_uint), ("buffer_type", ctypes.c_int),
                ("error_value", ctypes.c_ubyte), ("is_unsigned", ctypes.c_ubyte),
                ("long_data_used", ctypes.c_ubyte), ("is_null_value", ctypes.c_ubyte), ("extension", _vp)]


class Api:
    """libmariadb's statement functions, from the library mysqlclient loaded. Those that
    wait on the server (prepare, execute, store_result, close) release the GIL (``CDLL``);
    the others are a few instructions and keep it (``PyDLL``: no hand-off per call)."""

    def __init__(self, path: str, version: str = ""):
        self.version = version
        wait, quick = ctypes.CDLL(path), ctypes.PyDLL(path)
        u64, uint, byte, int_ = ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_ubyte, ctypes.c_int
        for name, lib, res, args in (
                ("mysql_stmt_init", quick, _vp, [_vp]),
                ("mysql_stmt_prepare", wait, int_, [_vp, ctypes.c_char_p, _ul]),
                ("mysql_stmt_execute", wait, int_, [_vp]),
                ("mysql_stmt_store_result", wait, int_, [_vp]),
                ("mysql_stmt_close", wait, byte, [_vp]),
                ("mysql_stmt_bind_param", quick, byte, [_vp, ctypes.POINTER(Bind)]),
                ("mysql_stmt_param_count", quick, _ul, [_vp]),
                ("mysql_stmt_field_count", quick, uint, [_vp]),
                ("mysql_stmt_num_rows", quick, u64, [_vp]),
                ("mysql_stmt_affected_rows", quick, u64, [_vp]),
                ("mysql_stmt_free_result", quick, byte, [_vp]),
                ("mysql_stmt_errno", quick, uint, [_vp]),
                ("mysql_stmt_error", quick, ctypes.c_char_p, [_vp]),
                ("mysql_thread_id", quick, _ul, [_vp]),
                ("mysql_get_server_info", quick, ctypes.c_char_p, [_vp])):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
            setattr(self, name[6:], fn)  # mysql_stmt_execute -> self.stmt_execute


_api: Optional[Api] = None
_unavailable: Optional[str] = None
# the Connector/C versions whose mariadb_stmt.h has the MYSQL_BIND above (3.0 to 3.4); another
# version runs statements as text; these are checked again on the first connection (``layout_checked``)
KNOWN_VERSIONS = ("3.0.", "3.1.", "3.2.", "3.3.", "3.4.")
_layout: Optional[str] = None   # "" when it checked out, else why not (once per process)


def api() -> tuple[Optional[Api], str]:
    """(the statement functions, "") or (None, why not), once per process."""
    global _api, _unavailable
    if _api is None and _unavailable is None:
        try:
            from MySQLdb import _mysql
            path = _loaded_library()
            if path is None:
                _unavailable = "mysqlclient is not linked to libmariadb (MariaDB Connector/C)"
            elif not _mysql.get_client_info().startswith(KNOWN_VERSIONS):
                _unavailable = (f"libmariadb {_mysql.get_client_info()}: MYSQL_BIND's layout is known for Connector/C "
                                f"{', '.join(KNOWN_VERSIONS)} only")
            else:
                _api = Api(path, _mysql.get_client_info())
        except Exception as exc:  # no mysqlclient, no /proc, a library without these symbols
            _unavailable = f"{type(exc).__name__}: {exc}"
    return _api, _unavailable or ""


def _loaded_library() -> Optional[str]:
    """The libmariadb this process has loaded (mysqlclient's), from /proc/self/maps."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.rsplit(" ", 1)[-1].strip()
            if "/libmariadb.so" in path:
                return path
    return None


def layout_checked(a: Api, db, mysql: int) -> str:
    """"" when MYSQL_BIND's layout checks out with this library, else why not (checked once per
    process, on the first connection): a statement whose row exists only for the right int and
    string parameters is executed with them and with others; a layout that does not match the
    library's passes parameters that are not the ones set, and the rows say so."""
    global _layout
    if _layout is None:
        try:
            p = Prepared(a, db, mysql, "SELECT 1 FROM DUAL WHERE %s = 4242 AND %s = 'dbswarm'", 2, "utf-8")
            try:
                rows = (p.count((4242, "dbswarm")), p.count((4243, "dbswarm")), p.count((4242, "dbswarX")))
            finally:
                p.free()
            _layout = "" if rows == (1, 0, 0) else (
                f"libmariadb {a.version}: MYSQL_BIND's layout did not check out (a probe's rows {rows}, not (1, 0, 0))")
        except Exception as exc:
            _layout = f"libmariadb {a.version}: MYSQL_BIND's probe failed ({type(exc).__name__}: {exc})"
    return _layout


def connection_handle(a: Api, db) -> Optional[int]:
    """The ``MYSQL *`` inside a mysqlclient connection, or None if it does not check out."""
    address = id(db) + object.__basicsize__  # after PyObject_HEAD
    try:
        if (a.thread_id(address) == db.thread_id()
                and (a.get_server_info(address) or b"").decode() == db.get_server_info()):
            return address
    except Exception:
        pass
    return None


class StatementError(Exception):
    """libmariadb's error on a statement: ``args`` = (errno, message), as the drivers'."""


class Prepared:
    """One statement prepared on one connection: ``count(params)`` (rows of its result, read
    and dropped) and ``run(params)`` (affected rows). Parameters go into buffers bound once
    (an int's ``c_longlong``, a str's bytes copied into a buffer that grows when it must), so
    an execution is libmariadb's calls and no re-bind unless a parameter's type changes."""
    __slots__ = ("api", "db", "handle", "n", "types", "binds", "cells", "lengths", "encoding", "error_class",
                 "detached")

    def __init__(self, a: Api, db, mysql: int, sql: str, n: int, encoding: str, error_class=StatementError):
        self.api, self.db, self.n, self.encoding, self.error_class = a, db, n, encoding, error_class
        self.detached = False
        self.handle = a.stmt_init(mysql)
        if not self.handle:
            raise MemoryError("mysql_stmt_init")
        q = sql.replace("%s", "?").encode(encoding)
        if a.stmt_prepare(self.handle, q, len(q)) or a.stmt_param_count(self.handle) != n:
            err = self.error()
            self.free()
            raise err
        self.types: tuple = ()
        self.binds = (Bind * max(n, 1))()
        self.cells: list = [None] * n
        self.lengths = [_ul() for _ in range(n)]

    def error(self) -> Exception:
        """libmariadb's error on this statement, as the driver's exception (errno, message)."""
        a, h = self.api, self.handle
        return self.error_class(a.stmt_errno(h) or 2000, (a.stmt_error(h) or b"").decode("utf-8", "replace"))

    # -- parameters ------------------------------------------------------------------------
    def _bind(self, params) -> None:
        """(Re)bind for these parameters' types; raises TypeError for a type not bound."""
        types = tuple(map(type, params))
        for i, t in enumerate(types):
            b, cell = self.binds[i], None
            b.length, b.is_unsigned = None, 0
            if t is int or t is bool:
                cell = ctypes.c_longlong()
                b.buffer_type, b.buffer, b.buffer_length = _LONGLONG, ctypes.addressof(cell), 8
            elif t is float:
                cell = ctypes.c_double()
                b.buffer_type, b.buffer, b.buffer_length = _DOUBLE, ctypes.addressof(cell), 8
            elif t is str or t is bytes:
                cell = ctypes.create_string_buffer(max(64, len(params[i]) * 4 + 1))
                b.buffer_type = _STRING if t is str else _BLOB
                b.buffer, b.buffer_length = ctypes.addressof(cell), len(cell)
                b.length = ctypes.pointer(self.lengths[i])
            elif params[i] is None:
                b.buffer_type, b.buffer, b.buffer_length = _NULL, None, 0
            else:
                raise TypeError(t.__name__)
            self.cells[i] = cell
        if self.api.stmt_bind_param(self.handle, self.binds):
            raise self.error()
        self.types = types

    def _set(self, params) -> None:
        if len(params) != self.n:
            raise self.error_class(2031, f"{self.n} parameters expected, {len(params)} given")
        if tuple(map(type, params)) != self.types:
            self._bind(params)
        for i, v in enumerate(params):
            cell = self.cells[i]
            if cell is None:
                continue
            t = type(v)
            if t is str or t is bytes:
                b = v.encode(self.encoding) if t is str else v
                if len(b) > len(cell):
                    self._grow(i, len(b))
                    cell = self.cells[i]
                cell[:len(b)] = b
                self.lengths[i].value = len(b)
            elif t is int and not -INT64 <= v < INT64:
                raise TypeError("an int beyond 64 bits")
            else:
                cell.value = v

    def _grow(self, i: int, size: int) -> None:
        cell = ctypes.create_string_buffer(size * 2)
        self.cells[i] = cell
        self.binds[i].buffer, self.binds[i].buffer_length = ctypes.addressof(cell), len(cell)
        if self.api.stmt_bind_param(self.handle, self.binds):
            raise self.error()

    # -- executions ------------------------------------------------------------------------
    def count(self, params) -> int:
        self._set(params)
        a, h = self.api, self.handle
        if a.stmt_execute(h) or a.stmt_store_result(h):
            raise self.error()
        n = a.stmt_num_rows(h)
        a.stmt_free_result(h)
        return n

    def run(self, params) -> int:
        self._set(params)
        a, h = self.api, self.handle
        if a.stmt_execute(h):
            raise self.error()
        if a.stmt_field_count(h):  # a result set must be read before the next statement
            if a.stmt_store_result(h):
                raise self.error()
            a.stmt_free_result(h)
        return a.stmt_affected_rows(h)

    def int_counter(self, other):
        """``count(params)`` for a statement of one or two int parameters (sysbench's point
        selects and ranges): the values stored straight into their bound cells; parameters
        of other types or number go to ``other(params)``."""
        self._bind((0,) * self.n)
        a, h = self.api, self.handle
        execute, store, num_rows, free, error = (a.stmt_execute, a.stmt_store_result, a.stmt_num_rows,
                                                 a.stmt_free_result, self.error)
        if self.n == 1:
            c0 = self.cells[0]

            def count(params):
                if len(params) != 1 or type(params[0]) is not int or not -INT64 <= params[0] < INT64:
                    return other(params)
                c0.value = params[0]
                if execute(h) or store(h):
                    raise error()
                n = num_rows(h)
                free(h)
                return n
        else:
            c0, c1 = self.cells

            def count(params):
                if len(params) != 2 or type(params[0]) is not int or type(params[1]) is not int:
                    return other(params)
                a0, a1 = params
                if not (-INT64 <= a0 < INT64 and -INT64 <= a1 < INT64):
                    return other(params)
                c0.value, c1.value = a0, a1
                if execute(h) or store(h):
                    raise error()
                n = num_rows(h)
                free(h)
                return n
        count.prepared = self  # the statement lives as long as its closure
        return count

    def key_counter(self):
        """``count(key)`` for a SELECT of one str parameter (the kv hot path's read): the
        key's bytes copied into the bound buffer (grown and re-bound when too small)."""
        self._bind(("",))
        a, h, enc, length = self.api, self.handle, self.encoding, self.lengths[0]
        execute, store, num_rows, free, error = (a.stmt_execute, a.stmt_store_result, a.stmt_num_rows,
                                                 a.stmt_free_result, self.error)
        cell = self.cells[0]

        def count(key):
            nonlocal cell
            b = key.encode(enc)
            n = len(b)
            if n > len(cell):
                self._grow(0, n)
                cell = self.cells[0]
            cell[:n] = b
            length.value = n
            if execute(h) or store(h):
                raise error()
            n = num_rows(h)
            free(h)
            return n
        count.prepared = self
        return count

    def value_key_updater(self):
        """``update(value, key)`` -> found, for an UPDATE of two str parameters (the kv hot
        path's one-field update)."""
        self._bind(("", ""))
        a, h, enc = self.api, self.handle, self.encoding
        (vl, kl), cells = self.lengths, self.cells
        execute, affected, error = a.stmt_execute, a.stmt_affected_rows, self.error

        def update(value, key):
            v, k = value.encode(enc), key.encode(enc)
            if len(v) > len(cells[0]) or len(k) > len(cells[1]):
                self._set((value, key))
            else:
                cells[0][:len(v)] = v
                vl.value = len(v)
                cells[1][:len(k)] = k
                kl.value = len(k)
            if execute(h):
                raise error()
            return affected(h) > 0
        update.prepared = self
        return update

    # -- life --------------------------------------------------------------------------------
    def free(self) -> None:
        h, self.handle = self.handle, None
        if h:
            self.api.stmt_close(h)

    def __del__(self):
        # only once the connection is closed: mysql_close detached the handle, so freeing it
        # sends nothing (a live connection may be another thread's at garbage collection)
        if self.detached and self.handle:
            self.free()
