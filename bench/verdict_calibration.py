"""The client verdict against ground truth (issue 56 item 5): for each configuration the native
tool (sysbench 1.0.20, go-ycsb v1.0.1, go-tpc v1.0.12, pgbench 15) and dbswarm run alternately on
the same server for R rounds (native, dbswarm, native, ...), the same threads, data and seconds,
pinned (server on CPU 0, both clients on CPU 1) or shared (everything on every CPU).

Ground truth, per dbswarm round against the native run of the same round: client-limited when
dbswarm's throughput is below 0.9 x the native tool's, or, at equal throughput (within 10 %),
its median latency above 1.5 x the native tool's. Throughput and latency: sysbench TPS and
transaction p50 (sysbench --percentile=50); YCSB ops/s and the p50 of all operations (go-ycsb's
TOTAL); TPC-C tpmC and the New-Order p50; pgbench TPS and the transaction's MEAN latency
(pgbench prints no median). The prediction: the run phase's client verdict in result.json
(results/aggregate.py's client section: ok / near / bound / contended / unmeasured), carried by
bench/dbswarm_run.py's summary with its signals and ``allowed``.

Reported: the confusion matrix (rows: the verdict words, near and contended on rows of their
own; columns: client-limited or not), the false-alarm rate (``bound`` among the runs that were
not client-limited) and the miss rate (not ``bound`` among the client-limited ones); stability:
each configuration of STABILITY run as ``--stability-runs`` separate dbswarm campaigns, stable
when the verdict's mode holds at least 4 of 5 (of another count, the same share rounded up). Record:
bench/results/verdict_calibration-<date>.json; its section is printed (``--render RECORD``
prints it again).

The full calibration (a quiet machine: nothing else running; about 2 h 15 min on the 2-CPU host:
23 configurations x 3 rounds x (30 s native + 30 s dbswarm + ~15 s start-up) ~ 90 min, 5 x 5
stability campaigns ~ 20 min, the loads ~ 20 min; go-ycsb and go-tpc are built first when
missing: 2-14 min each, as measured under load):

    python bench/verdict_calibration.py --configs all --rounds 3 --time 30 --stability-runs 5

The smoke (2 configurations, 1 round, 5-s runs, 2 stability campaigns of the first; 2 min):

    python bench/verdict_calibration.py --quick --servers-dir /tmp/servers-calib
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import vs_gotpc, vs_pgbench, vs_sysbench, vs_ycsb  # noqa: E402

NAME = "verdict_calibration"
THROUGHPUT_BELOW = 0.9   # dbswarm below this x the native tool's throughput: client-limited
LATENCY_ABOVE = 1.5      # ... or its median latency above this x the native's at equal throughput
EQUAL_WITHIN = 0.10      # "equal throughput": within 10 %
ROWS = ("bound", "contended", "near", "ok", "unmeasured")
TOOLS = {"sysbench": "sysbench", "ycsb": "go-ycsb", "tpcc": "go-tpc", "pgbench": "pgbench"}
SYSBENCH_TESTS = {"read_write": "oltp_read_write", "point_select": "oltp_point_select"}


def _cfg(family, engine, test, threads, pinned, model) -> dict:
    mode = "pinned" if pinned else "shared"
    return {"name": f"{family}-{test}-{engine}-{threads}-{mode}-{model}", "family": family, "engine": engine,
            "test": test, "threads": threads, "pinned": pinned, "model": model}


CONFIGS = [_cfg("sysbench", e, t, n, p, m) for e in ("postgresql", "mysql") for t in SYSBENCH_TESTS
           for n, p, m in ((8, True, "threads"), (64, False, "multiplexed"))]
CONFIGS += [_cfg("sysbench", "postgresql", "point_select", 256, False, "multiplexed")]
CONFIGS += [_cfg("ycsb", e, w, n, p, m) for e in ("postgresql", "mysql") for w in ("a", "c")
            for n, p, m in ((16, True, "threads"), (128, False, "multiplexed"))]
CONFIGS += [_cfg("ycsb", "mongodb", w, 32, False, "threads") for w in ("a", "c")]
CONFIGS += [_cfg("tpcc", "postgresql", "new_order_mix", 16, True, "threads"),
            _cfg("tpcc", "mysql", "new_order_mix", 64, False, "multiplexed")]
CONFIGS += [_cfg("pgbench", "postgresql", "tpcb", n, p, m) for n, p, m in ((16, True, "threads"),
                                                                           (128, False, "multiplexed"))]
BY_NAME = {c["name"]: c for c in CONFIGS}
QUICK = ["sysbench-point_select-postgresql-8-pinned-threads", "pgbench-tpcb-postgresql-16-pinned-threads"]
STABILITY = [*QUICK, "sysbench-read_write-mysql-64-shared-multiplexed", "ycsb-c-postgresql-128-shared-multiplexed",
             "tpcc-new_order_mix-postgresql-16-pinned-threads"]


# ---- the pure parts (tests/unit/test_verdict_calibration.py) -----------------------------------

def client_limited(dbswarm: dict, native: dict) -> dict:
    """Ground truth of one dbswarm run from its round's native run ({throughput, latency_ms})."""
    t = dbswarm["throughput"] / native["throughput"] if native.get("throughput") else None
    lat = (dbswarm["latency_ms"] / native["latency_ms"]
           if native.get("latency_ms") and dbswarm.get("latency_ms") is not None else None)
    if t is None:
        return {"limited": None, "why": "the native tool measured no throughput", "throughput_ratio": None,
                "latency_ratio": lat}
    out = {"throughput_ratio": round(t, 3), "latency_ratio": None if lat is None else round(lat, 3)}
    if t < THROUGHPUT_BELOW:
        return {**out, "limited": True, "why": f"throughput {t:.2f} x the native tool's (< {THROUGHPUT_BELOW})"}
    if abs(t - 1) <= EQUAL_WITHIN and lat is not None and lat > LATENCY_ABOVE:
        return {**out, "limited": True, "why": f"median latency {lat:.2f} x at equal throughput (> {LATENCY_ABOVE})"}
    return {**out, "limited": False, "why": "throughput and latency as the native tool's"}


