"""The ``mysql`` binding's C driver: mysqlclient (``MySQLdb``, on libmariadb or libmysqlclient).

Chosen with ``target.options.driver: mysqlclient``; ``bindings/mysql.py`` does the rest
(SQL with ``%s`` placeholders formatted client-side, statement cache, error codes).
Connecting, closing, the exception classes and the three statement calls differ, and
live here.

Statements run one level below MySQLdb's cursor (``Statements``): ``query`` with the
parameters escaped by the connection's own ``literal``, then ``store_result`` and
``fetch_row`` — exactly what ``cursor.execute`` does, without the cursor's per-call Python
bookkeeping (description, insert id, warning count), which is a third of the client CPU
of a 10-field read (measured: 58 -> 41 µs per read).

The same connection settings as the PyMySQL path, translated:

- ``connect_timeout`` / ``read_timeout`` / ``write_timeout`` are whole seconds in the C
  client: rounded up (at least 1).
- ``unix_socket``: the C client uses it only when the host is ``localhost``; without it,
  ``localhost`` would also mean the default socket, so it becomes ``127.0.0.1`` (TCP, as
  PyMySQL connects).
- ``ssl_ca`` -> ``ssl={"ca": ...}`` with ``ssl_mode="VERIFY_CA"`` (TLS required, the
  certificate checked, as PyMySQL does with a CA); ``ssl_verify_identity`` ->
  ``ssl_mode="VERIFY_IDENTITY"``. Built against libmariadb (MariaDB Connector/C has no
  ``MYSQL_OPT_SSL_MODE``), mysqlclient maps both modes to
  ``MYSQL_OPT_SSL_VERIFY_SERVER_CERT``, which also checks the host name: stricter than
  PyMySQL for ``ssl_ca`` alone.
- multi-statements off (MySQLdb turns them on by default; PyMySQL does not).

Errors: MySQLdb raises ``OperationalError(code, text)`` and friends, ``args[0]`` being the
same server and client error codes as PyMySQL's. A connection killed by the server is
2013 at the next call and 2006 afterwards (PyMySQL: 2013, then ``InterfaceError(0, '')``);
refused is 2002 (PyMySQL: 2003); "commands out of sync" is ``ProgrammingError(2014)``. The
connection's ``open`` attribute only turns false on ``close()``, not when the server cuts
it; ``close()`` of a closed connection raises (swallowed here).
"""
from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, Optional, Sequence

from dbswarm.bindings import mysql_binary
from dbswarm.bindings.protocols import Split
from dbswarm.errors import BindingError

CLIENT_SIDE = "client-side (MySQLdb formats parameters; statements cached)"
SERVER_SIDE = ("server-side for the per-operation statements (the binary protocol on mysqlclient's connection, "
               "plain connections in utf8mb4; TLS: client-side), client-side for the rest")


INSTALL_HINT = ("pip install mysqlclient (or dbswarm[mysqlclient]); it builds a C extension and needs a C "
                "compiler, pkg-config and libmariadb-dev or libmysqlclient-dev (Debian/Ubuntu: apt-get install "
                "build-essential pkg-config libmariadb-dev)")


def _seconds(value: float | str) -> int:
    return max(1, math.ceil(float(value)))


