"""The documents that travel between the campaign's steps, typed: the plan (plan.json) with
its runs and shards, the events the state machine sends the functions, a shard's result
file, and the campaign result (result.json, whose JSON Schema is published beside the
campaign's: ``schema/result.schema.json``).

Each is a pydantic model: ``Model.of(dict)`` reads one (a clear error naming the field when
it is not what it should be), ``.to_dict()`` writes it. Stored documents carry a
``schema_version``; a reader refuses a newer one than it knows instead of misreading it.
"""
from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from dbswarm.errors import DbswarmError

PLAN_SCHEMA_VERSION = 1
SHARD_SCHEMA_VERSION = 1
RESULT_SCHEMA_VERSION = 1


class DocumentError(DbswarmError):
    """A document or event is not what the step expects."""


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @classmethod
    def of(cls, data: Any) -> Any:
        if isinstance(data, cls):
            return data
        try:
            return cls.model_validate(data)
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
                                 for e in err.errors()[:5])
            raise DocumentError(f"{cls.__name__}: {problems}") from None

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")


def _version(known: int) -> Any:
    def check(cls: Any, v: Any) -> Any:
        if v > known:
            raise ValueError(f"schema_version {v} is newer than this dbswarm reads ({known}): upgrade dbswarm")
        return v
    return field_validator("schema_version")(classmethod(check))


# ---- the plan -----------------------------------------------------------------------------------

class ShardPlan(_Doc):
    index: int
    threads: int
    thread_offset: int = Field(description="global index of the shard's first client thread")
    load_start: int = Field(description="first unit of its threads' load (a key number, a global row)")
    load_count: int
    operationcount: int = Field(description="operations / events of its threads (see the run's operation_total)")
    target: Optional[float] = Field(None, description="operations (events) per second of this shard; None: unthrottled")
    seed: int = Field(description="the shard's own seed (its client threads derive theirs from the run's seed and "
                      "their global index, so a thread draws the same whatever the shard layout)")
    thread_ops: list[int] = Field(default_factory=list)
    thread_load: list[list[int]] = Field(default_factory=list, description="[start, count] per thread")


class RunPlan(_Doc):
    index: int
    run_id: str
    axes: dict[str, Any] = Field(default_factory=dict)
    target: dict[str, Any] = Field(description="the run's target, no secret (a password is a reference)")
    workload: dict[str, Any] = Field(description="the family's complete workload model")
    family: str
    workload_name: str
    seed: int = Field(description="derived from the campaign seed and the run's index; thread t of the run "
                      "draws from derive_seed(seed, phase, t), its stream continued across segments")
    is_real_database: bool = True
    operation_total: int = Field(0, description="the run phase's count limit over all threads (0: none)")
    threads: int
    shard_count: int
    map_mode: Literal["INLINE", "DISTRIBUTED"]
    shards: list[ShardPlan]
    cell: Optional[str] = Field(None, description="repeat: the matrix cell this run measures again")
    arm: Optional[str] = Field(None, description="repeat: candidate | baseline (the baseline configuration)")
    repeat: Optional[int] = Field(None, description="repeat: 1..count")
    search_step: Optional[dict[str, Any]] = Field(None, description="search: the step this run is "
                                                  "({cell, step, key, value})")
    fanout: Optional[dict[str, Any]] = Field(None, description="threads_per_shard auto: how the shards were sized "
                                             "(threads per shard, shards and CPUs needed, note)")
    client_model: Literal["threads", "multiplexed"] = Field("threads", description="fanout.client_model: how a "
                                                            "shard drives its connections in the run phase "
                                                            "(auto resolved by the plan)")

    @property
    def engine(self) -> str:
        return self.target["engine"]