def confusion(pairs) -> dict:
    """pairs: (verdict, limited). The matrix (verdict -> {limited, not_limited}), the false-alarm
    rate (bound among the not-limited runs) and the miss rate (not bound among the limited ones);
    pairs whose truth is unknown (None) are counted apart."""
    matrix = {v: {"limited": 0, "not_limited": 0} for v in ROWS}
    unknown = 0
    for verdict, limited in pairs:
        if limited is None:
            unknown += 1
            continue
        matrix.setdefault(verdict, {"limited": 0, "not_limited": 0})["limited" if limited else "not_limited"] += 1
    neg = sum(r["not_limited"] for r in matrix.values())
    pos = sum(r["limited"] for r in matrix.values())
    fa, miss = matrix["bound"]["not_limited"], pos - matrix["bound"]["limited"]
    return {"matrix": matrix, "limited": pos, "not_limited": neg, "unknown_truth": unknown,
            "false_alarms": fa, "false_alarm_rate": round(fa / neg, 4) if neg else None,
            "misses": miss, "miss_rate": round(miss / pos, 4) if pos else None}


def stability(verdicts: list, need: int = 4, of: int = 5) -> dict:
    """The verdict's mode over separate campaigns, and whether it held ``need`` of ``of`` (for
    another count of runs the same share, rounded up: 2 of 2, 3 of 3, 8 of 10)."""
    if not verdicts:
        return {"mode": None, "count": 0, "runs": 0, "stable": None, "verdicts": []}
    mode, count = collections.Counter(verdicts).most_common(1)[0]
    required = math.ceil(len(verdicts) * need / of - 1e-9)
    return {"mode": mode, "count": count, "runs": len(verdicts), "required": required,
            "stable": count >= required, "verdicts": list(verdicts)}


