"""The server's CPU a sysbench run costs, split into set-up and steady state, dbswarm against
sysbench 1.0.20 (issue 36: PostgreSQL's oltp_read_write at 128 threads pinned stayed below
0.95 of sysbench with dbswarm's client at a third of its CPU, the server the limit).

Every tool runs each round twice, ``--short`` and ``--long`` seconds, the server pinned to
CPU 0 and the client to CPU 1 (as vs_sysbench's pinned mode). The server's CPU over each run
(every server process, PostgreSQL's exited backends included: ``common.server_cpu_s``) and its
transactions give the steady server CPU per transaction, (cpu_long - cpu_short) /
(trx_long - trx_short), and the set-up's server CPU, cpu_short less the short run's
transactions at that rate: connections, statement preparation, and (dbswarm) the run's own
reads of the server's counters and lock.

    python bench/server_setup_cost.py --servers-dir /tmp/dbswarm-bench36-servers --rounds 2

The sysbench tables must be loaded (vs_sysbench.py loads them; ``--tables``/``--table-size``
as there).
"""
from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import vs_sysbench as V  # noqa: E402

ACTIVITY_SQL = ("SELECT CASE WHEN state = 'active' AND wait_event_type = 'Lock' THEN 'lock_wait' "
                "WHEN state = 'active' THEN 'active' ELSE state END, COUNT(*) FROM pg_stat_activity "
                "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1")


class Activity:
    """PostgreSQL's client backends by state, sampled every ``every`` seconds while a run goes
    on (``--activity``): a backend ``idle in transaction`` holds its row locks while it waits
    for the client's next statement; ``lock_wait`` waits for another's. The means are over the
    samples that saw at least ``busy`` backends in a transaction (the run's window, not its
    connecting)."""

    def __init__(self, env, every=0.1, busy=8):
        import threading

        import psycopg
        self.conn = psycopg.connect(env["DBSWARM_TEST_PG_URL"], password=C.password(env), autocommit=True)
        self.every, self.busy, self.samples = every, busy, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self.stop.wait(self.every):
            sample = dict(self.conn.execute(ACTIVITY_SQL).fetchall())
            sample["cpu0"] = _cpu0_ticks()
            self.samples.append(sample)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.conn.close()

    def means(self) -> dict:
        in_window = [s.get("active", 0) + s.get("lock_wait", 0) + s.get("idle in transaction", 0) >= self.busy
                     for s in self.samples]
        window = [s for s, w in zip(self.samples, in_window) if w]
        keys = ("active", "lock_wait", "idle in transaction", "idle")
        # CPU 0 (the server's, pinned) busy over the intervals that end in a window sample
        busy = total = 0
        for prev, cur, w in zip(self.samples, self.samples[1:], in_window[1:]):
            if w:
                busy += cur["cpu0"][0] - prev["cpu0"][0]
                total += cur["cpu0"][1] - prev["cpu0"][1]
        return {"samples": len(window), "cpu0_busy": round(busy / total, 3) if total else None,
                **{k.replace(" ", "_"): round(sum(s.get(k, 0) for s in window) / len(window), 1) if window else None
                   for k in keys}}


def _cpu0_ticks() -> tuple[int, int]:
    """(busy, all) clock ticks of CPU 0 so far (/proc/stat): idle and iowait are not busy."""
    with open("/proc/stat") as fh:
        for line in fh:
            if line.startswith("cpu0 "):
                v = [int(x) for x in line.split()[1:]]
                return sum(v) - v[3] - v[4], sum(v)
    return 0, 0


def one(tool, engine, env, a, seconds):
    args = SimpleNamespace(tables=a.tables, table_size=a.table_size, shards=None, client_model=a.client_model,
                           time=seconds)
    run = partial(V.run_dbswarm if tool == "dbswarm" else V.run_sysbench, engine, env, a.test, args, a.threads, True)
    if a.activity and engine == "postgresql" and seconds == a.long:
        with Activity(env) as act:
            r = V.with_server_cpu(engine, env, run)
        r["activity"] = act.means()
    else:
        r = V.with_server_cpu(engine, env, run)
    C.log(f"  {tool} {seconds} s: {r['transactions']:.0f} transactions, {r['tps']:.0f} TPS, "
          f"server {r['server_cpu_s']} CPU-s" + (f"; backends {r['activity']}" if r.get("activity") else ""))
    return {k: r.get(k) for k in ("transactions", "tps", "server_cpu_s", "wall_s", "activity")}


def split(short, long_) -> dict:
    dn = (long_["transactions"] or 0) - (short["transactions"] or 0)
    if dn <= 0:
        return {"steady_server_ms_per_trx": None, "setup_server_cpu_s": None}
    per = (long_["server_cpu_s"] - short["server_cpu_s"]) / dn
    return {"steady_server_ms_per_trx": round(per * 1000, 3),
            "setup_server_cpu_s": round(short["server_cpu_s"] - per * short["transactions"], 2)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", default="postgresql", choices=("postgresql", "mysql"))
    p.add_argument("--test", default="oltp_read_write")
    p.add_argument("--threads", type=int, default=128)
    p.add_argument("--short", type=int, default=3)
    p.add_argument("--long", type=int, default=12)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=20_000)
    p.add_argument("--client-model", choices=("auto", "threads", "multiplexed"), default=None)
    p.add_argument("--activity", action="store_true",
                   help="PostgreSQL: sample the backends' states (pg_stat_activity) during the long runs")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    a = p.parse_args(argv)
    if not 0 < a.short < a.long:
        p.error(f"--short ({a.short}) must be above 0 and below --long ({a.long})")
    data = C.base_record("server_setup_cost", a)
    env = C.start_servers(a.servers_dir)
    rounds = []
    with C.Pinning(env, True, engines=(a.engine,)):
        for i in range(a.rounds):
            C.log(f"round {i + 1}/{a.rounds}: {a.engine} {a.test}, {a.threads} threads, pinned")
            r = {}
            for tool in ("dbswarm", "sysbench"):
                short, long_ = one(tool, a.engine, env, a, a.short), one(tool, a.engine, env, a, a.long)
                r[tool] = {"short": short, "long": long_, **split(short, long_)}
                C.log(f"  {tool}: steady {r[tool]['steady_server_ms_per_trx']} server ms/trx, set-up "
                      f"{r[tool]['setup_server_cpu_s']} server CPU-s")
            rounds.append(r)
    data["rounds"] = rounds
    data["summary"] = {tool: {k: C.med([r[tool][k] for r in rounds])
                              for k in ("steady_server_ms_per_trx", "setup_server_cpu_s")}
                       for tool in ("dbswarm", "sysbench")}
    C.log(f"medians: {data['summary']}")
    C.finish("server_setup_cost", data, lambda d: "", write_md=False)


if __name__ == "__main__":
    main()
