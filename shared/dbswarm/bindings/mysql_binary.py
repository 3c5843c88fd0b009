"""MariaDB/MySQL server-side prepared statements on a mysqlclient connection: the binary
protocol's three commands, spoken by dbswarm on the connection's socket (issue 36, item 3).

Why: sysbench and go-ycsb prepare their statements once per connection; dbswarm's drivers send
text, which the server parses at every call (0.92-0.93 of the server CPU per statement with the
binary protocol, measured: docs/decisions/0006-mariadb-binary-protocol.md). No
Python driver offers the protocol at mysqlclient's client cost without a leak (same document),
and the last way dbswarm had (ctypes into libmariadb's structures) was removed. The protocol
itself is small and public (MariaDB's "COM_STMT_PREPARE", "COM_STMT_EXECUTE", "Binary Result
set"): this module builds the execute packet from a prefix and the parameters and walks the
answer's packets, counting rows without decoding them — what a hot statement needs (a YCSB
read's rows, an update's affected rows). Statements whose values a family reads (TPC-C's
``row_fetcher``) keep text.

The socket is mysqlclient's own (``connection.fileno()``, its public API): the driver opened
and authenticated the connection, and between two of its calls nothing of it is in flight, so
a command of this module — request and whole answer — fits between them (each command starts
its packets' sequence at 0). Used only on plain connections (no TLS, no compression) whose
character set is utf8/utf8mb4: anything else keeps text (``usable``).

Errors: an ERR packet raises the driver's own exception class for its code, as mysqlclient's C
code chooses it (``_mysql.c``, ``_mysql_Exception``), so ``MysqlBinding.classify`` sees what it
would see from text; a socket that closes or fails raises ``OperationalError(2013)``. A prepare
the server refuses (``max_prepared_stmt_count``: 512 sysbench connections of 72 statements
pass its default of 16,382) leaves that statement as text on that connection.
"""
from __future__ import annotations

import os
import select
import struct
from typing import Any, Optional, Sequence

COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_PING = 0x16, 0x17, 0x0E
MAX_PAYLOAD = 0xFFFFFF
_LOST = 2013  # CR_SERVER_LOST

# mysqlclient's choice of exception class per server error code (_mysql.c, _mysql_Exception);
# anything else: OperationalError (InternalError below 1000)
_PROGRAMMING = {2014, 1007, 1149, 1064, 1146, 1102, 1103, 1110, 1111, 1112, 1113, 1179}
_DATA = {1265, 1263, 1264, 1230, 1171, 1406, 1441}
_INTEGRITY = {1062, 1169, 1216, 1452, 1217, 1451, 1215, 1364, 1048}
_NOT_SUPPORTED = {1196, 1235, 1289, 1286}

class TextOnly(Exception):
    """A parameter the binary encoding here does not carry (a Decimal, a date): the call goes
    as text."""


def lenenc(n: int) -> bytes:
    if n < 251:
        return bytes((n,))
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def _read_lenenc(buf: bytes, pos: int) -> tuple[int, int]:
    first = buf[pos]
    if first < 251:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first, 0)
    return int.from_bytes(buf[pos + 1:pos + 1 + size], "little"), pos + 1 + size


def binary_sql(sql: str) -> str:
    """A dbswarm statement (``%s`` placeholders, ``%%`` a literal %) in the protocol's form (``?``)."""
    return sql.replace("%s", "?").replace("%%", "%")