# ---- running one configuration -----------------------------------------------------------------

def _ns(cfg, a) -> argparse.Namespace:
    """The arguments the vs_* scripts' functions read."""
    return argparse.Namespace(time=a.time, tables=a.tables, table_size=a.table_size, percentile=50,
                              recordcount=a.ferretdb_recordcount if cfg["engine"] == "mongodb" else a.recordcount,
                              threads=cfg["threads"], go_startup=0.3, shards=None, client_model=cfg["model"],
                              warehouses=a.warehouses, scale=a.scale)


def prepare(family, engine, env, a) -> None:
    """The data of a family on an engine, once per invocation (dbswarm's load where both tools
    read the same rows; go-ycsb loads its own keys; pgbench -i its tables)."""
    ns = _ns({"engine": engine, "threads": 8, "model": None}, a)
    if family == "sysbench":
        C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_read_write", "tables": a.tables,
                                          "table_size": a.table_size})
    elif family == "ycsb":
        if not C.GO_YCSB.exists():
            C.check(C.run_measured([str(C.ROOT / "scripts" / "build-go-ycsb")], timeout=1200), "build-go-ycsb")
        vs_ycsb.load(engine, env, ns)
    elif family == "tpcc":
        try:
            vs_gotpc.go_tpc()
        except SystemExit:
            C.check(C.run_measured([str(C.ROOT / "scripts" / "build-go-tpc")], timeout=1200), "build-go-tpc")
        s = C.run_dbswarm(vs_gotpc.dbswarm_campaign(engine, env, ns, 2, 60, 2, phases=("prepare", "load")),
                          timeout=3600)
        if s["phase"].get("status") != "complete":
            raise RuntimeError(f"TPC-C load on {engine}: {s['phase'].get('status')} {s['phase'].get('errors')}")
    else:
        vs_pgbench.init_tables(env, a.scale)


def run_native(cfg, env, a) -> dict:
    ns, e, n, p = _ns(cfg, a), cfg["engine"], cfg["threads"], cfg["pinned"]
    if cfg["family"] == "sysbench":
        r = vs_sysbench.run_sysbench(e, env, SYSBENCH_TESTS[cfg["test"]], ns, n, p)
        return {"throughput": r["tps"], "latency_ms": r["p50_ms"], "errors": r["errors"]}
    if cfg["family"] == "ycsb":
        r = vs_ycsb.run_go(e, env, cfg["test"], ns, p)
        return {"throughput": r["ops_per_s"], "latency_ms": r["p50_us"] and r["p50_us"] / 1000, "errors": r["errors"]}
    if cfg["family"] == "tpcc":
        r = vs_gotpc.run_gotpc(e, env, ns, n, p)
        return {"throughput": r.get("tpmC"), "latency_ms": r.get("types", {}).get("NEW_ORDER", {}).get("p50_ms"),
                "errors": sum((r.get("errors") or {}).values())}
    r = vs_pgbench.pgbench_run(env, n, a.time, p)
    return {"throughput": r["tps"], "latency_ms": r["latency_avg_ms"], "latency_kind": "mean"}


def campaign(cfg, env, a) -> dict:
    ns, e, n = _ns(cfg, a), cfg["engine"], cfg["threads"]
    if cfg["family"] == "sysbench":
        return vs_sysbench.dbswarm_campaign(e, env, SYSBENCH_TESTS[cfg["test"]], ns, n)
    if cfg["family"] == "ycsb":
        return vs_ycsb.dbswarm_campaign(e, env, cfg["test"], ns)
    if cfg["family"] == "tpcc":
        return vs_gotpc.dbswarm_campaign(e, env, ns, n, a.time, model=cfg["model"])
    c = vs_pgbench.dbswarm_campaign(env, n, a.time, a.scale, cfg["model"])
    c["results"] = {}  # the verdict as a user's campaign gets it (vs_pgbench accepts a bound client)
    return c


