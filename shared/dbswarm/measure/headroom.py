"""The load generator's own headroom, measured in every shard (issue 31): is the client, not
the database, what a phase's figures show?

What a shard records (``worker.ShardPhase``; docs/client-health.md says what each signal
means, how it is measured and what it costs):

- its process's CPU time against the CPU it may use (``cpu_capacity``): its affinity mask
  and cgroup quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) locally; on AWS Lambda the
  function's memory size (``LAMBDA_MB_PER_VCPU``); and at most one CPU for the Python of one
  process (the interpreter lock: a shard's client code runs on one CPU at a time);
- the time its client threads were runnable but not running: the second field of
  ``/proc/thread-self/schedstat`` (nanoseconds waiting on a run queue), read by each client
  thread where its loop begins and ends (``thread_sched``), and per second for all the
  shard's threads by a sampler thread (``Sampler``) for the client-health chart;
- the time each thread spends outside its timed calls (the loop's own share: its wall time
  less the latencies it recorded and, paced, the time it slept to keep the schedule).

Everything here is read at segment ends or once a second, never per operation.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from typing import Callable, Iterable, Mapping, Optional

# AWS Lambda documentation, "Configuring Lambda function memory" / "Memory and computing
# power": "Lambda allocates CPU power in proportion to the amount of memory configured. ...
# At 1,769 MB, a function has the equivalent of one vCPU (one vCPU-second of credits per
# second)", up to 6 vCPUs at 10,240 MB.
LAMBDA_MB_PER_VCPU = 1769
LAMBDA_MAX_VCPUS = 6
# a process's Python runs on one CPU at a time (CPython's interpreter lock): what one shard's
# client threads can use of the CPUs it may run on (the drivers' network waits release it)
PYTHON_PROCESS_CPUS = 1.0

_SCHEDSTAT_SELF = "/proc/thread-self/schedstat"


def _cgroup_quota() -> Optional[tuple[float, str]]:
    """The CPUs the cgroup quota allows this process (the smallest along its cgroup's path),
    or None when there is no quota or no cgroup file to read."""
    try:
        with open("/proc/self/cgroup") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    best = None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # cgroup v2: cpu.max = "<quota|max> <period>"
            p = path
            while True:
                try:
                    with open(f"/sys/fs/cgroup{p.rstrip('/')}/cpu.max") as fh:
                        quota, period = fh.read().split()[:2]
                    if quota != "max":
                        cpus = int(quota) / int(period)
                        if best is None or cpus < best[0]:
                            best = (cpus, f"cgroup v2 cpu.max ({p or '/'})")
                except (OSError, ValueError):
                    pass
                if p in ("", "/"):
                    break
                p = os.path.dirname(p.rstrip("/"))
        elif "cpu" in controllers.split(","):  # cgroup v1
            names = ",".join(sorted(c for c in controllers.split(",") if c in ("cpu", "cpuacct")))
            for base in (f"/sys/fs/cgroup/{names}{path.rstrip('/')}", f"/sys/fs/cgroup/cpu{path.rstrip('/')}",
                         "/sys/fs/cgroup/cpu"):
                try:
                    with open(f"{base}/cpu.cfs_quota_us") as fh:
                        quota_us = int(fh.read())
                    with open(f"{base}/cpu.cfs_period_us") as fh:
                        period_us = int(fh.read())
                except (OSError, ValueError):
                    continue
                if quota_us > 0 and period_us > 0:
                    cpus = quota_us / period_us
                    if best is None or cpus < best[0]:
                        best = (cpus, "cgroup v1 cpu.cfs_quota_us")
                break
    return best


def cpu_capacity(environ: Optional[Mapping[str, str]] = None) -> dict:
    """The CPU a shard process may use: {"cpus": its CPUs (affinity, cgroup quota, Lambda
    memory: the smallest), "source": which bound it is, "capacity": what its client Python
    can use of them (at most PYTHON_PROCESS_CPUS)}. ``DBSWARM_CLIENT_CPUS`` overrides it
    (tests, a host whose limit is not visible from inside)."""
    env = os.environ if environ is None else environ
    bounds = []
    try:
        bounds.append((float(len(os.sched_getaffinity(0)) or 1), "affinity"))
    except (AttributeError, OSError):
        bounds.append((float(os.cpu_count() or 1), "cpu_count"))
    quota = _cgroup_quota()
    if quota:
        bounds.append(quota)
    mem = env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")
    if mem and env.get("AWS_EXECUTION_ENV", "").startswith("AWS_Lambda"):  # not the local emulator's
        try:
            bounds.append((min(LAMBDA_MAX_VCPUS, int(mem) / LAMBDA_MB_PER_VCPU),
                           f"Lambda memory {int(mem)} MB ({LAMBDA_MB_PER_VCPU} MB = 1 vCPU)"))
        except ValueError:
            pass
    if env.get("DBSWARM_CLIENT_CPUS"):
        try:
            bounds = [(float(env["DBSWARM_CLIENT_CPUS"]), "DBSWARM_CLIENT_CPUS")]
        except ValueError:
            pass
    cpus, source = min(bounds, key=lambda b: b[0])
    return {"cpus": round(cpus, 3), "source": source, "capacity": round(min(cpus, PYTHON_PROCESS_CPUS), 3)}


def thread_sched() -> Optional[tuple[int, int]]:
    """The calling thread's (ns on a CPU, ns runnable but waiting on a run queue) since it
    began (/proc/thread-self/schedstat's first two fields); None where the kernel keeps no
    scheduler statistics (not Linux, or CONFIG_SCHED_INFO off)."""
    try:
        with open(_SCHEDSTAT_SELF, "rb") as fh:
            a, b = fh.read().split()[:2]
        return int(a), int(b)
    except (OSError, ValueError):
        return None


def process_sched() -> Optional[dict[int, tuple[int, int]]]:
    """{thread id: (ns on a CPU, ns waiting on a run queue)} of every thread of this process."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return None
    out = {}
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat", "rb") as fh:
                a, b = fh.read().split()[:2]
            out[int(tid)] = (int(a), int(b))
        except (OSError, ValueError):
            continue
    return out or None


def _precise_timers() -> None:
    """The calling thread's timer slack to 1 ns (Linux prctl PR_SET_TIMERSLACK; default 50
    µs), so that its sleeps end on time and what they overshoot is the scheduling delay."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(29, 1, 0, 0, 0)
    except Exception:
        pass


class _OwnRunQueue:
    """The calling thread's run-queue wait (ns) so far, read without letting go of the
    interpreter lock: a Python file read lets go of it and waits to take it again, which in a
    process whose Python is saturated is the very wait the probe measures. pread(2) through
    ``ctypes.PyDLL`` (which keeps the lock) on the thread's schedstat opened once: about 4 µs.
    ``read()`` is None where there is no schedstat (not Linux, CONFIG_SCHED_INFO off)."""

    def __init__(self) -> None:
        self._fd: Optional[int] = None
        try:
            libc = ctypes.PyDLL(None, use_errno=True)
            pread = libc.pread
            pread.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long]
            pread.restype = ctypes.c_ssize_t
            self._pread, self._buf = pread, ctypes.create_string_buffer(128)
            self._fd = os.open(_SCHEDSTAT_SELF, os.O_RDONLY)
        except (OSError, AttributeError):
            self._fd = None

    def read(self) -> Optional[int]:
        if self._fd is None:
            return None
        n = self._pread(self._fd, self._buf, 128, 0)
        try:
            return int(self._buf.raw[:n].split()[1]) if n > 0 else None
        except (IndexError, ValueError):
            return None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class Sampler:
    """A shard's client health while its threads run, from one thread of its own: every
    ``probe_s`` it sleeps and measures how late it wakes up and runs Python again (the
    wake-up delay: waiting for a CPU and the interpreter lock, what a client thread whose
    database call has returned waits before it can take its time and go on, so part of the
    latency it records); once a second, the process's CPU time and its threads' run-queue
    wait in that second (the client-health chart per shard over time). Cost: 20 wake-ups a
    second and, once a second, a read of /proc per thread (about 10 µs each)."""

    def __init__(self, every_s: float = 1.0, probe_s: float = 0.05, max_points: int = 3600):
        self.every_s, self.probe_s, self.max_points = every_s, probe_s, max_points
        self.t0: Optional[float] = None
        self.cpu: list[float] = []       # CPU seconds of the process per sample interval
        self.runq: list = []             # run-queue wait seconds of its threads per interval
        self.wake: list = []             # mean wake-up delay (µs) per interval
        self.wake_sum_ns = self.wake_max_ns = self.probes = 0
        # of each wake-up delay, what was not a wait for a CPU (the probe thread's own run-queue
        # wait over the probe, ``_OwnRunQueue``): the wait for the interpreter lock
        self.lock_sum_ns = self.lock_max_ns = self.lock_probes = 0
        self.own_cpu_s = 0.0             # the sampler thread's own CPU: what the bookkeeping costs
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        self.t0 = time.time()
        self._thread = threading.Thread(target=self._loop, name="dbswarm-client-health", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        _precise_timers()
        perf = time.perf_counter_ns
        probe_ns = int(self.probe_s * 1e9)
        every_ns = int(self.every_s * 1e9)
        perf0, self.t0 = perf(), time.time()  # the series' clock: samples fall due from here
        stopped = self._stop.is_set
        own0 = time.thread_time()
        runq = _OwnRunQueue()
        try:
            # one probe before the first read of /proc: a process whose Python is saturated makes
            # every file read here wait for the interpreter lock again, and a sampler that began
            # with them could end the phase without a probe (seen at 128 threads burning CPU)
            s_sum = self._probe_once(perf, probe_ns, runq)
            cpu0, t_cpu0 = time.process_time(), perf()
            sched0 = process_sched()
            self._probe(perf, probe_ns, (perf0, t_cpu0, every_ns), cpu0, sched0, stopped, runq, s_sum)
        finally:
            runq.close()
            self.own_cpu_s = time.thread_time() - own0

    def _probe_once(self, perf: Callable[[], int], probe_ns: int, runq: _OwnRunQueue) -> int:
        """Sleep ``probe_s``; the wake-up delay (ns), recorded with its interpreter-lock part."""
        waited0 = runq.read()
        due = perf() + probe_ns
        time.sleep(self.probe_s)
        late = max(0, perf() - due)
        waited1 = runq.read()
        self.wake_sum_ns += late
        self.probes += 1
        self.wake_max_ns = max(self.wake_max_ns, late)
        if waited0 is not None and waited1 is not None:
            lock = max(0, late - (waited1 - waited0))
            self.lock_sum_ns += lock
            self.lock_probes += 1
            self.lock_max_ns = max(self.lock_max_ns, lock)
        return late

    def _probe(self, perf: Callable[[], int], probe_ns: int, clock: tuple[int, int, int], cpu0: float,
               sched0: Optional[dict[int, tuple[int, int]]], stopped: Callable[[], bool], runq: _OwnRunQueue,
               first: int) -> None:
        # samples fall due on the clock (every ``every_s`` from the start), not after a count of
        # probes: in a process whose Python is saturated each probe wakes late, and 20 probes took
        # 1.5 s — a series of too few samples, each CPU figure over a longer interval than its step
        perf0, t_prev, every_ns = clock  # t_prev: when cpu0 was read
        due = perf0 + every_ns
        s_sum, s_n = first, 1
        while True:
            done = stopped()
            if not done:
                late = self._probe_once(perf, probe_ns, runq)
                s_sum += late
                s_n += 1
            if perf() < due:
                if done:
                    return
                continue
            cpu1, t1 = time.process_time(), perf()
            sched1 = process_sched()  # slow where Python is saturated (each file read waits for the lock)
            # the interval's figures as per-step amounts (a starved sampler's late sample spans
            # more than a step), one value for each whole step it covers: the series keeps the clock
            scale = every_ns / max(t1 - t_prev, 1)
            wait = None
            if sched0 is not None and sched1 is not None:
                wait = sum(v[1] - sched0[k][1] for k, v in sched1.items() if k in sched0) / 1e9 * scale
            steps = (t1 - due) // every_ns + 1  # t1 >= due here
            due += steps * every_ns
            for _ in range(steps):
                if len(self.cpu) < self.max_points:
                    self.cpu.append(round((cpu1 - cpu0) * scale, 4))
                    self.runq.append(round(wait, 4) if wait is not None else None)
                    self.wake.append(round(s_sum / max(s_n, 1) / 1000, 1))
            cpu0, sched0, s_sum, s_n, t_prev = cpu1, sched1, 0, 0, t1
            if done:  # the last whole steps before the stop are in the series
                return

    def wakeup(self) -> Optional[dict]:
        """The wake-up delay over the whole call: mean and max (µs), probes."""
        if not self.probes:
            return None
        out = {"mean_us": round(self.wake_sum_ns / self.probes / 1000, 1),
               "max_us": round(self.wake_max_ns / 1000, 1), "probes": self.probes,
               "sampler_cpu_s": round(self.own_cpu_s, 4),
               "switch_interval_us": round(sys.getswitchinterval() * 1e6, 1)}
        if self.lock_probes:
            out["lock_mean_us"] = round(self.lock_sum_ns / self.lock_probes / 1000, 1)
            out["lock_max_us"] = round(self.lock_max_ns / 1000, 1)
            out["lock_probes"] = self.lock_probes
        return out

    def series(self) -> Optional[dict]:
        if self.t0 is None or not self.cpu:
            return None
        return {"start": round(self.t0, 3), "step_s": self.every_s, "cpu_s": list(self.cpu),
                "runqueue_wait_s": list(self.runq), "wakeup_delay_us": list(self.wake)}


# ---- the verdict (results.aggregate: per shard, per phase) ---------------------------------

# signal -> (near, bound): a shard whose figure reaches ``near`` is near its limit, ``bound``
# is the load generator's limit (campaign ``results.client_thresholds`` overrides them;
# docs/client-health.md says why these values)
DEFAULT_THRESHOLDS = {
    "cpu_share": (0.7, 0.9),       # process CPU over what it may use (capacity)
    "loop_share": (0.25, 0.5),     # threads' time outside their timed calls (and pacing sleeps)
    "wakeup_share": (0.25, 0.5),   # wake-up delay over the mean latency it is part of
    "runqueue_share": (0.1, 0.3),  # threads' run-queue wait over their time
    "lock_wait_intervals": (0.5, 1.0),  # the probe's wait for the interpreter lock, in switch intervals
}
# the wake-up probe is one more thread of the shard: with k client threads it waits behind k
# of them for the interpreter lock, they behind k - 1. Under this many threads that overstates
# their wait (at one thread, by all of the client's own Python: 0.6 ms against a 0.2 ms
# PostgreSQL read on a loaded host), and the wake-up share is reported, not judged
WAKEUP_MIN_THREADS = 4
# this many signals at ``near`` together make a shard ``bound`` (judge)
CORROBORATING_SIGNALS = 2
SIGNAL_WORDS = {
    "cpu_share": "the shard's CPU use against what it may use",
    "loop_share": "the threads' time outside their timed calls",
    "wakeup_share": "the wake-up delay (waiting for a CPU and the interpreter lock) against the mean latency",
    "runqueue_share": "the threads' run-queue wait against their time",
    "lock_wait_intervals": "the wait for the interpreter lock of a thread ready to run, in switch intervals",
}
# signals measured by the wake-up probe: one more thread of the shard, judged from this many
# client threads on (WAKEUP_MIN_THREADS)
PROBE_SIGNALS = ("wakeup_share", "lock_wait_intervals")
VERDICT_ORDER = {"ok": 0, "near": 1, "bound": 2, "unmeasured": -1}


def limits_figures(client: dict) -> bool:
    """A phase whose figures are the load generator's or the host's, not the database's alone:
    client verdict ``bound`` (the client itself was the limit) or ``contended`` (its shards
    waited for CPUs other processes held: the server on the same host ...), not accepted
    (results.allow_client_bound). Never a search's peak, never a nightly baseline."""
    return client.get("verdict") in ("bound", "contended") and not client.get("allowed")


def fails_run(client: dict) -> bool:
    """A phase that makes ``dbswarm run`` exit 9: bound and not accepted; contended only when the
    campaign asks for strict client health (results.strict_client_health)."""
    if client.get("allowed"):
        return False
    return client.get("verdict") == "bound" or (client.get("verdict") == "contended" and bool(client.get("strict")))


def thresholds_of(settings: Optional[dict]) -> dict:
    out = dict(DEFAULT_THRESHOLDS)
    for k, v in (settings or {}).items():
        if v is not None and k in out:
            out[k] = (float(v[0]), float(v[1]))
    return out


def common_model(models: Iterable[Optional[str]]) -> Optional[str]:
    """The client model (fanout.client_model) of several calls or shards: theirs when they
    agree, "mixed" when not, None for none."""
    found = set(models)
    return (found.pop() if len(found) == 1 else "mixed") if found else None


def shard_figures(segments: list) -> Optional[dict]:
    """One shard's client figures over its calls (the segments' ``client``), or None when no
    call recorded them (an older shard file, a call that died before its end)."""
    segs = [s["client"] for s in segments if isinstance(s.get("client"), dict)]
    if not segs:
        return None

    def total(key: str) -> float:
        return sum(float(s.get(key) or 0) for s in segs)
    wall, cpu, thread_s, slept, lat, ops = (total(k) for k in ("wall_s", "cpu_s", "thread_s", "slept_s",
                                                                  "latency_s", "ops"))
    last = segs[-1]
    capacity = float(last.get("capacity") or 1.0)
    out = {"cpus": last.get("cpus"), "cpu_source": last.get("source"), "capacity": capacity,
           "threads": max(int(s.get("threads") or 0) for s in segs), "ops": int(ops),
           "cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
    out["cpu_share"] = round(cpu / (wall * capacity), 4) if wall > 0 and capacity > 0 else None
    # how the shard drove its connections (fanout.client_model; engine.mux): threads or multiplexed
    out["model"] = common_model(s.get("model") or "threads" for s in segs)
    muxed = max(int(s.get("multiplexed_threads") or 0) for s in segs)
    if muxed:
        out["multiplexed_threads"] = muxed
        out["blocking_calls"] = int(total("blocking_calls"))
    out["client_cpu_us_per_op"] = round(cpu * 1e6 / ops, 1) if ops else None
    out["loop_share"] = round(min(1.0, max(0.0, 1 - (lat + slept) / thread_s)), 4) if thread_s > 0 else None
    out["mean_latency_us"] = round(lat * 1e6 / ops, 1) if ops else None
    if all(s.get("runqueue_wait_s") is not None for s in segs):
        rq = total("runqueue_wait_s")
        out["runqueue_wait_us_per_op"] = round(rq * 1e6 / ops, 1) if ops else None
        out["runqueue_share"] = round(rq / thread_s, 4) if thread_s > 0 else None
    else:
        out["runqueue_wait_us_per_op"] = out["runqueue_share"] = None
    wakes = [s["wakeup_delay"] for s in segs if s.get("wakeup_delay")]
    probes = sum(w["probes"] for w in wakes)
    if probes:
        out["wakeup_delay_us"] = round(sum(w["mean_us"] * w["probes"] for w in wakes) / probes, 1)
        out["wakeup_delay_max_us"] = max(w["max_us"] for w in wakes)
        mean = out["mean_latency_us"]
        out["wakeup_share"] = round(out["wakeup_delay_us"] / mean, 4) if mean else None
        # what the bookkeeping itself cost: the sampler thread's CPU, a share of the shard's
        own = sum(w.get("sampler_cpu_s", 0) for w in wakes)
        out["sampler_cpu_share"] = round(own / cpu, 5) if cpu > 0 else None
    else:
        out["wakeup_delay_us"] = out["wakeup_share"] = None
    locks = [w for w in wakes if w.get("lock_probes")]
    lock_probes = sum(w["lock_probes"] for w in locks)
    out["lock_wait_us"] = out["lock_wait_intervals"] = None
    if lock_probes:
        # the wake-up delay less the probe's own wait for a CPU: the wait for the interpreter
        # lock. A switch interval (sys.getswitchinterval, 5 ms) is how long a waiting thread
        # lets the holder run before it asks for the lock: a mean wait of one or more means
        # the process's Python ran without pause, the interpreter at its limit, whatever CPUs
        # other processes held
        out["lock_wait_us"] = round(sum(w["lock_mean_us"] * w["lock_probes"] for w in locks) / lock_probes, 1)
        out["lock_wait_max_us"] = max(w["lock_max_us"] for w in locks)
        interval = float(locks[-1].get("switch_interval_us") or 5000.0)
        out["switch_interval_us"] = interval
        out["lock_wait_intervals"] = round(out["lock_wait_us"] / interval, 4) if interval > 0 else None
    return out


def judge(fig: Optional[dict], thresholds: dict) -> dict:
    """{verdict: ok | near | bound | unmeasured, reason, signals: the ones that reached a
    threshold}. Any signal at its ``bound`` threshold makes the shard bound, any at ``near``
    near: each is a way the load generator, not the database, sets the figures."""
    if not fig:
        return {"verdict": "unmeasured", "reason": "the shard recorded no client figures"}
    hit = {}
    for name, (near, bound) in thresholds.items():
        v = fig.get(name)
        if v is None or (name in PROBE_SIGNALS and (fig.get("threads") or 0) < WAKEUP_MIN_THREADS):
            continue
        if v >= bound:
            hit[name] = "bound"
        elif v >= near:
            hit[name] = "near"
    if not hit:
        return {"verdict": "ok", "reason": "every signal below its near threshold"}
    verdict = "bound" if "bound" in hit.values() else "near"
    parts = [f"{SIGNAL_WORDS[n]} {fig[n]:.2f} ≥ {thresholds[n][1 if lv == 'bound' else 0]:g} ({lv})"
             for n, lv in sorted(hit.items(), key=lambda x: -VERDICT_ORDER[x[1]])]
    if verdict == "near" and len(hit) >= CORROBORATING_SIGNALS:
        # each signal sees the client's wait by its own means (the kernel's run queue, the
        # probe's late wake-ups, the process's CPU, the loop's clock): two of them near their
        # limit at once is one client at its limit, not noise in one measure
        verdict = "bound"
        parts.append(f"{len(hit)} signals near their limits at once (bound)")
    return {"verdict": verdict, "reason": "; ".join(parts), "signals": hit}


def advice_threads(fig: dict, thresholds: dict) -> Optional[int]:
    """The threads per shard under which this shard's signals would be below their near
    thresholds, scaled down in proportion from what it ran (a rough guide: the signals grow
    faster than linearly with the threads per process)."""
    threads = fig.get("threads") or 0
    if not threads:
        return None
    scale = 1.0
    for name, (near, _) in thresholds.items():
        v = fig.get(name)
        if v and v >= near:
            scale = min(scale, near / v)
    return max(1, int(threads * scale * 0.9)) if scale < 1 else threads


def waited_for_others(shards: list, thresholds: dict) -> Optional[str]:
    """Where the judged shards' waits were for CPUs that other processes held, what to say:
    every one used less than its ``cpu_share`` near threshold of the CPU it may use while its
    run-queue or wake-up signal reached a threshold. A thread waits on a run queue only for a
    CPU another thread holds, and these shards held little of theirs: the database server on
    the same host, other programs, the campaign's other shards on the same CPUs held the rest.
    Fewer threads per shard free little there; CPUs of the load generator's own do. (Measured
    on the test host, YCSB a on PostgreSQL at 8 threads in 2 shards pinned to one CPU, the
    server on the other, other sessions loading both: CPU share 0.09-0.24, run-queue share
    0.10-0.63: docs/client-health.md.) None otherwise."""
    near_cpu = thresholds.get("cpu_share", DEFAULT_THRESHOLDS["cpu_share"])[0]
    waits = ("runqueue_share", "wakeup_share")
    if not shards or any(s.get("cpu_share") is None or s["cpu_share"] >= near_cpu
                         or not set(waits) & set(s.get("signals") or {}) for s in shards):
        return None
    top = max(s["cpu_share"] for s in shards)
    return (f"the shards used at most {top:.0%} of the CPU they may use: their threads waited for CPUs "
            "that other processes held (the database server or other programs on this host, the "
            "campaign's other shards on the same CPUs); run the load generator on another machine than the database "
            "(or give it CPUs of its own)")