class Plan(_Doc):
    schema_version: int = PLAN_SCHEMA_VERSION
    kind: Literal["dbswarm-plan"] = "dbswarm-plan"
    campaign_id: str
    name: str
    seed: int
    phases: list[str]
    runs: list[RunPlan]
    max_error_rate: float = Field(0.01, description="results.max_error_rate of the campaign")
    start_lead_s: Optional[float] = Field(None, description="fanout.start_lead_s of the campaign (None: the "
                                          "runner's lead)")
    metrics: Optional[dict[str, Any]] = Field(None, description="results.metrics of the campaign (passwords as "
                                              "references): the shards push live figures there")
    _check_version = _version(PLAN_SCHEMA_VERSION)

    def run(self, run_id: str) -> RunPlan:
        for run in self.runs:
            if run.run_id == run_id:
                return run
        raise DocumentError(f"run {run_id!r} is not in the plan of {self.campaign_id}")


# ---- the events the state machine sends the functions ----------------------------------------------
# (the state machine passes JSONPath results: absent optional values arrive as null)

class _Event(_Doc):
    model_config = ConfigDict(extra="ignore")  # Step Functions may add context fields
    store: str
    campaign_id: str


class PrepareEvent(_Event):
    run_id: str
    stage: Literal["before_load", "after_load", "after_run", "cleanup"]


class CheckEvent(_Event):
    """One call of a range of a stage's consistency check, or the merge of its ranges (``checks``)."""
    run_id: str
    stage: Literal["after_load", "after_run"]
    range: int = Field(0, ge=0)
    max_call_seconds: Optional[float] = Field(None, gt=0)


class ShardEvent(_Event):
    """One call of one shard's phase (the worker function)."""
    run_id: str
    phase: Literal["load", "run"]
    shard: int = Field(ge=0)
    start_at: Optional[float] = None
    checkpoint: Optional[dict[str, Any]] = None
    max_call_seconds: Optional[float] = Field(None, gt=0)


class ShardFailureEvent(_Event):
    """A shard that failed for good: the reason is kept in the results store."""
    run_id: str
    phase: Literal["load", "run"]
    shard: int = Field(ge=0)
    error: Any = None


class ShardAnswer(_Doc):
    """What a worker call returns to the state machine (small: the data is in the store)."""
    run_id: str
    phase: str
    shard: int
    status: Literal["done", "continue"]
    checkpoint: Optional[dict[str, Any]] = None
    result_key: str
    segment: int
    ops: int
    errors: int


# ---- a shard's result file ---------------------------------------------------------------------------

class ShardBinding(_Doc):
    engine: str
    is_real_database: bool
    settings: dict[str, Any] = Field(default_factory=dict)


class ShardResult(_Doc):
    """runs/<run>/<phase>/shard-<i>.json: what one shard measured, all its calls together."""
    model_config = ConfigDict(extra="allow")
    schema_version: int = SHARD_SCHEMA_VERSION
    kind: Literal["dbswarm-shard-result"] = "dbswarm-shard-result"
    campaign_id: str
    run_id: str
    phase: str
    shard: int
    threads: int
    binding: ShardBinding
    started_at: float
    start_skew_s: Optional[float] = None
    ended_at: Optional[float] = None
    status: Optional[Literal["done", "continue"]] = None
    segments: list[dict[str, Any]] = Field(default_factory=list, description="one per call")
    measurement: dict[str, Any] = Field(
        description="measure.Measurement.to_dict(): histograms, counters, timeline, records")
    _check_version = _version(SHARD_SCHEMA_VERSION)


# ---- the campaign result (result.json): published as a JSON Schema ----------------------------------

class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")  # results may gain keys; readers ignore what they do not know


class PhaseShards(_Open):
    expected: int
    complete: list[int]
    partial: list[dict[str, Any]]
    missing: list[dict[str, Any]]