def figures(cfg, s: dict) -> dict:
    """Throughput and latency (as run_native's) and the client verdict of one dbswarm summary."""
    ph, ops = s["phase"], s.get("latency_by_op") or {}
    fam = cfg["family"]
    if fam == "sysbench":
        thr, lat = (ph.get("sysbench") or {}).get("tps"), (ops.get("TRANSACTION") or {}).get("p50_us")
    elif fam == "ycsb":
        thr, lat = ph.get("ops_per_s"), (s.get("overall") or {}).get("p50_us")
    elif fam == "tpcc":
        thr, lat = (ph.get("tpcc") or {}).get("tpmC"), (ops.get("NEW_ORDER") or {}).get("p50_us")
    else:
        thr, lat = ph.get("throughput"), (ops.get("tpcb_like") or {}).get("avg_us")
    v = s.get("client_verdict") or {"verdict": "unmeasured"}
    return {"throughput": thr, "latency_ms": None if lat is None else lat / 1000, "status": ph.get("status"),
            "errors": ph.get("errors_total"), "verdict": v.get("verdict"), "client": v}


def run_dbswarm(cfg, env, a) -> dict:
    return figures(cfg, C.run_dbswarm(campaign(cfg, env, a), pinned=cfg["pinned"], timeout=a.time * 4 + 240))




def calibrate(cfg, env, a) -> dict:
    la0 = C.loadavg()
    C.log(f"{cfg['name']}: {a.rounds} rounds x ({TOOLS[cfg['family']]}, dbswarm) x {a.time} s")
    with C.Pinning(env, cfg["pinned"], engines=vs_ycsb.server_engines(cfg["engine"])):
        nat, ds = C.interleave(a.rounds, lambda i: run_native(cfg, env, a), lambda i: run_dbswarm(cfg, env, a))
    rounds = [{"native": n, "dbswarm": d, "truth": client_limited(d, n)} for n, d in zip(nat, ds)]
    for r in rounds:
        C.log(f"  {TOOLS[cfg['family']]} {r['native']['throughput']}, dbswarm {r['dbswarm']['throughput']} "
              f"(verdict {r['dbswarm']['verdict']}): {r['truth']['why']}")
    return {**cfg, "rounds": rounds, "loadavg": {"before": la0, "after": C.loadavg()}}


def stability_runs(cfg, env, a) -> dict:
    C.log(f"{cfg['name']}: {a.stability_runs} separate dbswarm campaigns (stability)")
    with C.Pinning(env, cfg["pinned"], engines=vs_ycsb.server_engines(cfg["engine"])):
        runs = [run_dbswarm(cfg, env, a) for _ in range(a.stability_runs)]
    return {**cfg, **stability([r["verdict"] for r in runs]), "throughputs": [r["throughput"] for r in runs]}


# ---- output ------------------------------------------------------------------------------------

def _pct(x) -> str:
    return "–" if x is None else f"{x:.1%}"


