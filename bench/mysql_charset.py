"""What a YCSB insert and a point read cost the MariaDB server by connection character set and
literal form (a lead, not a section of BENCHMARKS.md: printed, and kept in bench/results/).

One client thread on mysqlclient's `_mysql` inserts YCSB records (key + 10 × 100 ASCII bytes)
as text statements, alternating variants in blocks, then reads them back by key; the
server's CPU per statement comes from /proc (10 ms ticks, hence many statements per block).
The table is `usertable`-shaped, in the server's default character set (latin1: MariaDB's
compiled-in default, as scripts/test-servers starts it `--no-defaults`) or in utf8mb4.

    python bench/mysql_charset.py --rounds 8 --block 4000
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

# name: (connection charset, literal format, table charset or None for the server default)
VARIANTS = {
    "utf8mb4 connection, latin1 table (dbswarm's default)": ("utf8mb4", b"'%s'", None),
    "latin1 connection, latin1 table": ("latin1", b"'%s'", None),
    "utf8mb4 connection, _binary literals, latin1 table": ("utf8mb4", b"_binary'%s'", None),
    "utf8mb4 connection, utf8mb4 table": ("utf8mb4", b"'%s'", "utf8mb4"),
    "latin1 connection, utf8mb4 table": ("latin1", b"'%s'", "utf8mb4"),
    "utf8mb4 connection, hex literals, latin1 table": ("utf8mb4", "hex", None),
    "utf8mb4 connection, hex literals, utf8mb4 table": ("utf8mb4", "hex", "utf8mb4"),
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--block", type=int, default=5000, help="inserts (then reads) per variant per round")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    a = p.parse_args(argv)
    from MySQLdb import _mysql
    data = C.base_record("mysql_charset", a)
    env = C.start_servers(a.servers_dir)
    pid = C.server_pids(env, "mysql")[0]

    def connect(charset):
        c = _mysql.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_PORT"]), user="dbswarm",
                           password=C.password(env), database="dbswarm")
        c.set_character_set(charset)
        return c

    admin = connect("utf8mb4")
    cols = b", ".join(b"field%d TEXT" % i for i in range(10))
    tables = {}
    for i, (name, (_, _, table_cs)) in enumerate(VARIANTS.items()):
        t = b"cs_usertable_%d" % i
        admin.query(b"DROP TABLE IF EXISTS " + t)
        admin.query(b"CREATE TABLE %s (ycsb_key VARCHAR(255) PRIMARY KEY, %s)%s"
                    % (t, cols, b" DEFAULT CHARSET=" + table_cs.encode() if table_cs else b""))
        tables[name] = t
    conns = {name: connect(v[0]) for name, v in VARIANTS.items()}
    rng = random.Random(42)
    pool = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(1 << 16))
    per_insert = {name: [] for name in VARIANTS}
    per_read = {name: [] for name in VARIANTS}
    keys = {name: [] for name in VARIANTS}
    n = 0
    for r in range(a.rounds):
        order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            c, fmt, t = conns[name], VARIANTS[name][1], tables[name]
            quote = (lambda v: b"X'%s'" % v.hex().encode()) if fmt == "hex" else (lambda v, fmt=fmt: fmt % v)
            s0 = C.process_cpu_s(pid)
            for _ in range(a.block):
                n += 1
                o = rng.randrange(len(pool) - 1000)
                values = b", ".join(quote(pool[o + 100 * j:o + 100 * j + 100]) for j in range(10))
                c.query(b"INSERT INTO %s VALUES ('user%d', %s)" % (t, n, values))
                keys[name].append(n)
            per_insert[name].append(round((C.process_cpu_s(pid) - s0) / a.block * 1e6, 2))
        C.log(f"insert round {r}: " + ", ".join(f"{v[-1]}" for v in per_insert.values()))
    # point reads of whole records (the result is converted from the table's character set to
    # the connection's, character_set_results, by the server)
    for r in range(a.rounds):
        order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            c, t, ks = conns[name], tables[name], keys[name]
            s0 = C.process_cpu_s(pid)
            for _ in range(a.block):
                c.query(b"SELECT * FROM %s WHERE ycsb_key = 'user%d'" % (t, ks[rng.randrange(len(ks))]))
                c.store_result().num_rows()
            per_read[name].append(round((C.process_cpu_s(pid) - s0) / a.block * 1e6, 2))
        C.log(f"read round {r}: " + ", ".join(f"{v[-1]}" for v in per_read.values()))
    for t in tables.values():
        admin.query(b"DROP TABLE IF EXISTS " + t)
    data["server_cpu_us_per_insert"] = {name: {"median": statistics.median(v), "rounds": v}
                                        for name, v in per_insert.items()}
    data["server_cpu_us_per_read"] = {name: {"median": statistics.median(v), "rounds": v}
                                      for name, v in per_read.items()}
    for what in ("insert", "read"):
        print(f"server CPU per {what}:")
        for name, v in data[f"server_cpu_us_per_{what}"].items():
            print(f"{v['median']:7.1f} µs  {name}  (rounds: {v['rounds']})")
    C.finish("mysql_charset", data, lambda d: "", write_md=False)


if __name__ == "__main__":
    main()
