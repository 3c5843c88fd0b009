"""One thread multiplexing a shard's connections (``fanout.client_model: multiplexed``).

Each client thread of the shard connects and builds its client as with threads (in parallel,
before the start barrier), then hands the client to the shard's ``Multiplexer`` and sleeps
until it is given back. The multiplexer's one thread sends every client's next operation on
its connection through the binding's split calls (``bindings.protocols.Multiplexing``: the
call's ``Split`` in ``binding.splits``, its ``send(*args)``, then its ``finish()`` when the
socket ``binding.fileno()`` is readable), waits in one ``epoll`` for any answer,
finishes that operation, records it as ``engine.loop.OperationLoop`` does (the same lanes,
warm-up edge, not-found count and failure policy, into the client's own recorder), and sends
that client's next one. One wake-up serves every answer that has arrived: no thread per
connection to wake and schedule per answer, which is what a thread per connection costs at
128+ connections (docs/decisions/0003-multiplexed-client-model.md).

An operation of several statements (sysbench's event, YCSB's read-modify-write, TPC-C's
transactions: ``families.base.Stepwise``) is driven statement by statement: its steps generator
yields each call, the multiplexer sends it and gives the generator its answer when it is in (a
TPC-C transaction's next statement is built from the last one's rows); a failed
event attempt is rolled back and started again here (``Measured.retry_event``), never run to
its end in this thread, where a statement could wait for a row lock that another of its
connections holds until this thread sends that connection's next statement.

What it leaves to threads: paced runs (a schedule per client), the load phase, and clients
whose operations the binding cannot split (``Client.multiplexable``); the worker falls back
to a thread per connection there. An operation whose function has no split form is called
in the multiplexer's thread (counted in ``blocking_calls``: every other connection waits
meanwhile). A lost connection reconnects in the multiplexer's thread, as a thread would,
and the others wait for it.

Time is read as the operation loop reads it, through it (``engine.loop``: ``now`` before the
send, ``OperationLoop.end`` after the finish, which records). A client
whose answer has arrived waits for the multiplexer to reach it among the others that arrived
in the same wake-up: that delay is in its latency, as a thread's wait for a CPU is.

What it records into: one recorder of its own (``recorder``) for every client it drives, not
each client's. A recorder per connection keeps per connection what one recorder keeps once:
two 184-KB histograms per operation type, up to 4,096 distinct latencies before they go into
them, each interval's buckets; at 512 connections a simulated 10-minute run held 765 MB of
them (one recorder: 50 MB), and a snapshot (every 15 s while a shard runs, its copies made in
this thread) cost 3.9 s of CPU by then, growing with the run
(docs/decisions/0007-snapshots-hand-over.md). A snapshot still agrees exactly with every
client's checkpoint: when a snapshot is asked for (a new generation), the multiplexer hands
what its recorder holds over to the shard at once (``_hand_over_recorder``: ``Recorder.detach``,
nothing copied), and a client's operations between that instant and its own deposit (between
two of its operations, as a thread's) go to the client's own recorder, whose part its deposit
hands over: each operation is in exactly one part when it is in the checkpoint, and in none
when it is not.
"""
from __future__ import annotations

import os
import select
import sys
import threading
import time
from typing import Any, Callable, Optional

from dbswarm.bindings.base import PENDING
from dbswarm.bindings.protocols import Multiplexing, Split
from dbswarm.engine.calls import Measured
from dbswarm.engine.loop import EVENT_ATTEMPTS, OperationLoop, now
from dbswarm.engine.shard_state import ThreadState
from dbswarm.families.base import EVENT, Client, Exhausted, Op, Stepwise
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Recorder

POLL_S = 0.05  # the longest wait in epoll: the stop event and the stop instant are looked at as often
EVENT_RETRIES = EVENT_ATTEMPTS - 1  # an event's retries after its first attempt, as a thread makes them
# a client thread's part of a snapshot: deposit(generation, units done, its schedule)
Deposit = Callable[[int, int, Optional[list]], None]
NEXT, WAITING, RELEASED = "next", "waiting", "released"  # what _failed did with the slot