class MysqlclientDriver:
    name = "mysqlclient"
    choice: str  # set by make_driver

    def __init__(self) -> None:
        try:
            import MySQLdb
            from MySQLdb import _mysql
            from MySQLdb.constants import CLIENT
        except ImportError as err:
            raise BindingError(f"target.options.driver mysqlclient: MySQLdb cannot be imported ({err}); "
                               f"{INSTALL_HINT}") from None
        self.MySQLdb = MySQLdb
        self.found_rows = CLIENT.FOUND_ROWS
        self.Error = MySQLdb.MySQLError
        self.OperationalError = MySQLdb.OperationalError
        self.InterfaceError = MySQLdb.InterfaceError
        self.version = ".".join(str(p) for p in MySQLdb.version_info[:3])
        self.client_info = _mysql.get_client_info()
        # MariaDB Connector/C is versioned 3.x; libmysqlclient carries the MySQL version
        self.client_lib = "libmariadb" if self.client_info.startswith("3.") else "libmysqlclient"

    def connect(self, kw: dict, password: str, init_command: Optional[str], connect_timeout: float) -> Any:
        """``kw``: what ``parse_mysql_url`` returns (PyMySQL's names)."""
        kw = dict(kw)
        args = {"host": kw.pop("host"), "port": int(kw.pop("port")), "password": password,
                "charset": kw.pop("charset", "utf8mb4"), "autocommit": True, "client_flag": self.found_rows,
                "multi_statements": False,
                "connect_timeout": _seconds(kw.pop("connect_timeout", connect_timeout))}
        for key in ("user", "database"):
            if key in kw:
                args[key] = kw.pop(key)
        for key in ("read_timeout", "write_timeout"):
            if key in kw:
                args[key] = _seconds(kw.pop(key))
        sock = kw.pop("unix_socket", None)
        if sock:
            args["host"], args["unix_socket"] = "localhost", sock
        elif args["host"] == "localhost":
            args["host"] = "127.0.0.1"
        ssl, verify_identity = kw.pop("ssl", None), kw.pop("ssl_verify_identity", False)
        if ssl:
            args["ssl"] = ssl
            args["ssl_mode"] = "VERIFY_CA"
        if verify_identity:
            args["ssl_mode"] = "VERIFY_IDENTITY"
        if init_command:
            args["init_command"] = init_command
        if kw:  # parse_mysql_url grew a parameter this translation does not know
            raise ValueError(f"mysql URL parameters {', '.join(sorted(kw))} are not supported with "
                             f"target.options.driver mysqlclient")
        return self.MySQLdb.connect(**args)

    def statements(self, db: Any, hot: Optional[set] = None, read_timeout: Optional[float] = None) -> "Statements":
        """The connection's driver calls. ``hot`` (the binding's per-operation statements; None
        with ``options.prepare: false``): run as server-side prepared statements, through the
        binary protocol on the connection's socket (bindings/mysql_binary.py), where the
        connection can carry it; everything else is text."""
        from MySQLdb import _mysql
        if hot is not None and isinstance(db, _mysql.connection) and mysql_binary.usable(db):
            return BinaryStatements(db, hot, mysql_binary.Wire(db.fileno(), self.MySQLdb, read_timeout))
        return Statements(db)

    @staticmethod
    def close(db: Any) -> None:
        try:
            db.close()
        except Exception:  # already closed (MySQLdb raises 2006): closing must not fail
            pass

    @staticmethod
    def is_open(db: Any) -> bool:
        return bool(db.open)

    @staticmethod
    def out_of_sync(exc: BaseException, code: Optional[int]) -> bool:
        return code == 2014  # CR_COMMANDS_OUT_OF_SYNC, raised as ProgrammingError

    def describe(self, prepare: bool = False) -> dict:
        """``prepare``: whether the binding asked for server-side prepared statements
        (``options.prepare``): the per-operation statements go through the binary protocol
        (``statements``; a TLS or non-UTF-8 session keeps text)."""
        return {"driver": f"mysqlclient {self.version} (MySQLdb, {self.client_lib} C client {self.client_info})",
                "prepared_statements": SERVER_SIDE if prepare else CLIENT_SIDE}


