"""Shared helpers of the benchmark scripts (scripts, not tests).

- the bench's own throwaway servers (``scripts/test-servers start DIR``, DIR default
  /tmp/dbswarm-bench-servers so that benchmarks never disturb the test servers), through
  the tests' server harness ``tests/servers.py`` (its ``start_servers``, ``read_env``,
  ``password``): one harness for tests and benchmarks;
- running a command and measuring its CPU (``os.wait4``: the rusage of the process and
  of every child it waited for), optionally pinned to CPUs with ``taskset``;
- pinning the servers (``taskset -a -cp CPUS PID`` for every process of the server, so
  every thread, and the backends PostgreSQL forks later inherit it);
- running dbswarm exactly as users do: a campaign through ``dbswarm.run.runtime.local.run_campaign``
  in a separate Python process (``bench/dbswarm_run.py``) that reports the CPU of the
  shard processes (RUSAGE_CHILDREN) apart from its own orchestration;
- interleaved rounds A, B, A, B, ... and median ratios with min-max;
- a JSON record in bench/results/<name>-<date>.json (the newest of each script is kept in the
  repository, older ones in git history) and its markdown section: written into BENCHMARKS.md
  where that file holds the section's markers (the acceptance table), else printed.
"""
from __future__ import annotations

import datetime as _dt
import itertools
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import servers as _servers  # noqa: E402  (the one server harness; it imports no pytest)
from tests.servers import ferretdb_backend_url, password, read_env  # noqa: E402,F401  (C.read_env: ab_revisions)

BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"  # the headline: the acceptance section is written there
RECORD_WIDTH = 160  # a record's nested values on one line while they fit (record_text)
DEFAULT_SERVERS_DIR = os.environ.get("DBSWARM_BENCH_SERVERS_DIR", "/tmp/dbswarm-bench-servers")
CACHE = Path(os.environ.get("DBSWARM_CACHE", Path.home() / ".cache" / "dbswarm"))
GO_YCSB = CACHE / "bin" / "go-ycsb-1.0.1"
GO_YCSB_WORKLOADS = CACHE / "share" / "go-ycsb-1.0.1" / "workloads"
SYSBENCH = "/usr/bin/sysbench"
NCPU = os.cpu_count() or 1
SERVER_CPUS = "0"
CLIENT_CPUS = "1" if NCPU > 1 else "0"
PY = sys.executable


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


# ---- the machine ------------------------------------------------------------------------------

def loadavg() -> list[float]:
    with open("/proc/loadavg") as fh:
        return [float(x) for x in fh.read().split()[:3]]


def machine() -> dict:
    model = ""
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    return {"nproc": NCPU, "memory_gb": round(mem_kb / 1024 / 1024, 1), "cpu_model": model,
            "kernel": platform.release(), "python": platform.python_version(),
            "hostname": platform.node()}


def versions() -> dict:
    out = {}
    for name, cmd in (("sysbench", [SYSBENCH, "--version"]),
                      ("mariadb", ["mariadbd", "--version"])):
        try:
            out[name] = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except OSError:
            pass
    for mod in ("pymysql", "psycopg", "pymongo", "hdrh"):
        try:
            m = __import__(mod)
            out[mod] = getattr(m, "__version__", "?")
        except ImportError:
            pass
    out["go-ycsb"] = "v1.0.1 (" + str(GO_YCSB) + ")"
    return out


def now_iso() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def command_line() -> str:
    return "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]])


# ---- servers --------------------------------------------------------------------------------

def start_servers(directory: str = DEFAULT_SERVERS_DIR) -> dict:
    """scripts/test-servers start DIR (idempotent); the env file's variables as a dict, and
    DIR as ``_DIR`` (where the servers' pid files are)."""
    try:
        env = _servers.start_servers(directory, timeout=1200)
    except _servers.ServersError as exc:
        sys.exit(str(exc))
    env["_DIR"] = directory
    return env


def stop_servers(directory: str = DEFAULT_SERVERS_DIR) -> None:
    _servers.stop_servers(directory, timeout=300)


def mysql_driver() -> str:
    """The MySQL driver the benchmarks use: $DBSWARM_BENCH_MYSQL_DRIVER, else mysqlclient
    (the C driver) when it is installed, else PyMySQL (the binding's portable default)."""
    chosen = os.environ.get("DBSWARM_BENCH_MYSQL_DRIVER")
    if chosen:
        return chosen
    try:
        import MySQLdb  # noqa: F401
        return "mysqlclient"
    except ImportError:
        return "pymysql"