def markdown(data: dict) -> str:
    cf, a = data["confusion"], data["args"]
    lines = ["## The client verdict against the native tools", "", C.header(data),
             f"- {len(data['configs'])} configurations, {a['rounds']} rounds of ({a['time']} s native tool, "
             f"{a['time']} s dbswarm); client-limited: throughput < {THROUGHPUT_BELOW} x the native tool's, or median "
             f"latency > {LATENCY_ABOVE} x at equal throughput (±{EQUAL_WITHIN:.0%}; pgbench: mean latency).",
             *(["- **smoke run (--quick): the figures say nothing about the verdict**"] if a.get("quick") else []),
             "", "| verdict | client-limited | not client-limited |", "| --- | ---: | ---: |"]
    lines += [f"| {v} | {r['limited']} | {r['not_limited']} |" for v, r in cf["matrix"].items()]
    lines += ["", f"False alarms (bound, not client-limited): {cf['false_alarms']} of {cf['not_limited']} "
              f"({_pct(cf['false_alarm_rate'])}); misses (client-limited, not bound): {cf['misses']} of "
              f"{cf['limited']} ({_pct(cf['miss_rate'])}); truth unknown: {cf['unknown_truth']}."]
    lines += ["", "| configuration | verdicts | client-limited rounds | dbswarm ÷ native throughput |",
              "| --- | --- | ---: | --- |"]
    for c in data["configs"]:
        rs = c.get("rounds") or []
        lines.append(f"| {c['name']} | failed: {c['failed']} | | |" if c.get("failed") else
                     f"| {c['name']} | {', '.join(str(r['dbswarm']['verdict']) for r in rs)} "
                     f"| {sum(bool(r['truth']['limited']) for r in rs)} of {len(rs)} "
                     f"| {C.fmt_ratio(C.ratios([r['dbswarm']['throughput'] for r in rs], [r['native']['throughput'] for r in rs]))} |")
    if data.get("stability"):
        ok = [s for s in data["stability"] if s.get("stable")]
        lines += ["", f"Stability: {len(ok)} of {len(data['stability'])} configurations kept their verdict's mode "
                  f"(≥ 4 of 5).", "", "| configuration | verdicts | mode | stable |", "| --- | --- | --- | --- |"]
        lines += [f"| {s['name']} | {', '.join(s.get('verdicts') or [])} | {s.get('mode')} ({s.get('count')}) "
                  f"| {s.get('stable', s.get('failed'))} |" for s in data["stability"]]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", default="all", help="'all' or names, comma-separated: " + ", ".join(BY_NAME))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--time", type=int, default=30)
    p.add_argument("--stability-runs", type=int, default=5, help="campaigns per STABILITY configuration (0: none)")
    p.add_argument("--quick", action="store_true", help="the smoke: 2 configurations, 1 round, 5-s runs, 2 stability")
    p.add_argument("--tables", type=int, default=4)
    p.add_argument("--table-size", type=int, default=100_000)
    p.add_argument("--recordcount", type=int, default=100_000)
    p.add_argument("--ferretdb-recordcount", type=int, default=2000)
    p.add_argument("--warehouses", type=int, default=4)
    p.add_argument("--scale", type=int, default=10, help="pgbench -i -s")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--render", metavar="RECORD", help="print the section of a record and exit")
    a = p.parse_args(argv)
    if a.render:
        print(markdown(json.loads(Path(a.render).read_text())))
        return
    if a.quick:
        a.configs, a.rounds, a.time, a.stability_runs, a.table_size, a.scale = ",".join(QUICK), 1, 5, 2, 10_000, 1
    names = list(BY_NAME) if a.configs == "all" else C.csv_list(a.configs)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or a.rounds < 1 or a.time < 1:
        p.error(f"--configs: unknown {unknown} (known: {', '.join(BY_NAME)})" if unknown
                else "--rounds and --time: whole numbers >= 1")
    cfgs = [BY_NAME[n] for n in names]
    data = C.base_record(NAME, a)
    env = C.start_servers(a.servers_dir)
    data["configs"], data["stability"], ready = [], [], set()
    for cfg in cfgs:
        key = (cfg["family"], cfg["engine"])
        if key not in ready:
            ready.add(key)
            failed = C.attempt(lambda: prepare(*key, env, a), name=f"load {key}")
            if failed:
                data.setdefault("load_failures", []).append(failed)
        data["configs"].append(C.attempt(lambda: calibrate(cfg, env, a), name=cfg["name"]))
    pairs = [(r["dbswarm"]["verdict"], r["truth"]["limited"]) for c in data["configs"] for r in c.get("rounds", [])]
    data["confusion"] = confusion(pairs)
    for cfg in (c for c in cfgs if c["name"] in (QUICK[:1] if a.quick else STABILITY) and a.stability_runs > 0):
        data["stability"].append(C.attempt(lambda: stability_runs(cfg, env, a), name=cfg["name"]))
    C.finish(NAME, data, markdown)


if __name__ == "__main__":
    main()
