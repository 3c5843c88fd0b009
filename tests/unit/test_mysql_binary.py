"""The binary protocol's codec (bindings/mysql_binary.py) on a socket pair: the server's side is
packets written here, in the shapes MariaDB 10.11 sends to libmariadb (classic EOFs, cached
metadata) and those a client of CLIENT_DEPRECATE_EOF gets. The real server's side is in the
contract suite (tests/contract/test_binding_contract.py, ``test_mysqlclient_prepares_...``)."""
import socket
import struct

import pytest

from dbswarm.bindings import mysql_binary as mb


class Errors:  # the driver's exception classes, as MySQLdb names them
    class Error(Exception):
        pass

    class OperationalError(Error):
        pass

    class ProgrammingError(Error):
        pass

    class IntegrityError(Error):
        pass

    class DataError(Error):
        pass

    class NotSupportedError(Error):
        pass

    class InternalError(Error):
        pass


def pkt(seq, payload: bytes) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes((seq,)) + payload


EOF = b"\xfe\x00\x00\x02\x00"
COLDEF = b"\x03def\x00\x00\x00\x01a\x00\x00\x0c?\x00\x15\x00\x00\x00\x08\x00\x00\x00\x00\x00"
ROW = b"\x00\x00" + struct.pack("<q", 7)
OK = b"\x00\x01\x00\x02\x00\x00\x00"


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield mb.Wire(a.fileno(), Errors), b
    a.close()
    b.close()


def test_lenenc_and_the_parameters_encoding():
    assert [mb.lenenc(n) for n in (0, 250, 251, 65536)] == [b"\x00", b"\xfa", b"\xfc\xfb\x00", b"\xfd\x00\x00\x01"]
    assert mb._read_lenenc(b"\xfc\xfb\x00", 0) == (251, 3)
    raw = mb.encode_params(("ké'y", 5, None, b"\x00\xff", 1.5))
    assert raw[:1] == bytes((0b100,))  # the NULL bitmap: the third parameter
    assert raw[1:2] == b"\x01"  # new parameters bound: types follow
    assert raw[2:12] == b"\xfd\x00\x08\x00\x06\x00\xfc\x00\x05\x00"
    assert raw[12:] == b"\x05k\xc3\xa9'y" + struct.pack("<q", 5) + b"\x02\x00\xff" + struct.pack("<d", 1.5)
    with pytest.raises(mb.TextOnly):
        mb.encode_params((1 << 63,))
    with pytest.raises(mb.TextOnly):
        mb.encode_params((object(),))
    assert mb.binary_sql("SELECT %s FROM t WHERE a LIKE 'x%%' AND b = %s") == "SELECT ? FROM t WHERE a LIKE 'x%' AND b = ?"


def test_an_answer_counts_rows_in_each_eof_convention(pair):
    wire, server = pair
    # classic EOFs, definitions sent (column count without the cache byte)
    server.sendall(pkt(1, b"\x01") + pkt(2, COLDEF) + pkt(3, EOF) + pkt(4, ROW) + pkt(5, ROW) + pkt(6, EOF))
    assert wire.answer(2) == (True, 2)
    # cached metadata: the count's byte says no definitions follow (the EOF still does)
    server.sendall(pkt(1, b"\x01\x00") + pkt(2, EOF) + pkt(3, ROW) + pkt(4, EOF))
    assert wire.answer(2) == (True, 1)
    # no rows
    server.sendall(pkt(1, b"\x01\x01") + pkt(2, COLDEF) + pkt(3, EOF) + pkt(4, EOF))
    assert wire.answer(2) == (True, 0)
    # CLIENT_DEPRECATE_EOF: no EOF after the definitions, an OK of 0xFE at the end
    server.sendall(pkt(1, b"\x01") + pkt(2, COLDEF) + pkt(3, ROW) + pkt(4, b"\xfe\x00\x00\x02\x00\x00\x00"))
    assert wire.answer(1) == (True, 1)
    # an OK: the affected rows
    server.sendall(pkt(1, OK))
    assert wire.answer(2) == (False, 1)
    assert wire.pos == len(wire.buf) or not wire.buf[wire.pos:]  # nothing left over


def test_an_answer_split_across_reads(pair):
    wire, server = pair
    data = pkt(1, b"\x01") + pkt(2, COLDEF) + pkt(3, EOF) + b"".join(pkt(4 + i, ROW) for i in range(50)) + pkt(54, EOF)
    import threading

    def dribble():
        for i in range(0, len(data), 7):
            server.sendall(data[i:i + 7])
    t = threading.Thread(target=dribble)
    t.start()
    assert wire.answer(2) == (True, 50)
    t.join()


