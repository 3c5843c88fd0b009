"""What MariaDB's binary protocol would cost the client if dbswarm spoke it itself (issue 36, item 3).

No Python driver offers MariaDB's server-side prepared statements at mysqlclient's client cost
without leaking (docs/benchmarks.md, "MariaDB: prepared statements against text statements"),
so the pinned MariaDB bars stay open: sysbench and go-ycsb prepare on the server, dbswarm sends
text, and the server parses every statement. The protocol itself is small and documented
(COM_STMT_PREPARE, COM_STMT_EXECUTE, result packets). This script measures a hand-written
execution — a packet built from a prefix and the parameters, the answer's packets walked and
its rows counted without decoding them — on the socket of a PyMySQL connection (PyMySQL did
the handshake and nothing else: a probe, not a binding), beside what dbswarm runs today
(mysqlclient's text statements through the binding's own ``reader`` and ``row_counter``),
interleaved, the server pinned to CPU 0 and this process to CPU 1 (``--shared``: neither):

- ``ycsb read``: ``SELECT * FROM t WHERE YCSB_KEY = ?`` (10 fields of 100 bytes, one row);
- ``point select``: sysbench's ``SELECT c FROM t WHERE id = ?`` (an integer key).

Per statement: the client's CPU (this process), the server's CPU (mariadbd, /proc) and the
rate, medians of the rounds.

    python bench/mysql_binary_codec.py --servers-dir /tmp/dbswarm-bench36-servers --statements 20000 --rounds 5
"""
from __future__ import annotations

import argparse
import os
import resource
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

TABLE, ROWS = "binary_codec", 1000
STATEMENTS = {"ycsb read": ("SELECT * FROM {t} WHERE YCSB_KEY = ?", str),
              "point select": ("SELECT FIELD0 FROM {t} WHERE id = ?", int)}
COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE = b"\x16", b"\x17", b"\x19"
TYPE_VAR_STRING, TYPE_LONGLONG = b"\xfd\x00", b"\x08\x00"


def _packet(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload))[:3] + b"\x00" + payload


class BinaryStatement:
    """One server-side prepared statement on a socket whose connection nothing else uses
    meanwhile: ``count(param)`` executes it and returns the rows of its answer."""

    def __init__(self, sock, sql: str):
        self.sock, self.buf = sock, bytearray()
        sock.sendall(_packet(COM_STMT_PREPARE + sql.encode()))
        ok = self._packet()
        if ok[0] != 0:
            raise RuntimeError(f"prepare refused: {ok[3:].decode(errors='replace')}")
        self.id, columns, params = struct.unpack("<IHH", ok[1:9])
        for _ in range(params + (1 if params else 0) + columns + (1 if columns else 0)):
            self._packet()  # the parameters' and columns' definitions, each list ended by an EOF
        # execute: statement id, no cursor, one iteration, an empty NULL bitmap, types sent
        self.head = COM_STMT_EXECUTE + struct.pack("<IBI", self.id, 0, 1) + b"\x00\x01"

    def _packet(self) -> bytes:
        while True:
            if len(self.buf) >= 4:
                n = int.from_bytes(self.buf[:3], "little")
                if len(self.buf) >= 4 + n:
                    out = bytes(self.buf[4:4 + n])
                    del self.buf[:4 + n]
                    return out
            self.buf += self.sock.recv(65536)

    def count(self, param) -> int:
        if type(param) is int:
            body = self.head + TYPE_LONGLONG + struct.pack("<q", param)
        else:
            raw = param.encode()
            body = self.head + TYPE_VAR_STRING + bytes((len(raw),)) + raw  # keys < 251 bytes
        self.sock.sendall(_packet(body))
        data, pos, stage, left, rows = self.buf, 0, 0, 0, 0
        recv = self.sock.recv
        while True:  # the column count, its definitions and EOF, then rows until the closing EOF
            while len(data) - pos < 4 or len(data) - pos < 4 + (data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16):
                data += recv(65536)
            n = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            first = data[pos + 4]
            pos += 4 + n
            if stage == 0:
                if first == 0xFF:
                    raise RuntimeError(bytes(data[pos - n + 3:pos]).decode(errors="replace"))
                stage, left = 1, first
            elif stage == 1:
                left -= 1
                if left == 0:
                    stage = 2
            elif stage == 2:
                stage = 3  # the EOF after the column definitions
            elif first == 0xFE and n < 9:
                break
            else:
                rows += 1
        del data[:pos]
        return rows

    def close(self) -> None:
        self.sock.sendall(_packet(COM_STMT_CLOSE + struct.pack("<I", self.id)))  # no answer


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def prepare_table(env: dict) -> None:
    with C._servers.mysql_admin(env) as db, db.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cur.execute(f"CREATE TABLE {TABLE} (id INT NOT NULL, YCSB_KEY VARCHAR(255) PRIMARY KEY, "
                    + ", ".join(f"FIELD{i} TEXT" for i in range(10)) + ", UNIQUE KEY (id))")
        cur.executemany(f"INSERT INTO {TABLE} VALUES (%s, %s" + ", %s" * 10 + ")",
                        [(k, f"user{k}", *(["x" * 100] * 10)) for k in range(ROWS)])