class PhaseResult(_Open):
    phase: str
    status: Literal["complete", "complete_with_errors", "incomplete", "interrupted", "partial", "missing", "not run"]
    problems: Optional[list[str]] = Field(None, description="why the phase is incomplete: client threads that "
                                          "ended on errors, a load short of its planned records, a dead tail")
    metrics_export: Optional[dict[str, Any]] = Field(None, description="results.metrics: what the shards pushed "
                                                     "live (pushes, failed, samples) and, when a push failed, why; "
                                                     "the figures here are complete either way")
    lost_seconds: Optional[float] = Field(None, description="seconds of measurement lost by shard calls that died "
                                          "(between their last persisted state and their retry)")
    stalls: Optional[dict[str, Any]] = Field(
        None, description="client threads that stopped making progress (a run phase: no call completed for DBSWARM_STALL_S, "
        "default 5 s, without an error; or abandoned inside a call at the give-up): threads, seconds (at least one "
        "stalled, within the phase), per_shard {shard: [{thread, from, to, seconds, stall_s, abandoned}]}; the phase "
        "is then incomplete and its steady window leaves their seconds out (steady.stalled_seconds_left_out)")
    paused_s: Optional[float] = Field(None, description="seconds between started_at and ended_at in which no shard "
                                      "measured (an interrupted phase resumed later): not in duration_s, so not in "
                                      "any rate")
    error_rate: Optional[float] = Field(None, description="failed calls / all calls (a load's duplicate keys, "
                                        "expected when a load resumes, not counted)")
    error_problems: Optional[list[str]] = Field(None, description="why the phase is complete_with_errors: the "
                                                "operations and error classes above the threshold")
    shards: Optional[PhaseShards] = None
    binding_settings: Optional[dict[str, Any]] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    duration_s: Optional[float] = None
    operations_total: Optional[int] = None
    errors_total: Optional[int] = None
    ops_per_s: Optional[float] = None
    steady: Optional[dict[str, Any]] = Field(None, description="window [start, end) epoch seconds, seconds, ops_per_s")
    throughput: Optional[float] = Field(None, description="steady-state ops/s, else the whole phase's")
    throughput_basis: Optional[str] = None
    throughput_caveat: Optional[str] = Field(
        None, description="why the throughput is not what every shard did at once, when it is not: the start "
        "skew was a large share of the phase, or no steady window exists (summary.md says it first)")
    latency_basis: Optional[str] = Field(None, description="service time only (closed loop), or also the "
                                         "response time from the intended start (a target rate)")
    schedule: Optional[dict[str, Any]] = Field(None, description="a target rate's schedule: target_per_s, "
                                               "steps, late_starts (steps that began over an interval late)")
    operations: Optional[dict[str, dict[str, Any]]] = Field(
        None, description="per operation: count, calls, not_found, errors, avg/min/max and percentiles in µs "
        "(service time), ops_per_s, and with a target rate 'intended': the same from the intended start")
    read_latency: Optional[dict[str, Any]] = Field(
        None, description="the merged latency of the operations the family declares reads (YCSB's READ and SCAN, "
        "TPC-C's Order-Status and Stock-Level, a sysbench event that writes nothing): what the nightly verdict's "
        "read_p99_us judges; null when the phase has none")
    write_latency: Optional[dict[str, Any]] = Field(
        None, description="the same for the operations the family declares writes (a load's INSERT, YCSB's "
        "UPDATE, a transaction that writes anything): the verdict's write_p99_us")
    latency_operations: Optional[dict[str, list[str]]] = Field(
        None, description="{read: [...], write: [...]}: the phase's operations merged into read_latency and "
        "write_latency, as the family declares them (Family.read_operations, write_operations)")
    errors: Optional[dict[str, int]] = Field(None, description='"OP:kind:name" -> count')
    counters: Optional[dict[str, int]] = None
    mix: Optional[dict[str, float]] = None
    warmup: Optional[dict[str, Any]] = Field(None, description="a run phase's warm-up (warmuptime): seconds, "
                                             "operations_total and per-operation figures, kept out of 'operations'")
    operations_after_warmup: Optional[int] = Field(None, description="operations_total minus the warm-up's")
    client_cpu_s: Optional[float] = Field(None, description="CPU seconds the shard processes spent over the "
                                          "phase's calls (all client threads; process start-up not included)")
    server: Optional[dict[str, Any]] = Field(
        None, description="the server's own counters over the phase's measured window (read before the shards "
        "started and after they all ended): window_s, counters (after - before), family (the family's figures "
        "from the database, e.g. TPC-C New-Orders), client (the same figures as the client counted them), "
        "cross_check {figure: {client, server, ratio}}, warnings (what could not be read)")
    histograms: Optional[dict[str, str]] = Field(None, description="HdrHistogram, compressed base64, per operation")
    timeline: Optional[dict[str, Any]] = Field(None, description="per wall-clock second: ops per type, errors, latency sums")
    intervals: Optional[dict[str, Any]] = Field(
        None, description="latency percentiles over time, per report_interval (aligned on the epoch): interval_s, "
        "start (epoch second of the first), intervals, all {count, p50_us ... max_us: one value per interval} and "
        "by_operation {op: the same}; merged exactly across shards from per-interval histograms")
    shard_series: Optional[dict[str, Any]] = Field(
        None, description="each shard's operations per step (the report's per-shard chart): start (epoch second), "
        "step_s (whole seconds, chosen so that shards x steps stays within 20,000 numbers), ops {shard: [count per "
        "step]}")
    client: Optional["ClientHealth"] = Field(None, description="the load generator's own health over the phase "
                                             "(docs/client-health.md): was the client, not the database, what the "
                                             "figures show?")


