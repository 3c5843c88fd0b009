"""Workload families as plugins: the protocol a family implements, and their registry.

A family (YCSB, sysbench, ...) is one module that owns everything about its workload: the
campaign model (pydantic; it becomes part of the published JSON Schema), its presets, how
a run's load is split over client threads, its prepare / load / run steps, the step one
client thread repeats, what it adds to a merged phase result and its report tables. The
engine (spec, plan, worker, aggregate, report, local, cli, service) knows families only
through this module, as BenchBase knows benchmarks through ``BenchmarkModule`` and YCSB
through ``Workload``.

A family's client describes its operations (``Client.next_operation``); the engine's one
operation loop (``engine.loop``) calls, times and records them, and the worker's loop around it
handles the thread's quota, pacing, the time cap, the call's deadline and a stop: written once.

Built-in families are imported on first use; others register from a plugin module
(``dbswarm.plugins``: ``DBSWARM_PLUGINS`` or a ``dbswarm.plugins`` entry point).
"""
from __future__ import annotations

import importlib
import math
import random
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generator, Generic, Optional, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from dbswarm.errors import FamilyError
from dbswarm.measure.recorder import Measurement, Recorder
from dbswarm.plugins import load_plugins

if TYPE_CHECKING:
    from dbswarm.bindings import Engine

DEFAULT = "ycsb"  # the family of a workload that names none
_BUILTIN = {"ycsb": "dbswarm.families.ycsb", "sysbench": "dbswarm.families.sysbench",
            "tpcc": "dbswarm.families.tpcc.family", "custom": "dbswarm.families.custom.family"}
_REGISTRY: dict[str, "Family[Any]"] = {}
STAGES = ("before_load", "after_load", "after_run", "cleanup")
MAX_AUTO_INTERVALS = 600  # the default report_interval keeps a run at about this many intervals
# a phase's counter: dbswarm's own transactions in the measured window (a shard's settings read
# where a statement is a transaction in the server's counters): server-side rates leave them out
OWN_TRANSACTIONS = "dbswarm_own_transactions"


