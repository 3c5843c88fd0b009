"""Two revisions of dbswarm side by side: what a hot-path change bought.

Each revision is checked out into its own git worktree (``--base``, default ``HEAD~1``;
``--head``, default the working tree); every measurement runs in a fresh process importing
that tree's ``dbswarm`` and ``bench`` (PYTHONPATH), alternating base, head, base, head, ...
so that both see the same host. Measured (CPU µs per operation, the process's rusage):

- the noop binding, one client thread, in-process (``generator_cost.in_process``), per
  workload family;
- with ``--engines``, on the real servers, one thread, in-process, each of
  ``--server-workloads``: ``ycsb-c`` (uniform, 10,000 records; followed by the bare driver
  loop of the same tree: the overhead beyond the driver, dbswarm − bare, per revision),
  ``sysbench-oltp_read_write``, ``sysbench-oltp_read_only``, ``sysbench-oltp_point_select``
  (2 tables × 10,000 rows; CPU per transaction).

    python bench/ab_revisions.py --base 3ce3bd3 --rounds 5 --time 3 --engines postgresql,mysql
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402

WORKTREES = Path(os.environ.get("DBSWARM_AB_WORKTREES", "/tmp/dbswarm-ab-worktrees"))
NOOP = ("ycsb-a", "ycsb-c", "ycsb-S3", "ycsb-e", "sysbench-oltp_point_select")
YCSB_C = {"family": "ycsb", "preset": "c", "recordcount": 10_000, "requestdistribution": "uniform"}
SYSBENCH = {"family": "sysbench", "tables": 2, "table_size": 10_000, "rand_type": "uniform"}
SERVER_WORKLOADS = {"ycsb-c": YCSB_C,
                    **{f"sysbench-{t}": dict(SYSBENCH, test=t)
                       for t in ("oltp_read_write", "oltp_read_only", "oltp_point_select")}}

# runs inside the revision's tree: prints one JSON line
PROBE = r"""
import json, sys
from bench import common as C
from bench import generator_cost as G
kind, name, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
# this probe is a fresh process already: run the loop in it (revisions before 97aeafe have
# no in_this_process; their in_process runs in the calling process)
run_loop = getattr(G, "in_this_process", None) or (lambda t, w, s, pw=None, profile=False: G.in_process(t, w, s, pw))
if kind == "noop":
    r = run_loop({"engine": "noop"}, G.NOOP_WORKLOADS[name], seconds, None, False)
    print(json.dumps({"cpu_us_per_op": r["cpu_us_per_op"]}))
else:
    env = C.read_env(sys.argv[4])
    wl = json.loads(sys.argv[5])
    a = run_loop(C.target(name, env), wl, seconds, C.password(env), False)
    out = {"cpu_us_per_op": a["cpu_us_per_op"]}
    if wl["family"] == "ycsb":
        b = G.bare_driver(name, env, "ycsb-c", seconds)
        out.update(bare_us_per_op=b["cpu_us_per_op"], overhead_us=round(a["cpu_us_per_op"] - b["cpu_us_per_op"], 2))
    print(json.dumps(out))
