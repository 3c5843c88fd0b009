"""One shard, one phase: its threads against the target, until its operation count,
its time cap, or the deadline it was given (then it answers "continue" with a checkpoint
and resumes from it on the next call).

The work itself is the workload family's (``dbswarm.families.base``): its client describes its
operations, the operation loop (``engine.loop``) runs and records them, and the thread's loop
here (``ShardPhase._drive``) paces it and stops it, for the load and run phases of every family. Also the un-sharded steps of a run: the family's prepare stages (create the
schema before the load, secondary indexes after it, drop everything at cleanup).
"""
from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.campaign import admission as limits
from dbswarm.campaign.plan import derive_seed
from dbswarm.credentials.secrets import redact_url
from dbswarm.engine import calls as measured_calls
from dbswarm.engine.calls import Measured
from dbswarm.engine.loop import OperationLoop
from dbswarm.engine.mux import Multiplexer
from dbswarm.errors import TargetNotAllowed
from dbswarm.families import base as families
from dbswarm.families.base import ThreadContext
from dbswarm.families.stream import RandomStream
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Measurement, Recorder
from dbswarm.results.documents import RunPlan, ShardPlan

PROGRESS_INTERVAL_S = 0.5
# how often a client thread looks at the stop event and snapshot requests between steps (the
# time cap itself is exact): also the length of a client's run_for calls, whose re-entry cost
# about 1 µs an operation of PostgreSQL YCSB c reads at 5 ms (8 threads, CPUs shared; ad hoc)
STOP_CHECK_S = 0.05
# A client thread still inside one database call this long after the stop instant is
# abandoned (counted in thread_errors), so that what every thread measured is still written:
# a call can block for hours (a metadata lock, a server that stopped answering). It must stay
# below service.SAFETY_MARGIN_S, which is what a Lambda has left to write the result.
STUCK_THREAD_GRACE_S = float(os.environ.get("DBSWARM_STUCK_THREAD_GRACE_S", "10"))
# A run phase's client thread none of whose calls completed for this long, without an error (a
# failed call and its reconnects are counted as errors), stalled: the server stopped answering
# (frozen, a lock never released); so is any thread abandoned at the give-up. Each stall is kept
# (thread, from, to) and the phase that had one is not complete (aggregate); its seconds are out
# of the steady window
# 30 s: at 5 s the demo's TPC-C on SQLite was "stalled" (a thread waits that long for the write lock)
STALL_S = float(os.environ.get("DBSWARM_STALL_S", "30"))
MAX_STALLS_PER_THREAD = 10  # the first ones of each thread and call; more are only counted
# how long the shard waits, after the grace, for a client thread that has ended its loop to close
# its connection: STUCK_THREAD_GRACE_S + CLOSE_WAIT_S stays below service.SAFETY_MARGIN_S too
CLOSE_WAIT_S = 2.0
# how long a shard waits for its client threads to connect before it starts without the late ones
READY_TIMEOUT_S = float(os.environ.get("DBSWARM_READY_TIMEOUT_S", "60"))
# a snapshot waits this long for every running thread to hand in its state (one inside a long
# database call holds it up: the snapshot is then skipped, and the next interval's taken)
SNAPSHOT_WAIT_S = 2.0
SNAPSHOT_MIN_LEFT_S = 1.0  # no snapshot this close to the stop instant: the end's own write follows


@contextlib.contextmanager
def _thawed():
    """What ``gc.freeze()`` froze when the clients were ready given back to the collector when
    the measured window ends. Frozen meanwhile: the clients' set-up (connections, prepared
    statements, each statement's calls: some 400,000 objects at 128 connections) is never
    traversed by a full collection inside the window, where one took 0.2-0.5 s of the process
    with every connection of the shard waiting (docs/decisions/0009-gc-freeze-after-setup.md). Thawed after, so
    that a warm Lambda container's next call does not keep this call's cyclic garbage."""
    try:
        yield
    finally:
        gc.unfreeze()


def make_binding(run: RunPlan, password: Optional[str]):
    t = run.target
    cls = bindings.get(t["engine"])
    conn = Connection(engine=t["engine"], url=t.get("url"), password=password,
                      options=dict(t.get("options") or {}), display=redact_url(t.get("url")) or t["engine"])
    b = cls(conn)
    allowed = limits.allowed_targets()
    if allowed and allowed.strip() != "*":
        # the deployment's AllowedTargets, again on the connected socket: every connect and
        # reconnect of this binding checks the address it reached before anything runs on it
        connect = b.connect

        def checked_connect():
            connect()
            limits.check_connected(b, allowed)
        b.connect = checked_connect
    return b


# ---- un-sharded steps -------------------------------------------------------------------

def prepare_target(run: RunPlan, password: Optional[str], stage: str) -> dict:
    """stage: before_load (drop + create), after_load (secondary indexes), after_run (e.g. a
    consistency check), cleanup (drop): the family's steps on one connection."""
    if stage not in families.STAGES:
        raise ValueError(f"prepare stage {stage!r} is not one of {', '.join(families.STAGES)}")
    family = families.get(run.family)
    w = family.workload(run.workload)
    if not family.has_stage(w, stage):
        return {"stage": stage, "seconds": 0.0, "skipped": "the family has nothing to do at this stage"}
    b = make_binding(run, password)
    t0 = time.time()
    b.connect()
    try:
        extra = family.prepare(b, w, stage)
        settings = b.describe()
    finally:
        b.close()
    out = {"stage": stage, "seconds": round(time.time() - t0, 3), "binding_settings": settings}
    if extra:
        out["family"] = extra  # what the family's step found (e.g. a consistency check)
    return out