def split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` integers differing by at most one, larger first; sum preserved."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    q, r = divmod(total, parts)
    return [q + 1 if i < r else q for i in range(parts)]


class WorkloadModel(BaseModel):
    """Base of every family's campaign model: strict, and the keys every family has."""
    model_config = ConfigDict(extra="forbid", validate_default=True)
    threads: int = Field(1, ge=1, description="client threads for the whole run (all shards)")
    warmuptime: float = Field(0, ge=0, description="seconds whose operations are kept out of the reported "
                              "percentiles and of steady-state throughput (measured apart, as the warm-up)")
    report_interval: Optional[float] = Field(
        None, gt=0, le=3600, description="seconds per interval of the latency percentiles over time (whole "
        "seconds: a fraction is rounded up). Default: 1 s for runs of up to 10 minutes, longer runs time / 600 "
        "(at most ~600 intervals: an hour's run has 6-second intervals, which keeps 1,000 shards' per-interval "
        "histograms mergeable in seconds; see docs/decisions/0014-per-interval-histograms.md)")

    @property
    def name(self) -> str:
        """The run's workload as reports name it (a preset, a test)."""
        return self.family  # type: ignore[attr-defined]


@dataclass(frozen=True)
class RunLimits:
    count: int = 0                 # operations / events over all threads; 0 = no count limit
    rate: Optional[float] = None   # per second over all threads; None = unthrottled
    time: Optional[float] = None   # seconds of the run phase; None = no time cap


class Calls(Protocol):
    """What a family's client reaches the engine through (``engine.calls.Measured``, which the
    engine passes; the families do not import the engine): the connection, the thread's
    recorder for its own counters, reconnect hooks and the stop. Operations are not called
    through it: a client describes them (``Client.next_operation``) and the engine's operation
    loop calls, times and records them."""
    binding: Any                   # the connection (a Binding)
    rec: Recorder                  # the thread's recorder (a client adds its counters: rec.count)
    paced: bool                    # the run has a target rate
    on_reconnect: list             # called after every reconnect (a client's bound methods taken again)
    should_stop: Callable[[], bool]


# an operation's failure policy (``Op.policy``), applied by the engine's operation loop
CALL = "call"    # one call: a failure is recorded and the operation counts as done (YCSB)
EVENT = "event"  # a transaction fn(session, state): rolled back and run again on retryable and
                 # connection errors, up to 100 attempts (sysbench); counts when it committed
ROWS = "rows"    # a load batch (idempotent): written again until it succeeds or the worker stops


class Op:
    """An operation kind of a client, as the engine's operation loop runs it: its name in the
    results, its failure policy, the units it counts (a batch: its rows), whether a 0 or False
    result is a row not found (``missing``: counted in ``not_found``), and ``then(took_effect)``,
    called after it ended (succeeded, committed, written; a duplicate key of a CALL took effect
    too). A client makes its Ops once and returns one with every operation (the loop looks the
    Op's lane up by it; a loader sets its one Op's units per batch)."""
    __slots__ = ("name", "policy", "units", "missing", "then")

    def __init__(self, name: str, policy: str = CALL, units: int = 1, missing: bool = False,
                 then: Optional[Callable[[bool], None]] = None):
        if policy not in (CALL, EVENT, ROWS):
            raise ValueError(f"Op {name!r}: policy must be call, event or rows, not {policy!r}")
        self.name, self.policy, self.units, self.missing, self.then = name, policy, units, missing, then

    def __repr__(self) -> str:
        return f"Op({self.name!r}, {self.policy}, units={self.units})"


# what a client's next_operation returns: the Op, the function to call, its arguments
Operation = tuple[Op, Callable[..., Any], tuple]
# an operation described as steps (``stepwise``): yields (call, call_args), is sent each answer
Steps = Generator[tuple[Callable[..., Any], tuple], Any, Any]


@dataclass
class ThreadContext:
    """What a family's client gets for one client thread of one shard call."""
    m: Calls                       # the timing wrapper (engine.calls.Measured); m.binding is the connection
    rng: random.Random             # seeded from the run's seed, the phase and the thread's global index; continued across segments
    thread: int                    # global index of the thread in the run (0 .. threads - 1)
    threads: int                   # client threads of the run, all shards
    quota: Optional[int] = None    # this thread's operations (None: no count limit)
    saved: dict = field(default_factory=dict)  # the client's state() at the last checkpoint


class Exhausted(Exception):
    """Raised by a client's next_operation when it has nothing left to do (a load range written)."""


class Stepwise(partial):
    """An operation's blocking function (a ``functools.partial``: called at a C call's cost, as
    the function it was) that carries its ``steps`` (``stepwise``) for the shard's multiplexer."""
    steps: Callable[..., Any]


def _run_steps(steps: Callable[..., Any], *args: Any) -> Any:
    gen = steps(*args)
    result = None
    try:
        while True:
            call, call_args = gen.send(result)
            result = call(*call_args)
    except StopIteration as end:
        return end.value


def stepwise(steps: Callable[..., Any], run: Optional[Callable[..., Any]] = None) -> Stepwise:
    """An operation of several statements (a transaction) described once, as ``steps(*args)``:
    a generator that yields ``(call, call_args)`` for each statement — a binding's function,
    split into ``send`` / ``finish`` where the binding multiplexes (bindings.protocols.Multiplexing)
    — is sent each call's result, and returns the operation's. What it gives is the blocking
    function a thread calls (the statements one after another; ``run`` where the client has a
    shorter one of the same statements and draws); its ``steps`` are what the shard's
    multiplexer drives (engine.mux: each call's ``send``, its ``finish`` when the answer is in).
    The description draws its randoms and counts its statements in the same order either way."""
    if run is None:
        fn = Stepwise(_run_steps, steps)
    elif isinstance(run, partial):  # (the partial's own function: one C call, not two)
        fn = Stepwise(run.func, *run.args, **run.keywords)
    else:
        fn = Stepwise(run)
    fn.steps = steps
    return fn


class Client:
    """One client thread's work, described an operation at a time: ``next_operation()``
    returns (an ``Op``, the function to call, its arguments) or raises ``Exhausted``; the
    engine's operation loop (``engine.loop``) calls it, times it, records it and applies the
    Op's failure policy. A client draws from ``ctx.rng`` only (the thread's stream, which
    checkpoints itself), and may read the clock only for keying and think times (TPC-C)."""

    def next_operation(self) -> tuple[Op, Callable[..., Any], tuple]:
        raise NotImplementedError

    # optional: called once by the loop after the first operation that ended past the run
    # phase's warm-up (sysbench takes its query counters' warm-up share there)
    warmup_ended: Optional[Callable[[], None]] = None

    # whether every function next_operation returns is a binding's split-capable one, or
    # ``stepwise`` steps of such (``protocols.Multiplexing``): the shard's multiplexer may drive this
    # client (engine.mux)
    multiplexable: bool = False

    def state(self) -> dict:
        """What a continuation of this thread needs (stored in the checkpoint)."""
        return {}

    def done(self) -> bool:
        """Whether the thread's work is complete although its loop was stopped."""
        return False

    def close(self) -> None:
        """The thread's loop ended: flush what the client keeps for itself (counters)."""


class BatchLoader(Client):
    """The load phase of one thread: batches of its range [start, start + count), each
    written by one idempotent call, retried until written (``ROWS``); resumable from the first
    row not written. ``batch(next, end)`` -> (high, rows, function, args)."""

    def __init__(self, ctx: ThreadContext, start: int, count: int,
                 batch: Callable[[int, int], tuple], name: str = "INSERT"):
        self.should_stop, self.batch = ctx.m.should_stop, batch
        self.op = Op(name, ROWS, then=self._written)
        self.end = start + count
        saved = ctx.saved.get("load_next")
        self.next = start if saved is None else saved
        self.hi = self.next  # the end of the batch in flight

    def next_operation(self) -> tuple[Op, Callable[..., Any], tuple]:
        nxt = self.next
        if nxt >= self.end:
            raise Exhausted
        hi, n, fn, args = self.batch(nxt, self.end)
        op = self.op
        op.units = n  # one Op for the thread's batches (the loop looks its lane up by it)
        self.hi = hi
        return op, fn, args

    def _written(self, written: bool) -> None:
        if written or not self.should_stop():  # a batch stopped unwritten is redone on resume
            self.next = self.hi  # one that failed for good (fatal) is skipped, not counted

    def state(self) -> dict:
        return {"load_next": self.next}

    def done(self) -> bool:
        return self.next >= self.end


W = TypeVar("W", bound=WorkloadModel)  # a family's campaign model


class Family(Generic[W]):
    """Base class of a workload family; subclasses set the class attributes and override
    what differs. One instance per family lives in the registry."""
    name: ClassVar[str] = ""
    model: type[W]                     # its campaign model (a WorkloadModel subclass); hooks get its instances
    # the binding capability it needs (bindings.CAPABILITIES): its hooks get a binding of that
    # capability's protocol (bindings.protocols.PROTOCOLS: KeyValue, SqlSession), typed with it
    requires: ClassVar[str] = "kv"
    label_key: ClassVar[str] = ""       # the workload key that names a run in the matrix (preset, test)
    # a SQL family: the dialects its statements and DDL are written in (the rows of its SQL
    # tables); campaign validation refuses an engine whose dialect is not among them
    dialects: ClassVar[tuple[str, ...]] = ()

    # -- the campaign --------------------------------------------------------------------
    def workload(self, data: dict) -> W:
        return self.model.model_validate(data)

    def requires_for(self, w: W) -> str:
        """The binding capability this workload needs (``requires`` unless a family's workloads
        differ: a custom workload of MongoDB documents needs kv, one of SQL statements sql)."""
        return self.requires

    def presets_text(self) -> list[str]:
        """Lines of ``dbswarm presets`` for this family."""
        return []

    # -- the plan ------------------------------------------------------------------------
    def limits(self, w: W) -> RunLimits:
        """The run phase's count limit, rate and time cap."""
        return RunLimits()

    def thread_memory(self, w: W) -> Optional[tuple[int, str]]:
        """(bytes of values one client thread holds at its peak: a load batch, a scan's rows; the
        workload keys that make it, as "workload.a × workload.b"), or None when small whatever
        the keys (``campaign.memory`` checks that a shard's threads fit the worker)."""
        return None

    def load_range(self, w: W) -> tuple[int, int]:
        """(first unit, units) the load phase writes over all threads (rows, records)."""
        return 0, 0

    def split_load(self, w: W, threads: int) -> list[list[int]]:
        """[start, count] of the load for each client thread of the run: contiguous shares of
        ``load_range`` (a family may split otherwise, e.g. by warehouse)."""
        start, total = self.load_range(w)
        out = []
        for c in split(total, threads):
            out.append([start, c])
            start += c
        return out

    def interval_seconds(self, w: W) -> int:
        """Whole seconds per interval of the per-interval histograms (``report_interval``)."""
        if w.report_interval:
            return max(1, math.ceil(w.report_interval))
        t = self.limits(w).time
        return max(1, math.ceil(t / MAX_AUTO_INTERVALS)) if t else 1

    def tables(self, w: W) -> list[str]:
        """The tables (collections) this workload creates and uses: what the campaign lock
        (``dbswarm.engine.lock``) holds while a campaign runs. [] takes no lock."""
        return []

    # -- the steps -----------------------------------------------------------------------
    def prepare(self, binding: Any, w: W, stage: str) -> Optional[dict]:
        """Un-sharded steps: before_load (drop + create), after_load (secondary indexes),
        after_run (after the run phase's window end; nothing by default), cleanup (drop
        everything). A dict returned is stored with the stage's record (``prepare-<stage>.json``,
        under "family"). A consistency check is returned under "check" as {"passed": bool,
        "failures": [{"condition", ...}], ...}: result.json lists it in the run's "checks" (by
        stage), and a failed one makes the campaign's status check_failed."""

    def has_stage(self, w: W, stage: str) -> bool:
        """Whether ``prepare`` does anything at this stage (when not, the step does not even
        connect): every stage but after_run by default."""
        return stage != "after_run"

    # -- a consistency check split by unit (warehouse) -----------------------------------
    check_unit_name: ClassVar[str] = "units"  # what a unit of the check is, plural (TPC-C: warehouses)

    def check_units(self, w: W, stage: str) -> int:
        """How many units (TPC-C: warehouses) the consistency check of this stage (after_load,
        after_run) covers; 0: no check. ``dbswarm.engine.checks`` splits them into contiguous ranges,
        one per shard of the run, checked in parallel, each a unit at a time across as many
        calls as it takes (each call stops before its time limit), and stores the merged
        outcome as the stage's ``family.check``."""
        return 0

    def check_unit(self, binding: Any, w: W, stage: str, unit: int) -> list[dict]:
        """The failures of one unit (0-based) of the stage's check: [{"condition", ...}]. Ranges
        call it at the same time on their own connections: it reads only that unit's rows."""
        raise NotImplementedError

    def check_summary(self, w: W, stage: str, failures: list[dict], seconds: float) -> dict:
        """The stage's check from all its units' failures: {"passed", "failures", ...}."""
        return {"passed": not failures, "failures": failures[:100], "failures_total": len(failures),
                "seconds": round(seconds, 3)}

    def window_after_warmup(self, w: W) -> bool:
        """Whether the run phase's measured window starts when the warm-up ends (its start edge
        read then, by shard 0's call) instead of before the shards start (HammerDB's ramp-up)."""
        return False

    def run_client(self, w: W, ctx: ThreadContext) -> Client:
        raise NotImplementedError

    def load_client(self, w: W, ctx: ThreadContext, start: int, count: int) -> Client:
        raise NotImplementedError

    def sample(self, w: W, n: int, rng: random.Random, thread: int = 0, threads: int = 1) -> list[str]:
        """A dry run (``dbswarm validate --sample N``): lines describing the first ``n``
        operations client thread ``thread`` would run, drawn from ``rng`` as its client draws
        them, without connecting; [] when the family has nothing to show."""
        return []

    def window_snapshot(self, binding: Any, w: W, phase: str) -> Optional[dict]:
        """Figures read from the database itself at both edges of a phase's measured window:
        an un-sharded step on one connection (``binding``, connected), before the phase's
        shards start and again after they have all ended (TPC-C: ``sum(d_next_o_id)``, the
        New-Order count HammerDB's NOPM is). Its numbers' after - before is what the phase
        result has under ``server.family`` and hands to ``phase_summary`` as ``window["family"]``;
        anything else in it (lists, maps: TPC-C's d_next_o_id per district) stays in the edge
        document, and the start edge's whole snapshot reaches ``phase_summary`` as
        ``window["family_start"]``. None: nothing."""
        return None

    def engine_problems(self, w: W, engine: Engine) -> list[tuple[tuple, str]]:
        """What of the workload this engine (``bindings.Engine``) cannot run, each as (the field's
        location in the workload, e.g. ("transactions", "pay", "statements", 0, "sql"), why):
        validation names those fields instead of ``target.engine`` alone; []: none."""
        return []

    def checks_statements(self, w: W) -> bool:
        """Whether ``check_statements`` has statements to check for this workload (when not,
        validate and the plan step do not connect for it)."""
        return False

    def check_statements(self, binding: Any, w: W, temporary: bool = False) -> list[str]:
        """The workload's statements prepared on ``binding`` (connected), none run: a problem
        ("workload.<field path>: the server's message") per statement the server rejects; []
        when all were accepted. ``temporary``: the tables the workload creates do not exist
        yet; made as the session's temporary tables first (``dbswarm validate``)."""
        return []

    def client_statements(self, w: W, phase: str, measurement: Measurement) -> Optional[dict]:
        """What the client sent, in the server counters' terms (``statements``,
        ``transactions``), for the client/server cross-check; None: not comparable."""
        return None

    def window_client_statements(self, w: W, phase: str, measurement: Measurement, window: dict) -> Optional[dict]:
        """``client_statements`` over the window as it was read (``window``: window_deltas'; its
        ``after_warmup_s`` set when the start edge was read as the warm-up ended)."""
        return self.client_statements(w, phase, measurement)

    def error_hint(self, w: W, phase: str, op: str, kind: str, name: str) -> Optional[str]:
        """What the user should change when ``op`` failed with this error class above the
        threshold (shown beside the problem in the result and summary); None: nothing to say."""
        return None

    # -- results -------------------------------------------------------------------------
    def read_operations(self, w: W) -> tuple[str, ...]:
        """The operations (their names in result.json's ``operations``) that only read: a
        phase's ``read_latency`` merges their histograms, and the nightly verdict judges it
        (``read_p99_us``). A transaction that writes nothing is a read."""
        return ()

    def write_operations(self, w: W) -> tuple[str, ...]:
        """The operations that write (a load's INSERT; a transaction that writes anything): a
        phase's ``write_latency`` and the verdict's ``write_p99_us``. An operation in neither
        list is in no merged latency (the contract suite requires every one in a list)."""
        return ()

    def phase_summary(self, w: W, phase: str, measurement: Measurement, duration: float,
                      window: Optional[dict] = None) -> Optional[dict]:
        """Added to a merged phase result under the family's name (None: nothing).
        ``window``: {"seconds": the window's length, "family": window_snapshot's deltas,
        "family_start": the start edge's window_snapshot as read, "edges_at": [start, end] wall
        times, "server": the server counters' deltas, "after_warmup_s": set when the start edge
        was read as the warm-up ended} when both edges were read, else None."""
        return None

    def report_tables(self, runs: list[dict]) -> str:
        """Markdown tables of this family's runs of a result, for summary.md and report.html."""
        return ""

    def csv_fields(self) -> list[str]:
        """Extra columns of result.csv for this family's runs (prefixed with the family's name),
        added after the common ones when the result holds a run of the family."""
        return []

    def csv_values(self, run: dict, phase: str, result: dict) -> dict:
        """Values of ``csv_fields`` for the rows of one phase (``result``: the phase's merged
        result) of one of this family's runs (``run``: result.json's run)."""
        return {}


def register(family: Family[Any]) -> Family[Any]:
    """Make a family known: ``families.register(MyFamily())`` in its module."""
    if not family.name or not getattr(family, "model", None):
        raise FamilyError(f"{type(family).__name__}: a family needs a name and a model")
    if family.name in _REGISTRY:
        raise FamilyError(f"workload family {family.name!r} is registered twice")
    if family.requires == "sql" and not family.dialects:
        raise FamilyError(f"family {family.name!r} requires sql: it needs dialects, the SQL dialects its "
                          "statements are written in (e.g. dialects = ('postgresql', 'mysql'))")
    tag = family.model.model_fields.get("family")
    if tag is None or tag.default != family.name:
        raise FamilyError(f"family {family.name!r}: its model needs a field family = {family.name!r}")
    _REGISTRY[family.name] = family
    return family


def _load_all() -> None:
    for name, module in _BUILTIN.items():
        if name not in _REGISTRY:
            importlib.import_module(module)
    load_plugins()


def get(name: str) -> Family[Any]:
    if name not in _REGISTRY:
        module = _BUILTIN.get(name)
        if module is not None:
            importlib.import_module(module)
        else:
            load_plugins()
    fam = _REGISTRY.get(name)
    if fam is None:
        raise FamilyError(f"unknown family {name!r}; expected one of {', '.join(names())}")
    return fam


def names() -> list[str]:
    """Built-in families first, in a fixed order (whatever was imported first), then plugins'."""
    _load_all()
    return [n for n in _BUILTIN if n in _REGISTRY] + [n for n in _REGISTRY if n not in _BUILTIN]


def all_families() -> list[Family[Any]]:
    return [_REGISTRY[n] for n in names()]


def sleep_unless_stopped(seconds: float, should_stop: Callable[[], bool]) -> None:
    """A client's think or keying time, slept in slices of at most 0.2 s so that a stop (the
    phase's end, an interrupt) is heard within that: families' clients pause with it."""
    end = time.perf_counter() + seconds
    while not should_stop():
        left = end - time.perf_counter()
        if left <= 0:
            return
        time.sleep(min(left, 0.2))
