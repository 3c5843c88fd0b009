"""What converting values costs the client (results into Python, parameters into SQL), finely interleaved.

YCSB's read and scan used to turn every record into a dict of Python strings; the worker
only counts reads that found nothing, so since this change its operations pass
``rows=False`` (the statement and what the server sends are the same; the driver reads the
whole result and converts nothing). Insert values used to be one random pool window per
field and are now one window per record, cut into the fields. On mysqlclient, str
parameters used to go through MySQLdb's ``literal()`` and are now escaped directly
(``string_literal``), as ints already were.

On this shared VM, whole-process rounds of a few seconds vary by ±30 % (the host takes CPU
time from it unevenly), more than these changes are worth. So each comparison here runs
both variants in ONE process, alternating in blocks of ``--block`` operations (A, B, B, A,
...: each goes first half the time), and adds up each variant's CPU time
(``time.process_time``) over all blocks: interference lands on both alike. Reported: CPU µs
per operation for each variant, head ÷ base, and the median and range of the per-block-pair
ratios.

- real servers (MariaDB, PostgreSQL, FerretDB): the binding's ``read`` of one record
  (10 fields × 100 bytes) by a uniform key, and ``scan`` of 50 records (workload e's mean
  scan length is 50), ``rows=True`` (converted, the old path) against ``rows=False``;
- MariaDB on mysqlclient: the binding's YCSB ``insert`` of one record (11 str parameters)
  with the old parameter formatting (``OldStatements`` below, the previous code) against
  the binding's own;
- the generator: a record's ten insert values, a window per field (the old code, kept
  here) against ``YcsbClient.all_values``.

    python bench/result_conversion.py --blocks 200 --block 200
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

TABLE = "usertable_conv"
RECORDS = 10_000
SCAN_LENGTH = 50


def alternate(base, head, blocks: int, block: int) -> dict:
    """Both variants in blocks of ``block`` calls, alternating (ABBA ...), CPU summed."""
    cpu = {"base": 0.0, "head": 0.0}
    pairs = []
    clock = time.process_time
    for i in range(blocks):
        order = (("base", base), ("head", head)) if i % 2 == 0 else (("head", head), ("base", base))
        got = {}
        for name, fn in order:
            t0 = clock()
            for _ in range(block):
                fn()
            got[name] = clock() - t0
            cpu[name] += got[name]
        if got["base"] > 0:
            pairs.append(got["head"] / got["base"])
    n = blocks * block
    b_us, h_us = cpu["base"] / n * 1e6, cpu["head"] / n * 1e6
    return {"ops_each": n, "base_us": round(b_us, 2), "head_us": round(h_us, 2),
            "saved_us": round(b_us - h_us, 2), "ratio": round(h_us / b_us, 3) if b_us else None,
            "pair_ratios": {"median": round(statistics.median(pairs), 3), "min": round(min(pairs), 3),
                            "max": round(max(pairs), 3)} if pairs else None}


def old_statements(db):
    """mysqlclient's Statements with the previous parameter formatting: str through
    MySQLdb's literal()."""
    from dbswarm.bindings.mysqlclient import Statements

    class OldStatements(Statements):
        __slots__ = ()

        def _run(self, sql, params):  # the previous code, verbatim
            b = self._sql.get(sql)
            if b is None:
                b = self._sql[sql] = sql.encode()
            if params:
                lit = self._literal
                b = b % tuple([b"%d" % p if type(p) is int else lit(p) for p in params])
            self._query(b)
            return self._store()
    return OldStatements(db)