def test_errors_are_the_drivers_classes_and_a_closed_socket_is_lost(pair):
    wire, server = pair
    server.sendall(pkt(1, b"\xff\x26\x04#23000Duplicate entry 'k' for key 'PRIMARY'"))
    with pytest.raises(Errors.IntegrityError) as err:
        wire.answer(2)
    assert err.value.args == (1062, "Duplicate entry 'k' for key 'PRIMARY'")
    server.sendall(pkt(1, b"\xff\x7a\x04#42S02Table 'x' doesn't exist"))
    with pytest.raises(Errors.ProgrammingError):
        wire.answer(2)
    server.sendall(pkt(1, b"\xff\xbd\x04#40001Deadlock found when trying to get lock"))  # 1213: operational
    with pytest.raises(Errors.OperationalError) as err:
        wire.answer(2)
    assert err.value.args[0] == 1213
    # an error in the middle of the rows (a killed query)
    server.sendall(pkt(1, b"\x01") + pkt(2, COLDEF) + pkt(3, EOF) + pkt(4, ROW)
                   + pkt(5, b"\xff\x25\x05#70100Query execution was interrupted"))
    with pytest.raises(Errors.OperationalError) as err:
        wire.answer(2)
    assert err.value.args[0] == 1317
    server.sendall(pkt(1, b"\x01"))  # then the server goes away mid-answer
    server.shutdown(socket.SHUT_WR)
    with pytest.raises(Errors.OperationalError) as err:
        wire.answer(2)
    assert err.value.args[0] == 2013 and "closed the connection" in err.value.args[1]


def test_a_silent_server_is_lost_after_the_read_timeout():
    a, b = socket.socketpair()
    try:
        wire = mb.Wire(a.fileno(), Errors, timeout_s=0.2)
        a.setblocking(False)  # as libmariadb leaves a socket with timeouts
        with pytest.raises(Errors.OperationalError) as err:
            wire.answer(2)
        assert err.value.args[0] == 2013 and "read_timeout" in err.value.args[1]
    finally:
        a.close()
        b.close()


def test_prepare_reads_to_the_pings_ok_in_either_convention(pair):
    wire, server = pair
    prep_ok = b"\x00" + struct.pack("<IHH", 9, 1, 1) + b"\x00\x00\x00"
    server.sendall(pkt(1, prep_ok) + pkt(2, COLDEF) + pkt(3, EOF) + pkt(4, COLDEF) + pkt(5, EOF) + pkt(1, OK))
    st, deprecate = mb.prepare(wire, "SELECT a FROM t WHERE k = ?")
    assert (st.id, st.params, deprecate) == (9, 1, False)
    sent = server.recv(1000)
    assert sent[4] == mb.COM_STMT_PREPARE and sent.endswith(pkt(0, bytes((mb.COM_PING,))))
    server.sendall(pkt(1, prep_ok) + pkt(2, COLDEF) + pkt(3, COLDEF) + pkt(1, OK))
    assert mb.prepare(wire, "SELECT a FROM t WHERE k = ?")[1] is True
    server.sendall(pkt(1, b"\xff\xb5\x05#HY000Can't create more than max_prepared_stmt_count") + pkt(1, OK))
    assert mb.prepare(wire, "SELECT 1") == (None, None)  # refused: the statement stays text


def test_a_request_larger_than_the_socket_buffer_is_sent_whole(pair):
    wire, server = pair
    import threading
    big = mb.packet(b"\x17" + b"x" * 3_000_000)
    got = bytearray()

    def drain():
        while len(got) < len(big):
            got.extend(server.recv(1 << 20))
    t = threading.Thread(target=drain)
    t.start()
    wire.send(big)
    t.join(10)
    assert bytes(got) == big


def test_the_one_parameter_packets_equal_the_general_encoding(pair):
    wire, server = pair
    calls = mb.BinaryCalls(wire)
    st = mb.Prepared(5, 1)
    for p in ("user123", "é" * 10, 42, -(1 << 63), "x" * 300, (1 << 63)):
        try:
            general = mb.packet(st.head + mb.encode_params((p,)))
        except mb.TextOnly:
            with pytest.raises(mb.TextOnly):
                calls.send(st, (p,))
            continue
        calls.send(st, (p,))
        assert server.recv(10000) == general, p


def test_the_two_int_packet_equals_the_general_encoding(pair):
    wire, server = pair
    calls = mb.BinaryCalls(wire)
    st = mb.Prepared(6, 2)
    for params in ((1, 100), (-5, 1 << 62), (1 << 63, 1), (True, 2), (1, "x")):
        try:
            general = mb.packet(st.head + mb.encode_params(params))
        except mb.TextOnly:
            with pytest.raises(mb.TextOnly):
                calls.send(st, params)
            continue
        calls.send(st, params)
        assert server.recv(10000) == general, params


class _Session:
    """What ``usable`` asks a mysqlclient connection: its character set and its TLS cipher."""

    def __init__(self, charset="utf8mb4", cipher=b""):
        self.charset, self.cipher, self.asked = charset, cipher, []

    def character_set_name(self):
        return self.charset

    def query(self, sql):
        self.asked.append(sql)

    def store_result(self):
        cipher = self.cipher

        class Result:
            def fetch_row(self, n):
                return ((b"Ssl_cipher", cipher),)
        return Result()

    def fileno(self):
        return 7


def test_only_plain_utf8_sessions_carry_the_binary_protocol():
    assert mb.usable(_Session())
    assert not mb.usable(_Session(cipher=b"TLS_AES_256_GCM_SHA384"))  # TLS: libmariadb's records
    assert not mb.usable(_Session(charset="latin1"))
    assert _Session().asked == [] and mb.usable(s := _Session()) and s.asked == [b"SHOW SESSION STATUS LIKE 'Ssl_cipher'"]