def target(engine: str, env: dict) -> dict:
    url = {"mysql": env["DBSWARM_TEST_MYSQL_URL"], "postgresql": env["DBSWARM_TEST_PG_URL"],
           "mongodb": env["DBSWARM_TEST_MONGO_URL"]}[engine]
    t = {"engine": engine, "url": url, "password": {"file": env["DBSWARM_TEST_PASSWORD_FILE"]},
         "label": ENGINE_LABELS[engine]}
    if engine == "mysql":
        t["options"] = {"driver": mysql_driver()}
    return t


ENGINE_LABELS = {"mysql": "MariaDB 10.11", "postgresql": "PostgreSQL 15", "mongodb": "FerretDB 1.24",
                 "noop": "noop"}


def _children(pid: int) -> list[int]:
    out = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            kids = [int(x) for x in fh.read().split()]
    except OSError:
        return out
    for k in kids:
        out.append(k)
        out.extend(_children(k))
    return out


def server_pids(env: dict, engine: str) -> list[int]:
    """Every process of one server (PostgreSQL: the postmaster and all its children)."""
    d = Path(env["_DIR"])
    if engine == "mysql":
        pidfile = d / "mysql" / "mysqld.pid"
    elif engine == "postgresql":
        pidfile = Path(env["DBSWARM_TEST_PG_DATADIR"]) / "postmaster.pid"
    elif engine == "mongodb":
        pidfile = d / "ferretdb" / "ferretdb.pid"
    else:
        return []
    pid = int(pidfile.read_text().split()[0])
    return [pid, *_children(pid)]


def process_cpu_s(pid: int, reaped_children: bool = False) -> float:
    """CPU seconds (user + system) of one process from /proc (all its threads); with
    reaped_children, plus what its exited, reaped children used (PostgreSQL's backends)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def server_cpu_s(env: dict, engines) -> float:
    """CPU seconds used so far by the servers of ``engines``: every live process, plus the
    exited children each top process has reaped (a connection's PostgreSQL backend ends with
    it and its CPU moves to the postmaster's children's time, so nothing is lost or counted
    twice). Take it before and after a run; the difference is the server's CPU for the run,
    at the kernel's clock-tick resolution (10 ms)."""
    total = 0.0
    for e in engines:
        for i, pid in enumerate(server_pids(env, e)):
            try:
                total += process_cpu_s(pid, reaped_children=(i == 0))
            except (OSError, IndexError, ValueError):
                pass  # a backend that ended between the listing and the read: counted at its parent
    return total


class ServerBusy:
    """The servers' CPU sampled every ``step_s`` while a run goes on (``with ServerBusy(env,
    engines) as busy: run()``), then ``busy.top(seconds)``: their mean CPU share (1.0 = one
    CPU) over the busiest ``seconds`` of it (a measured window inside a longer run: connecting
    and the tool's own start-up are left out). Pinned to one CPU, a server at 1.0 in both
    tools' windows had no idle time: a throughput gap between them is its CPU per operation."""

    def __init__(self, env: dict, engines, step_s: float = 0.5):
        self.env, self.engines, self.step_s = env, tuple(engines), step_s
        self.series: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        last, t_last = server_cpu_s(self.env, self.engines), time.monotonic()
        while not self._stop.wait(self.step_s):
            cpu, t = server_cpu_s(self.env, self.engines), time.monotonic()
            self.series.append(round((cpu - last) / (t - t_last), 3))
            last, t_last = cpu, t

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def top(self, seconds: float) -> Optional[float]:
        n = max(1, int(seconds / self.step_s))
        busiest = sorted(self.series)[-n:]
        return round(sum(busiest) / len(busiest), 3) if busiest else None


def pin_servers(env: dict, cpus: Optional[str], engines=("mysql", "postgresql", "mongodb")) -> list[int]:
    """Pin every thread of every server process to ``cpus`` (None: all CPUs again)."""
    cpus = cpus or f"0-{NCPU - 1}"
    pids = []
    for e in engines:
        for pid in server_pids(env, e):
            r = subprocess.run(["taskset", "-a", "-cp", cpus, str(pid)], capture_output=True, text=True)
            if r.returncode == 0:
                pids.append(pid)
    return pids


def client_prefix(pinned: bool) -> list[str]:
    return ["taskset", "-c", CLIENT_CPUS] if pinned else []


