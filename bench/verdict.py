"""Write the headline table of BENCHMARKS.md (section ``verdict``: what was compared, the
result, the target, the command) from the newest record of each benchmark in bench/results/
(run after the others; bench/run_all.sh does).

    python bench/verdict.py
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

LABELS = {"mysql": "MariaDB", "postgresql": "PostgreSQL", "mongodb": "FerretDB"}


def latest(name):
    """The newest record of a script's own section: runs made with --no-md are side
    experiments (another shard count, one mode only) and are not the suite's figures, unless
    the section cites the record as its raw data (a section written by hand from it)."""
    section = C.benchmarks_text()
    for f in sorted(C.RESULTS.glob(f"{name}-*.json"), reverse=True):
        data = json.loads(f.read_text())
        if not (data.get("args") or {}).get("no_md") or f"raw data: `bench/results/{f.name}`" in section:
            return data
    return None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return f"{min(values):.2f}–{max(values):.2f}"


def summary(ratios: list[dict]) -> str:
    """The comparisons' medians: their median and range, and the range of all their rounds."""
    meds = [r["median"] for r in ratios if r and r.get("median") is not None]
    if not meds:
        return "n/a"
    lows = [r["min"] for r in ratios if r and r.get("min") is not None]
    highs = [r["max"] for r in ratios if r and r.get("max") is not None]
    return (f"median {statistics.median(meds):.2f}; medians {spread(meds)}; "
            f"single rounds {min(lows):.2f}–{max(highs):.2f}")


def command(data) -> str:
    """The record's command, without the default servers directory."""
    cmd = re.sub(r" --servers-dir \S+", "", data["command"])
    return f"`{cmd}`"


def scope(rows, *keys) -> str:
    parts = []
    for k in keys:
        vals = list(dict.fromkeys(r[k] for r in rows))
        if k == "engine":
            vals = [LABELS.get(v, v) for v in vals]
        parts.append((", ".join(str(v) for v in vals)) + (" threads" if k == "threads" else ""))
    return "; ".join(parts)


def bare_text(rows, other: str, key: str) -> str:
    """The bare Python client's figures of comparisons that ran it: `. bare ÷ OTHER: …. dbswarm ÷
    bare: …`; saying so where the record has none (a record from before the client, or --no-bare)."""
    with_bare = [r for r in rows if (r.get("dbswarm_vs_bare") or {}).get("median") is not None]
    if not with_bare:
        return ". Bare Python client: not in this record"
    part = "" if len(with_bare) == len(rows) else (
        f" ({len(with_bare)} of the {len(rows)} comparisons: {scope(with_bare, 'engine', 'workload', 'threads')})")
    return (f". bare ÷ {other}{part}: {summary([r[key] for r in with_bare])}. "
            f"dbswarm ÷ bare: {summary([r['dbswarm_vs_bare'] for r in with_bare])}")


def users_table(pc, yc) -> list[str]:
    """`dbswarm run` (default install) against sysbench and go-ycsb per engine, thread count and
    CPU placement, the bare Python client's figure in the same cells and the orchestrating
    process's CPU in its own column (issue 21): one row per comparison of the newest
    python_ceiling and vs_ycsb records."""
    L = ["", "`dbswarm run` at the white papers' thread counts, one row per comparison (medians of interleaved "
         "rounds; in brackets the bare Python client on the same drivers; orchestrator: CPU seconds of the "
         "`dbswarm run` process over the whole campaign, start-up and aggregation included):", "",
         "| reference | engine | threads | CPUs | dbswarm ÷ reference (bare ÷ reference) | dbswarm ÷ bare "
         "| client CPU µs per op: reference / bare / dbswarm | orchestrator CPU s |",
         "| --- | --- | --- | --- | --- | --- | --- | --- |"]

    def ratio(r):
        return "—" if not r or r.get("median") is None else f"{r['median']:.2f}"

    def num(v):
        return "—" if v is None else f"{v:.4g}"

    rows = []
    for r in (pc or {}).get("comparisons", []):
        if r.get("failed"):
            continue
        cpu = r.get("cpu_us_per_trx") or {}
        rows.append((f"sysbench {r['test']}", r, ratio(r.get("dbswarm_vs_sysbench")), ratio(r.get("bare_vs_sysbench")),
                     f"{num(cpu.get('sysbench'))} / {num(cpu.get('bare'))} / {num(cpu.get('dbswarm'))} (per trx)",
                     command(pc)))
    for r in (yc or {}).get("comparisons", []):
        if r.get("failed") or r["engine"] == "mongodb":
            continue
        rows.append((f"go-ycsb workload {r['workload']}", r, ratio(r.get("ops_ratio")), ratio(r.get("bare_vs_goycsb")),
                     f"{num(r.get('goycsb_cpu_us_per_op'))} / {num(r.get('bare_cpu_us_per_op'))} / "
                     f"{num(r.get('dbswarm_cpu_us_per_op'))}", command(yc)))
    for ref, r, vs_ref, bare_ref, cpu, _cmd in rows:
        L.append(f"| {ref} | {LABELS.get(r['engine'], r['engine'])} | {r['threads']} | {r['mode']} "
                 f"| {vs_ref} ({bare_ref}) | {ratio(r.get('dbswarm_vs_bare'))} | {cpu} "
                 f"| {num(r.get('dbswarm_orchestrator_cpu_s'))} |")
    cmds = list(dict.fromkeys(cmd for *_, cmd in rows))
    return L + ["", "Commands: " + "; ".join(cmds) + "."] if rows else []