class Slot:
    """One client thread's client while the multiplexer drives it."""
    __slots__ = ("st", "client", "m", "loop", "shared_loop", "quota", "done", "deposit", "seen", "fd", "op", "fn",
                 "args", "t0", "released", "exc", "abandoned", "began", "sched0", "health", "blocking_calls", "gen",
                 "finish", "attempts", "held", "splits")

    def __init__(self, st: ThreadState, client: Client, m: Measured, quota: Optional[int], deposit: Optional[Deposit]):
        self.st, self.client, self.m = st, client, m
        # into the client's own recorder: its failures, and its operations between a snapshot's
        # copy of the multiplexer's recorder and its deposit (Multiplexer._record)
        self.loop = OperationLoop(client, m, None)
        self.shared_loop: Optional[OperationLoop] = None  # into the multiplexer's recorder (_admit)
        self.quota = sys.maxsize if quota is None else quota
        self.done = st.done
        self.deposit = deposit
        self.seen = 0
        self.fd: Optional[int] = None
        self.op: Any = None
        self.fn: Any = None
        self.args: Any = None
        self.t0 = 0
        self.released = threading.Event()
        self.exc: Optional[BaseException] = None
        self.abandoned = False
        self.began = 0  # when it was admitted (ns)
        self.sched0: Optional[tuple[int, int]] = None
        self.health: Optional[list] = None
        self.blocking_calls = 0
        self.gen: Any = None  # the operation's steps in flight (families.base.stepwise), or None
        self.finish: Any = None  # the finish of the call in flight
        self.attempts = 0  # the failed attempts of the event in flight
        self.held = False  # given back at the stop, its thread not yet woken (Multiplexer._release)
        self.splits: dict[Callable[..., Any], Split] = {}  # the connection's split calls (_watch_connection)


