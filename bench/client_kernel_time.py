"""Where a client's CPU per transaction goes: user or kernel time, context switches, system
calls — sysbench, the bare Python client (bench/bare_client.py) and dbswarm side by side
(a lead, not a section of BENCHMARKS.md: printed, and kept in bench/results/).

Interleaved rounds of the three clients on the same sbtest tables, CPUs shared with the
server, as bench/python_ceiling.py runs them; each client's user and system CPU seconds and
context switches come from wait4 over its whole process tree. Totals include start-up:
dbswarm's start-up (imports, connecting; ``fixed_cpu_s``, measured once as in the other
benches) is subtracted from its user time, where nearly all of it is spent. Then one pass of
each client under ``strace -f -c`` counts its system calls per transaction (strace slows
the clients down several times: the counts are meaningful, that pass's throughput is not).

    python bench/client_kernel_time.py --engines postgresql,mysql --rounds 3 --time 5
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402
from bench import python_ceiling as PC  # noqa: E402
from bench import vs_sysbench as VS  # noqa: E402

TOOLS = ("sysbench", "bare", "dbswarm")


def dbswarm_campaign(engine, env, a) -> dict:
    return VS.dbswarm_campaign(engine, env, a.test, a, a.threads)


def run_tool(tool, engine, env, a, prefix=()) -> dict:
    """One run of ``tool``: transactions and the wait4 rusage of its process tree."""
    timeout = a.time * 20 + 180  # strace slows the clients down several times
    if tool == "dbswarm":
        s = C.run_dbswarm(dbswarm_campaign(engine, env, a), timeout=timeout, prefix=prefix)
        trx, runner_cpu_s = s["phase"]["sysbench"]["transactions"], s["runner_cpu_s"]
        res = {"cpu_user_s": s["cpu_user_s"], "cpu_sys_s": s["cpu_sys_s"],
               "context_switches": s["context_switches"], "wall_s": s["wall_s"]}
    else:
        cmd = (VS.sysbench_cmd(engine, env, a.test, a, a.threads) if tool == "sysbench"
               else PC.bare_cmd(engine, env, a.test, a, a.threads, C.NCPU))
        res = C.check(C.run_measured([*prefix, *cmd], timeout=timeout, cwd=str(C.ROOT)), f"{tool} on {engine}")
        trx = (VS.parse_sysbench(res["stdout"])["transactions"] if tool == "sysbench"
               else json.loads(res["stdout"].strip().splitlines()[-1])["transactions"])
        runner_cpu_s = 0.0
    return {"transactions": int(trx or 0), "user_s": res["cpu_user_s"], "sys_s": res["cpu_sys_s"],
            "runner_cpu_s": runner_cpu_s, "context_switches": res["context_switches"],
            "wall_s": round(res["wall_s"], 3)}


def per_trx(run: dict, fixed_user_s: float = 0.0) -> dict:
    n = run["transactions"] or 1
    cs = run["context_switches"]
    return {"user_us": round(max(run["user_s"] - fixed_user_s, 0) / n * 1e6, 2),
            "sys_us": round(run["sys_s"] / n * 1e6, 2),
            "voluntary_cs": round(cs["voluntary"] / n, 3), "involuntary_cs": round(cs["involuntary"] / n, 3)}


STRACE_LINE = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def syscalls_per_trx(tool, engine, env, a) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".strace", delete=False) as fh:
        out = fh.name
    try:
        run = run_tool(tool, engine, env, a, prefix=("strace", "-f", "-c", "-o", out))
        counts = {}
        for line in Path(out).read_text().splitlines():
            m = STRACE_LINE.match(line)
            if m and m.group(2) != "total":
                counts[m.group(2)] = int(m.group(1))
    finally:
        Path(out).unlink(missing_ok=True)
    n = run["transactions"] or 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:6]
    return {"transactions": run["transactions"], "per_transaction": {k: round(v / n, 3) for k, v in top}}


def compare(engine, env, a) -> dict:
    C.log(f"{engine} {a.test} threads={a.threads} shared: {a.rounds} rounds x {', '.join(TOOLS)} x {a.time} s")
    fixed = C.fixed_cpu(C.target(engine, env), dbswarm_campaign(engine, env, a)["workload"], a.threads, None, False)
    rounds = {t: [] for t in TOOLS}
    for i in range(a.rounds):
        for tool in TOOLS:
            run = run_tool(tool, engine, env, a)
            run["per_transaction"] = per_trx(run, fixed + run["runner_cpu_s"] if tool == "dbswarm" else 0.0)
            run["tps"] = round(run["transactions"] / a.time)
            rounds[tool].append(run)
        C.log(f"  round {i}: " + "; ".join(
            f"{t} {rounds[t][-1]['tps']:,} TPS, user {rounds[t][-1]['per_transaction']['user_us']} "
            f"sys {rounds[t][-1]['per_transaction']['sys_us']} µs/trx" for t in TOOLS))
    medians = {t: {k: C.med([r["per_transaction"][k] for r in rounds[t]]) for k in rounds[t][0]["per_transaction"]}
               for t in TOOLS}
    for t in TOOLS:
        medians[t]["tps"] = C.med([r["tps"] for r in rounds[t]])
    strace = {}
    if a.strace and shutil.which("strace"):
        for tool in TOOLS:
            strace[tool] = syscalls_per_trx(tool, engine, env, a)
            C.log(f"  strace {tool}: {strace[tool]['per_transaction']}")
    return {"engine": engine, "test": a.test, "threads": a.threads, "mode": "shared", "fixed_cpu_s": fixed,
            "medians": medians, "rounds": rounds, "strace": strace}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engines", default="postgresql,mysql")
    p.add_argument("--test", default="oltp_point_select", choices=("oltp_point_select", "oltp_read_only"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--time", type=int, default=5)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--tables", type=int, default=8)
    p.add_argument("--table-size", type=int, default=20_000)
    p.add_argument("--no-strace", dest="strace", action="store_false", help="skip the strace -c pass")
    p.add_argument("--no-load", action="store_true", help="the sbtest tables are already loaded")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    a = p.parse_args(argv)
    if a.rounds < 1 or a.time < 1 or a.threads < 1:
        p.error("--rounds, --time and --threads must be at least 1")
    data = C.base_record("client_kernel_time", a)
    env = C.start_servers(a.servers_dir)
    data["comparisons"] = []
    for engine in C.csv_list(a.engines):
        if not a.no_load:
            C.load_with_dbswarm(env, engine, {"family": "sysbench", "test": "oltp_read_write", "tables": a.tables,
                                              "table_size": a.table_size})
        data["comparisons"].append(C.attempt(lambda: compare(engine, env, a), engine=engine, test=a.test))
    for c in data["comparisons"]:
        if "failed" in c:
            print(f"{c['engine']}: failed: {c['failed']}")
            continue
        print(f"{C.ENGINE_LABELS[c['engine']]}, {c['test']}, {c['threads']} threads, shared CPUs "
              f"(medians of {a.rounds} rounds; per transaction):")
        for t in TOOLS:
            m = c["medians"][t]
            sc = c["strace"].get(t, {}).get("per_transaction", {})
            print(f"  {t:9s} {m['tps']:>9,.0f} TPS  user {m['user_us']:6.1f} µs  sys {m['sys_us']:6.1f} µs  "
                  f"context switches {m['voluntary_cs']:.2f} + {m['involuntary_cs']:.2f} involuntary  "
                  f"syscalls {', '.join(f'{k} {v}' for k, v in sc.items())}")
    C.finish("client_kernel_time", data, lambda d: "", write_md=False)


if __name__ == "__main__":
    main()