def insert_rows(env: dict, blocks: int, block: int) -> list[dict]:
    from dbswarm.spec import YcsbWorkload
    from dbswarm.workloads.ycsb import YcsbClient
    base, head = binding_for("mysql", env), binding_for("mysql", env)
    st = base._statements = old_statements(base.db)
    base._execute, base._fetchall, base._fetchone, base._fetchcount = (
        st.execute, st.fetchall, st.fetchone, st.fetchcount)
    w = YcsbWorkload.model_validate({"family": "ycsb", "recordcount": RECORDS, "table": TABLE})
    client = YcsbClient(w, random.Random(7), 0, 1)
    head.ycsb_create(TABLE, w.fieldcount)
    n = [0]

    def insert_with(b, prefix):
        def op():
            n[0] += 1
            b.insert(TABLE, f"{prefix}{n[0]}", client.all_values())
        return op
    r = alternate(insert_with(base, "base"), insert_with(head, "head"), blocks, block)
    r.update(engine=C.ENGINE_LABELS["mysql"] + " (mysqlclient)", operation="insert (1 record, 11 str parameters)",
             base_variant="str through MySQLdb literal()", head_variant="str escaped directly")
    C.log(f"MariaDB insert: {r['base_us']} -> {r['head_us']} µs CPU/op (pairs {r['pair_ratios']})")
    if head.ycsb_count(TABLE) != 2 * r["ops_each"]:
        raise RuntimeError("insert comparison: rows missing")
    head.ycsb_drop(TABLE)
    base.close()
    head.close()
    return [r]


def binding_for(engine: str, env: dict):
    from dbswarm.bindings import Connection, get
    t = C.target(engine, env)
    b = get(engine)(Connection(engine=engine, url=t["url"], password=C.password(env),
                               options=t.get("options", {}), display=engine))
    b.connect()
    return b