def encode_params(params: Sequence[Any]) -> bytes:
    """The execute packet's parameter part: NULL bitmap, new-params-bound flag, types, values."""
    n = len(params)
    nulls = bytearray((n + 7) // 8)
    types, values = bytearray(), bytearray()
    for i, p in enumerate(params):
        t = type(p)
        if t is str:
            raw = p.encode()
            types += b"\xfd\x00"
            values += lenenc(len(raw)) + raw
        elif t is int or t is bool:
            if not -(1 << 63) <= p < 1 << 63:
                raise TextOnly(f"integer {p} out of range")
            types += b"\x08\x00"
            values += struct.pack("<q", p)
        elif p is None:
            nulls[i // 8] |= 1 << (i % 8)
            types += b"\x06\x00"
        elif t is bytes or t is bytearray:
            types += b"\xfc\x00"
            values += lenenc(len(p)) + p
        elif t is float:
            types += b"\x05\x00"
            values += struct.pack("<d", p)
        else:
            raise TextOnly(f"a parameter of type {t.__name__}")
    return bytes(nulls) + b"\x01" + bytes(types) + bytes(values)


def packet(payload: bytes) -> bytes:
    """One request packet (sequence 0: a command's first)."""
    return len(payload).to_bytes(3, "little") + b"\x00" + payload


class Wire:
    """The connection's socket between the driver's calls: whole packets in and out.

    ``fd`` may be blocking or not (libmariadb sets it non-blocking where it has timeouts): a
    read that would block waits in ``poll``, up to ``timeout_s`` (the URL's ``read_timeout``;
    None: as long as it takes, as the driver)."""
    __slots__ = ("fd", "buf", "pos", "timeout_ms", "errors", "_poll")

    def __init__(self, fd: int, errors: Any, timeout_s: Optional[float] = None) -> None:
        self.fd, self.errors = fd, errors
        self.buf, self.pos = bytearray(), 0
        self.timeout_ms = -1 if timeout_s is None else max(1, int(timeout_s * 1000))
        self._poll: Any = None

    def lost(self, why: str) -> Exception:
        self.buf, self.pos = bytearray(), 0
        return self.errors.OperationalError(_LOST, f"Lost connection to server during query ({why})")

    def send(self, data: bytes) -> None:
        try:
            n = os.write(self.fd, data)  # a request fits the socket's buffer: one write
        except BlockingIOError:
            n = 0
        except OSError as err:
            raise self.lost(f"sending: {err.strerror or err}") from None
        if n < len(data):
            self._send_rest(data[n:])

    def _send_rest(self, data: bytes) -> None:
        view, fd = memoryview(data), self.fd
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                self._wait(select.POLLOUT)
                continue
            except OSError as err:
                raise self.lost(f"sending: {err.strerror or err}") from None
            view = view[n:]

    def _wait(self, events: int) -> None:
        if self._poll is None:
            self._poll = select.poll()
            self._poll.register(self.fd, select.POLLIN | select.POLLOUT)
        self._poll.modify(self.fd, events)
        if not self._poll.poll(self.timeout_ms):
            raise self.lost(f"no answer within read_timeout ({self.timeout_ms / 1000:g} s)")

    def fill(self) -> None:
        """Read what has arrived (waiting for some): appended to ``buf``."""
        if self.pos:
            del self.buf[:self.pos]
            self.pos = 0
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                self._wait(select.POLLIN)
                continue
            except OSError as err:
                raise self.lost(f"reading: {err.strerror or err}") from None
            if not chunk:
                raise self.lost("the server closed the connection")
            self.buf += chunk
            return

    def packet(self) -> bytes:
        """The next whole packet's payload (a payload of 16 MB and more spans packets: joined)."""
        out = b""
        while True:
            buf, pos = self.buf, self.pos
            if len(buf) - pos >= 4:
                n = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
                if len(buf) - pos >= 4 + n:
                    out += bytes(buf[pos + 4:pos + 4 + n])
                    self.pos = pos + 4 + n
                    if n < MAX_PAYLOAD:
                        return out
                    continue
            self.fill()

    def error(self, payload: bytes) -> Exception:
        """The driver's exception for an ERR packet (0xFF, code, '#' and SQLSTATE, message)."""
        code = int.from_bytes(payload[1:3], "little")
        msg = payload[9:] if payload[3:4] == b"#" else payload[3:]
        e = self.errors
        cls = (e.ProgrammingError if code in _PROGRAMMING else e.DataError if code in _DATA
               else e.IntegrityError if code in _INTEGRITY else e.NotSupportedError if code in _NOT_SUPPORTED
               else e.InternalError if code < 1000 else e.OperationalError)
        return cls(code, msg.decode("utf-8", "replace"))

    def answer(self, eofs: int) -> tuple[bool, int]:
        """The answer to an execute: (True, rows) for a result set, (False, affected rows) for
        an OK. ``eofs``: the EOF packets a result set carries (2 without CLIENT_DEPRECATE_EOF:
        after its column definitions and at its end; 1 with it: the end). Rows are counted,
        not decoded (a binary row starts with 0x00)."""
        p = self.packet()
        first = p[0]
        if first == 0x00:
            return False, _read_lenenc(p, 1)[0]
        if first == 0xFF:
            raise self.error(p)
        columns, at = _read_lenenc(p, 0)
        # MARIADB_CLIENT_CACHE_METADATA: a byte says whether the definitions follow
        skip = columns if at >= len(p) or p[at] else 0
        rows = 0
        buf = self.buf
        while True:
            # the packets of the answer, walked in the buffer (the hot loop: no copies)
            pos = self.pos
            if len(buf) - pos < 4:
                self.fill()
                buf = self.buf
                continue
            n = buf[pos] | buf[pos + 1] << 8 | buf[pos + 2] << 16
            if len(buf) - pos < 4 + n:
                self.fill()
                buf = self.buf
                continue
            head = buf[pos + 4] if n else 0
            self.pos = pos + 4 + n
            if skip:
                skip -= 1
            elif head == 0xFE:  # an EOF (or CLIENT_DEPRECATE_EOF's closing OK): a binary row starts 0x00
                eofs -= 1
                if eofs == 0:
                    return True, rows
            elif head == 0xFF:
                raise self.error(bytes(buf[pos + 4:pos + 4 + n]))
            elif n == MAX_PAYLOAD:  # a row of 16 MB and more: counted at its last packet
                continue
            else:
                rows += 1


_pack_q = struct.Struct("<q").pack
_ONE_INT_LEN = (10 + 4 + 8).to_bytes(3, "little") + b"\x00"  # head 10, bitmap/flag/type 4, the int 8
_pack_qq = struct.Struct("<qq").pack
_TWO_INTS = b"\x00\x01\x08\x00\x08\x00"  # two parameters: no NULL, types bound, two LONGLONGs
_TWO_INT_LEN = (10 + 6 + 16).to_bytes(3, "little") + b"\x00"


class Prepared:
    """One statement prepared on the connection: ``head`` starts its execute packet."""
    __slots__ = ("id", "params", "head", "one_str", "one_int")

    def __init__(self, stmt_id: int, params: int) -> None:
        self.id, self.params = stmt_id, params
        self.head = bytes((COM_STMT_EXECUTE,)) + struct.pack("<IBI", stmt_id, 0, 1)
        # a statement of one parameter (a YCSB read's key, sysbench's id): its packet's fixed
        # part, the NULL bitmap, new-params-bound and the type, for a str and for an int
        self.one_str = self.head + b"\x00\x01\xfd\x00"
        self.one_int = self.head + b"\x00\x01\x08\x00"


def prepare(wire: Wire, sql: str) -> tuple[Optional[Prepared], Optional[bool]]:
    """``sql`` (with ``?``) prepared: (the statement or None where the server refused it,
    whether the connection uses CLIENT_DEPRECATE_EOF — None where this answer cannot say).

    A COM_PING goes with the prepare, so the answer's end is the ping's OK whatever the
    connection's EOF convention (its definitions start 0x03 "def", EOFs 0xFE, the OK 0x00)."""
    wire.send(packet(bytes((COM_STMT_PREPARE,)) + sql.encode()) + packet(bytes((COM_PING,))))
    p = wire.packet()
    refused = p[0] == 0xFF
    defs = eofs = 0
    if not refused:
        stmt_id, columns, params = struct.unpack("<IHH", p[1:9])
        defs = columns + params
    while True:
        q = wire.packet()
        if q[0] == 0x00:
            break  # the ping's OK
        if q[0] == 0xFE:
            eofs += 1
    if refused:
        return None, None
    return Prepared(stmt_id, params), (eofs == 0) if defs else None


def usable(db: Any) -> bool:
    """Whether this mysqlclient connection may carry the binary protocol here: a plain socket
    (the session's ``Ssl_cipher`` empty: with TLS the socket carries libmariadb's TLS records,
    which only it can write — libmariadb may negotiate TLS without being asked, where the
    server offers it) and a character set whose bytes are UTF-8 (the parameters' encoding)."""
    try:
        if db.character_set_name() not in ("utf8mb4", "utf8", "utf8mb3"):
            return False
        db.query(b"SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        rows = db.store_result().fetch_row(0)
        if not rows or rows[0][1]:
            return False
        return db.fileno() >= 0
    except Exception:
        return False


class BinaryCalls:
    """The binary protocol on one connection: each statement prepared once (at the call's
    making where the connection lets it, else at its first use), ``execute(st, params)``
    sending its packet and ``answer()`` walking the reply."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.eofs = 2  # EOF packets per result set: learned at the first prepare with definitions
        self._prepared: dict[str, Optional[Prepared]] = {}

    def statement(self, sql: str) -> Optional[Prepared]:
        """``sql`` (``%s`` placeholders) prepared on this connection; None: the server refused it
        (the call stays text)."""
        try:
            return self._prepared[sql]
        except KeyError:
            pass
        st, deprecate_eof = prepare(self.wire, binary_sql(sql))
        if deprecate_eof is not None:
            self.eofs = 1 if deprecate_eof else 2
        self._prepared[sql] = st
        return st

    def take(self, sql: str) -> None:
        """Prepare now, best effort: a connection that fails here fails again, measured, at the
        statement's first use."""
        try:
            self.statement(sql)
        except Exception:
            pass

    def send(self, st: Prepared, params: Sequence[Any]) -> None:
        """The execute packet of ``st`` with ``params`` sent; TextOnly where it cannot be."""
        n = len(params)
        if n == 1:  # a key or an id: no general encoding
            p = params[0]
            if type(p) is str:
                raw = p.encode()
                if len(raw) < 251:
                    self.wire.send(packet(st.one_str + bytes((len(raw),)) + raw))
                    return
            elif type(p) is int and -(1 << 63) <= p < 1 << 63:
                self.wire.send(_ONE_INT_LEN + st.one_int + _pack_q(p))
                return
        elif n == 2 and type(params[0]) is int is type(params[1]):  # sysbench's ranges: BETWEEN ? AND ?
            try:
                self.wire.send(_TWO_INT_LEN + st.head + _TWO_INTS + _pack_qq(*params))
                return
            except struct.error:  # beyond 64 bits: the general path says so
                pass
        body = st.head + encode_params(params) if params else st.head
        if len(body) >= MAX_PAYLOAD:
            raise TextOnly("a statement of 16 MB or more")
        self.wire.send(packet(body))

    def answer(self) -> tuple[bool, int]:
        return self.wire.answer(self.eofs)