def read_window_edge(run: RunPlan, password: Optional[str], phase: str, edge: str, binding=None,
                     mid_phase: bool = False) -> dict:
    """One edge ("start" or "end") of a phase's measured window, read on one connection: the
    server's own counters (``Binding.server_counters``) and the family's figures from the
    database (``Family.window_snapshot``). What cannot be read (no privilege, no such
    counter) is a warning in the document, never a failure of the campaign.

    Both edges read by the shards' absence (before they start, after they all ended) wait for
    the server's counters to settle (``server_counters(settle=True)``): a session that just
    ended (the lock's, before the start edge) publishes its counts a moment later, inside
    the window otherwise. An edge read while the shards run (``mid_phase``: the end of a
    warm-up) does not: its counters never stand still."""
    if edge not in ("start", "end"):
        raise ValueError(f"a window edge is start or end, not {edge!r}")
    family = families.get(run.family)
    w = family.workload(run.workload)
    out: dict = {"phase": phase, "edge": edge, "warnings": []}
    b = binding or make_binding(run, password)  # binding: connected beforehand, to read at an instant
    try:
        if binding is None:
            b.connect()
    except Exception as exc:
        out["warnings"].append(f"no connection to read the server's counters: {type(exc).__name__}: {str(exc)[:200]}")
        out["at"] = time.time()
        return out
    # where every autocommit statement is a transaction in the server's counters (PostgreSQL),
    # the edge's reads go in one: the start edge's ends after its counters were read and is
    # one of the window's (``own_transactions``), the end edge's after the window closed
    # (not mid-phase: that edge is read at an instant on a connection opened beforehand, as it was)
    wrapped = bool(getattr(b, "statement_is_transaction", False)) and not mid_phase
    ended = 0
    try:
        for key, read in (("server", lambda: b.server_counters(settle=not mid_phase)),
                          ("family", lambda: family.window_snapshot(b, w, phase))):
            try:
                if wrapped and not b.in_transaction():
                    b.begin_own()
                value = read()
            except Exception as exc:  # a missing privilege or view: say so, keep going
                why = f"{type(exc).__name__}: {str(exc)[:200]}"
                out["warnings"].append(f"{key} counters unavailable: {why}")
                out.setdefault("unread", {})[key] = why
                ended += _end_failed(b, wrapped)
                continue
            if b.transaction_failed():
                # a read the binding did not isolate left the edge's transaction aborted: ended
                # here, so that the next read runs in a transaction of its own, not in a failed one
                ended += _end_failed(b, wrapped)
            _keep_edge_value(key, value, edge, out)
        if wrapped and b.in_transaction():
            b.end_own()
            ended += 1
        if wrapped and edge == "start":
            out["own_transactions"] = ended
        elif wrapped and binding is None:
            # the end edge's own session started (a transaction of its own) before it read
            out["own_transactions"] = 1
        out["at"] = time.time()
    finally:
        b.close()
    return out


def _end_failed(b, wrapped: bool) -> int:
    """Roll back the edge's transaction after a failed read; 1 where that ended a transaction
    of the edge's own (counted in the server's counters), else 0."""
    try:
        was = wrapped and b.in_transaction()
        b.rollback()
        return 1 if was else 0
    except Exception:
        return 0


def _keep_edge_value(key: str, value, edge: str, out: dict) -> None:
    """One read of a window edge (``server`` counters or the ``family``'s figures) into its
    document."""
    if isinstance(value, dict) and "warnings" in value:
        # what the binding could not read (e.g. no pg_stat_statements): said at the start
        # edge only, since the window's warnings are both edges' and it would say it twice
        said = value.pop("warnings")
        if edge == "start":
            out["warnings"].extend(said)
    if key == "server" and isinstance(value, dict):
        _take_statement_times(value, out)
        if isinstance(value.get("unavailable"), dict):  # {figure: why the server keeps none}
            out["server_unavailable"] = value.pop("unavailable")
    if value is not None:
        out[key] = value


def _take_statement_times(server: dict, edge: dict) -> None:
    """The server's own time per statement kind (``statement_times``, ``statement_source``:
    beside the client's, aggregate.server_vs_client) or why it keeps none
    (``statement_times_missing``): from its counters into the edge document."""
    if "statement_times" in server:
        edge["statement_times"] = server.pop("statement_times")
        edge["statement_source"] = server.pop("statement_source", None)
    if "statement_times_missing" in server:
        edge["statement_times_missing"] = server.pop("statement_times_missing")


# ---- sharded phases ---------------------------------------------------------------------

_capacity_seen: list = []


def _capacity() -> dict:
    """headroom.cpu_capacity(), read once per process (a Lambda's memory and a host's quota do
    not change while it lives)."""
    if not _capacity_seen:
        _capacity_seen.append(headroom.cpu_capacity())
    return dict(_capacity_seen[0])


@dataclass
class ThreadState:
    index: int                 # within the shard
    done: int = 0              # ops / events / rows completed, all segments
    state: dict = field(default_factory=dict)  # the family client's state() for a continuation
    rng_position: Optional[int] = None  # where its random stream stood (RandomStream.position); None: at its seed
    schedule: Optional[dict] = None  # paced: {"origin_s" on the phase's elapsed clock, "steps" scheduled}
    finished: bool = False     # quota or time cap reached (not merely the deadline)
    error: Optional[str] = None
    abandoned: bool = False    # still inside a database call after the grace period: given up
    ended_at: Optional[float] = None  # wall time its loop ended (this segment)
    closing: bool = False      # its measurement final, waiting to close its connection (_teardown_after_loops)
    ready: bool = False        # connected and its client built (waiting for the armed instant)
    recorder: Optional[Recorder] = None  # what it measured (this segment)
    # its loop's own clock (this segment): [wall s, on-CPU ns, run-queue wait ns, s slept
    # pacing] (headroom.thread_sched, read where the loop begins and ends); None: not run
    health: Optional[list] = None
    multiplexed: bool = False  # driven by the shard's multiplexer (engine.mux), not a loop of its own
    blocking_calls: int = 0    # multiplexed: operations with no split form, called in the multiplexer's thread
    # seconds it has spent refused a connection at its start, summed over its shard's calls
    # (checkpointed): RECONNECT_GIVE_UP_S counts them, not each call's alone
    refused_s: float = 0.0
    # when its last call returned (perf_counter s; this segment): where a stall that is still
    # under way at the give-up began
    progress_at: Optional[float] = None
    # [from, to, abandoned] (perf_counter s) of each stall (STALL_S) this segment; stalls_more:
    # those past MAX_STALLS_PER_THREAD
    stalls: list = field(default_factory=list)
    stalls_more: int = 0

    def stalled(self, began: float, ended: float, abandoned: bool = False) -> None:
        """A stall of this thread: no call of it completed from ``began`` to ``ended``."""
        if len(self.stalls) < MAX_STALLS_PER_THREAD:
            self.stalls.append([began, ended, abandoned])
        else:
            self.stalls_more += 1


@dataclass
class ShardOutcome:
    status: str                         # "done" | "continue"
    measurement: Measurement
    checkpoint: Optional[dict]
    info: dict = field(default_factory=dict)
    server_settings: Optional[dict] = None  # the server's version and durability settings


