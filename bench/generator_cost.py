"""What the load generator itself costs.

A. noop binding, ONE worker process, one client thread, per workload family (YCSB a, c,
   S3, e; sysbench oltp_read_write, oltp_point_select): operations/s and CPU µs per
   operation, measured two ways:
   - campaign: a campaign (phases [run], shards 1, threads 1) through
     the service functions (bench/dbswarm_run.py), CPU = the shard process's rusage minus its fixed
     start-up cost (spawn, imports, plan; measured by a 1-operation campaign);
   - in-process: one shard of one client thread run by ``ShardPhase.execute_inline`` (the
     worker's own loop, Measured wrapper and Recorder) in the main thread of a fresh process
     for a fixed time: the loop alone, no start-up.
B. real servers (MariaDB, PostgreSQL, FerretDB): client CPU µs per operation of YCSB c
   (and sysbench oltp_point_select on the SQL engines) run as a campaign (8 threads), and
   single-threaded in-process beside a bare driver loop issuing the same statement
   (the driver's own cost): dbswarm minus bare driver = the overhead beyond the driver.
C. cProfile of the in-process loop, summarised by where the time goes (workload generator,
   measurement, worker loop, binding, driver code, socket I/O / waiting for the server).

    python bench/generator_cost.py --time 10
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

NOOP_WORKLOADS = {
    "ycsb-a": {"family": "ycsb", "preset": "a", "recordcount": 100_000},
    "ycsb-c": {"family": "ycsb", "preset": "c", "recordcount": 100_000},
    "ycsb-S3": {"family": "ycsb", "preset": "S3", "recordcount": 100_000},
    "ycsb-e": {"family": "ycsb", "preset": "e", "recordcount": 100_000},
    "sysbench-oltp_read_write": {"family": "sysbench", "test": "oltp_read_write", "tables": 8,
                                 "table_size": 100_000, "rand_type": "uniform"},
    "sysbench-oltp_point_select": {"family": "sysbench", "test": "oltp_point_select", "tables": 8,
                                   "table_size": 100_000, "rand_type": "uniform"},
    # at a rate the loop can never keep (it never sleeps, every step starts late): what the
    # schedule and the response time from the intended start cost, beside the unpaced rows
    "ycsb-a-paced": {"family": "ycsb", "preset": "a", "recordcount": 100_000, "target": 1e9},
    "sysbench-oltp_point_select-paced": {"family": "sysbench", "test": "oltp_point_select", "tables": 8,
                                         "table_size": 100_000, "rand_type": "uniform", "rate": 1e9},
}
YCSB_RECORDS = 10_000


def timed(wl: dict, seconds: float) -> dict:
    wl = dict(wl)
    if wl["family"] == "ycsb":
        wl.update(operationcount=0, maxexecutiontime=seconds)
    else:
        wl.update(time=seconds)
    return wl


def queries_per_event(wl):
    from dbswarm.families.sysbench import SysbenchWorkload
    w = SysbenchWorkload.model_validate(wl)
    return (w.point_selects + w.simple_ranges + w.sum_ranges + w.order_ranges + w.distinct_ranges
            + w.index_updates + w.non_index_updates + 2 * w.delete_inserts + (0 if w.skip_trx else 2))


# ---- in-process: the worker's thread body in this thread -------------------------------------------

def shard_phase(target: dict, wl: dict, seconds: float, password=None):
    """A one-thread shard of a campaign (phases [run], a time cap of ``seconds``), as the
    worker would run it: ``ShardPhase.execute_inline`` runs its client thread in this thread."""
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine.worker import ShardPhase
    c = {"name": "gen-cost", "target": target, "workload": dict(timed(wl, seconds), threads=1), "phases": ["run"],
         "fanout": {"shards": 1}}
    campaign, runs = load_campaign(c)
    plan = make_plan(campaign, runs, "gen-cost", 1)
    run = plan.runs[0]
    return ShardPhase(run, run.shards[0], "run", password)


CALIBRATION_ITERATIONS = 300_000


def calibration_us() -> float:
    """CPU µs per iteration of a fixed pure-Python loop (calls, dict, arithmetic: the kind of
    work the generator does). This VM's process CPU times include what the host takes from
    it, so the same code measures up to 2x slower at busy moments; the loop, measured just
    before each noop round, says how fast the CPU was then."""
    import resource
    d = {}

    def step(i):
        d[i & 1023] = (i * 1099511628211) & 0xFFFFFFFF
        return d.get(i & 511, 0)
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    acc = 0
    for i in range(CALIBRATION_ITERATIONS):
        acc += step(i)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return ((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / CALIBRATION_ITERATIONS * 1e6


def in_process(target, wl, seconds, password=None, profile=False) -> dict:
    """One client thread of the worker, in a fresh process (its memo tables start cold, as a
    shard process's do), run in that process's main thread for ``seconds``: ops/s and CPU per
    operation of the loop alone (no start-up), optionally with a cProfile summary."""
    import multiprocessing as mp
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(in_this_process, (target, wl, seconds, password, profile))


def in_this_process(target, wl, seconds, password, profile) -> dict:
    import resource
    sp = shard_phase(target, wl, seconds, password)
    prof = cProfile.Profile() if profile else None
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    outcome = sp.execute_inline()
    if prof:
        prof.disable()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    done = outcome.info["done"]
    if outcome.info["thread_errors"] or not done:
        raise RuntimeError(f"in-process loop failed: {outcome.info['thread_errors'] or 'no operation done'} "
                           f"{outcome.measurement.errors}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    out = {"ops": done, "ops_per_s": round(done / wall, 1), "cpu_us_per_op": round(cpu / done * 1e6, 2),
           "user_us_per_op": round((r1.ru_utime - r0.ru_utime) / done * 1e6, 2),
           "sys_us_per_op": round((r1.ru_stime - r0.ru_stime) / done * 1e6, 2)}
    if prof:
        out["profile"] = summarise_profile(prof, done)
    return out


CATEGORIES = (
    # psycopg's C-level waits and sends show up as own time of its Python frames that call them
    # (and the blocking C calls that send, wait and receive: libpq's PQexecPrepared, MySQLdb's query)
    ("socket I/O and waiting for the server", ("recv_into", "sendall", "'recv'", "'send'", "'poll'", "select",
                                               "_socket", "wait_c", "psycopg/connection.py:'wait'",
                                               "_cursor_base.py:'_execute_send'", "'exec_prepared'", "'exec_'",
                                               "'query' of '_mysql", "Connection.query",
                                               # psycopg_binary's methods are Cython functions, which
                                               # cProfile does not list: PGconn.exec_prepared (send,
                                               # wait, receive) is own time of the binding frame calling it
                                               "postgresql.py:'_exec_hot'")),
    ("driver, C code (row loading, escaping: psycopg C, MySQLdb _mysql)", (
        "of '_mysql", "Transformer' objects", "of 'psycopg_binary", "of 'psycopg_c")),
    ("workload generator (dbswarm/workloads)", ("dbswarm/workloads",)),
    ("measurement (dbswarm/measure/recorder.py)", ("dbswarm/measure/recorder.py",)),
    # the shard's worker (engine/worker.py) and the parts it coordinates: its thread's loop and set-up,
    # its clock, its snapshots
    ("worker loop (dbswarm/engine/worker.py)", ("dbswarm/engine/worker.py", "dbswarm/engine/drive.py",
                                                "dbswarm/engine/client_thread.py", "dbswarm/engine/phase_clock.py",
                                                "dbswarm/engine/snapshots.py")),
    ("binding (dbswarm/bindings)", ("dbswarm/bindings",)),
    ("driver, Python code (PyMySQL / psycopg / pymongo)", ("pymysql", "psycopg", "pymongo", "bson")),
    ("random (stdlib random.py + _random)", ("random.py", "_random")),
)


def _category(func) -> str:
    filename, _, name = func
    text = f"{filename}:{name!r}"
    for cat, needles in CATEGORIES:
        if any(n in text for n in needles):
            return cat
    return "other (builtins, stdlib)"


def summarise_profile(prof: cProfile.Profile, ops: int) -> dict:
    stats = pstats.Stats(prof)
    cats: dict[str, float] = {}
    top = []
    for func, (_cc, nc, tt, _ct, _callers) in stats.stats.items():
        cat = _category(func)
        cats[cat] = cats.get(cat, 0.0) + tt
        top.append((tt, func, nc))
    total = sum(cats.values()) or 1e-9
    top.sort(reverse=True)
    return {"total_s": round(total, 3), "ops": ops,
            "categories": {k: {"share": round(v / total, 3), "us_per_op": round(v / ops * 1e6, 2)}
                           for k, v in sorted(cats.items(), key=lambda kv: -kv[1])},
            "top": [{"function": f"{Path(f[0]).name}:{f[1]}({f[2]})", "calls": nc, "tottime_s": round(tt, 4),
                     "us_per_op": round(tt / ops * 1e6, 2)} for tt, f, nc in top[:12]]}


# ---- bare driver loops ------------------------------------------------------------------------------

def bare_driver(engine, env, kind, seconds) -> dict:  # noqa: C901
    """The same statement as dbswarm's binding issues, straight through the driver."""
    import random
    import resource

    from dbswarm.families.ycsb import key_name
    rng = random.Random(1)
    pw = C.password(env)
    if kind == "ycsb-c":
        keys = [key_name(i, False, 1) for i in range(YCSB_RECORDS)]
    if engine == "mysql":
        from dbswarm.bindings.mysql import parse_mysql_url
        kw = parse_mysql_url(env["DBSWARM_TEST_MYSQL_URL"])
        if C.mysql_driver() == "mysqlclient":
            # the calls the binding makes with mysqlclient (bindings/mysqlclient.py Statements)
            import MySQLdb
            con = MySQLdb.connect(password=pw, autocommit=True, **kw)
            query, literal, store = con.query, con.literal, con.store_result
            if kind == "ycsb-c":
                def op():
                    # the worker's reads count the row without converting it (rows=False)
                    query(b"SELECT * FROM usertable WHERE ycsb_key = %s"
                          % (literal(keys[int(rng.random() * YCSB_RECORDS)]),))
                    return store().num_rows()
            else:
                def op():  # sysbench events count their SELECTs' rows too (rows=False)
                    query(b"SELECT c FROM sbtest1 WHERE id=%s" % (b"%d" % (int(rng.random() * 1000) + 1),))
                    return store().num_rows()
        else:
            import pymysql
            con = pymysql.connect(password=pw, autocommit=True, **kw)
            cur = con.cursor()
            if kind == "ycsb-c":
                def op():
                    cur.execute("SELECT * FROM usertable WHERE ycsb_key = %s",
                                (keys[int(rng.random() * YCSB_RECORDS)],))
                    return cur.fetchone()
            else:
                def op():
                    cur.execute("SELECT c FROM sbtest1 WHERE id=%s", (int(rng.random() * 1000) + 1,))
                    return cur.fetchall()
    elif engine == "postgresql":
        # what the binding does: a prepared statement through psycopg's libpq layer, the
        # result's rows counted (see bindings/postgresql.py fetchcount)
        import psycopg
        con = psycopg.connect(env["DBSWARM_TEST_PG_URL"], password=pw, autocommit=True)
        pg = con.pgconn
        if kind == "ycsb-c":
            pg.prepare(b"bare", b"SELECT * FROM usertable WHERE ycsb_key = $1")

            def op():  # the worker's reads count the row without loading it (rows=False)
                return pg.exec_prepared(b"bare", [keys[int(rng.random() * YCSB_RECORDS)].encode()]).ntuples
        else:
            pg.prepare(b"bare", b"SELECT c FROM sbtest1 WHERE id=$1")

            def op():  # sysbench events count their SELECTs' rows too (rows=False)
                return pg.exec_prepared(b"bare", [b"%d" % (int(rng.random() * 1000) + 1)]).ntuples
    else:
        import pymongo
        from bson.codec_options import CodecOptions
        from bson.raw_bson import RawBSONDocument
        con = pymongo.MongoClient(env["DBSWARM_TEST_MONGO_URL"])
        # the worker's reads leave the document undecoded (rows=False)
        coll = con["dbswarm"].get_collection("usertable", CodecOptions(document_class=RawBSONDocument))

        def op():
            return coll.find_one({"_id": keys[int(rng.random() * YCSB_RECORDS)]})
    op()
    n = 0
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        op()
        n += 1
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    con.close()
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {"ops": n, "ops_per_s": round(n / wall, 1), "cpu_us_per_op": round(cpu / n * 1e6, 2)}


# ---- campaigns -----------------------------------------------------------------------------------

def campaign(target, wl, seconds, threads, shards) -> dict:
    c = {"name": "gen-cost", "target": target, "workload": dict(timed(wl, seconds), threads=threads),
         "phases": ["run"], "fanout": {"shards": shards}}
    s = C.run_dbswarm(c)
    ph = s["phase"]
    fixed = C.fixed_cpu(target, wl, threads, shards)
    if wl["family"] == "sysbench":
        ops = (ph.get("sysbench") or {}).get("transactions") or 0
    else:
        ops = ph.get("operations_total") or 0
    dur = ph.get("duration_s") or 1
    return {"ops": ops, "ops_per_s": round(ops / dur, 1), "duration_s": dur, "shards": s["shard_count"],
            "threads": threads, "shard_cpu_s": s["shard_cpu_s"], "fixed_cpu_s": round(fixed, 3),
            "cpu_us_per_op_raw": round(s["shard_cpu_s"] / ops * 1e6, 2) if ops else None,
            "cpu_us_per_op": round(max(s["shard_cpu_s"] - fixed, 0) / ops * 1e6, 2) if ops else None}


# ---- report -------------------------------------------------------------------------------------

def markdown(data: dict) -> str:
    a = data["args"]
    L = ["## Generator cost", "", C.header(data), "",
         "### A. noop binding, one worker process, one client thread",
         "",
         f"campaign: a {a['time']} s run phase (1 shard, 1 thread) through {C.DBSWARM_MODE_TEXT}; CPU µs/op = shard "
         "process CPU minus its fixed start-up cost (1-operation campaign), per operation. in-process: the "
         "worker's thread body (`ShardPhase.execute_inline`) in a fresh process's main thread, no start-up. "
         "sysbench: an operation is one event (transaction); µs/query = µs/event ÷ queries per event. "
         f"in-process: {a.get('noop_rounds', 1)} rounds interleaved over the workloads, median and best (the "
         "least host interference: noise only ever adds CPU time); ops per CPU-second = 1e6 ÷ CPU µs/op. "
         "scaled: each round's CPU µs/op × (the run's fastest calibration ÷ that round's calibration), where the "
         "calibration is a fixed pure-Python loop measured just before the round "
         f"(`calibration_us()`; fastest this run: {data.get('calibration', {}).get('fastest_us', '—')} µs per "
         "iteration): this VM's process CPU times include what the host takes from it.",
         "",
         "| workload | ops/s (campaign) | CPU µs/op (campaign, net) | CPU µs/op in-process, median (best) "
         "| scaled, median | ops per CPU-second, median (best; scaled) | queries/event | µs per query (in-process) |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in data["noop"].items():
        q = r.get("queries_per_event")
        med, best = r["in_process"]["cpu_us_per_op"], r.get("in_process_best", r["in_process"])["cpu_us_per_op"]
        sc = r.get("in_process_scaled_median", med)
        L.append(f"| {name} | {r['campaign']['ops_per_s']:,.0f} | {r['campaign']['cpu_us_per_op']} "
                 f"| {med} ({best}) | {sc} | {1e6 / med:,.0f} ({1e6 / best:,.0f}; {1e6 / sc:,.0f}) | {q or '—'} "
                 f"| {round(med / q, 2) if q else '—'} |")
    L += ["", "### B. real servers: client CPU µs per operation", "",
          f"campaign: {a['threads']} threads, default shards (one per usable CPU), {a['time']} s, CPU net of the fixed "
          "start-up cost (raw in brackets). in-process: one thread, main-thread loop. bare driver: the "
          "binding's own driver calls (MariaDB on mysqlclient: `query`, `store_result`, `num_rows`; PostgreSQL: "
          "`PGconn.exec_prepared`, `ntuples`; FerretDB: `find_one` into an undecoded `RawBSONDocument`: the row is "
          "received, not converted, as the worker's reads and sysbench events do) for the same statement in a loop "
          "(no dbswarm). overhead beyond the driver = "
          f"in-process dbswarm − bare driver (single thread both), measured as {a.get('server_rounds', 1)} interleaved "
          "pairs: medians, with the per-pair differences in brackets.",
          "",
          "| engine | workload | ops/s (campaign) | CPU µs/op campaign net (raw) | CPU µs/op in-process "
          "| CPU µs/op bare driver | overhead beyond the driver µs/op |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["servers"]:
        cmp_ = r["campaign"]
        L.append(f"| {C.ENGINE_LABELS[r['engine']]} | {r['workload']} | {cmp_['ops_per_s']:,.0f} "
                 f"| {cmp_['cpu_us_per_op']} ({cmp_['cpu_us_per_op_raw']}) | {r['in_process']['cpu_us_per_op']} "
                 f"| {r['bare_driver']['cpu_us_per_op']} | {r['overhead_beyond_driver_us']} "
                 f"({', '.join(str(x) for x in r.get('overhead_rounds_us', []))}) |")
    L += ["", "### C. where the time goes (cProfile, in-process loop)", "",
          "cProfile's own overhead inflates every Python frame, so the µs/op here are larger than the "
          "un-profiled figures above; the shares are what matters. Socket I/O includes waiting for the server.", ""]
    for name, prof in data["profiles"].items():
        L.append(f"**{name}** ({prof['ops']:,} operations, {prof['total_s']} s profiled)")
        L.append("")
        L.append("| where | share | µs/op (profiled) |")
        L.append("| --- | ---: | ---: |")
        for cat, v in prof["categories"].items():
            L.append(f"| {cat} | {v['share'] * 100:.0f}% | {v['us_per_op']} |")
        L.append("")
        L.append("top functions (own time): " + "; ".join(
            f"`{t['function']}` {t['us_per_op']} µs/op" for t in prof["top"][:6]))
        L.append("")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--time", type=float, default=10, help="seconds per measurement")
    p.add_argument("--profile-time", type=float, default=3)
    p.add_argument("--noop-rounds", type=int, default=3, help="in-process noop measurements per workload")
    p.add_argument("--server-rounds", type=int, default=3,
                   help="interleaved (dbswarm in-process, bare driver) pairs per engine and workload")
    p.add_argument("--threads", type=int, default=8, help="client threads of the real-server campaigns")
    p.add_argument("--engines", default="mysql,postgresql,mongodb")
    p.add_argument("--workloads", default=",".join(NOOP_WORKLOADS))
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    data = C.base_record("generator_cost", a)
    noop = {"engine": "noop"}
    data["noop"] = {}
    names = C.csv_list(a.workloads)
    runs: dict = {name: [] for name in names}
    for _ in range(a.noop_rounds):  # interleaved over the workloads: host noise hits them alike
        for name in names:
            calib = calibration_us()
            r = in_process(noop, NOOP_WORKLOADS[name], a.time)
            r["calibration_us"] = round(calib, 4)
            runs[name].append(r)
    fastest = min(r["calibration_us"] for rs in runs.values() for r in rs)
    data["calibration"] = {"fastest_us": fastest, "iterations": CALIBRATION_ITERATIONS}
    for rs in runs.values():
        for r in rs:  # the round's cost at the CPU speed of this run's fastest moment
            r["cpu_us_per_op_scaled"] = round(r["cpu_us_per_op"] * fastest / r["calibration_us"], 2)
    for name in names:
        wl = NOOP_WORKLOADS[name]
        ordered = sorted(runs[name], key=lambda x: x["cpu_us_per_op"])
        scaled = sorted(x["cpu_us_per_op_scaled"] for x in runs[name])
        r = {"campaign": campaign(noop, wl, a.time, 1, 1), "in_process": ordered[len(ordered) // 2],
             "in_process_best": ordered[0], "in_process_rounds": [x["cpu_us_per_op"] for x in runs[name]],
             "in_process_scaled_median": scaled[len(scaled) // 2],
             "calibration_rounds": [x["calibration_us"] for x in runs[name]]}
        if wl["family"] == "sysbench":
            r["queries_per_event"] = queries_per_event(wl)
        C.log(f"noop {name}: campaign {r['campaign']['ops_per_s']:,.0f} ops/s {r['campaign']['cpu_us_per_op']} µs/op; "
              f"in-process rounds {r['in_process_rounds']} µs/op")
        data["noop"][name] = r
    data["profiles"] = {}
    for name in ("ycsb-a", "sysbench-oltp_read_write"):
        data["profiles"][f"noop {name}"] = in_process(noop, NOOP_WORKLOADS[name], a.profile_time,
                                                      profile=True)["profile"]
    engines = C.csv_list(a.engines)
    data["servers"] = []
    if engines:
        env = C.start_servers(a.servers_dir)
        pw = C.password(env)
        for engine in engines:
            t = C.target(engine, env)
            if engine == "mongodb":
                from bench.common import ferretdb_backend_url
                t["options"] = {"ferretdb_backend_url": ferretdb_backend_url(env)}
            ycsb = {"family": "ycsb", "preset": "c", "recordcount": YCSB_RECORDS, "requestdistribution": "uniform"}
            C.load_with_dbswarm(env, engine, dict(ycsb, table="usertable"))
            kinds = [("ycsb-c", ycsb)]
            if engine != "mongodb":
                sb = {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000,
                      "rand_type": "uniform"}
                C.load_with_dbswarm(env, engine, sb, threads=1, shards=1)
                kinds.append(("sysbench-oltp_point_select", sb))
            for kind, wl in kinds:
                secs = a.time if engine != "mongodb" else min(a.time, 5)
                # dbswarm's loop and the bare driver loop interleaved, so that both see the same host
                pairs = []
                for _ in range(a.server_rounds):
                    pairs.append((in_process(t, wl, secs, pw),
                                  bare_driver(engine, env, "ycsb-c" if kind == "ycsb-c" else "point_select", secs)))
                by_ip = sorted(pairs, key=lambda pr: pr[0]["cpu_us_per_op"])
                by_bare = sorted(pairs, key=lambda pr: pr[1]["cpu_us_per_op"])
                diffs = sorted(round(ip["cpu_us_per_op"] - bare["cpu_us_per_op"], 2) for ip, bare in pairs)
                row = {"engine": engine, "workload": kind,
                       "campaign": campaign(t, wl, secs, a.threads, min(C.NCPU, a.threads)),
                       "in_process": by_ip[len(pairs) // 2][0], "bare_driver": by_bare[len(pairs) // 2][1],
                       "overhead_rounds_us": diffs, "overhead_beyond_driver_us": diffs[len(diffs) // 2]}
                C.log(f"{engine} {kind}: campaign {row['campaign']['cpu_us_per_op']} µs/op (raw "
                      f"{row['campaign']['cpu_us_per_op_raw']}), in-process {row['in_process']['cpu_us_per_op']}, "
                      f"bare driver {row['bare_driver']['cpu_us_per_op']} -> overhead "
                      f"{row['overhead_beyond_driver_us']} µs/op")
                data["servers"].append(row)
            if engine in ("mysql", "postgresql"):
                data["profiles"][f"{C.ENGINE_LABELS[engine]} ycsb-c"] = in_process(
                    t, ycsb, a.profile_time, pw, profile=True)["profile"]
    C.finish("generator_cost", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
