"""TPC-C client cost, in-process: one virtual user's transactions (the family's own client, deck
and bodies, through the binding's session) in a loop on one connection, for a fixed number of
transactions on data already loaded (2 warehouses by default: e.g. left by tests/e2e/test_tpcc.py or
bench/vs_gotpc.py). Reports, per engine: client CPU (this process's user + system time) per
transaction, wall time per transaction, and statements per New-Order and per transaction (counted
in a separate pass by a counting wrapper around the session's calls, so the counting costs nothing
in the timed pass). ``--profile``: cProfile of the timed loop, top functions by own time.

    python bench/tpcc_client_cost.py --transactions 3000 [--engines mysql,postgresql] [--profile]

No worker loop, no Measured wrapper: the family's client and the driver only (what batching
statements changes); the campaign-level CPU per transaction is bench/vs_gotpc.py's.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from bench import common as C  # noqa: E402

SESSION_CALLS = ("execute", "fetchone", "fetchall", "begin", "commit", "rollback")
CALL_MAKERS = ("row_fetcher", "statement_runner", "transaction_calls", "rollback_call")


def _client(b, warehouses: int, seed: int):
    from dbswarm.families import base as families
    from dbswarm.families.tpcc import family as T
    fam = families.get("tpcc")
    w = fam.workload({"family": "tpcc", "warehouses": warehouses, "threads": 1})
    c = T.TpccClient(w, random.Random(seed), 0, T.run_constants(w.c_last_load, T._run_rng(w)))
    st = T.Session(b)
    kinds = {"NEW_ORDER": (c.new_order_input, c.new_order), "PAYMENT": (c.payment_input, c.payment),
             "ORDER_STATUS": (c.order_status_input, c.order_status),
             "DELIVERY": (c.delivery_input, c.delivery), "STOCK_LEVEL": (c.stock_level_input, c.stock_level)}
    return c, st, kinds


MAX_ATTEMPTS = 20  # a transaction failing this often is not a conflict: the data is not there


def _loop(b, c, st, kinds, n: int, per_kind: dict):
    retries = 0
    for _ in range(n):
        kind = c.deck.next()
        make, body = kinds[kind]
        inp = make()
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                body(st, inp)
                break
            except Exception as exc:
                b.rollback()
                retries += 1
                if attempt == MAX_ATTEMPTS:
                    raise SystemExit(f"{kind} failed {attempt} times in a row, last: {type(exc).__name__}: "
                                     f"{str(exc)[:200]}") from exc
        per_kind[kind] = per_kind.get(kind, 0) + 1
    return retries


class Counting:
    """Counts the session calls of a binding (one statement each) while they pass through."""

    def __init__(self, b):
        self.b, self.n = b, 0
        for name in SESSION_CALLS:
            setattr(self, name, self._wrap(getattr(b, name)))
        # the transactions' calls (tpcc Session: fetch, run, tx, rollback), each counted
        for name in CALL_MAKERS:
            setattr(self, name, self._wrap_maker(getattr(b, name)))

    def _wrap_maker(self, make):
        def made(*a):
            calls = make(*a)
            return tuple(map(self._wrap, calls)) if isinstance(calls, tuple) else self._wrap(calls)
        return made

    def _wrap(self, fn):
        def call(*a, **k):
            self.n += 1
            return fn(*a, **k)
        return call

    def __getattr__(self, name):
        return getattr(self.b, name)


def measure(engine: str, env: dict, a) -> dict:
    from bench.vs_gotpc import connect
    b = connect(engine, env)
    try:
        loaded = int(b.fetchone("SELECT COUNT(*) FROM warehouse")[0])
        if loaded < a.warehouses:
            raise SystemExit(f"{engine}: --warehouses {a.warehouses} but {loaded} loaded (load them first, "
                             "e.g. a dbswarm tpcc campaign with phases prepare, load)")
        # statements per transaction type (a separate, counted pass)
        cb = Counting(b)
        c, st, kinds = _client(cb, a.warehouses, a.seed + 1)
        statements = {}
        for kind, (make, body) in kinds.items():
            before = cb.n
            reps = 200 if kind == "NEW_ORDER" else 20
            for _ in range(reps):
                inp = make()
                try:
                    body(st, inp)
                except Exception:
                    b.rollback()
            statements[kind] = round((cb.n - before) / reps, 2)
        # the timed pass
        c, st, kinds = _client(b, a.warehouses, a.seed)
        per_kind: dict = {}
        prof = cProfile.Profile() if a.profile else None
        cpu0, t0 = time.process_time(), time.perf_counter()
        if prof:
            prof.enable()
        retries = _loop(b, c, st, kinds, a.transactions, per_kind)
        if prof:
            prof.disable()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - t0
    finally:
        b.close()
    mix = {k: per_kind.get(k, 0) / a.transactions for k in statements}
    out = {"engine": engine, "transactions": a.transactions, "retries": retries,
           "cpu_ms_per_trx": round(cpu * 1000 / a.transactions, 4),
           "wall_ms_per_trx": round(wall * 1000 / a.transactions, 4),
           "statements": statements,
           "statements_per_trx": round(sum(statements[k] * mix[k] for k in statements), 2)}
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(a.profile_top)
        out["profile"] = s.getvalue()
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engines", default="mysql,postgresql")
    p.add_argument("--warehouses", type=int, default=2)
    p.add_argument("--transactions", type=int, default=3000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--profile-top", type=int, default=25)
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    a = p.parse_args(argv)
    env = C.start_servers(a.servers_dir)
    for engine in C.csv_list(a.engines):
        r = measure(engine, env, a)
        prof = r.pop("profile", None)
        print(json.dumps(r))
        if prof:
            print(prof)


if __name__ == "__main__":
    main()