def text_calls(env: dict):
    """The binding's own calls (mysqlclient, text statements): what `dbswarm run` executes."""
    from types import SimpleNamespace

    from dbswarm.engine import worker
    b = worker.make_binding(SimpleNamespace(target={"engine": "mysql", "url": env["DBSWARM_TEST_MYSQL_URL"]}),
                            C.password(env))
    b.connect()
    point = b.row_counter(f"SELECT FIELD0 FROM {TABLE} WHERE id = %s")  # called with the parameters' tuple
    return b, {"ycsb read": b.reader(TABLE, None), "point select": lambda i: point((i,))}


def binary_calls(env: dict):
    import pymysql

    from dbswarm.bindings.mysql import parse_mysql_url
    conn = pymysql.connect(password=C.password(env), autocommit=True, **parse_mysql_url(env["DBSWARM_TEST_MYSQL_URL"]))
    stmts = {name: BinaryStatement(conn._sock, sql.format(t=TABLE)) for name, (sql, _) in STATEMENTS.items()}
    return conn, stmts


def measure(env: dict, call, params: list) -> dict:
    srv0, cpu0, t0 = C.server_cpu_s(env, ("mysql",)), cpu_s(), time.perf_counter()
    found = sum(call(p) for p in params)
    wall, cpu, srv = time.perf_counter() - t0, cpu_s() - cpu0, C.server_cpu_s(env, ("mysql",)) - srv0
    n = len(params)
    if found != n:
        raise RuntimeError(f"{found} rows for {n} statements: the calls do not read what they should")
    return {"client_us": round(cpu / n * 1e6, 2), "server_us": round(srv / n * 1e6, 2), "per_s": round(n / wall, 1)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--statements", type=int, default=20000, help="statements per mode, round and statement kind")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--shared", action="store_true", help="no pinning (default: server on CPU 0, this process on 1)")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    data = C.base_record("mysql_binary_codec", a)
    env = C.start_servers(a.servers_dir)
    prepare_table(env)
    keys = {"ycsb read": [f"user{i * 7919 % ROWS}" for i in range(a.statements)],
            "point select": [i * 7919 % ROWS for i in range(a.statements)]}
    rounds: dict = {name: {"text": [], "binary": []} for name in STATEMENTS}
    with C.Pinning(env, not a.shared, engines=("mysql",)):
        if not a.shared:
            os.sched_setaffinity(0, {C.NCPU - 1})
        text_b, text = text_calls(env)
        conn, binary = binary_calls(env)
        try:
            for r in range(a.rounds):
                for name in STATEMENTS:
                    order = ("text", "binary") if r % 2 == 0 else ("binary", "text")
                    for mode in order:
                        call = text[name] if mode == "text" else binary[name].count
                        rounds[name][mode].append(measure(env, call, keys[name]))
                    C.log(f"round {r + 1} {name}: " + "; ".join(
                        f"{m} client {rounds[name][m][-1]['client_us']} µs, server {rounds[name][m][-1]['server_us']} µs, "
                        f"{rounds[name][m][-1]['per_s']:.0f}/s" for m in ("text", "binary")))
        finally:
            for st in binary.values():
                st.close()
            conn.close()
            text_b.close()
            os.sched_setaffinity(0, set(range(C.NCPU)))
    data["statements"] = {name: {"sql": sql.format(t=TABLE), "rounds": rounds[name],
                                 **{f"{m}_{k}": C.med([x[k] for x in rounds[name][m]])
                                    for m in ("text", "binary") for k in ("client_us", "server_us", "per_s")},
                                 "client_ratio": C.ratios([x["client_us"] for x in rounds[name]["binary"]],
                                                          [x["client_us"] for x in rounds[name]["text"]]),
                                 "server_ratio": C.ratios([x["server_us"] for x in rounds[name]["binary"]],
                                                          [x["server_us"] for x in rounds[name]["text"]])}
                          for name, (sql, _) in STATEMENTS.items()}
    with C._servers.mysql_admin(env) as db, db.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    C.finish("mysql_binary_codec", data, markdown, write_md=not a.no_md)


def markdown(data: dict) -> str:
    a = data["args"]
    lines = ["## MariaDB's binary protocol, hand-written: what it would cost the client (issue 36)", "",
             C.header(data),
             f"- {a['statements']:,} statements per kind, mode and round, {a['rounds']} rounds alternating which "
             f"mode goes first; {'CPUs shared' if a['shared'] else 'mariadbd on CPU 0, this process on CPU 1'}; "
             f"text: mysqlclient through the binding's `reader` / `row_counter` (what `dbswarm run` executes); "
             f"binary: COM_STMT_EXECUTE built and its answer's packets walked in Python, on a PyMySQL "
             f"connection's socket (a probe, not a binding).", "",
             "| statement | client µs, text | client µs, binary | binary ÷ text, client | server µs, text "
             "| server µs, binary | binary ÷ text, server | statements/s, text / binary |",
             "| --- | ---: | ---: | --- | ---: | ---: | --- | --- |"]
    for name, s in data["statements"].items():
        lines.append(f"| {name} | {s['text_client_us']} | {s['binary_client_us']} | {C.fmt_ratio(s['client_ratio'])} "
                     f"| {s['text_server_us']} | {s['binary_server_us']} | {C.fmt_ratio(s['server_ratio'])} "
                     f"| {s['text_per_s']:,.0f} / {s['binary_per_s']:,.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