class ClientHealth(_Open):
    """A phase's ``client``: its shards' load-generator signals and verdict (measure/headroom.py)."""
    verdict: Literal["ok", "near", "bound", "contended", "unmeasured"] = Field(
        description="the worst shard's: bound (the load generator was the bottleneck: a signal at its bound "
        "threshold), contended (bound, but the shards used little of their CPU and waited for CPUs other "
        "processes held: the host's contention, whichever client runs), near (a signal at its near threshold), ok, unmeasured (no shard recorded the figures)")
    reason: str = Field(description="which shards, how much of each latency is client scheduling, and what to do")
    cpu_share: Optional[float] = Field(None, description="the largest shard's process CPU time over the CPU it may "
                                       "use (affinity, cgroup quota or Lambda memory; at most one CPU per process)")
    loop_share: Optional[float] = Field(None, description="the largest shard's share of its threads' time outside "
                                        "their timed calls (and, at a target rate, their pacing sleeps)")
    runqueue_wait_us_per_op: Optional[float] = Field(None, description="the client threads' run-queue wait "
                                                     "(/proc/thread-self/schedstat) per operation, all shards")
    runqueue_share: Optional[float] = Field(None, description="the largest shard's run-queue wait over its "
                                            "threads' time")
    wakeup_delay_us: Optional[float] = Field(None, description="the largest shard's mean wake-up delay: how late "
                                             "a sleeping thread of the shard runs Python again (a CPU, the "
                                             "interpreter lock), probed 20 times a second")
    wakeup_share: Optional[float] = Field(None, description="the largest shard's wake-up delay over its mean "
                                          "latency")
    lock_wait_us: Optional[float] = Field(None, description="the largest shard's mean wait for the interpreter "
                                          "lock of its wake-up probe (its wake-up delay less its own run-queue wait)")
    lock_wait_intervals: Optional[float] = Field(None, description="the largest shard's lock wait over the "
                                                 "interpreter's switch interval (5 ms): one or more, the process's "
                                                 "Python ran without pause")
    server_vs_client_latency: Optional[dict[str, Any]] = Field(
        None, description="the server's own execution time (pg_stat_statements, performance_schema digests, "
        "serverStatus opLatencies) beside the client's mean latency, per operation and overall, same window; "
        "an operation whose statements the server did not count has server_missing instead")
    waited_for_others: Optional[bool] = Field(
        None, description="true where every judged shard used less than its cpu_share near threshold of "
        "the CPU it may use while its run-queue or wake-up signal reached a threshold: its threads waited for "
        "CPUs other processes held (the server on the same host, other programs, other shards); the reason "
        "says so")
    server_time_missing: Optional[str] = Field(
        None, description="why server_vs_client_latency is empty: the server keeps no time per statement "
        "(MariaDB's performance_schema off, PostgreSQL without pg_stat_statements, a MongoDB-compatible "
        "server without serverStatus opLatencies, such as FerretDB)")
    bound_shards: list[int] = Field(default_factory=list)
    near_shards: list[int] = Field(default_factory=list)
    model: Optional[Literal["threads", "multiplexed", "mixed"]] = Field(
        None, description="how the shards drove their connections (fanout.client_model): a thread each, one thread "
        "multiplexing them (engine.mux), or mixed (some shards or calls fell back to threads)")
    thresholds: dict[str, list[float]] = Field(default_factory=dict, description="[near, bound] per signal")
    strict: Optional[bool] = Field(None, description="results.strict_client_health: a contended phase fails "
                                   "the run (exit 9)")
    allowed: bool = Field(False, description="a bound verdict does not fail the run (results.allow_client_bound, "
                          "or the noop engine by default)")
    allowed_by: Optional[str] = None
    max_threads_per_shard: Optional[int] = Field(None, description="near or bound: the threads per shard under "
                                                 "which the signals would be below their near thresholds (scaled)")
    client_scheduling_us: Optional[float] = Field(None, description="near or bound: up to this many µs of each "
                                                  "latency is client scheduling")
    shards: dict[str, dict[str, Any]] = Field(default_factory=dict, description="per shard: its figures, verdict "
                                              "and reason")
    series: Optional[dict[str, Any]] = Field(None, description="per shard (the first 50): per-second cpu_share, "
                                             "wakeup_delay_us, runqueue_wait_s (the client-health chart)")