class Pinning:
    """Context: servers on SERVER_CPUS (the client is pinned per command), or all CPUs."""

    def __init__(self, env, pinned: bool, engines=("mysql", "postgresql", "mongodb")):
        self.env, self.pinned, self.engines = env, pinned, engines

    def __enter__(self):
        pin_servers(self.env, SERVER_CPUS if self.pinned else None, self.engines)
        return self

    def __exit__(self, *exc):
        pin_servers(self.env, None, self.engines)


# ---- running and measuring a command -----------------------------------------------------------

def run_measured(cmd: list[str], *, timeout: float = 900, env: Optional[dict] = None,
                 interrupt_after: Optional[float] = None, cwd=None) -> dict:
    """Run ``cmd``; return stdout, stderr, returncode, wall seconds and the CPU seconds of the
    process and its waited-for children (os.wait4). ``interrupt_after``: send SIGINT then."""
    out_f = tempfile.TemporaryFile(mode="w+")
    err_f = tempfile.TemporaryFile(mode="w+")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, cwd=cwd, start_new_session=True)
    deadline = t0 + timeout
    interrupted = timed_out = False
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        now = time.perf_counter()
        if interrupt_after is not None and not interrupted and now - t0 >= interrupt_after:
            os.kill(proc.pid, signal.SIGINT)
            interrupted = True
        if now > deadline:
            # processes that registered faulthandler on SIGUSR1 (dbswarm's shard processes)
            # print every thread's stack to stderr first: what was it stuck in?
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGUSR1)
                time.sleep(2)
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            pid, status, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    out_f.seek(0)
    err_f.seek(0)
    return {"cmd": cmd, "returncode": proc.returncode, "wall_s": wall, "stdout": out_f.read(),
            "stderr": err_f.read(), "timed_out": timed_out, "cpu_user_s": ru.ru_utime, "cpu_sys_s": ru.ru_stime,
            "cpu_s": ru.ru_utime + ru.ru_stime, "maxrss_kb": ru.ru_maxrss,
            "context_switches": {"voluntary": ru.ru_nvcsw, "involuntary": ru.ru_nivcsw}}


def attempt(compare: Callable[[], dict], **labels) -> dict:
    """One comparison; if it fails, a row saying so (with its labels) instead of losing the
    comparisons already measured in this invocation."""
    try:
        return compare()
    except Exception as exc:  # recorded, reported in the section, and the run goes on
        log(f"comparison {labels} failed: {exc}")
        return {**labels, "failed": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}",
                "loadavg": {"before": loadavg(), "after": loadavg()}}


def check(res: dict, what: str) -> dict:
    if res["returncode"] != 0:
        if res.get("timed_out"):  # keep the whole stderr: it holds the stuck threads' stacks
            RESULTS.mkdir(parents=True, exist_ok=True)
            path = RESULTS / f"timeout-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.txt"
            path.write_text(f"{res['cmd']}\n--- stderr\n{res['stderr']}\n--- stdout\n{res['stdout']}")
            raise RuntimeError(f"{what} timed out and was killed after {res['wall_s']:.0f} s; stacks and output "
                               f"in {path}")
        raise RuntimeError(f"{what} failed (exit {res['returncode']}):\n{res['stderr'][-3000:]}\n{res['stdout'][-2000:]}")
    return res


# ---- dbswarm, the way users run it ---------------------------------------------------------------