def met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def main():  # noqa: C901
    sb, yc, gc, fs, ag, pc, gt, fc = (latest(n) for n in ("vs_sysbench", "vs_ycsb", "generator_cost", "fanout_scaling",
                                                           "aggregation_cost", "python_ceiling", "vs_gotpc",
                                                           "fixed_cost"))
    L = ["| compared | result (medians of interleaved rounds, this machine) | target | met? | command |",
         "| --- | --- | --- | --- | --- |"]
    acc = latest("acceptance")
    if acc:  # issue 36's bars, judged in one run (bench/acceptance.py): first, the rows below are older suites'
        cells = acc.get("cells") or []
        missed = [c["what"] for c in cells if not c.get("met")]
        L.append(f"| issue 36's acceptance bars, every cell in one run ({acc['date'][:10]}; section \"Issue 36's "
                 f"acceptance, in one run\") | {len(cells) - len(missed)} of {len(cells)} cells met"
                 + (f"; not met: {'; '.join(missed)}" if missed else "")
                 + f" | every cell | {met(bool(cells) and not missed)} | {command(acc)} |")
    if sb:
        for mode in ("shared", "pinned"):
            rows = [r for r in sb["comparisons"] if r["mode"] == mode and not r.get("failed")]
            if rows:
                meds = [r["tps_ratio"]["median"] for r in rows]
                L.append(f"| dbswarm ÷ sysbench TPS, CPUs {mode} ({len(rows)} comparisons: "
                         f"{scope(rows, 'engine', 'test', 'threads')}) | {summary([r['tps_ratio'] for r in rows])} "
                         f"| ≥ 0.9 | {met(min(meds) >= 0.9)} | {command(sb)} |")
    if pc:  # the context of the rows above: what a Python client on the same drivers reaches at all
        for mode in ("shared", "pinned"):
            rows = [r for r in pc["comparisons"] if r["mode"] == mode and not r.get("failed")]
            if rows:
                L.append(f"| a bare Python client on dbswarm's drivers ÷ sysbench TPS; dbswarm ÷ that client, "
                         f"CPUs {mode} ({len(rows)} comparisons: {scope(rows, 'engine', 'test', 'threads')}) "
                         f"| bare ÷ sysbench: {summary([r['bare_vs_sysbench'] for r in rows])}. "
                         f"dbswarm ÷ bare: {summary([r['dbswarm_vs_bare'] for r in rows])} | (context) | — "
                         f"| {command(pc)} |")
        # issue 21's targets for `dbswarm run` at 16 threads: ≥ 0.95 of the bare client with the CPUs
        # shared, ≥ 0.9 of sysbench pinned (where the bare client itself falls short, that is the ceiling)
        for mode, key, target in (("shared", "dbswarm_vs_bare", 0.95), ("pinned", "dbswarm_vs_sysbench", 0.9)):
            rows = [r for r in pc["comparisons"] if r["mode"] == mode and r.get("threads") == 16
                    and not r.get("failed")]
            if rows:
                per = "; ".join(f"{LABELS.get(r['engine'], r['engine'])} {r[key]['median']:.2f}"
                                + (f" (bare ÷ sysbench {r['bare_vs_sysbench']['median']:.2f})" if mode == "pinned" else "")
                                for r in rows)
                what = "dbswarm run ÷ bare Python client" if mode == "shared" else "dbswarm run ÷ sysbench"
                L.append(f"| {what} TPS, 16 threads, CPUs {mode} (oltp_read_only) | {per} | ≥ {target} "
                         f"| {met(min(r[key]['median'] for r in rows) >= target)} | {command(pc)} |")
    if yc:
        for mode in ("shared", "pinned"):
            rows = [r for r in yc["comparisons"] if r["mode"] == mode and r["engine"] != "mongodb"
                    and not r.get("failed")]
            if rows:
                meds = [r["ops_ratio"]["median"] for r in rows]
                L.append(f"| dbswarm ÷ go-ycsb OPS; a bare Python client on dbswarm's drivers ÷ go-ycsb; dbswarm ÷ "
                         f"that client, CPUs {mode} ({len(rows)} comparisons: "
                         f"{scope(rows, 'engine', 'workload', 'threads')}) | {summary([r['ops_ratio'] for r in rows])}"
                         f"{bare_text(rows, 'go-ycsb', 'bare_vs_goycsb')} "
                         f"| ≥ 0.9 | {met(min(meds) >= 0.9)} | {command(yc)} |")
        rows = [r for r in yc["comparisons"] if r["engine"] == "mongodb" and not r.get("failed")]
        if rows:
            L.append(f"| dbswarm ÷ go-ycsb OPS on FerretDB (server-bound: says nothing about the clients; "
                     f"{scope(rows, 'workload')}) | {summary([r['ops_ratio'] for r in rows])} | — | — | {command(yc)} |")
    if gt:
        for mode in ("shared", "pinned"):
            rows = [r for r in gt["comparisons"] if r.get("mode") == mode and not r.get("failed")]
            if rows:
                meds = [r["tpmC_ratio"]["median"] for r in rows]
                L.append(f"| dbswarm ÷ go-tpc tpmC, CPUs {mode} ({len(rows)} comparisons: "
                         f"{scope(rows, 'engine', 'threads')}) | {summary([r['tpmC_ratio'] for r in rows])} "
                         f"| ≥ 0.9 | {met(min(meds) >= 0.9)} | {command(gt)} |")
    if fc:
        import statistics
        first = statistics.median(r["to_first_operation_s"] for r in fc["rounds"])
        share = statistics.median(r["orchestrator_share_of_one_cpu"] for r in fc["rounds"])
        L.append(f"| `dbswarm run`: launch → first operation; orchestrator's share of a CPU while shards run "
                 f"| {first:g} s; {share:.1%} (load average {fc['loadavg']['before'][0]:.1f}) | ≤ 3 s; ≤ 2 % "
                 f"| {met(first <= 3)}; {met(share <= 0.02)} | {command(fc)} |")
    if gc:
        ip = {k: v["in_process"] for k, v in gc["noop"].items()}
        best = {k: v.get("in_process_best", v["in_process"]) for k, v in gc["noop"].items()}
        per_cpu = {k: 1e6 / v["cpu_us_per_op"] for k, v in ip.items()}
        per_cpu_best = {k: 1e6 / v["cpu_us_per_op"] for k, v in best.items()}
        per_cpu_scaled = {k: 1e6 / v.get("in_process_scaled_median", v["in_process"]["cpu_us_per_op"])
                          for k, v in gc["noop"].items()}
        # an absolute target depends on the CPU: the pure-Python calibration loop of the run says
        # how fast this host was (the hosts of 2026-11-23/24 took 0.23 µs per iteration)
        fastest = (gc.get("calibration") or {}).get("fastest_us")
        calib = (f"calibration loop {fastest} µs per iteration (generator cost section A)" if fastest
                 else "no calibration recorded")
        ycsb = {k: v for k, v in per_cpu.items() if k.startswith("ycsb")}
        ycsb_scaled = {k: v for k, v in per_cpu_scaled.items() if k.startswith("ycsb")}
        L.append("| noop binding: operations per CPU-second of one process (1e6 ÷ CPU µs/op, in-process; "
                 "median (best; scaled to the run's fastest CPU moment) of the rounds) | "
                 + ", ".join(f"{k} {v / 1000:,.0f}k ({per_cpu_best[k] / 1000:,.0f}k; {per_cpu_scaled[k] / 1000:,.0f}k)"
                             for k, v in per_cpu.items())
                 + f"; this host's speed: {calib} "
                 + "| ≥ 200k for every YCSB workload (sysbench counts transactions of up to 20 queries) "
                 + f"| median: {met(min(ycsb.values()) >= 200_000)}, scaled: {met(min(ycsb_scaled.values()) >= 200_000)} "
                 f"| {command(gc)} |")
        ov = [r["overhead_beyond_driver_us"] for r in gc["servers"] if r["engine"] != "mongodb"]
        L.append("| client CPU beyond the driver, µs per operation | noop generator + measurement: "
                 + ", ".join(f"{k} {v['cpu_us_per_op']}" for k, v in ip.items() if not k.endswith("read_write"))
                 + f"; on MariaDB/PostgreSQL (dbswarm − bare driver loop, one thread): {spread(ov)} "
                 f"| ≤ 5 | {met(bool(ov) and max(ov) <= 5)} | {command(gc)} |")
    if fs:
        eff = [r for r in fs["noop"] if r["shards"] <= fs["machine"]["nproc"]]
        L.append("| fan-out efficiency up to the core count (noop: ops/s(K) ÷ (K × ops/s(1))) | "
                 + ", ".join(f"K={r['shards']} {r['efficiency']:.2f} (CPU efficiency {r['cpu_efficiency']})" for r in eff)
                 + f" | ≥ 0.9 | {met(min(r['efficiency'] for r in eff) >= 0.9)} | {command(fs)} |")
    if ag:
        for key, res in ag["results_by_shards"].items():
            n, _, interval = str(key).partition(":")
            if int(n) != 1000 or "merge" not in res:
                continue
            r = res["merge"]
            hours = ag["args"]["seconds"] / 3600
            L.append(f"| aggregation of 1,000 shards × {hours:g} h with per-interval histograms "
                     f"({interval or 1} s intervals) | {r['seconds']} s, {r['cpu_s']} CPU s, "
                     f"{r['process_maxrss_mb']:,} MB peak RSS | < 60 s, < 1 GB | "
                     f"{met(r['seconds'] < 60 and r['process_maxrss_mb'] < 1024)} | {command(ag)} |")
    L += users_table(pc, yc)
    C.update_section("verdict", "\n".join(L))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