class RunResult(_Open):
    index: int
    run_id: str
    axes: dict[str, Any]
    target: dict[str, Any]
    workload: dict[str, Any] = Field(description="family, name and the family's workload keys")
    threads: int
    shard_count: int
    phases: dict[str, PhaseResult]
    refused: Optional[str] = Field(None, description="why the run (or its phases from one on) did not run: the "
                                   "campaign lock refused it (its tables are another campaign's), or the server "
                                   "admits fewer client connections than a phase opens; the campaign is then failed")
    checks: Optional[dict[str, dict[str, Any]]] = Field(
        None, description="the family's consistency checks by un-sharded stage (after_load, after_run): "
        "{passed, conditions, failures, ...}; a failed one makes the campaign check_failed")
    preparation: Optional[dict[str, Any]] = Field(
        None, description="what the binding did to the target before the load beyond the tables (MongoDB: "
        "sharding, FerretDB: its index), and skipped: the steps asked for and not done (summary.md says so)")


class CampaignResult(_Open):
    """result.json"""
    schema_version: int
    kind: Literal["dbswarm-result"]
    campaign_id: str
    name: str
    seed: int
    created_at: float
    status: str = Field(description="complete | complete_with_errors | check_failed (a consistency check of the "
                        "database failed after a stage; the measurement is complete) | incomplete | interrupted | "
                        "partial (| failed, set by the runner)")
    campaign: Optional[dict[str, Any]] = Field(None, description="the campaign as submitted, secrets redacted")
    failure: Optional[str] = Field(None, description="why the campaign stopped early: the error of the step that "
                                   "failed (\"OperationalError: connection failed: ... Connection refused\"), "
                                   "secrets redacted; summary.md's status line and report.html's overview say it")
    runs: list[RunResult]
    missing_shards: list[dict[str, Any]]
    adaptive: Optional[dict[str, Any]] = Field(None, description="fanout.adaptive: per cell, its attempts (runs "
                                               "with twice the shards while the client verdict was bound) and what "
                                               "it took (docs/client-health.md)")
    cost: Optional[dict[str, Any]] = Field(None, description="estimate: what the plan step estimated the campaign "
                                           "would use in the cloud and cost (cost.estimate); measured: the worker "
                                           "calls and seconds the shards used")


def result_json_schema() -> dict:
    schema = CampaignResult.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "dbswarm campaign result (result.json)"
    return schema