def run_dbswarm(campaign: dict, *, pinned: bool = False, results_dir: Optional[str] = None,
                timeout: float = 900, prefix: tuple = ()) -> dict:
    """One campaign through dbswarm.run.runtime.local.run_campaign in its own Python process
    (bench/dbswarm_run.py). Returns its summary: the run's merged phase, the CPU of the
    shard processes (``shard_cpu_s``: what the client costs) and of the orchestrating
    process (``runner_cpu_s``), and the totals from wait4 (``cpu_s``, ``cpu_user_s``,
    ``cpu_sys_s``, ``context_switches``). ``prefix`` goes in front of the command (strace)."""
    own_dir = results_dir is None
    results_dir = results_dir or tempfile.mkdtemp(prefix="dbswarm-bench-results-")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(campaign, fh)
        cpath = fh.name
    out_path = cpath + ".out.json"
    cmd = [*prefix, *client_prefix(pinned), PY, str(BENCH / "dbswarm_run.py"), cpath, results_dir, out_path]
    cgroup = _new_cgroup()
    if cgroup is not None:  # every process of the campaign counted, whoever reaps it
        cmd = ["sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$0" "$@"', *cmd]
    try:
        res = run_measured(cmd, timeout=timeout, cwd=str(ROOT))
        all_cpu = int((cgroup / "cpuacct.usage").read_text()) / 1e9 if cgroup is not None else None
    finally:
        if cgroup is not None:
            try:
                cgroup.rmdir()
            except OSError:
                pass
    try:
        check(res, "dbswarm campaign")
        summary = json.loads(Path(out_path).read_text())
    finally:
        for p in (cpath, out_path):
            try:
                os.unlink(p)
            except OSError:
                pass
        if own_dir:
            shutil.rmtree(results_dir, ignore_errors=True)
    summary["wall_s"] = res["wall_s"]
    summary["cpu_s"] = res["cpu_s"]
    # every process of the campaign (cgroup), and what was not the shards' calls: the
    # orchestrating process, the function processes' start-up, the aggregation
    summary["all_cpu_s"] = round(all_cpu, 4) if all_cpu is not None else None
    summary["not_shard_cpu_s"] = round(all_cpu - summary["shard_cpu_s"], 4) if all_cpu is not None else None
    summary["cpu_user_s"], summary["cpu_sys_s"] = res["cpu_user_s"], res["cpu_sys_s"]
    summary["context_switches"] = res["context_switches"]
    return summary


DBSWARM_MODE = os.environ.get("DBSWARM_BENCH_MODE", "campaign")
DBSWARM_MODE_TEXT = {
    "fanout": "dbswarm's own service functions in the state machine's order, one spawned process per "
              "shard (`bench/dbswarm_run.py`, mode fanout: the service path, without the state machine)",
    "campaign": "`dbswarm.run.runtime.local.run_campaign`, what `dbswarm run` calls: the state machine through moto, every "
                "function in its own process (`bench/dbswarm_run.py`, mode campaign)",
}[DBSWARM_MODE]
CGROUP_ROOT = Path("/sys/fs/cgroup/cpuacct")
_cgroups = itertools.count()


def _new_cgroup() -> Optional[Path]:
    """A cpuacct cgroup (v1) for one campaign, or None where there is none to create."""
    if not (CGROUP_ROOT / "cgroup.procs").exists():
        return None
    path = CGROUP_ROOT / f"dbswarm-bench-{os.getpid()}-{next(_cgroups)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path
_fixed_cache: dict = {}


def fixed_cpu(target_: dict, workload: dict, threads: int, shards: Optional[int], pinned: bool = False) -> float:
    """CPU seconds the shard processes of a campaign spend besides their operations: spawn,
    imports, plan, connect, result upload — measured by a campaign doing one operation per
    thread (same engine, threads and shards; pinned like the campaign, since the default
    shard count follows the CPU affinity). Subtracted to get CPU per operation."""
    key = (target_["engine"], workload["family"], threads, shards, pinned)
    if key not in _fixed_cache:
        w = {k: v for k, v in workload.items() if k not in ("time", "maxexecutiontime", "operationcount", "events")}
        w["threads"] = threads
        if w["family"] == "ycsb":
            w["operationcount"] = threads
        else:
            w.update(events=threads, time=60)
        c = {"name": "bench-fixed-cost", "target": target_, "workload": w, "phases": ["run"]}
        if shards:
            c["fanout"] = {"shards": shards}
        _fixed_cache[key] = run_dbswarm(c, pinned=pinned)["shard_cpu_s"]
    return _fixed_cache[key]


def load_with_dbswarm(env: dict, engine: str, workload: dict, threads: int = 8, shards: int = 2) -> dict:
    """Fresh load (prepare + load) through dbswarm; returns the load phase summary."""
    c = {"name": "bench-load", "target": target(engine, env),
         "workload": dict(workload, threads=threads), "phases": ["prepare", "load"],
         "fanout": {"shards": min(shards, threads)}}
    t0 = time.time()
    s = run_dbswarm(c, timeout=1800)
    ph = s["phase"]
    if ph.get("status") != "complete":
        raise RuntimeError(f"load of {engine} {workload} did not complete: {ph.get('status')} {ph.get('errors')}")
    log(f"loaded {engine}: {ph['operations_total']} rows in {time.time() - t0:.1f} s")
    return ph


# ---- interleaved rounds and ratios -------------------------------------------------------------

def interleave(rounds: int, a: Callable[[int], dict], b: Callable[[int], dict],
               between: Optional[Callable[[], None]] = None) -> tuple[list, list]:
    """A, B, A, B, ... (``between`` runs before each single run: e.g. a TRUNCATE)."""
    ra, rb = [], []
    for i in range(rounds):
        for fn, out in ((a, ra), (b, rb)):
            if between:
                between()
            out.append(fn(i))
    return ra, rb


def ratios(a: list[float], b: list[float]) -> dict:
    """Per-round ratios a_i / b_i: median, min, max (None where b_i is 0/None)."""
    rs = [x / y for x, y in zip(a, b) if x is not None and y]
    if not rs:
        return {"median": None, "min": None, "max": None, "rounds": []}
    return {"median": round(statistics.median(rs), 3), "min": round(min(rs), 3), "max": round(max(rs), 3),
            "rounds": [round(r, 3) for r in rs]}


def fmt_ratio(r: dict) -> str:
    if not r or r.get("median") is None:
        return "n/a"
    return f"{r['median']:.2f} ({r['min']:.2f}–{r['max']:.2f})"


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---- output -------------------------------------------------------------------------------------

def record_text(data) -> str:
    """A record as JSON text: objects and lists one entry a line, any value whose JSON fits in
    RECORD_WIDTH columns on its own line (json.loads gives back exactly ``data``)."""
    def fmt(v, depth: int) -> str:
        flat = json.dumps(v, ensure_ascii=False, default=str)
        if not isinstance(v, (dict, list)) or not v or len(flat) + depth <= RECORD_WIDTH:
            return flat
        pad = " " * (depth + 1)
        if isinstance(v, dict):
            items = [f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {fmt(x, depth + 1)}" for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
        return "[\n" + ",\n".join(pad + fmt(x, depth + 1) for x in v) + "\n" + " " * depth + "]"
    return fmt(data, 0) + "\n"


def write_json(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(record_text(data))
    log(f"wrote {path.relative_to(ROOT)}")
    return path


def header(data: dict) -> str:
    m = data["machine"]
    la = data.get("loadavg", {})
    lines = [f"- command: `{data['command']}`",
             f"- {data['date']}; {m['nproc']} CPUs ({m['cpu_model']}), {m['memory_gb']} GB RAM, Linux {m['kernel']}, "
             f"Python {m['python']}; load average (1/5/15 min) before {la.get('before')}, after {la.get('after')} "
             "(a machine shared with other engineers' test runs)"]
    more = ([f"dbswarm's drivers: {data['drivers']}"] if data.get("drivers") else []) + \
        ([f"raw data: `{data['json']}`"] if data.get("json") else [])
    if more:
        lines.append("- " + "; ".join(more))
    return "\n".join(lines)


def update_section(name: str, markdown: str) -> None:
    """Replace the block between <!-- bench:NAME --> and <!-- /bench:NAME --> in BENCHMARKS.md
    when the file holds it (the acceptance table); any other section is printed: the record
    holds every figure, and the docs quote what a decision needs (docs/benchmarks.md)."""
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{begin}\n{markdown.rstrip()}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else ""
    if pattern.search(text):
        BENCHMARKS_MD.write_text(pattern.sub(lambda _: block, text))
        log(f"updated {BENCHMARKS_MD.relative_to(ROOT)} section {name}")
    else:
        print(markdown.rstrip())


def base_record(name: str, args) -> dict:
    return {"benchmark": name, "command": command_line(), "date": now_iso(), "machine": machine(),
            "versions": versions(), "args": vars(args) if args is not None else {},
            "loadavg": {"before": loadavg()}, "drivers": drivers_text()}


def drivers_text() -> str:
    import psycopg
    mysql = mysql_driver()
    if mysql == "mysqlclient":
        mysql += " (per-operation statements prepared on the server: the binary protocol on its connection)"
    out = [f"MariaDB: {mysql}", f"PostgreSQL: psycopg {psycopg.__version__} "
           "(prepared statements through psycopg.pq, libpq)"]
    return "; ".join(out)


def finish(name: str, data: dict, section_md: Callable[[dict], str], write_md: bool = True) -> Path:
    data["loadavg"]["after"] = loadavg()
    path = write_json(name, data)
    data["json"] = str(path.relative_to(ROOT))
    path.write_text(record_text(data))
    if write_md:
        update_section(name, section_md(data))
    return path


def csv_list(s: str, conv=str) -> list:
    return [conv(x) for x in s.split(",") if x.strip()]