def server_rows(engine: str, env: dict, blocks: int, block: int) -> list[dict]:
    from dbswarm.spec import YcsbWorkload
    from dbswarm.workloads.ycsb import YcsbClient
    b = binding_for(engine, env)
    w = YcsbWorkload.model_validate({"family": "ycsb", "recordcount": RECORDS, "table": TABLE})
    client = YcsbClient(w, random.Random(7), 0, 1)
    b.ycsb_create(TABLE, w.fieldcount)
    t0 = time.perf_counter()
    for lo in range(0, RECORDS, 500):
        b.insert_batch(TABLE, client.load_rows(range(lo, min(RECORDS, lo + 500))))
    C.log(f"{engine}: loaded {RECORDS} records in {time.perf_counter() - t0:.1f} s")
    rnd = random.Random(11).random
    keys = [client.key(k) for k in range(RECORDS)]
    label = C.ENGINE_LABELS[engine]
    rows = []
    comparisons = [("read (1 record)",
                    lambda: b.read(TABLE, keys[int(rnd() * RECORDS)], None),
                    lambda: b.read(TABLE, keys[int(rnd() * RECORDS)], None, False))]
    if engine != "mongodb":  # FerretDB takes about a second per 50-record scan here
        comparisons.append((f"scan ({SCAN_LENGTH} records)",
                            lambda: b.scan(TABLE, keys[int(rnd() * RECORDS)], SCAN_LENGTH, None),
                            lambda: b.scan(TABLE, keys[int(rnd() * RECORDS)], SCAN_LENGTH, None, False)))
    for op, base, head in comparisons:
        got, counted = base(), head()  # both variants do the work they claim
        if op.startswith("read") and not (isinstance(got, dict) and len(got) == w.fieldcount and counted == 1):
            raise RuntimeError(f"{engine} read: {type(got).__name__} / {counted!r}")
        if op.startswith("scan") and not (len(got) == SCAN_LENGTH or counted == SCAN_LENGTH):
            raise RuntimeError(f"{engine} scan: {len(got)} records / {counted!r}")
        # FerretDB answers in milliseconds: fewer operations, the same interleaving
        n_blocks, n_block = (max(4, blocks // 20), max(5, block // 10)) if engine == "mongodb" else (blocks, block)
        r = alternate(base, head, n_blocks, n_block)
        r.update(engine=label, operation=op, base_variant="rows=True (converted)",
                 head_variant="rows=False (counted)")
        C.log(f"{label} {op}: {r['base_us']} -> {r['head_us']} µs CPU/op (saved {r['saved_us']}; "
              f"pairs {r['pair_ratios']})")
        rows.append(r)
    b.ycsb_drop(TABLE)
    b.close()
    return rows


def generator_rows(blocks: int, block: int) -> list[dict]:
    from dbswarm.spec import YcsbWorkload
    from dbswarm.workloads.ycsb import YcsbClient
    w = YcsbWorkload.model_validate({"family": "ycsb", "recordcount": RECORDS})
    client = YcsbClient(w, random.Random(7), 0, 1)
    r_, pool, span, n, fields = client.random, client.pool, client._span, client._len, client.fields

    def window_per_field():  # the previous all_values, verbatim
        return {f: pool[(o := int(r_() * span)):o + n] for f in fields}
    r = alternate(window_per_field, client.all_values, blocks, block * 10)
    r.update(engine="noop (generator)", operation="insert values (10 × 100 B)",
             base_variant="a pool window per field", head_variant="one window per record, cut")
    C.log(f"insert values: {r['base_us']} -> {r['head_us']} µs CPU per record (pairs {r['pair_ratios']})")
    return [r]


def markdown(data: dict) -> str:
    a = data["args"]
    L = ["## What converting values costs the client (finely interleaved)", "", C.header(data), "",
         f"Both variants in one process, alternating in blocks ({a['blocks']} blocks of {a['block']} operations "
         "each on PostgreSQL and MariaDB; FerretDB, which answers in milliseconds, a twentieth of the blocks "
         "of a tenth the size, reads only; the generator row 10× larger blocks), each variant's CPU time "
         "(`time.process_time`) summed over its blocks. One record = 10 fields × 100 bytes, uniform keys over "
         f"{RECORDS:,} records, one client thread. pair ratios: head ÷ base per block pair, median (min–max).",
         "", "| engine | operation | base | head | CPU µs/op base | head | saved µs/op | head ÷ base | pair ratios |",
         "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in data["rows"]:
        if "skipped" in r:
            L.append(f"| {r['engine']} | — | skipped: {r['skipped']} | | | | | | |")
            continue
        pr = r["pair_ratios"]
        L.append(f"| {r['engine']} | {r['operation']} | {r['base_variant']} | {r['head_variant']} | {r['base_us']} "
                 f"| {r['head_us']} | {r['saved_us']} | {r['ratio']} | "
                 f"{pr['median']:.2f} ({pr['min']:.2f}–{pr['max']:.2f}) |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=200, help="block pairs per comparison")
    p.add_argument("--block", type=int, default=200, help="operations per block")
    p.add_argument("--engines", default="postgresql,mysql,mongodb")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    if a.blocks < 2 or a.block < 1:
        p.error("--blocks must be at least 2 and --block at least 1")
    engines = C.csv_list(a.engines)
    unknown = set(engines) - {"postgresql", "mysql", "mongodb"}
    if unknown:
        p.error(f"unknown engines: {', '.join(sorted(unknown))} (postgresql, mysql, mongodb)")
    data = C.base_record("result_conversion", a)
    rows = generator_rows(a.blocks, a.block)
    if engines:
        env = C.start_servers(a.servers_dir)
        for engine in engines:
            try:
                rows += server_rows(engine, env, a.blocks, a.block)
                if engine == "mysql" and C.mysql_driver() == "mysqlclient":
                    rows += insert_rows(env, a.blocks // 2, a.block)
            except Exception as exc:  # a failed engine is a recorded row, not a lost run
                rows.append({"engine": C.ENGINE_LABELS[engine], "skipped": f"{type(exc).__name__}: {exc}"[:200]})
                C.log(f"{engine}: failed: {exc}")
    data["rows"] = rows
    C.finish("result_conversion", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
