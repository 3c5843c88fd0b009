"""Start-up costs (issue 60): the CLI's quick commands, a 16-operation noop `dbswarm run`, and the
Lambda handlers' cold-start imports.

- `dbswarm --help | presets | schema | validate examples/demo.yaml`: wall and CPU seconds of the
  process (median of --rounds);
- `dbswarm run` of a noop campaign (YCSB c, 16 operations, one shard of one thread, phases [run]):
  wall and CPU of every process of the run (a cpuacct cgroup: the runner, its forkserver and the
  function processes forked from it; without a cgroup, os.wait4's waited-for tree, which misses
  the forkserver's), and with PYTHONPROFILEIMPORTTIME the import
  time summed over every Python process of the run (the share of the CPU that imports are);
- each functions/*/app.py: the cumulative import time of its handler module (python -X importtime,
  a fresh interpreter: a Lambda's cold start before the first event) and that process's wall.

    python bench/startup.py --rounds 5
    python bench/startup.py --rounds 5 --ab /work/main [--bytecode]   # A/B against another checkout
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import common as C  # noqa: E402

ROOT = C.ROOT
NOOP = {"name": "startup-noop", "target": {"engine": "noop"}, "phases": ["run"],
        "workload": {"family": "ycsb", "preset": "c", "operationcount": 16, "threads": 1},
        "fanout": {"shards": 1}}
_IMPORT = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


def _env(extra: dict | None = None, root: Path = ROOT) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "shared"), str(root)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra or {})
    return env


def _median(rounds: list[dict]) -> dict:
    return {k: round(statistics.median(r[k] for r in rounds), 3) for k in ("wall_s", "cpu_s")}


def cli(rounds: int) -> dict:
    out = {}
    for args in (["--help"], ["presets"], ["schema"], ["validate", "examples/demo.yaml"]):
        rs = []
        for _ in range(rounds):
            r = C.run_measured([sys.executable, "-m", "dbswarm", *args], env=_env(), cwd=ROOT, timeout=120)
            assert r["returncode"] in (0, 10), (args, r["stderr"][-2000:])
            rs.append(r)
        out[" ".join(args)] = _median(rs)
    return out


def import_seconds(stderr: str) -> float:
    """The self time of every import line (of every process whose stderr this is), seconds."""
    return sum(int(m.group(1)) for m in map(_IMPORT.match, stderr.splitlines()) if m) / 1e6


def _in_cgroup(cmd: list[str], **kw) -> dict:
    """``run_measured``, with ``cpu_s`` the CPU of every process of the command (a cpuacct
    cgroup, once its last process ended: the forkserver and the function processes it forks
    are not waited for by the command) where one can be made, else its waited-for tree."""
    cgroup = C._new_cgroup()
    if cgroup is None:
        return C.run_measured(cmd, **kw)
    try:
        r = C.run_measured(["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$0" "$@"', *cmd], **kw)
        for _ in range(500):  # the forkserver ends once the command's end closed its pipe
            if not (cgroup / "cgroup.procs").read_text().strip():
                break
            time.sleep(0.01)
        r["cpu_waited_s"], r["cpu_s"] = r["cpu_s"], int((cgroup / "cpuacct.usage").read_text()) / 1e9
        return r
    finally:
        try:
            cgroup.rmdir()
        except OSError:
            pass


def noop_run(rounds: int) -> dict:
    rs, imports = [], []
    with tempfile.TemporaryDirectory() as tmp:
        campaign = Path(tmp) / "noop.yaml"
        campaign.write_text(json.dumps(NOOP))
        for i in range(rounds + 1):  # the last one with the import profile (it slows the run)
            profile = i == rounds
            r = _in_cgroup([sys.executable, "-m", "dbswarm", "run", str(campaign), "--quiet",
                            "--results", str(Path(tmp) / f"results-{i}")],
                           env=_env({"PYTHONPROFILEIMPORTTIME": "1"} if profile else None), cwd=tmp, timeout=300)
            assert r["returncode"] == 0, r["stderr"][-2000:]
            if profile:
                imports.append(import_seconds(r["stderr"]))
            else:
                rs.append(r)
    return {**_median(rs), "imports_all_processes_s": round(imports[0], 3), "load_average": os.getloadavg()[0]}


def ab_noop(rounds: int, other: Path, bytecode: bool) -> dict:
    """The noop run of this tree (``branch``) and of ``other`` (``base``, another checkout),
    alternating, medians of ``rounds`` each. ``bytecode``: both libraries' bytecode compiled
    first into a cache of the run's own (PYTHONPYCACHEPREFIX), as an installed package has it,
    where the environment sets PYTHONDONTWRITEBYTECODE."""
    trees = {"branch": ROOT, "base": other.resolve()}
    out: dict = {k: [] for k in trees}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        campaign = Path(tmp) / "noop.yaml"
        campaign.write_text(json.dumps(NOOP))
        extra = {"PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache")} if bytecode else {}
        for i in range(rounds + (1 if bytecode else 0)):
            order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
            for name, root in order:
                env = _env(extra, root)
                if bytecode and i == 0:  # the first round writes the bytecode, and is not counted
                    env.pop("PYTHONDONTWRITEBYTECODE", None)
                r = _in_cgroup([sys.executable, "-m", "dbswarm", "run", str(campaign), "--quiet",
                                "--results", str(Path(tmp) / f"results-{name}-{i}")], env=env, cwd=tmp, timeout=300)
                assert r["returncode"] == 0, (name, r["stderr"][-2000:])
                if not (bytecode and i == 0):
                    out[name].append(r)
            loads.append(os.getloadavg()[0])
    return {"other": str(other), "bytecode": bytecode, "load_average": [round(x, 1) for x in loads],
            **{name: {**_median(rs), "wall_each_s": [round(r["wall_s"], 2) for r in rs]} for name, rs in out.items()}}


def handlers() -> dict:
    out = {}
    for app in sorted((ROOT / "functions").glob("*/app.py")):
        code = f"import sys; sys.path.insert(0, {str(app.parent)!r}); import app"
        r = C.run_measured([sys.executable, "-X", "importtime", "-c", code], env=_env(), timeout=120)
        assert r["returncode"] == 0, r["stderr"][-2000:]
        cumulative = [int(m.group(2)) for m in map(_IMPORT.match, r["stderr"].splitlines())
                      if m and m.group(4) == "app" and not m.group(3)]
        out[app.parent.name] = {"import_s": round(cumulative[-1] / 1e6, 3), "process_wall_s": round(r["wall_s"], 3),
                                "process_cpu_s": round(r["cpu_s"], 3)}
    return out


def markdown(data: dict) -> str:
    rows = [f"| `dbswarm {k}` | {v['wall_s']:.2f} | {v['cpu_s']:.2f} |" for k, v in data["cli"].items()]
    n = data["noop_run"]
    rows.append(f"| `dbswarm run` noop, 16 operations (process tree) | {n['wall_s']:.2f} | {n['cpu_s']:.2f} |")
    h = ", ".join(f"{k} {v['import_s']:.2f}" for k, v in data["handlers"].items())
    return "\n".join(["| command | wall s | CPU s |", "| --- | --- | --- |", *rows, "",
                      f"Lambda handlers' cold-start import (s): {h}."])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ab", metavar="CHECKOUT", help="instead: the noop run of this tree against another checkout's, "
                   "alternating (e.g. the main branch's worktree)")
    p.add_argument("--bytecode", action="store_true", help="with --ab: both libraries' bytecode compiled first")
    a = p.parse_args(argv)
    data = C.base_record("startup", a)
    if a.ab:
        data["ab_noop_run"] = ab_noop(a.rounds, Path(a.ab), a.bytecode)
        # the script's one record (bench/results keeps the newest per script): the A/B's, with its mode
        path = C.finish("startup", data, lambda d: json.dumps(d["ab_noop_run"]), write_md=False)
        print(json.dumps(data["ab_noop_run"], indent=1))
        C.log(f"record: {path}")
        return
    data["cli"] = cli(a.rounds)
    data["noop_run"] = noop_run(a.rounds)
    data["handlers"] = handlers()
    path = C.finish("startup", data, markdown, write_md=False)
    print(markdown(data))
    C.log(f"record: {path}")


if __name__ == "__main__":
    main()