class ShardPhase:
    def __init__(self, run: RunPlan, shard: ShardPlan, phase: str, password: Optional[str], *,
                 start_at: Optional[float] = None, deadline: Optional[float] = None,
                 checkpoint: Optional[dict] = None, progress: Optional[Callable] = None,
                 stop_event: Optional[threading.Event] = None, snapshot_every: Optional[float] = None,
                 on_snapshot: Optional[Callable[["ShardOutcome"], None]] = None):
        if phase not in ("load", "run"):
            raise ValueError(f"a shard runs the load or run phase, not {phase!r}")
        self.run, self.shard, self.phase, self.password = run, shard, phase, password
        self.family = families.get(run.family)
        self.w = self.family.workload(run.workload)
        self.start_at, self.deadline = start_at, deadline
        self.cp = checkpoint or {}
        self.segment = self.cp.get("segment", 0)
        self.progress = progress
        self.stop_event = stop_event or threading.Event()
        n = shard.threads
        saved = self.cp.get("threads") or [{} for _ in range(n)]
        self.states = [ThreadState(i, s.get("done", 0), dict(s.get("state") or {}), s.get("rng_position"),
                                   dict(s["schedule"]) if s.get("schedule") else None)
                       for i, s in enumerate(saved)]
        for st, s in zip(self.states, saved):
            st.refused_s = float(s.get("refused_s") or 0.0)
        self.server_settings: Optional[dict] = None
        # set by _arm when the threads are released; before that (connecting) nothing stops on time
        self._stop_perf = self._deadline_perf = float("inf")
        self._wall_of_perf = time.time() - time.perf_counter()  # perf_counter s + this = wall s (_arm sets it again)
        self._warm_until_ns = self._warm_end_ns = 0
        self._cap_limited = False
        # snapshots (``snapshot_every`` seconds, handed to ``on_snapshot``): the measurement and
        # checkpoint as of now, while the threads go on. The main thread asks (a new
        # generation), each running thread hands in a copy of its recorder and its checkpoint
        # between two steps (the two agree exactly), and the main thread merges them
        self.snapshot_every, self.on_snapshot = snapshot_every, on_snapshot
        self._snap_gen = 0
        self._snap_cond = threading.Condition()
        self._deposits: dict[int, tuple] = {}   # thread index -> (generation, snapshot-only extras, checkpoint)
        # each deposit hands over what its thread recorded since its last (Recorder.detach):
        # pending here, then added to the shard's accumulated part (_drain_moved), which with
        # the threads' recorders holds everything measured. A copy of each thread's whole
        # recorder at every snapshot cost what the run had recorded so far, in every thread,
        # holding the interpreter (docs/decisions/0007-snapshots-hand-over.md)
        self._moved: list[Recorder] = []
        self._accumulated: Optional[Recorder] = None
        self._accumulated_lock = threading.Lock()
        self._running = 0                       # client threads not yet ended
        self._all_ended = threading.Event()     # set when the last one ends
        # client threads whose loop has not ended; none closes its connection before they all
        # have (_teardown_after_loops)
        self._looping = n
        self._loops_over = threading.Event()
        self._mux: Optional[Multiplexer] = None  # fanout.client_model multiplexed (execute)

    @property
    def recorders(self) -> list[Recorder]:
        """The client threads' recorders (those that began), and the multiplexer's (engine.mux:
        the operations of the clients it drove)."""
        own = [st.recorder for st in self.states if st.recorder is not None]
        accumulated = self._drain_moved()
        if accumulated is not None:
            own.append(accumulated)
        mux = self._mux.recorder if self._mux is not None else None
        return own if mux is None else [*own, mux]

    def _drain_moved(self) -> Optional[Recorder]:
        """The parts the threads' deposits handed over, added to the accumulated part
        (``Recorder.accumulate``); returns it (None before any deposit)."""
        with self._accumulated_lock:
            with self._snap_cond:
                batch, self._moved = self._moved, []
            if batch:
                self._accumulated = Recorder.accumulate(self._accumulated, batch)
            return self._accumulated

    # -- limits ----------------------------------------------------------------------
    def _time_cap(self) -> Optional[float]:
        return self.family.limits(self.w).time if self.phase == "run" else None

    def _arm(self) -> tuple[float, float, Optional[float]]:
        """Wait for the start barrier (every shard of the phase begins at the armed instant),
        then set the stop instants: (wall start, perf start, start skew)."""
        skew = None
        if self.start_at and self.segment == 0:
            delay = self.start_at - time.time()
            if delay > 0:
                time.sleep(delay)
            skew = time.time() - self.start_at
        began_wall, began_perf = time.time(), time.perf_counter()
        self._wall_of_perf = began_wall - began_perf
        self._began_perf = began_perf
        # the phase's elapsed clock (segments end to end, the gaps between them left out) in
        # perf_counter_ns: a paced thread's schedule is kept on it across segments and calls
        self._elapsed_zero_ns = int((began_perf - self.cp.get("elapsed", 0.0)) * 1e9)
        # the run phase's warm-up ends warmuptime after the phase began (the first call's start)
        warm = (self.w.warmuptime - self.cp.get("elapsed", 0.0)) if self.phase == "run" else 0.0
        if warm > 0 and skew and self.family.window_after_warmup(self.w):
            # a shard that began late ends its warm-up with the others, at start_at + warmuptime:
            # when shard 0's call reads the measured window's start edge (service._warmup_edge)
            warm -= skew
        self._warm_until_ns = int((began_perf + warm) * 1e9) if warm > 0 else 0
        # the warm-up's end also when this call begins after it (a continuation): TPC-C's clients
        # record the New-Orders committed around it (workloads.tpcc, BAND_S); on the start
        # barrier's clock when there is one (the instant shard 0's call reads the window's start
        # edge), else on the phase's elapsed clock
        self._warm_end_ns = 0
        if self.phase == "run" and self.w.warmuptime > 0:
            if self.start_at and self.family.window_after_warmup(self.w):
                end = began_perf + (self.start_at + self.w.warmuptime - began_wall)
            else:
                end = began_perf + self.w.warmuptime - self.cp.get("elapsed", 0.0)
            self._warm_end_ns = int(end * 1e9)
        cap = self._time_cap()
        stop_perf = float("inf")
        self._cap_limited = False
        if cap is not None:
            stop_perf = began_perf + max(0.0, cap - self.cp.get("elapsed", 0.0))
            self._cap_limited = True
        self._deadline_perf = float("inf")
        if self.deadline is not None:
            self._deadline_perf = began_perf + (self.deadline - began_wall)
        self._stop_perf = min(stop_perf, self._deadline_perf)
        return began_wall, began_perf, skew

    def _thread_rate(self) -> Optional[float]:
        target = self.shard.target
        return (target / self.shard.threads) if target else None

    def execute(self) -> ShardOutcome:
        """Every client thread connects and builds its client (sysbench prepares its
        statements) first; the shard waits until all are ready, then for the start barrier,
        and releases them together: connections and statement preparation are never inside
        the measured window (sysbench's thread_init, go-ycsb's and YCSB's init, do the same)."""
        rate = self._thread_rate()
        ready, go = threading.Semaphore(0), threading.Event()
        if self.run.client_model == "multiplexed" and self.phase == "run" and not rate:
            # one thread drives the connections of the clients that can be multiplexed; paced
            # runs and the load phase keep a thread per connection (engine.mux)
            self._mux = Multiplexer(self, len(self.states), STUCK_THREAD_GRACE_S, STALL_S)

        def on_ready(st: ThreadState, wait: bool = True):
            if not st.ready:
                st.ready = True
                ready.release()
            if wait:
                go.wait()
        threads = [threading.Thread(target=self._thread_main, args=(st, rate, on_ready),
                                    name=f"shard{self.shard.index}-t{st.index}", daemon=True)
                   for st in self.states]
        self._running = len(threads)
        for t in threads:
            t.start()
        self._wait_ready(ready, len(threads))
        gc.freeze()  # the set-up's objects out of the collector's passes over the window (_thawed)
        with _thawed():
            began_wall, began_perf, skew = self._arm()
            self._cpu0 = time.process_time()
            self._sampler = headroom.Sampler()
            self._sampler.start()
            if self._mux is not None:
                self._mux.start(f"shard{self.shard.index}-mux")
            go.set()
            monitor, joined = None, threading.Event()
            if self.progress:
                monitor = threading.Thread(target=self._monitor, args=(joined,), daemon=True)
                monitor.start()
            self._snapshots(threads, began_wall, began_perf, skew)
            self._join(threads)
            if self._mux is not None:
                self._mux.join(timeout=5.0)  # every client given back: it ends at once
            self._sampler.stop()
            joined.set()  # also ends the monitor when abandoned threads are still alive
            if monitor:
                monitor.join()
        return self._outcome(began_wall, began_perf, skew)

    # -- snapshots while the threads run -----------------------------------------------------
    def _snapshots(self, threads, began_wall, began_perf, skew):
        """Every ``snapshot_every`` seconds until the stop instant, the stop event or the
        threads' end: ``on_snapshot(outcome as of now)``. Before, the shard persisted by
        ending a segment: every thread stopped, closed its connection, and the next segment
        connected, built its clients and prepared its statements again: a throughput dip of
        about 1.5 s every 15 s at 128 threads (docs/decisions/0012-persist-without-stopping.md)."""
        every = self.snapshot_every
        if not every or self.on_snapshot is None:
            return
        due = time.perf_counter() + every
        while not self.stop_event.is_set() and not self._all_ended.is_set():
            now = time.perf_counter()
            if due + SNAPSHOT_MIN_LEFT_S >= self._stop_perf:
                return  # the end comes first, with its own write
            if now < due:  # woken when the threads end (a stop ends them too)
                self._all_ended.wait(min(due - now, 0.5))
                continue
            self._snapshot(threads, began_wall, began_perf, skew)
            due = time.perf_counter() + every

    def _hand_over(self, rec: Recorder) -> None:
        """What ``rec`` recorded so far (``Recorder.detach``: the multiplexer's, engine.mux),
        kept for the snapshots and the end whether or not the snapshot asked for completes.
        Taken under the lock that ``error_counts`` reads under: no error is in neither place."""
        with self._snap_cond:
            self._moved.append(rec.detach())

    def _deposit(self, gen: int, index: int, rec: Recorder, extra: Optional[Recorder], checkpoint: dict) -> None:
        """A running thread's part of snapshot ``gen``: what its recorder ``rec`` recorded since
        its last deposit (handed over: kept whether or not this snapshot completes), what only
        this snapshot adds (``extra``: its records, a paced schedule's counts as of now), its
        checkpoint."""
        with self._snap_cond:
            self._moved.append(rec.detach())
            self._deposits[index] = (gen, extra, checkpoint)
            self._snap_cond.notify_all()

    def error_counts(self) -> tuple[int, dict[str, int]]:
        """The errors counted so far, in all and by class ("OP:kind:name"), for the progress
        output: the threads' and the multiplexer's recorders, the parts handed over and not yet
        added up, and the accumulated part, read while no part changes hands (a read between
        a hand-over and its adding up missed the part's errors for a tick)."""
        classes: dict[str, int] = {}
        with self._accumulated_lock, self._snap_cond:
            recs = [st.recorder for st in self.states if st.recorder is not None]
            recs += self._moved
            if self._accumulated is not None:
                recs.append(self._accumulated)
            if self._mux is not None and self._mux.recorder is not None:
                recs.append(self._mux.recorder)
            for rec in recs:
                for key, n in list(rec.m.errors.items()):
                    classes[key] = classes.get(key, 0) + n
        return sum(classes.values()), classes

    def _snapshot(self, threads, began_wall, began_perf, skew) -> None:
        requested_perf = time.perf_counter()
        with self._snap_cond:
            self._snap_gen += 1
            gen = self._snap_gen
            give_up = time.monotonic() + SNAPSHOT_WAIT_S
            while any(t.is_alive() and not st.closing and self._deposits.get(st.index, (0,))[0] != gen
                      for t, st in zip(threads, self.states)):
                left = give_up - time.monotonic()
                if left <= 0:
                    return  # a thread inside a long call: the next interval's snapshot
                self._snap_cond.wait(min(left, 0.05))
            deposits = dict(self._deposits)
        copies, checkpoints = [], []
        for st in self.states:
            got = deposits.get(st.index)
            if got is not None and got[0] == gen:
                _, rec, cp = got
            else:  # the thread has ended its loop (or never began): its final state (its parts
                # handed over before are accumulated; this is what it recorded after them)
                rec = st.recorder.snapshot_copy() if st.recorder is not None else None
                cp = self._thread_checkpoint(st)
            if rec is not None:
                copies.append(rec)
            checkpoints.append(cp)
        if self._mux is not None:  # the operations it recorded until it saw this generation: handed over
            handed, rec = self._mux.part_for(gen, max(0.0, give_up - time.monotonic()))
            if not handed:
                return
            if rec is not None:
                copies.append(rec)
        accumulated = self._drain_moved()  # every running thread's part up to its deposit, the multiplexer's
        if all(st.finished for st in self.states):
            # every thread is done (their final states taken above): the shard's end writes next,
            # as "done"; a "continue" with nothing left to continue would say otherwise meanwhile
            return
        measurement = Recorder.merged(copies)
        if accumulated is not None:
            with self._accumulated_lock:  # (the progress monitor may be adding to it)
                measurement.merge(accumulated.m)
        elapsed = self.cp.get("elapsed", 0.0) + (requested_perf - began_perf)
        info = self._info(began_wall, time.time(), elapsed, sum(cp["done"] for cp in checkpoints), skew)
        self.on_snapshot(ShardOutcome("continue", measurement, self._checkpoint(elapsed, checkpoints), info,
                                      self.server_settings))

    def _wait_ready(self, ready: threading.Semaphore, n: int):
        """Until every client thread has connected and built its client (a thread whose set-up
        failed counts as ready: it has ended), at most READY_TIMEOUT_S or a stop: a thread
        still connecting then starts late, and the start skew says so."""
        give_up = time.monotonic() + READY_TIMEOUT_S
        waiting = n
        while waiting and not self.stop_event.is_set():
            left = give_up - time.monotonic()
            if left <= 0:
                break
            if ready.acquire(timeout=min(left, 0.25)):
                waiting -= 1

    def execute_inline(self) -> ShardOutcome:
        """A shard of one client thread, run in the calling thread (benchmarks and profilers
        measure that thread): the same set-up, limits, loop and outcome as ``execute``."""
        if len(self.states) != 1:
            raise ValueError(f"execute_inline runs a shard of one client thread, not {len(self.states)}")
        armed = []

        def on_ready(st: ThreadState, wait: bool = True):
            if not st.ready:
                st.ready = True
                gc.freeze()  # as execute does
                armed.append(self._arm())
                self._cpu0 = time.process_time()
        with _thawed():
            self._thread_main(self.states[0], self._thread_rate(), on_ready)
        if not armed:  # the set-up failed before the thread was ready
            armed.append(self._arm())
            self._cpu0 = time.process_time()
        return self._outcome(*armed[0])

    def _outcome(self, began_wall, began_perf, skew) -> ShardOutcome:
        elapsed_before = self.cp.get("elapsed", 0.0)
        ended_wall = time.time()
        # the measured window ends when the last client thread's loop did: not after the
        # threads' teardown (closing connections, thread 0 reading the server's settings),
        # which no rate of the phase may divide by
        ended = [st.ended_at for st in self.states if not st.abandoned and st.ended_at is not None]
        if ended and max(ended) > began_wall:
            ended_wall = min(ended_wall, max(ended))
        abandoned = sum(st.abandoned for st in self.states)
        if abandoned:
            # the measured window ends when the last thread that returned stopped (or, if none
            # did, at the stop instant), not when the stuck ones were given up: the grace
            # period holds no operations, and counting it would dilute ops/s (a 5 s run would
            # report a third of its throughput over 15 s)
            live = [st.ended_at for st in self.states if not st.abandoned and st.ended_at is not None]
            ended_wall = max(live) if live else began_wall + (self._stop_perf - began_perf)
        measurement = Recorder.merged(self.recorders)
        all_finished = all(st.finished for st in self.states)
        elapsed = elapsed_before + (time.perf_counter() - began_perf)
        status = "done" if all_finished or self.stop_event.is_set() else "continue"
        interrupted = self.stop_event.is_set() and not all_finished
        checkpoint = None
        if status == "continue" or interrupted:  # interrupted: kept for `dbswarm resume`
            checkpoint = self._checkpoint(elapsed, [self._thread_checkpoint(st) for st in self.states])
        info = self._info(began_wall, ended_wall, elapsed, sum(st.done for st in self.states), skew)
        info["client"] = self._client_info(measurement, info["cpu_s"], ended_wall - began_wall)
        if interrupted:
            info["interrupted"] = True
        if abandoned:
            info["abandoned_threads"] = abandoned
        return ShardOutcome(status, measurement, checkpoint, info, self.server_settings)

    def _client_info(self, measurement: Measurement, cpu_s: float, wall_s: float) -> dict:
        """The client's own figures of this call (``headroom``; aggregate judges them): the
        CPU it may use, its threads' loop time, on-CPU time, run-queue wait and (paced) sleep
        summed over the threads, the latencies they recorded and the operations, and the
        per-second samples of the process's CPU and run-queue wait."""
        ran = [st.health for st in self.states if st.health is not None]
        known = [h for h in ran if h[2] is not None]
        tl = measurement.timeline
        out = {**_capacity(), "wall_s": round(max(wall_s, 0.0), 3), "cpu_s": cpu_s, "threads": len(ran),
               "thread_s": round(sum(h[0] for h in ran), 4), "slept_s": round(sum(h[3] for h in ran), 4),
               "latency_s": round(sum(tl.latency_us) / 1e6, 4),
               "ops": measurement.total_ops + measurement.warmup_ops}
        muxed = [st for st in self.states if st.multiplexed]
        out["model"] = "multiplexed" if muxed else "threads"
        if muxed:
            out["multiplexed_threads"] = len(muxed)
            out["blocking_calls"] = sum(st.blocking_calls for st in muxed)
        if known and len(known) == len(ran):
            out["on_cpu_s"] = round(sum(h[1] for h in known) / 1e9, 4)
            out["runqueue_wait_s"] = round(sum(h[2] for h in known) / 1e9, 4)
        sampler = getattr(self, "_sampler", None)
        series = sampler.series() if sampler is not None else None
        wake = sampler.wakeup() if sampler is not None else None
        if wake:
            out["wakeup_delay"] = wake
        if series:
            out["series"] = series
        return out

    def _checkpoint(self, elapsed: float, threads: list[dict]) -> dict:
        """Where the next segment (a continuation, a retry, `dbswarm resume`) begins."""
        return {"segment": self.segment + 1, "elapsed": elapsed, "threads": threads}

    def _info(self, began_wall, ended_wall, elapsed, done, skew) -> dict:
        """A segment's record in the shard file (at its end, or as of a snapshot)."""
        info = {"segment": self.segment, "began_at": began_wall, "ended_at": ended_wall,
                "elapsed_s": round(elapsed, 3), "done": done,
                "thread_errors": [st.error for st in self.states if st.error], "stopped": self.stop_event.is_set(),
                # the shard process's CPU over this call's phase (all its threads; start-up and
                # imports not included): the client's cost, which benchmarks set against the reference
                "cpu_s": round(time.process_time() - self._cpu0, 4)}
        if skew is not None:
            info["start_skew_s"] = round(skew, 4)
        stalls = self._stalls()
        if stalls:
            info["stalls"] = stalls
        return info

    def _stalls(self) -> list[dict]:
        """The client threads' stalls so far (``STALL_S``), in wall-clock seconds: thread (within
        the shard), from, to, seconds, abandoned (still inside its call when given up); a
        thread's stalls past MAX_STALLS_PER_THREAD as one entry's ``more``."""
        out = []
        wall = self._wall_of_perf
        for st in self.states:
            for began, ended, abandoned in list(st.stalls):
                entry = {"thread": st.index, "from": round(began + wall, 3), "to": round(ended + wall, 3),
                         "seconds": round(ended - began, 3), "stall_s": STALL_S}
                if abandoned:
                    entry["abandoned"] = True
                out.append(entry)
            if st.stalls_more and out:
                out[-1]["more"] = st.stalls_more
        return out

    @staticmethod
    def _thread_checkpoint(st: ThreadState) -> dict:
        out = {"done": st.done, "state": st.state}
        if st.rng_position is not None:
            out["rng_position"] = st.rng_position
        if st.schedule is not None:
            out["schedule"] = st.schedule
        if st.refused_s:
            out["refused_s"] = round(st.refused_s, 3)
        return out

    def _join(self, threads):
        """Wait for the client threads; one still blocked in a database call
        STUCK_THREAD_GRACE_S after the stop instant is abandoned (a daemon thread: it cannot
        be interrupted inside the driver) and reported, and the others' results are kept."""
        if self._stop_perf == float("inf"):
            for t in threads:
                t.join()
            return
        give_up = self._give_up_perf()
        self._loops_over.wait(max(0.0, give_up - time.perf_counter()))
        # a thread whose loop has ended is closing its connection (_teardown_after_loops): its
        # own statements are done, it ends at once; any other is stuck in a call
        closed_by = max(give_up, time.perf_counter()) + CLOSE_WAIT_S
        for t, st in zip(threads, self.states):
            if st.closing:
                t.join(max(0.0, closed_by - time.perf_counter()))
        stuck = [st for t, st in zip(threads, self.states) if t.is_alive() and not st.closing]
        # a stuck call that returns later finds the stop instant passed and ends its thread
        # after at most one more record; its recorder is read now, while it is blocked
        if stuck:
            now = time.perf_counter()
            for st in stuck:
                st.abandoned = True
                # stalled since its last call returned (or the armed instant), still at the give-up;
                # a multiplexed client's stall is the multiplexer's to record (Multiplexer._abandon)
                if not st.multiplexed:
                    st.stalled(st.progress_at or getattr(self, "_began_perf", now), now, abandoned=True)
                st.error = (f"client thread {st.index} was still inside a database call "
                            f"{STUCK_THREAD_GRACE_S:g} s after the stop time: abandoned (its connection stays open "
                            "until the process ends)")
                # finished only when the phase's time cap has come: at a call's deadline the shard
                # continues in the next call from the thread's checkpoint (its unit redone or, when
                # the abandoned call commits it after all, found and skipped), never "done" with its
                # work left (a TPC-C load on a loaded machine was declared done 7 districts short)
                st.finished = self._cap_reached()

    def _monitor(self, joined: threading.Event):
        while not joined.wait(PROGRESS_INTERVAL_S):
            try:
                self.progress(sum(st.done for st in self.states), self.error_counts()[0])
            except Exception:
                pass

    def _should_stop(self) -> bool:
        return self.stop_event.is_set() or time.perf_counter() >= self._stop_perf

    # -- threads ---------------------------------------------------------------------
    def _thread_main(self, st: ThreadState, rate: Optional[float], on_ready: Callable[..., None]):
        rec = st.recorder = Recorder(self.family.interval_seconds(self.w))  # per-interval histograms, on whole seconds
        binding = make_binding(self.run, self.password)
        paced = bool(rate) and self.phase == "run"
        m = Measured(binding, rec, self._should_stop, paced=paced)
        mux = self._mux
        try:
            try:
                binding.connect()
            except TargetNotAllowed:
                raise
            except Exception as exc:
                cls = binding.classify(exc)
                rec.error("CONNECT", cls.kind, cls.name)
                # the give-up counts the seconds refused over the shard's calls: a call shorter
                # than RECONNECT_GIVE_UP_S (max_call_seconds) would otherwise start it again each
                # time, and a count-limited phase (no time cap) never end (a resume hours later
                # has not been refused meanwhile: only the time spent trying counts)
                tried = time.monotonic()
                give_up_s = measured_calls.RECONNECT_GIVE_UP_S - st.refused_s
                connected = m.reconnect(give_up_s=max(0.0, give_up_s))
                st.refused_s += time.monotonic() - tried
                if not connected:
                    if self._cap_reached():
                        # still refused at the phase's time cap (connections over the server's
                        # limit, the shard started without this thread: _wait_ready): done,
                        # with its error; left unfinished, every next call of the shard would
                        # try again, past the cap, and the campaign never ended
                        st.error = (f"client thread {st.index} got no connection before the phase's "
                                    f"time cap ({cls.kind}: {cls.name})")
                        st.finished = True
                    return  # a stop or a call's deadline: the next call (or a resume) connects again
            st.refused_s = 0.0
            # a thread's draws depend on the run's seed and its global index, not on its shard
            # nor on its segments: the same seed gives the same operations with 1, 2 or 8 shards
            # (another machine's default shard count), however often the shard persisted
            thread = self.shard.thread_offset + st.index
            rng = RandomStream(derive_seed(self.run.seed, self.phase, thread))
            ctx = ThreadContext(m=m, rng=rng, thread=thread, threads=self.run.threads, saved=st.state)
            client = self._client(st, ctx)
            # the client drew what it builds once (value pools, generators' set-up) from the
            # seed, the same in every segment; its operations continue the stream from there
            if st.rng_position is not None:
                rng.resume(st.rng_position)

            def deposit(gen: int, done: int, schedule: Optional[list]) -> None:
                # between two steps: the recorder and the checkpoint agree exactly
                cp = {"done": done, "state": client.state(), "rng_position": rng.position}
                extra = self._snapshot_extra(st, rec, cp, schedule)
                self._deposit(gen, st.index, rec, extra, cp)
            if mux is not None and not (getattr(client, "multiplexable", False) and binding.fileno() is not None):
                mux.decline(st.index)  # a thread of its own
                mux = None
            on_ready(st)  # connected, client built: wait for the armed instant
            rec.warm_until_ns = self._warm_until_ns  # warm-up operations are kept apart (Measurement.warmup)
            rec.warm_end_ns = self._warm_end_ns
            try:
                self._loop(st, client, m, mux, ctx.quota, rate, rec, deposit)
            finally:
                st.rng_position = rng.keep()
        except Exception as exc:  # a bug or an unrecoverable driver state: keep what we have
            st.error = f"{type(exc).__name__}: {exc}"
            st.finished = True
        finally:
            if self._mux is not None:  # its set-up failed before it handed in or declined: no-op otherwise
                self._mux.decline(st.index)
            if not st.ready:  # the set-up failed: the shard must not wait for this thread
                on_ready(st, wait=False)
            st.ended_at = time.time()
            if not st.abandoned:
                self._own_statements(st, binding, rec)
            self._teardown_after_loops(st)
            try:
                binding.close()
            except Exception:
                pass
            with self._snap_cond:
                self._running -= 1
                if self._running <= 0:
                    self._all_ended.set()

    @staticmethod
    def _snapshot_extra(st: ThreadState, rec: Recorder, cp: dict, schedule: Optional[list]) -> Optional[Recorder]:
        """What a thread's deposit adds to its snapshot alone, not to what it hands over (the
        end adds it to the thread's recorder): its records as of now (a family's lists stay in
        its recorder) and, paced, what ``_drive``'s end counts of its schedule (also put in the
        checkpoint ``cp``). None when there is nothing."""
        if schedule is None and not rec.m.records:
            return None
        extra = Recorder(rec.interval_s)
        extra.m.timeline.start = None
        extra.m.records = {k: list(v) for k, v in rec.m.records.items() if v}
        if schedule is not None:
            cp["schedule"] = {**st.schedule, "steps": schedule[0]}
            extra.count("late_starts", schedule[1])
            extra.count("paced_steps", schedule[0] - schedule[2])
        return extra

    def _teardown_after_loops(self, st: ThreadState) -> None:
        """A client thread whose loop has ended waits for every other's loop to end before it
        closes its connection (at most until the stuck-thread grace after the stop instant).
        A server spends CPU on each session's end (PostgreSQL's backend exit): closed while
        others still had an operation in flight, 512 connections on one server CPU held the
        last operations for 6-7 s, which their latencies and the window reported as the
        database's (docs/decisions/0010-close-after-every-loop.md)."""
        with self._snap_cond:
            st.closing = True  # a snapshot takes its final state from now on, as an ended thread's
            self._looping -= 1
            if self._looping <= 0:
                self._loops_over.set()
                return
        while True:  # the stop instant is set when the threads are released (_arm): read it again
            left = self._give_up_perf() - time.perf_counter()
            if left <= 0 or self._loops_over.wait(0.5 if left == float("inf") else left):
                return

    def _give_up_perf(self) -> float:
        """When a thread still inside a call is given up: the stuck-thread grace after the stop
        instant (infinite before ``_arm`` and in a phase without one)."""
        return self._stop_perf + STUCK_THREAD_GRACE_S

    def _client(self, st: ThreadState, ctx: ThreadContext):
        """The family's client of this thread and phase (a run client's quota set in ``ctx``)."""
        if self.phase == "load":
            start, count = self.shard.thread_load[st.index]
            return self.family.load_client(self.w, ctx, start, count)
        if self.family.limits(self.w).count:
            ctx.quota = self.shard.thread_ops[st.index]
        return self.family.run_client(self.w, ctx)

    def _loop(self, st: ThreadState, client, m: Measured, mux: Optional[Multiplexer], quota: Optional[int],
              rate: Optional[float], rec: Recorder, deposit: Callable) -> None:
        """The thread's operations: driven by the shard's multiplexer, or its own loop."""
        if mux is not None:
            self._mux_drive(st, client, m, mux, quota, deposit)
        elif self.phase == "load":
            self._drive(st, client, m, None, None, deposit=deposit)
        else:
            self._drive(st, client, m, quota, rate, rec, deposit=deposit)

    def _own_statements(self, st: ThreadState, binding, rec: Recorder) -> None:
        """A thread's end: thread 0 reads the server's settings; where a session's start-up is a
        transaction in the server's counters (PostgreSQL), the sessions this thread started
        inside the measured window (after the warm-up where the family's window starts there)
        are counted as dbswarm's own (``families.OWN_TRANSACTIONS``)."""
        if st.index == 0:
            self._read_server_settings(binding, rec)
        if getattr(binding, "statement_is_transaction", False):
            since = self._warm_end_ns if self.family.window_after_warmup(self.w) else 0
            started = sum(1 for t in getattr(binding, "connected_ns", ()) if t >= since)
            if started:
                rec.count(families.OWN_TRANSACTIONS, started)

    def _read_server_settings(self, binding, rec: Optional[Recorder] = None):
        """The server's version and durability settings, read by the first client thread at its
        end (not before its first operation: nothing may delay the start); a server that does
        not let this user read them is a warning in the result, not a failure. Where a statement
        is a transaction in the server's counters, the read is one more in the measured window:
        counted (``families.OWN_TRANSACTIONS``) so that server-side rates can leave it out."""
        try:
            self.server_settings = binding.server_settings()
            if rec is not None and getattr(binding, "statement_is_transaction", False):
                rec.count(families.OWN_TRANSACTIONS)
        except Exception as exc:
            self.server_settings = {"unavailable": f"{type(exc).__name__}: {str(exc)[:200]}"}

    def _paced(self, rate: Optional[float], rec: Optional[Recorder], st: Optional[ThreadState] = None):
        """YCSB ClientThread throttle: step n is due at start + n/rate. Each step's due time is
        its intended start (``rec.intended_ns``: operations record their response time from
        it); a step that starts more than one interval after it is counted in ``late_starts``
        (the client could not keep the schedule: the database stalled or the client is
        saturated). The schedule is the phase's, not the segment's: its origin (on the phase's
        elapsed clock) and the steps scheduled so far are kept in the thread's state, so a
        backlog at a segment's end (every DBSWARM_PERSIST_INTERVAL_S, and each continuation
        call) is still late in the next segment instead of being forgotten."""
        if not rate:
            return None, None
        interval = round(1e9 / rate)
        perf_ns = time.perf_counter_ns
        zero = self._elapsed_zero_ns
        if st is not None and st.schedule:
            start = zero + round(st.schedule["origin_s"] * 1e9)
            steps = int(st.schedule["steps"])
        else:
            start, steps = perf_ns(), 0
            if st is not None:
                st.schedule = {"origin_s": (start - zero) / 1e9, "steps": 0}
        # steps scheduled (the phase's), late starts (this segment's), steps before it, ns slept
        state = [steps, 0, steps, 0]

        def wait():
            due = start + state[0] * interval
            state[0] += 1
            now = perf_ns()
            if due > now:
                state[3] += due - now
                time.sleep((due - now) / 1e9)
            elif now - due > interval:
                state[1] += 1
            if rec is not None:
                rec.intended_ns = due
        return wait, state

    def _drive(self, st: ThreadState, client, m: Measured, quota: Optional[int], rate: Optional[float],
               rec: Optional[Recorder] = None, deposit: Optional[Callable] = None):
        """The thread's loop around the operation loop (``engine.loop``, which calls, times and
        records the client's operations): until the thread's quota, the time cap (finished),
        the call's deadline (continue), a stop, or the client has nothing left (``Exhausted``:
        finished); paced at ``rate`` per second when given. A snapshot asked for (a new
        ``_snap_gen``) is answered through ``deposit``, between two operations."""
        wait, schedule = self._paced(rate, rec, st)
        # unpaced, operations run up to the next stop check in one call of the loop; paced, one
        # at a time (each waits for its due time)
        loop = OperationLoop(client, m, wait)
        run = loop.run
        perf = time.perf_counter
        stop_perf = self._stop_perf
        stopped = self.stop_event.is_set
        # the stop event is looked at every STOP_CHECK_S, not at every step (Event.is_set is
        # a Python call: a tenth of a µs, three times that between two round trips)
        check_perf = 0.0
        if quota is None:
            quota = sys.maxsize
        done = st.done
        seen = self._snap_gen
        sched0, perf0 = headroom.thread_sched(), perf()
        # a stall: a call of the loop that completed nothing for STALL_S (its pacing sleep left
        # out) with no error recorded (a failure and its reconnects are errors, said as such).
        # Run phase only: a load's unit can be long by design (a TPC-C district: ~50,000 rows);
        # a load thread still inside a call at the give-up is a stall (abandoned) all the same
        last, slept_ns = perf0, 0
        stall_s = STALL_S if self.phase == "run" else float("inf")
        try:
            while True:
                if done >= quota:
                    st.finished = True
                    break
                now = perf()
                if now >= check_perf:
                    if now >= stop_perf:
                        st.finished = self._cap_reached()
                        break
                    if stopped():
                        break
                    if self._snap_gen != seen and deposit is not None:
                        seen = self._snap_gen
                        deposit(seen, done, schedule)
                    check_perf = min(now + STOP_CHECK_S, stop_perf)
                m.last_error_kind = None
                try:
                    done += run(0 if wait else int(check_perf * 1e9), quota - done if not wait else 1)
                except BaseException:
                    done += loop.units  # what it did before the exception (a fatal error) counts
                    raise
                st.done = done
                now = perf()
                if now - last >= stall_s:
                    self._stall_seen(st, m, last, now, schedule, slept_ns)
                if wait:
                    slept_ns = schedule[3]
                last = st.progress_at = now
                if loop.exhausted:
                    st.finished = True
                    break
        finally:
            st.done = done
            sched1 = headroom.thread_sched() if sched0 is not None else None
            st.health = [perf() - perf0, *((sched1[0] - sched0[0], sched1[1] - sched0[1]) if sched1 else (None, None)),
                         schedule[3] / 1e9 if wait else 0.0]
            if wait:
                steps, late, before, _ = schedule
                st.schedule["steps"] = steps
                if rec is not None:
                    rec.count("late_starts", late)
                    rec.count("paced_steps", steps - before)
            st.state = client.state()
            if not st.finished and client.done():
                st.finished = True
            client.close()

    @staticmethod
    def _stall_seen(st: ThreadState, m: Measured, last: float, now: float, schedule: Optional[list],
                    slept_ns: int) -> None:
        """A call of ``_drive``'s loop returned ``now``, STALL_S or more after the one before
        (``last``): a stall of the thread unless it slept for its schedule (paced: ``schedule``'s
        ns slept, ``slept_ns`` of them before this call) or an error was recorded in it (a
        failure and its reconnects are errors, said as such)."""
        slept = (schedule[3] - slept_ns) / 1e9 if schedule is not None else 0.0
        if now - last - slept >= STALL_S and m.last_error_kind is None:
            st.stalled(last + slept, now)

    def _mux_drive(self, st: ThreadState, client, m: Measured, mux: Multiplexer, quota: Optional[int],
                   deposit: Callable) -> None:
        """``_drive``'s work done by the shard's multiplexer (engine.mux): the client handed in,
        this thread asleep until it is given back, then the same end as ``_drive``'s."""
        slot = mux.hand_in(st, client, m, quota, deposit)
        st.multiplexed = True
        try:
            slot.released.wait()
        finally:
            st.done, st.health, st.blocking_calls = slot.done, slot.health, slot.blocking_calls
            if slot.abandoned:
                st.abandoned = True  # (its stall recorded by the multiplexer: Multiplexer._abandon)
                st.error = (f"client {st.index} was still waiting for a database answer "
                            f"{STUCK_THREAD_GRACE_S:g} s after the stop time: abandoned")
                st.finished = self._cap_reached()
            st.state = client.state()
            if not st.finished and client.done():
                st.finished = True
            client.close()
        if slot.exc is not None:
            raise slot.exc

    def _cap_reached(self) -> bool:
        """At stop time: the time cap (finished) rather than the deadline (continue)?"""
        return self._cap_limited and self._stop_perf < self._deadline_perf
