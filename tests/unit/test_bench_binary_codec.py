"""bench/mysql_binary_codec.py's hand-written COM_STMT_EXECUTE counts the rows of an answer as
the server sends it (packets split anywhere across recv calls), and says an error packet's
message: a fake socket replays the bytes, no server."""
import struct

import pytest

from bench.mysql_binary_codec import BinaryStatement


def packet(payload: bytes, seq: int = 1) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes((seq,)) + payload


EOF = b"\xfe\x00\x00\x02\x00"


class FakeSocket:
    """Answers each sendall with the next scripted reply, handed out ``chunk`` bytes per recv."""

    def __init__(self, replies, chunk):
        self.replies, self.chunk, self.pending, self.sent = list(replies), chunk, b"", []

    def sendall(self, data):
        self.sent.append(data)
        if self.replies:
            self.pending += self.replies.pop(0)

    def recv(self, n):
        out, self.pending = self.pending[:min(n, self.chunk)], self.pending[min(n, self.chunk):]
        assert out, "recv with nothing sent back: the codec read past its answer"
        return out


PREPARE_OK = packet(b"\x00" + struct.pack("<IHH", 7, 2, 1) + b"\x00\x00\x00") + packet(b"param-def") + packet(EOF) \
    + packet(b"col-a") + packet(b"col-b") + packet(EOF)


def answer(rows: int) -> bytes:
    return packet(b"\x02") + packet(b"col-a") + packet(b"col-b") + packet(EOF) \
        + b"".join(packet(b"\x00\x00" + b"r" * 300) for _ in range(rows)) + packet(EOF)


@pytest.mark.parametrize("chunk", (1, 7, 65536))
def test_rows_are_counted_whatever_the_recv_sizes(chunk):
    sock = FakeSocket([PREPARE_OK, answer(3), answer(0), answer(1)], chunk)
    st = BinaryStatement(sock, "SELECT a, b FROM t WHERE k = ?")
    assert st.id == 7
    assert [st.count("user1"), st.count(42), st.count("x")] == [3, 0, 1]
    # each execution: statement 7, no cursor, one iteration, the parameter's type and value
    assert sock.sent[1][4:] == b"\x17" + struct.pack("<IBI", 7, 0, 1) + b"\x00\x01\xfd\x00\x05user1"
    assert sock.sent[2][4:].endswith(b"\x08\x00" + struct.pack("<q", 42))
    assert sock.pending == b"" and st.buf == b""


def test_an_error_packet_is_raised_with_its_message():
    err = packet(b"\xff" + struct.pack("<H", 1146) + b"#42S02Table 'db.t' doesn't exist")
    st = BinaryStatement(FakeSocket([PREPARE_OK, err], 65536), "SELECT a, b FROM t WHERE k = ?")
    with pytest.raises(RuntimeError, match="Table 'db.t' doesn't exist"):
        st.count("user1")