class Statements:
    """The binding's driver calls on one MySQLdb connection, through ``_mysql``.

    A statement whose one or two parameters are ints (sysbench's point selects and ranges,
    its updates and deletes by id) is formatted by one C-level ``%`` on a template with
    ``%d`` placeholders, cached per statement: no per-parameter conversion, no list, no extra
    call. Measured on oltp_read_only (16 statements a transaction, one thread against
    MariaDB, interleaved with a bare ``_mysql`` loop): the general path cost about 0.9 µs a
    statement in isolation and about three times that between two round trips (cold
    caches; `git show 5a7d68a:BENCHMARKS.md`, history). Everything else (strs, other types, more parameters) takes
    the general path below. ``query`` is ``_mysql``'s C method itself, not MySQLdb's Python
    wrapper (which only turns a bytearray into bytes: dbswarm sends bytes)."""
    __slots__ = ("_query", "_literal", "_string", "_encoding", "_store", "_affected", "_sql", "_ints", "_split",
                 "fileno", "splits")

    def __init__(self, db: Any) -> None:
        from MySQLdb import _mysql
        raw = isinstance(db, _mysql.connection)  # (a test's stand-in is not)
        self._query = _mysql.connection.query.__get__(db) if raw else db.query
        self._literal, self._store = db.literal, db.store_result
        # MySQLdb's literal() of a str is string_literal(o.encode(encoding)) after type checks
        self._string, self._encoding = db.string_literal, db.encoding
        self._affected = db.affected_rows
        # the split calls (engine.mux): _mysql's send_query / read_query_result, and the socket
        self._split: tuple[Any, Any] = (db.send_query, db.read_query_result) if raw else (None, None)
        self.fileno = db.fileno if raw else None
        self.splits: dict[Any, Split] = {}  # the split form of each call made here (protocols.Multiplexing)
        self._sql: dict[str, bytes] = {}   # statement -> its bytes (statements are cached, few)
        self._ints: dict[str, bytes] = {}  # statement -> its bytes with %d placeholders

    def _bytes(self, sql: str, params: Any) -> bytes:
        """The general path: the statement's bytes with every parameter formatted."""
        b = self._sql.get(sql)
        if b is None:
            b = self._sql[sql] = sql.encode()
            if "%%" not in sql:  # "%%s" is a literal "%s", not a placeholder to rewrite
                self._ints[sql] = sql.replace("%s", "%d").encode()
        if not params:
            return b
        if len(params) == 1 and type(params[0]) is str:  # a YCSB key: one escape, no list
            return b % (self._string(params[0].encode(self._encoding)),)
        # ints and strs (sysbench's ids, YCSB's keys and values) are formatted here, not
        # through MySQLdb's literal(): an int's literal is its digits, a str's the C escape
        # of its bytes, as literal() makes them after its type checks (and for ints a
        # Python converter). The contract test test_values_reach_the_server_unchanged
        # round-trips quotes, backslashes, format and non-ASCII characters through it.
        lit, string, enc = self._literal, self._string, self._encoding
        return b % tuple([b"%d" % p if type(p) is int else string(p.encode(enc)) if type(p) is str else lit(p)
                          for p in params])

    # The fast path's test: one or two parameters, ints both (``type(x) is int`` is exact:
    # a bool or a float would not pass, and %d would turn a float into its integer part).
    def execute(self, sql: str, params: Any = ()) -> int:
        t = self._ints.get(sql)
        if t is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
            self._query(t % params)
        else:
            self._query(self._bytes(sql, params))
        res = self._store()
        if res is not None:
            res.fetch_row(0)  # a result set must be read before the next statement
        return self._affected()

    def fetchall(self, sql: str, params: Any = ()) -> Sequence[tuple]:
        t = self._ints.get(sql)
        if t is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
            self._query(t % params)
        else:
            self._query(self._bytes(sql, params))
        res = self._store()
        return res.fetch_row(0) if res is not None else ()

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        self._query(self._bytes(sql, params))
        res = self._store()
        if res is None:
            return None
        rows = res.fetch_row(1)
        return rows[0] if rows else None

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        t = self._ints.get(sql)
        if t is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
            self._query(t % params)
        else:
            self._query(self._bytes(sql, params))
        res = self._store()  # store_result: every row is read into libmariadb's buffer
        return res.num_rows() if res is not None else 0

    # The kv hot path (Binding.reader / updater): one statement with str parameters, made
    # into one closure per statement, so a YCSB read is this call and the driver's.
    def counter(self, sql: str) -> Any:  # count(key), with send / finish
        """``count(key)``: fetchcount(sql, (key,)) for a statement of one str parameter."""
        b = statement_template(sql, 1)
        query, store, string, enc = self._query, self._store, self._string, self._encoding

        def count(key: str) -> int:
            query(b % string(key.encode(enc)))
            res = store()
            return res.num_rows() if res is not None else 0
        send_query = self._split[0]

        def send(key: str) -> None:
            send_query(b % string(key.encode(enc)))
        self.splits[count] = Split(send, self._finish_rows)
        return count

    def updater(self, sql: str) -> Callable[[Any, Any], Any]:
        """``update(value, key)``: execute(sql, (value, key)) > 0 for a statement of two str
        parameters."""
        b = statement_template(sql, 2)
        query, store, string, enc, affected = self._query, self._store, self._string, self._encoding, self._affected

        def update(value: str, key: str) -> bool:
            query(b % (string(value.encode(enc)), string(key.encode(enc))))
            res = store()
            if res is not None:
                res.fetch_row(0)
            return affected() > 0
        send_query, finish_affected = self._split[0], self._finish_affected

        def send(value: str, key: str) -> None:
            send_query(b % (string(value.encode(enc)), string(key.encode(enc))))

        def finish() -> bool:
            return finish_affected() > 0
        self.splits[update] = Split(send, finish)
        return update

    # sysbench's statements (Binding.query_counter / statement_runner / transaction_calls) and
    # YCSB's inserts, scans and whole-record updates (row_counter, statement_runner): the
    # blocking call as it is (fetchcount's / execute's int fast path, else the general
    # formatting), with the text statement's split calls where the connection is _mysql's
    # (engine.mux)
    def query_counter(self, sql: str) -> Any:  # count(params), with send / finish
        count = partial(self.fetchcount, sql)
        if self._split[0] is not None:
            self.splits[count] = Split(self._send(sql), self._finish_rows)
        return count

    def row_fetcher(self, sql: str) -> Callable[[Any], Any]:
        fetch = partial(self.fetchall, sql)
        if self._split[0] is not None:
            self.splits[fetch] = Split(self._send(sql), self._finish_all)
        return fetch

    def statement_runner(self, sql: str) -> Any:  # run(params), with send / finish
        run = partial(self.execute, sql)
        if self._split[0] is not None:
            self.splits[run] = Split(self._send(sql), self._finish_affected)
        return run

    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]:
        calls = []
        for command in ("BEGIN", "COMMIT"):
            call = partial(self.execute, command)
            if self._split[0] is not None:
                self.splits[call] = Split(partial(self._split[0], command.encode()), self._finish_affected)
            calls.append(call)
        return calls[0], calls[1]

    def rollback_call(self) -> Callable[[], Any]:
        call = partial(self.execute, "ROLLBACK")
        if self._split[0] is not None:
            self.splits[call] = Split(partial(self._split[0], b"ROLLBACK"), self._finish_affected)
        return call

    def _send(self, sql: str) -> Callable[[Any], None]:
        """``send(params)``: the statement's bytes as ``execute`` formats them, sent."""
        send_query, ints, general = self._split[0], self._ints, self._bytes
        self._bytes(sql, ())  # its templates made now (the int one where it has no literal %)
        t = ints.get(sql)

        def send(params: Any) -> None:
            if t is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
                send_query(t % params)
            else:
                send_query(general(sql, params))
        return send

    def _finish_rows(self) -> int:
        self._split[1]()  # readable: the answer has come; read_query_result reads the rest
        res = self._store()
        return res.num_rows() if res is not None else 0

    def _finish_all(self) -> Any:
        self._split[1]()
        res = self._store()
        return res.fetch_row(0) if res is not None else ()

    def _finish_affected(self) -> int:
        self._split[1]()
        res = self._store()
        if res is not None:
            res.fetch_row(0)
        return self._affected()