"""


def tree(rev: str) -> tuple[Path, str]:
    """(directory, commit) for a revision; "." is the working tree itself."""
    if rev == ".":
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=C.ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "shared", "bench"], cwd=C.ROOT,
                               capture_output=True, text=True).stdout.strip()
        return C.ROOT, sha + ("+changes" if dirty else "")
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=C.ROOT, capture_output=True, text=True)
    if sha.returncode:
        sys.exit(f"--base/--head: {rev!r} is not a revision of this repository")
    sha = sha.stdout.strip()
    path = WORKTREES / sha
    if not (path / "shared" / "dbswarm").is_dir():
        WORKTREES.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--force", "--detach", str(path), sha], cwd=C.ROOT,
                       capture_output=True, text=True, check=True)
    return path, sha


def probe(path: Path, kind: str, name: str, seconds: float, env_file: str = "", workload=None) -> dict:
    env = dict(os.environ, PYTHONPATH=f"{path / 'shared'}{os.pathsep}{path}")
    res = subprocess.run([sys.executable, "-c", PROBE, kind, name, str(seconds), env_file, json.dumps(workload)],
                         cwd=path, env=env,
                         capture_output=True, text=True, timeout=seconds * 10 + 120)
    if res.returncode:
        raise RuntimeError(f"{kind} {name} in {path} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def compare(label, run_base, run_head, rounds, key="cpu_us_per_op") -> dict:
    b, h = C.interleave(rounds, lambda i: run_base(), lambda i: run_head())
    out = {"label": label, "base": b, "head": h,
           "base_median": C.med([x[key] for x in b]), "head_median": C.med([x[key] for x in h]),
           "ratio_head_base": C.ratios([x[key] for x in h], [x[key] for x in b])}
    if "overhead_us" in b[0]:
        out["overhead_base"] = C.med([x["overhead_us"] for x in b])
        out["overhead_head"] = C.med([x["overhead_us"] for x in h])
    C.log(f"{label}: {out['base_median']} -> {out['head_median']} µs/op ({C.fmt_ratio(out['ratio_head_base'])})"
          + (f"; overhead beyond the driver {out['overhead_base']} -> {out['overhead_head']} µs/op"
             if "overhead_base" in out else ""))
    return out


def markdown(data: dict) -> str:
    a = data["args"]
    L = [f"## Two revisions side by side: {data['base']} → {data['head']}", "", C.header(data), "",
         f"base `{data['base']}` against head `{data['head']}`; {a['rounds']} interleaved rounds (base, head, ...) "
         f"of {a['time']:g} s, each in a fresh process importing that revision's code; CPU µs per operation (sysbench: per transaction), "
         "medians, and the per-round head ÷ base ratio: median (min–max).", "",
         "| measurement | base µs/op | head µs/op | head ÷ base | overhead beyond the driver, base → head |",
         "| --- | ---: | ---: | --- | --- |"]
    for r in data["rows"]:
        ovh = f"{r['overhead_base']} → {r['overhead_head']} µs/op" if "overhead_base" in r else ""
        L.append(f"| {r['label']} | {r['base_median']} | {r['head_median']} | {C.fmt_ratio(r['ratio_head_base'])} "
                 f"| {ovh} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", default="HEAD~1", help="revision to compare against (a git worktree is made for it)")
    p.add_argument("--head", default=".", help='revision measured against the base ("." = the working tree)')
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--time", type=float, default=3, help="seconds per measurement")
    p.add_argument("--workloads", default=",".join(NOOP))
    p.add_argument("--engines", default="", help="also: these real servers (postgresql,mysql)")
    p.add_argument("--server-workloads", default="ycsb-c", help=f"on the servers: {', '.join(SERVER_WORKLOADS)}")
    p.add_argument("--servers-dir", default=C.DEFAULT_SERVERS_DIR)
    p.add_argument("--section", default="ab_revisions",
                   help="section (and record) name")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    if not re.fullmatch(r"[a-z0-9_]+", a.section):
        p.error(f"--section: {a.section!r} must be lower-case letters, digits and underscores")
    if a.rounds < 3:
        p.error("--rounds: at least 3 (only interleaved medians mean anything on a shared machine)")
    base_path, base_sha = tree(a.base)
    head_path, head_sha = tree(a.head)
    data = C.base_record(a.section, a)
    data.update(base=base_sha, head=head_sha, rows=[])
    for name in C.csv_list(a.workloads):
        data["rows"].append(compare(f"noop {name}", lambda n=name: probe(base_path, "noop", n, a.time),
                                    lambda n=name: probe(head_path, "noop", n, a.time), a.rounds))
    engines = C.csv_list(a.engines)
    server_workloads = C.csv_list(a.server_workloads)
    unknown = [w for w in server_workloads if w not in SERVER_WORKLOADS]
    if unknown:
        p.error(f"--server-workloads: {', '.join(unknown)} not among {', '.join(SERVER_WORKLOADS)}")
    if engines:
        env = C.start_servers(a.servers_dir)
        env_file = str(Path(a.servers_dir) / "env")
        for engine in engines:
            for name in server_workloads:
                wl = SERVER_WORKLOADS[name]
                if wl["family"] == "ycsb":
                    C.load_with_dbswarm(env, engine, dict(wl, table="usertable"))
                else:
                    C.load_with_dbswarm(env, engine, wl, threads=2, shards=1)
                data["rows"].append(compare(
                    f"{C.ENGINE_LABELS[engine]} {name}, one thread",
                    lambda e=engine, w=wl: probe(base_path, "server", e, a.time, env_file, w),
                    lambda e=engine, w=wl: probe(head_path, "server", e, a.time, env_file, w), a.rounds))
    C.finish(a.section, data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