class Multiplexer:
    """The multiplexing thread of one shard phase (``phase``: the ``worker.ShardPhase``, whose
    stop instant and time cap (its ``clock``), stop event and snapshot generation (its
    ``snapshots``) it follows). ``expected``
    client threads each either ``hand_in`` a client or ``decline``; the thread ends when every
    one has and every handed-in client is given back."""

    def __init__(self, phase: Any, expected: int, grace_s: float, stall_s: float = float("inf")):
        self.phase = phase
        self._snaps = phase.snapshots  # (read for each operation: one attribute less)
        self.grace_ns = int(grace_s * 1e9)
        # an answer this long after its call was sent: a stall of its client (shard_state.STALL_S)
        self.stall_ns = int(stall_s * 1e9) if stall_s != float("inf") else sys.maxsize
        self._lock = threading.Lock()
        self._new: list[Slot] = []
        self._left = expected  # client threads that have neither handed in nor declined
        self._accounted: set[int] = set()  # the client threads (indexes) that have handed in or declined
        self._ep = select.epoll()
        self._wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._ep.register(self._wake, select.EPOLLIN)
        self._by_fd: dict[int, Slot] = {}
        self._held: list[Slot] = []  # given back at the stop, their threads woken when this one ends
        self._admitted = 0
        self._thread: Optional[threading.Thread] = None
        self._stopping = False
        self._closed = False  # the thread has ended: hand_in gives back at once, nothing is written to _wake
        self._stop_ns = sys.maxsize  # the phase's stop instant (ns, on engine.loop.now's clock), set when the thread starts
        # what every driven client's operations are recorded into (made at the first admission,
        # as its client thread's), and the snapshot generation it was last copied for
        self.recorder: Optional[Recorder] = None
        self._copy_gen = phase.snapshots.gen
        self._copied = threading.Condition(self._lock)

    # -- the client threads' side ------------------------------------------------------------
    def hand_in(self, st: ThreadState, client: Client, m: Measured, quota: Optional[int],
                deposit: Optional[Deposit]) -> Slot:
        """A client thread's client, driven from now on; wait on ``slot.released``. After the
        multiplexer has ended (a stop, its grace passed) it is given back at once."""
        slot = Slot(st, client, m, quota, deposit)
        with self._lock:
            if st.index in self._accounted:
                raise RuntimeError(f"client thread {st.index} handed in twice")
            self._accounted.add(st.index)
            self._left -= 1
            if self._closed:
                slot.health = [0.0, None, None, 0.0]
                slot.released.set()
                return slot
            self._new.append(slot)
            os.eventfd_write(self._wake, 1)
        return slot

    def decline(self, index: int) -> None:
        """Client thread ``index`` will not hand in (it runs as a thread, or its set-up
        failed); a no-op for one that has handed in or declined already."""
        with self._lock:
            if index in self._accounted:
                return
            self._accounted.add(index)
            self._left -= 1
            if not self._closed:  # (a closed eventfd's number may be another file's by now)
                os.eventfd_write(self._wake, 1)

    def part_for(self, gen: int, timeout: float) -> tuple[bool, Optional[Recorder]]:
        """The worker's snapshot ``gen``: (True, None) once the multiplexer has handed its
        recorder's part over for the generation (``_hand_over_recorder``: it is among the shard's
        handed-over parts), or (False, None) when it did not within ``timeout`` s (the snapshot
        is skipped, as for a thread inside a long call; the part, when it comes, is kept for the
        next). Once the thread has ended, the recorder is still: (True, a copy of it)."""
        give_up = time.monotonic() + timeout
        with self._copied:
            while self._copy_gen != gen:
                if self._closed:
                    return True, (self.recorder.snapshot_copy() if self.recorder is not None else None)
                left = give_up - time.monotonic()
                if left <= 0:
                    return False, None
                self._copied.wait(min(left, 0.05))
            return True, None

    def _hand_over_recorder(self, gen: int) -> None:
        """Snapshot ``gen`` asked for: what the recorder holds is handed over to the shard now
        (``Recorder.detach``: nothing copied; a copy of a long run's recorder paused every
        connection for as long as it took), and from now on each client's operations go to its
        own recorder until it deposits (``_record``)."""
        if self.recorder is not None:
            self.phase.snapshots.hand_over(self.recorder)
        with self._copied:
            self._copy_gen = gen
            self._copied.notify_all()

    def start(self, name: str) -> None:
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def join(self, timeout: Optional[float] = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the multiplexing thread ----------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._loop()
        finally:
            for slot in list(self._by_fd.values()):  # abandoned or left by an error of the loop's own
                self._release(slot)
            for slot in self._held:
                slot.released.set()
            with self._lock:
                new, self._new = self._new, []
                self._closed = True
                self._ep.close()
                os.close(self._wake)
                self._copied.notify_all()
            for slot in new:
                self._release(slot)

    def _loop(self) -> None:  # noqa: C901 (the loop in one frame: a call per answer is its cost)
        phase, snaps = self.phase, self._snaps
        perf = now
        stop_perf = phase.clock.stop_perf
        stop_ns = self._stop_ns = int(stop_perf * 1e9) if stop_perf != float("inf") else sys.maxsize
        stopped = phase.stop_event.is_set
        poll, by_fd, wake = self._ep.poll, self._by_fd, self._wake
        give_up = sys.maxsize
        check_ns = 0
        while True:
            if self._new:
                with self._lock:
                    new, self._new = self._new, []
                for slot in new:
                    self._admit(slot)
            if not by_fd and self._left <= 0 and not self._new:
                return
            t = perf()
            if t >= check_ns:
                if snaps.gen != self._copy_gen:  # no client has reached its next operation yet
                    self._hand_over_recorder(snaps.gen)
                if not self._stopping and (t >= stop_ns or stopped()):
                    self._stopping = True
                if self._stopping and give_up == sys.maxsize:
                    give_up = max(t, stop_ns if stop_ns != sys.maxsize else t) + self.grace_ns
                if t >= give_up:
                    self._abandon()
                    return
                check_ns = t + 10_000_000
            for fd, _ in poll(POLL_S):
                if fd == wake:
                    try:
                        os.eventfd_read(wake)
                    except BlockingIOError:
                        pass
                    continue
                ready = by_fd.get(fd)
                if ready is None:
                    continue
                slot = ready
                try:
                    result = slot.finish()
                    if result is PENDING:
                        continue
                    if slot.gen is not None:  # a statement of several: the next one sent, or the end
                        result = self._advance(slot, result)
                        if result is PENDING:
                            continue
                except Exception as exc:  # drivers raise many types; the policy classifies
                    self._failed(slot, exc)
                    continue
                self._next(slot, self._record(slot, slot.op, slot.t0, result))

    def _admit(self, slot: Slot) -> None:
        slot.seen = self._snaps.gen
        slot.began = now()
        slot.sched0 = headroom.thread_sched()
        self._admitted += 1
        if not slot.m.paced:  # (paced runs are not multiplexed; their response times need ok_paced)
            own = slot.m.rec
            if self.recorder is None:
                self.recorder = Recorder(own.interval_s)
                self.recorder.warm_until_ns, self.recorder.warm_end_ns = own.warm_until_ns, own.warm_end_ns
            slot.shared_loop = OperationLoop(slot.client, Measured(slot.m.binding, self.recorder), None)
            slot.loop.share_warm_hook(slot.shared_loop)
        if self._watch_connection(slot) is None:
            slot.exc = RuntimeError("the connection offers no socket to multiplex")
            self._release(slot)
            return
        self._next(slot, now())

    def _watch_connection(self, slot: Slot) -> Optional[int]:
        """The slot's connection watched (again: a reconnect makes another one): its socket
        (None: none to multiplex) and its split calls."""
        b = slot.m.binding
        fd = None
        slot.splits = {}
        if isinstance(b, Multiplexing):
            fd = b.fileno()
            if fd is not None:
                slot.splits = b.splits
        self._watch(slot, fd)
        return fd

    def _watch(self, slot: Slot, fd: Optional[int]) -> None:
        """(Re)register a slot's socket: after a reconnect it is another one (or the same
        number, which closing the old socket took out of the epoll set)."""
        if slot.fd is not None:
            self._by_fd.pop(slot.fd, None)
            try:
                self._ep.unregister(slot.fd)
            except OSError:
                pass
        slot.fd = fd
        if fd is not None:
            self._by_fd[fd] = slot
            try:
                self._ep.register(fd, select.EPOLLIN)
            except FileExistsError:
                self._ep.modify(fd, select.EPOLLIN)

    def _next(self, slot: Slot, now_ns: int) -> None:
        """The slot's next operation sent, or the slot given back: its quota, the stop instant,
        a stop, the client's end. A snapshot asked for is answered first (between two
        operations: the recorder and the checkpoint agree)."""
        snaps, st = self._snaps, slot.st
        while True:
            if slot.done >= slot.quota:
                st.finished = True
                return self._release(slot)
            if now_ns >= self._stop_ns:
                st.finished = self.phase.clock.cap_reached()
                return self._release(slot, hold=True)
            if self._stopping:
                return self._release(slot, hold=True)
            if snaps.gen != slot.seen and slot.deposit is not None:
                self._deposit(slot, snaps.gen)
            try:
                op, fn, args = slot.client.next_operation()
            except Exhausted:
                slot.loop.exhausted = True
                st.finished = True
                return self._release(slot)
            except Exception as exc:
                slot.exc = exc
                return self._release(slot)
            slot.op, slot.fn, slot.args, slot.attempts = op, fn, args, 0
            if type(fn) is Stepwise:  # several statements: the first sent
                if self._start_steps(slot, fn.steps) != NEXT:
                    return
                now_ns = now()
                continue
            split = slot.splits.get(fn)
            if split is None:  # no split form: called here, every other connection waiting
                slot.blocking_calls += 1
                t0 = now()
                try:
                    result = fn(*args)
                except Exception as exc:
                    slot.t0 = t0
                    if self._failed(slot, exc, again=False) != NEXT:
                        return
                    now_ns = now()
                    continue
                now_ns = self._record(slot, op, t0, result)
                continue
            slot.finish = split.finish
            slot.t0 = now()
            try:
                split.send(*args)
            except Exception as exc:
                if self._failed(slot, exc, again=False) != NEXT:
                    return
                now_ns = now()
                continue
            return

    def _deposit(self, slot: Slot, gen: int) -> None:
        """The slot's part of snapshot ``gen`` (its recorder's part, its checkpoint), after the
        multiplexer's recorder was handed over for it (``_hand_over_recorder``)."""
        deposit = slot.deposit
        if deposit is None:
            return
        if gen != self._copy_gen:
            self._hand_over_recorder(gen)
        slot.seen = gen
        deposit(gen, slot.done, None)

    def _start_steps(self, slot: Slot, steps: Callable[..., Any]) -> str:
        """An operation of several statements begun: its first call sent (WAITING), or, where
        every call of it was made here, recorded (NEXT); a failure to its policy (``_failed``)."""
        slot.t0 = now()
        try:
            slot.gen = steps(*slot.args)
            result = self._advance(slot, None)
        except Exception as exc:
            return self._failed(slot, exc, again=False)
        if result is PENDING:
            return WAITING
        self._record(slot, slot.op, slot.t0, result)
        return NEXT

    @staticmethod
    def _advance(slot: Slot, value: Any) -> Any:
        """The operation's steps driven on from ``value`` (the last call's result): the next
        call sent (PENDING: wait for its answer), or the operation's result when the steps
        end. A call without a split form is made here (``blocking_calls``)."""
        gen = slot.gen
        while True:
            try:
                call, call_args = gen.send(value)
            except StopIteration as end:
                slot.gen = None
                return end.value
            split = slot.splits.get(call)
            if split is None:
                slot.blocking_calls += 1
                value = call(*call_args)
                continue
            slot.finish = split.finish
            split.send(*call_args)
            return PENDING

    def _record(self, slot: Slot, op: Op, t0: int, result: Any) -> int:
        """The operation begun at ``t0`` ended with ``result`` (``OperationLoop.end``: its end
        read, returned): into the multiplexer's recorder, or the client's own between a
        snapshot's copy and the client's deposit (the module's docstring)."""
        loop = slot.shared_loop
        if loop is None or slot.seen != self._copy_gen:
            loop = slot.loop
        t1 = loop.end(op, t0, result)
        slot.done += op.units
        if t1 - t0 >= self.stall_ns and not slot.attempts:  # (a retried event's failures are errors)
            slot.st.stalled(t0 / 1e9, t1 / 1e9)
        return t1

    def _failed(self, slot: Slot, exc: Exception, again: bool = True) -> str:
        """An operation raised: its policy (``OperationLoop._failed``: recorded, a lost
        connection reconnected); the slot's socket watched again. An event of several
        statements (``stepwise``) that should run again (``Measured.retry_event``: rolled
        back) is started again here, its first statement sent, timed from its first attempt:
        never run to its end in this thread, where it could wait for a row lock that another
        of this thread's connections holds until this thread sends its next statement.
        Returns NEXT when the slot goes on (``again``: its next operation sent here), WAITING
        when the event's new attempt is in flight, RELEASED when it was given back (a fatal
        error, an unreachable target)."""
        if slot.gen is not None:  # the steps in flight end here
            slot.gen.close()
            slot.gen = None
        op, fn = slot.op, slot.fn
        steps = fn.steps if type(fn) is Stepwise else None
        retry = False
        try:
            if op.policy == EVENT and steps is not None:
                retry = slot.m.retry_event(op.name, exc) and slot.attempts < EVENT_RETRIES
                slot.attempts += 1
                if not retry:  # given up: no unit, as a thread's loop counts it
                    slot.loop.event_given_up(op)
            else:
                slot.done += slot.loop.failed(op, slot.fn, slot.args, slot.t0, exc)
        except Exception as fatal:
            slot.exc = fatal
            self._release(slot)
            return RELEASED
        # watched again even under the same number: a reconnect's new socket often takes the
        # number of the one it replaced, whose closing took it out of the epoll set
        if self._watch_connection(slot) is None:
            slot.exc = RuntimeError("the connection offers no socket to multiplex after reconnecting")
            self._release(slot)
            return RELEASED
        if retry and steps is not None:
            try:
                slot.gen = steps(*slot.args)
                result = self._advance(slot, None)
            except Exception as again_exc:
                return self._failed(slot, again_exc, again)
            if result is PENDING:
                return WAITING
            self._record(slot, op, slot.t0, result)
        if again:
            self._next(slot, now())
        return NEXT

    def _release(self, slot: Slot, hold: bool = False) -> None:
        """The slot given back to its client thread, with its loop's figures: the wall time it
        was driven, and the multiplexing thread's on-CPU time (shared out over the slots) and
        run-queue wait (each slot waited all of it: headroom's run-queue share stays the
        thread's) over that time. ``hold``: at the stop, its thread is woken only when this
        thread ends (``_main``): hundreds of threads waking for the GIL while the others'
        last answers arrive held those answers (their latencies) up to 3 times the steady
        ones at 512 connections."""
        if slot.released.is_set() or slot.held:
            return
        slot.gen = None
        if slot.fd is not None:
            self._watch(slot, None)
        sched1 = headroom.thread_sched() if slot.sched0 is not None else None
        wall = (now() - slot.began) / 1e9 if slot.began else 0.0
        if sched1 is not None and slot.sched0 is not None:
            share = max(1, self._admitted)
            slot.health = [wall, (sched1[0] - slot.sched0[0]) // share, sched1[1] - slot.sched0[1], 0.0]
        else:
            slot.health = [wall, None, None, 0.0]
        if hold:
            slot.held = True
            self._held.append(slot)
        else:
            slot.released.set()

    def _abandon(self) -> None:
        """The grace after the stop instant has passed: every client still waiting for an
        answer is given back as abandoned (its connection is closed by its thread)."""
        t = now() / 1e9
        for slot in list(self._by_fd.values()):
            slot.abandoned = True
            slot.st.stalled(slot.t0 / 1e9, t, abandoned=True)  # its call in flight since it was sent
            self._release(slot)