class BinaryStatements(Statements):
    """Statements whose per-operation calls (the binding's ``hot`` set: YCSB's reads and
    updates, sysbench's selects and writes) run as server-side prepared statements
    (bindings/mysql_binary.py), with the same split calls for the multiplexer; the rest, and
    any call the binary encoding does not carry, as text. A call's answer is the same either
    way: rows counted, affected rows."""
    __slots__ = ("_binary", "_hot", "_pending")

    def __init__(self, db: Any, hot: set, wire: mysql_binary.Wire) -> None:
        super().__init__(db)
        self._binary, self._hot = mysql_binary.BinaryCalls(wire), hot
        self._pending: Any = None  # the finish of the split call in flight (binary or text)

    def _calls(self, sql: str, text: Callable[[Any], Any], text_send: Callable[[Any], None],
               text_finish: Callable[[], Any], result: Callable[[bool, int], Any]) -> Any:
        """The call of ``sql`` as a prepared statement: ``run(params)``, with ``send`` /
        ``finish``; ``text`` (and its split calls) where it stays text. ``result(is_rows,
        n)`` makes the call's return value."""
        binary = self._binary
        binary.take(sql)
        statement, send_binary, answer, TextOnly = binary.statement, binary.send, binary.answer, mysql_binary.TextOnly

        def run(params: Any) -> Any:
            st = statement(sql)
            if st is not None:
                try:
                    send_binary(st, params)
                except TextOnly:
                    return text(params)
                return result(*answer())
            return text(params)

        def finish_binary() -> Any:
            return result(*answer())

        def send(params: Any) -> None:
            st = statement(sql)
            if st is not None:
                try:
                    send_binary(st, params)
                    self._pending = finish_binary
                    return
                except TextOnly:
                    pass
            self._pending = text_finish
            text_send(params)

        def finish() -> Any:
            return self._pending()
        self.splits[run] = Split(send, finish)
        return run

    def _kv(self, text: Any, sql: str, result: Callable[[bool, int], Any]) -> Any:
        """A kv call (``count(key)``, ``update(value, key)``: positional arguments) over ``_calls``,
        ``text`` the text path's own."""
        text_send, text_finish = self.splits[text]
        run = self._calls(sql, lambda params: text(*params), lambda params: text_send(*params), text_finish, result)
        send, finish = self.splits[run]

        def call(*args: Any) -> Any:
            return run(args)
        self.splits[call] = Split(lambda *args: send(args), finish)
        return call

    def counter(self, sql: str) -> Any:
        text = super().counter(sql)
        return self._kv(text, sql, lambda is_rows, n: n if is_rows else 0) if sql in self._hot else text

    def updater(self, sql: str) -> Callable[[Any, Any], Any]:
        text = super().updater(sql)
        return self._kv(text, sql, lambda is_rows, n: n > 0) if sql in self._hot else text

    def query_counter(self, sql: str) -> Callable[[Any], int]:
        text = super().query_counter(sql)
        return self._calls(sql, text, *self.splits[text], lambda is_rows, n: n if is_rows else 0) \
            if sql in self._hot else text

    def statement_runner(self, sql: str) -> Callable[[Any], int]:
        text = super().statement_runner(sql)
        return self._calls(sql, text, *self.splits[text], lambda is_rows, n: n) if sql in self._hot else text


def statement_template(sql: str, params: int) -> bytes:
    """The kv hot path's statement (``params`` %s placeholders, no literal %) as bytes."""
    if "%%" in sql or sql.count("%s") != params:
        raise ValueError(f"a statement of {params} %s parameter(s) expected: {sql!r}")
    return sql.encode()
