"""The campaign file: validated pydantic models, the JSON Schema they export, and the
expansion of the matrix into runs.

Every problem is reported as "field.path: what is wrong"; unknown keys and literal
passwords are errors. Workload models belong to their families (``dbswarm.families.base``);
engines, their aliases and capabilities to the binding registry (``dbswarm.bindings``).
"""
from __future__ import annotations

import itertools
import json
import math
import os
import re
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Self, Union
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from dbswarm import bindings
from dbswarm.campaign.fanout_auto import auto_plan
from dbswarm.campaign.peak import Search
from dbswarm.credentials import secrets
from dbswarm.credentials.secrets import in_cloud
from dbswarm.errors import CampaignError, FamilyError, SecretError, did_you_mean
from dbswarm.families import base as families

PHASES = ("prepare", "load", "run", "cleanup")
from dbswarm.campaign import consistency
from dbswarm.campaign.bounds import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    BoundedComposer,
    document_size_problem,
    read_text,
    shape_problems,
)
from dbswarm.campaign.bounds import shown as bounds_shown
from dbswarm.campaign.limits import check_campaign_size, threads_per_shard_problems
from dbswarm.campaign.memory import memory_problems
from dbswarm.credentials.redact import (
    SECRET_HINT,
    option_password_problems,
    redact_doc,
    reference_problems,
    url_password_problems,
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class SecretRef(_Strict):
    """Where a credential lives; exactly one of the three keys."""
    secret: Optional[str] = Field(None, description="AWS Secrets Manager secret name or ARN")
    env: Optional[str] = Field(None, description="environment variable holding the value")
    file: Optional[str] = Field(None, description="file whose content (stripped) is the value")

    @model_validator(mode="after")
    def _exactly_one(self) -> Any:
        given = [k for k in ("secret", "env", "file") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError("give exactly one of secret, env or file")
        problems = reference_problems(self.model_dump(exclude_none=True), "password")
        if problems:
            raise ValueError("; ".join(p.removeprefix("password.") for p in problems))
        return self

    def describe(self) -> Any:
        for k in ("secret", "env", "file"):
            if getattr(self, k):
                return {k: getattr(self, k)}


class Target(_Strict):
    engine: str = Field("sqlite", description="|".join(bindings.names()) + " (aliases: " + ", ".join(
                        bindings.aliases()) + "); sqlite is the embedded default, noop measures only the generator")
    url: Optional[str] = Field(None, description="connection URL without password; sqlite: a file path "
                               "(default: a file under the campaign's results folder)")
    password: Optional[SecretRef] = Field(None, description="secret reference, never a literal")
    label: Optional[str] = Field(None, description='instance class as white papers name it, e.g. "4 vCPUs 16 GB"')
    options: dict[str, Any] = Field(default_factory=dict, description="engine options (see docs/targets.md)")

    @field_validator("engine", mode="before")
    @classmethod
    def _engine(cls, v: Any) -> Any:
        name = bindings.canonical(v)
        if name is None:
            raise ValueError(f"unknown engine {v!r}; expected one of {', '.join(bindings.names())}")
        return name

    @field_validator("password", mode="before")
    @classmethod
    def _no_literal_password(cls, v: Any) -> Any:
        if isinstance(v, (str, int, float)):
            raise ValueError(SECRET_HINT)
        return v

    @field_validator("url")
    @classmethod
    def _url(cls, v: Any, info: ValidationInfo) -> Any:
        problems = url_password_problems(v) if v else []
        if problems:
            raise ValueError(f"{'; '.join(problems)}: {SECRET_HINT}")
        name = info.data.get("engine")
        if name is None:  # the engine was refused: that is the error to report
            return v
        engine = bindings.engine(name)
        if not v and engine.needs_url:
            raise ValueError(f"required for engine {engine.name}, e.g. {engine.url_example}")
        if v and engine.url_schemes:
            scheme = urlsplit(v).scheme if "://" in v else None
            if scheme not in engine.url_schemes and not (scheme is None and engine.name == "postgresql" and "=" in v):
                raise ValueError(f"{v.split('://')[0] + '://' if scheme else repr(v)} is not a {engine.name} URL; "
                                 f"expected {' or '.join(s + '://' for s in engine.url_schemes)}, e.g. "
                                 f"{engine.url_example}")
        return v

    @field_validator("options")
    @classmethod
    def _no_password_option(cls, v: Any) -> Any:
        problems = option_password_problems(v)
        if problems:
            raise ValueError("; ".join(problems))
        return v

    @property
    def display(self) -> Any:
        return self.label or self.engine


class Fanout(_Strict):
    threads_per_shard: Optional[Union[Annotated[int, Field(ge=1)], Literal["auto"]]] = Field(
        None, description="client threads per shard; auto: as many as a shard's CPU carries with `headroom` "
        "(from the client's measured CPU per operation, per family and engine; docs/client-health.md)")
    headroom: float = Field(0.5, gt=0, le=1, description="threads_per_shard auto: the share of a shard's CPU its "
                            "client threads may need")
    adaptive: bool = Field(False, description="a run whose load generator was the bottleneck (client verdict "
                           "bound) is run again with twice the shards until it is not (docs/client-health.md)")
    adaptive_max: int = Field(3, ge=1, le=10, description="adaptive: at most this many doublings per run")
    shards: Optional[int] = Field(None, ge=1, le=10_000)
    max_shards: int = Field(1000, ge=1, le=10_000)
    client_model: Literal["auto", "threads", "multiplexed"] = Field(
        "auto", description="how a shard drives its connections in the run phase: a thread each (threads), or "
        "one thread multiplexing them over the driver's split calls (multiplexed: YCSB's operations and "
        "sysbench's OLTP tests on PostgreSQL with prepared statements and on MariaDB/MySQL with mysqlclient, "
        "unpaced; anything else keeps a thread per connection); auto: multiplexed where each shard holds 64 or "
        "more connections and the database server is on this machine (a loopback address, localhost or a unix "
        "socket: it shares the client's CPUs), else threads. docs/concurrency.md")
    start_lead_s: Optional[float] = Field(
        None, gt=0, le=600, description="seconds from arming a phase to its shards' start barrier (every shard "
        "begins at that instant). Default: the runner's lead, which locally grows with the shards (each is an OS "
        "process started on this machine: 0.5 s + 0.9 CPU-seconds per shard over the CPUs), in the cloud 2 s")

    @model_validator(mode="after")
    def _one(self) -> Any:
        if self.threads_per_shard and self.shards:
            raise ValueError("give threads_per_shard or shards, not both")
        if self.shards and self.shards > self.max_shards:
            raise ValueError(f"shards ({self.shards}) exceeds max_shards ({self.max_shards}); raise max_shards")
        return self


class VerdictSettings(_Strict):
    """How the compare step judges a run (docs/peak-search-and-verdicts.md: "How the verdict decides")."""
    alpha: float = Field(0.05, gt=0, lt=0.5, description="false-alarm budget of one comparison (all metrics and "
                         "runs together: Holm's correction; split in two when the history's change points are "
                         "judged too)")
    min_effect: float = Field(0.02, ge=0, description="a significant change smaller than this fraction is not a "
                              "regression")
    history: bool = Field(True, description="append this campaign's figures to history/<name>/ and judge "
                          "against that series")
    history_runs: int = Field(60, ge=3, le=1000, description="the newest campaigns of the history read")
    recent: int = Field(5, ge=1, description="change points among the newest this many campaigns (this one "
                        "included) are marked recent in the result; only one on this campaign's own runs, "
                        "with the later segment worse, fails the verdict")
    fail_inconclusive: bool = Field(False, description="an inconclusive verdict (too little history or baseline to "
                                    "judge by) fails the execution as a regression does (Step Functions error "
                                    "dbswarm.Inconclusive, dbswarm run exits 4): a nightly job that must not pass "
                                    "blind")


def _pair(name: str, near: float, bound: float) -> Any:
    return Field((near, bound), description=f"[near, bound] of {name}")


class ClientThresholds(_Strict):
    """When a shard's load generator is near its limit or the bottleneck (the client verdict;
    docs/client-health.md): [near, bound] per signal, each a fraction (the lock wait: switch intervals)."""
    cpu_share: tuple[float, float] = _pair("the shard process's CPU time over the CPU it may use", 0.7, 0.9)
    loop_share: tuple[float, float] = _pair("the client threads' time outside their timed calls", 0.25, 0.5)
    wakeup_share: tuple[float, float] = _pair("the wake-up delay (a CPU and the interpreter lock) over the mean "
                                              "latency (judged at 4 threads per shard or more)", 0.25, 0.5)
    runqueue_share: tuple[float, float] = _pair("the client threads' run-queue wait over their time", 0.1, 0.3)
    lock_wait_intervals: tuple[float, float] = _pair(
        "the wake-up probe's wait for the interpreter lock (its wake-up delay less its run-queue wait) in "
        "switch intervals (sys.getswitchinterval, 5 ms; judged at 4 threads per shard or more)", 0.5, 1.0)

    @model_validator(mode="after")
    def _order(self) -> Any:
        for name in type(self).model_fields:
            near, bound = getattr(self, name)
            if not 0 < near <= bound:
                raise ValueError(f"{name}: [near, bound] must satisfy 0 < near <= bound, got [{near:g}, {bound:g}]")
        return self


class PrometheusExport(_Strict):
    remote_write: str = Field(description="the remote-write URL, e.g. http://prometheus:9090/api/v1/write "
                              "(Prometheus with --web.enable-remote-write-receiver, Mimir, Thanos, VictoriaMetrics)")
    username: Optional[str] = Field(None, max_length=256, description="HTTP basic auth user")
    password: Optional[SecretRef] = Field(None, description="HTTP basic auth password: a reference, never a literal")
    timeout_s: float = Field(2.0, gt=0, le=60, description="seconds a push may take; a slow or absent endpoint "
                             "never blocks or fails the campaign")
    labels: dict[str, str] = Field(default_factory=dict, description="extra labels on every series")

    @field_validator("remote_write")
    @classmethod
    def _url(cls, v: Any) -> Any:
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http(s):// URL, got {v[:80]!r}")
        if parts.password or parts.username:
            raise ValueError("no credentials in the URL: give username and password (a reference)")
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: Any) -> Any:
        for k, val in v.items():
            if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}", k) or k.startswith("__") or k in METRIC_LABELS:
                raise ValueError(f"label {k[:40]!r}: a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not "
                                 f"__*, not one of dbswarm's: {', '.join(METRIC_LABELS)})")
            if len(val) > 256:
                raise ValueError(f"label {k}: at most 256 characters, got {len(val):,}")
        return v

    @model_validator(mode="after")
    def _basic_auth(self) -> Self:
        if (self.username is None) != (self.password is None):
            given, missing = ("username", "password") if self.password is None else ("password", "username")
            raise ValueError(f"{given} without {missing}: HTTP basic auth takes both (or neither)")
        return self


METRIC_LABELS = ("campaign", "run", "phase", "shard", "operation", "engine", "family", "quantile", "kind",
                 "error_class", "counter")


class Metrics(_Strict):
    prometheus: Optional[PrometheusExport] = Field(None, description="push live per-second figures to a "
                                                   "Prometheus remote-write endpoint (docs/metrics.md)")


class Results(_Strict):
    metrics: Metrics = Field(default_factory=Metrics, description="live metrics while the campaign runs")
    location: str = Field("./results", description="local folder or s3://bucket/prefix")

    @field_validator("location")
    @classmethod
    def _location(cls, v: Any) -> Any:
        scheme = v.split("://", 1)[0] if "://" in v else None
        if scheme not in (None, "s3", "file") or (scheme == "s3" and not v[len("s3://"):].split("/")[0]):
            raise ValueError(f"unsupported location {v!r}: a folder or s3://bucket/prefix")
        return v
    baseline: Optional[str] = Field(None, pattern=r"^[A-Za-z0-9_.-]+$",
                                    description="compare with baselines/<name>.json")
    save_baseline: bool = Field(False, description="store this result as the named baseline")
    thresholds: dict[str, float] = Field(default_factory=dict,
                                         description="metric -> allowed fractional regression")
    verdict: VerdictSettings = Field(default_factory=VerdictSettings)
    keep_data: bool = Field(True, description="sqlite: keep the database file after the campaign")
    max_error_rate: float = Field(0.01, ge=0, le=1, description="a phase whose failed calls exceed this fraction "
                                  "of its calls ends complete_with_errors (and dbswarm run exits 5): it measured "
                                  "something else than the workload")
    client_thresholds: ClientThresholds = Field(default_factory=lambda: ClientThresholds(),
                                                description="the load generator's health signals: [near, bound] "
                                                "per signal (docs/client-health.md)")
    allow_client_bound: Optional[bool] = Field(None, description="a phase whose load generator was the bottleneck "
                                               "(client verdict bound) makes dbswarm run exit 9 and is never a "
                                               "search's peak, unless true; default: false for a real database, "
                                               "true for the noop engine (it measures the load generator itself)")
    strict_client_health: bool = Field(False, description="a contended phase (client verdict contended: its shards "
                                       "used little of their CPU and waited for CPUs other processes held, such as "
                                       "the database server on the same host) makes dbswarm run exit 9 as a bound "
                                       "one does; by default it is said in one line, kept out of peaks and "
                                       "baselines, and fails nothing")


class RepeatBaseline(_Strict):
    target: Optional[dict[str, Any]] = Field(None, description="keys replacing the run's target's")
    workload: Optional[dict[str, Any]] = Field(None, description="workload keys replacing the run's")


class Repeat(_Strict):
    count: int = Field(ge=1, le=1000, description="each run of the matrix this many times")
    baseline: Optional[RepeatBaseline] = Field(None, description="a baseline configuration run before each "
                                               "repetition (interleaved: B A B A …); the verdict compares the two")


Phase = Literal["prepare", "load", "run", "cleanup"]
DEFAULT_PHASES: tuple[Phase, ...] = ("prepare", "load", "run")


class Campaign(_Strict):
    name: str = Field("campaign", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    seed: int = Field(0, ge=0)
    target: Target = Field(default_factory=Target)
    workload: dict[str, Any] = Field(default_factory=dict, description="defaults for every run")
    matrix: dict[str, list[Any]] = Field(default_factory=dict,
                                         description="axes whose cartesian product is the list of runs")
    fanout: Fanout = Field(default_factory=Fanout)
    phases: list[Literal["prepare", "load", "run", "cleanup"]] = Field(
        default_factory=lambda: list(DEFAULT_PHASES))
    results: Results = Field(default_factory=Results)
    max_cost: Optional[float] = Field(None, gt=0, description="refuse the campaign before anything runs when its "
                                      "cloud cost estimate (dbswarm validate shows it) exceeds this, in the price "
                                      "table's currency (USD)")
    repeat: Optional[Repeat] = Field(None, description="repeated measurement: an integer, or {count, baseline}")
    search: Optional[Search] = Field(None, description="peak search: step a workload key run after run until a "
                                     "stop rule fires (docs/peak-search-and-verdicts.md)")

    @field_validator("repeat", mode="before")
    @classmethod
    def _repeat_int(cls, v: Any) -> Any:
        return {"count": v} if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("results", mode="before")
    @classmethod
    def _results_str(cls, v: Any) -> Any:
        return {"location": v} if isinstance(v, str) else v

    @field_validator("phases")
    @classmethod
    def _phase_order(cls, v: Any) -> Any:
        if not v:
            raise ValueError("at least one phase")
        if len(set(v)) != len(v) or v != sorted(v, key=PHASES.index):
            raise ValueError(f"phases must be distinct and in the order {', '.join(PHASES)}")
        return v

    @model_validator(mode="after")
    def _adaptive_alone(self) -> Any:
        if self.fanout.adaptive and self.search:
            raise ValueError("fanout.adaptive and search: a peak search varies one key run after run; adapt its "
                             "shards in a campaign of its own")
        return self

    @field_validator("matrix")
    @classmethod
    def _axes(cls, v: Any) -> Any:
        for axis, values in v.items():
            if not values:
                raise ValueError(f"axis {axis!r} is empty")
        return v


class Run(BaseModel):
    """One element of the matrix: a target and a complete workload."""
    index: int
    run_id: str
    target: Target
    workload: Any   # the family's model (families.WorkloadModel)
    axes: dict[str, Any] = Field(default_factory=dict)
    cell: Optional[str] = None      # the matrix cell a repeated run measures again (its run_id without repeat)
    arm: Optional[str] = None       # candidate | baseline (repeat with a baseline configuration)
    repeat: Optional[int] = None    # 1..count
    seed_index: Optional[int] = None  # the cell's index: repetitions draw the same operations
    search_step: Optional[dict[str, Any]] = None  # a search's step: {cell, step, kind, key, value}


def _path(loc: Any) -> Any:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _messages(err: ValidationError, prefix: str = "", model: Any = None) -> Any:
    """Every problem of a pydantic error as "path: message"; an unknown key names the nearest
    valid one of its model (``model``: the validated model, default Campaign)."""
    out = []
    for e in err.errors():
        loc = [p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        path = _path([prefix] + loc if prefix else loc) if (prefix or loc) else "(top level)"
        msg = _choice_message(e) or e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key" + did_you_mean(loc[-1] if loc else "", _model_keys(model or Campaign, loc[:-1]))
        elif e["type"] == "missing":
            msg = "required"
        out.append(f"{path}: {msg}")
    return out


def _choice_message(e: Any) -> Optional[str]:
    """A refused choice (a Literal) as "Input should be 'zipfian', ..., got 'gauss'; did you mean ...":
    the value given echoed back (short, escaped) and the nearest valid one; None for other errors."""
    if e["type"] != "literal_error":
        return None
    expected = str((e.get("ctx") or {}).get("expected", ""))
    given = e.get("input")
    shown = bounds_shown(repr(given[:40] if isinstance(given, str) else given))[:60]
    return f"Input should be {expected}, got {shown}{did_you_mean(given, _QUOTED.findall(expected))}"


_QUOTED = re.compile(r"'([^']*)'")


def _model_keys(model: Any, loc: Any) -> list[str]:
    """The keys (field names and aliases) of the model found at ``loc`` under ``model``."""
    for part in loc:
        if not isinstance(part, str) or not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue  # a list index or a mapping key: the same model below it
        field = model.model_fields.get(part) or next(
            (f for f in model.model_fields.values() if f.alias == part), None)
        if field is None:
            return []
        candidates = [field.annotation]
        while candidates:
            t = candidates.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                model = t
                break
            candidates += [a for a in typing.get_args(t) if a is not type(None)]
        else:
            return []
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [n for name, f in model.model_fields.items() for n in (name, f.alias) if n]


def _workload_problems(data: Any) -> list[str]:
    """The workloads' own problems of a campaign whose top level is invalid (a bad name, an
    unknown key beside them), so that one validation reports them all: the workload and the
    matrix validated as they would be under a valid top level (targets left out)."""
    if not isinstance(data, dict):
        return []
    matrix = data.get("matrix")
    if isinstance(matrix, dict):
        matrix = {k: v for k, v in matrix.items() if k != "target"}
    stand_in = {"name": "x", "target": {"engine": "noop"}}
    for key in ("workload", "search", "repeat"):
        if key in data:
            stand_in[key] = data[key]
    if matrix:
        stand_in["matrix"] = matrix
    try:
        campaign = Campaign.model_validate(stand_in)
    except ValidationError as err:
        return [m for m in _messages(err) if m.startswith(("workload", "matrix"))]
    except Exception:
        return []
    try:
        expand_runs(campaign)
    except CampaignError as err:
        return [p for p in err.problems if p.startswith(("workload", "matrix"))]
    except Exception:
        return []
    return []


def _axis_value_path(axis: Any, i: int, key: Any = None) -> Any:
    return f"matrix.{axis}[{i}]" + (f".{key}" if key else "")


def expand_runs(campaign: Campaign) -> list[Run]:  # noqa: C901
    """Cartesian product of the matrix axes, first axis outermost, each validated in full."""
    axes = list(campaign.matrix.items())
    problems, runs = [], []
    file_problems: dict[tuple[str, str], list[str]] = {}
    combos = list(itertools.product(*[list(enumerate(vals)) for _, vals in axes])) if axes else [()]
    for index, combo in enumerate(combos):
        wl = dict(campaign.workload)
        origin = {k: f"workload.{k}" for k in wl}
        target: Optional[Target] = campaign.target
        target_path = "target"
        label = {}
        for (axis, _), (i, value) in zip(axes, combo):
            if axis == "target":
                try:
                    target = Target.model_validate(value if isinstance(value, dict) else {"engine": value})
                except ValidationError as err:
                    problems += _messages(err, _axis_value_path(axis, i), model=Target)
                    target = None
                target_path = _axis_value_path(axis, i)
                label[axis] = (target.display if target else str(value))
            elif axis == "workload":
                if not isinstance(value, dict):
                    problems.append(f"{_axis_value_path(axis, i)}: expected a mapping of workload keys")
                    continue
                if value.get("family", wl.get("family", families.DEFAULT)) != wl.get("family", families.DEFAULT):
                    # a different family: defaults it does not know are dropped
                    known = _family_keys(value["family"])
                    wl = {k: v for k, v in wl.items() if k in known}
                for k, v in value.items():
                    wl[k] = v
                    origin[k] = _axis_value_path(axis, i, k)
                label[axis] = _workload_label(value)
            else:
                wl[axis] = value
                origin[axis] = _axis_value_path(axis, i)
                label[axis] = value
        family = wl.get("family", families.DEFAULT)
        try:
            fam = families.get(family)
        except FamilyError:
            problems.append(f"{origin.get('family', 'workload.family')}: unknown family {family!r}; "
                            f"expected one of {', '.join(families.names())}")
            continue
        if isinstance(wl.get("file"), str):  # read as bounded as the campaign, before the family reads it
            where = origin.get("file", "workload.file")
            found = file_problems.setdefault((wl["file"], where), workload_file_problems(wl["file"], where))
            if found:
                problems += [p for p in found if p not in problems]
                continue
        try:
            workload = fam.workload(wl)
        except ValidationError as err:
            problems += _workload_errors(err, fam, family, origin, combo, axes)
            continue
        if target is None:
            continue
        mismatch = _workload_engine_mismatch(fam, workload, target, origin, wl)
        if mismatch:
            problems += mismatch
            continue
        engine_problem = _engine_problem(fam, family, workload, target, target_path)
        if engine_problem:
            problems.append(engine_problem)
            continue
        run_id = f"{index:03d}-" + "-".join(_slug(v) for v in label.values()) if label else f"{index:03d}"
        runs.append(Run(index=index, run_id=run_id[:80], target=target, workload=workload, axes=label))
    if campaign.repeat and campaign.search:
        problems.append("repeat: a search's steps are not repeated (give repeat or search, not both)")
    problems += warmup_problems(runs)   # of the runs that validated: named with the others' problems
    if campaign.search and runs:
        problems += search_key_problems(campaign.search.key, runs)
    if problems:
        raise CampaignError(sorted(set(problems), key=problems.index))
    if campaign.repeat:
        runs = repeat_runs(campaign, runs)
    return runs


def _workload_errors(err: ValidationError, fam: Any, family: str, origin: dict, combo: tuple, axes: list) -> list[str]:
    """A run's workload that did not validate: each error named by where its key came from (the
    workload or a matrix axis's value, ``origin``)."""
    problems = []
    for e in err.errors():
        loc = [p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        key = loc[0] if loc else None
        path = origin.get(key, f"workload.{key}") if key else _workload_origin(origin, combo, axes)
        if len(loc) > 1:
            path += "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
        msg = _choice_message(e) or e["msg"].removeprefix("Value error, ")
        if not loc:  # between keys: a matrix axis's value among them is where to look
            path = next((o for k, o in origin.items() if o.startswith("matrix.")
                         and re.search(rf"\b{re.escape(k)}\b", msg)), path)
        if msg.startswith("preset: "):
            path, msg = origin.get("preset", "workload.preset"), msg[len("preset: "):]
        if e["type"] == "extra_forbidden":
            msg = f"unknown key for a {family} workload" + did_you_mean(loc[0], _model_keys(fam.model, []))
        problems.append(f"{path}: {msg}")
    return problems


def _workload_engine_mismatch(fam: Any, workload: Any, target: Target, origin: dict, wl: dict) -> list[str]:
    """A workload of the wrong kind for the engine (a document workload at a SQL engine, SQL at
    MongoDB), named at the workload's own fields (or its file's keys)."""
    out = []
    for loc, msg in fam.engine_problems(workload, bindings.engine(target.engine)):
        where = origin.get(loc[0]) or (f"{origin['file']} ({wl['file']}): workload.{loc[0]}"
                                       if "file" in origin and isinstance(wl.get("file"), str)
                                       else f"workload.{loc[0]}")  # a key of the workload's file
        out.append(where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:]) + f": {msg}")
    return out


def _engine_problem(fam: Any, family: str, workload: Any, target: Target, target_path: str) -> Optional[str]:
    """Why the run's engine cannot run its workload (a capability, an SQL dialect), or None."""
    engine = bindings.engine(target.engine)
    requires = fam.requires_for(workload)
    if requires not in engine.capabilities:
        return (f"{target_path}.engine: {family} workloads need "
                f"{bindings.CAPABILITIES.get(requires, requires)} (capability "
                f"{requires}), not {target.engine} ({', '.join(engine.capabilities) or 'none'})")
    if requires == bindings.SQL and engine.dialect not in fam.dialects:
        # found here, not as a KeyError in the family's SQL tables at prepare time
        return (f"{target_path}.engine: family {family} has no SQL for engine {engine.name} (its "
                f"dialect {engine.dialect!r}; the family's dialects: {', '.join(fam.dialects)})")
    return None


def warmup_problems(runs: list[Run]) -> list[str]:
    """A warm-up as long as the run's time limit or longer leaves nothing measured."""
    problems = []
    for run in runs:
        w = run.workload
        warm = float(getattr(w, "warmuptime", 0) or 0)
        time_cap = families.get(w.family).limits(w).time
        if warm and time_cap and warm >= time_cap:
            problems.append(f"workload.warmuptime: {warm:g} s is not shorter than run {run.run_id}'s {time_cap:g} s "
                            "time limit: nothing would be measured after it")
    return sorted(set(problems), key=problems.index)[:5]


def _numeric_keys(model: Any) -> list[str]:
    out = []
    for name, f in type(model).model_fields.items():
        kinds = typing.get_args(f.annotation) or (f.annotation,)
        if any(k in (int, float) for k in kinds) and f.annotation is not bool:
            out.append(name)
    return out


def search_key_problems(key: str, runs: list[Run]) -> list[str]:
    """A search steps ``key`` of every run's workload: it must be a number the workload has."""
    problems = []
    for run in runs:
        keys = _numeric_keys(run.workload)
        if key not in keys:
            problems.append(f"search.key: {key!r} is not a numeric key of the {run.workload.family} workload of "
                            f"run {run.run_id}; one of: {', '.join(sorted(keys))}")
    return sorted(set(problems), key=problems.index)[:5]


def repeat_runs(campaign: Campaign, cells: list[Run]) -> list[Run]:
    """Each cell ``count`` times, repetition outermost (cells interleaved in time, so a slow
    hour of the machine does not fall on one cell); with a baseline configuration, the
    baseline's run just before the candidate's: B A B A … (the same seed for both)."""
    rep = campaign.repeat
    assert rep is not None  # called for a campaign with repeat
    base = rep.baseline
    out: list = []
    problems: list[str] = []
    for r in range(1, rep.count + 1):
        for cell in cells:
            arms = [("baseline", cell), ("candidate", cell)] if base else [(None, cell)]
            for arm, _ in arms:
                target, workload = cell.target, cell.workload
                if arm == "baseline" and base is not None:
                    if base.target:
                        try:
                            target = Target.model_validate({**cell.target.model_dump(exclude_none=True),
                                                            **base.target})
                        except ValidationError as err:
                            problems += _messages(err, "repeat.baseline.target")
                            continue
                    if base.workload:
                        fam = families.get(cell.workload.family)
                        try:
                            workload = fam.workload({**cell.workload.model_dump(mode="json"),
                                                     **base.workload})
                        except ValidationError as err:
                            problems += _messages(err, "repeat.baseline.workload")
                            continue
                index = len(out)
                suffix = f"-r{r}" + ("-base" if arm == "baseline" else "")
                run_id = f"{index:03d}-{cell.run_id[4:]}"[:80 - len(suffix)] + suffix if "-" in cell.run_id \
                    else f"{index:03d}{suffix}"
                out.append(Run(index=index, run_id=run_id, target=target, workload=workload,
                               axes={**cell.axes, "repeat": r, **({"arm": arm} if arm else {})},
                               cell=cell.run_id, arm=arm or "candidate", repeat=r, seed_index=cell.index))
    if problems:
        raise CampaignError(sorted(set(problems), key=problems.index))
    return out


def _workload_origin(origin: Any, combo: Any, axes: Any) -> Any:
    for (axis, _), (i, _) in zip(axes, combo):
        if axis in ("workload", "preset"):
            return _axis_value_path(axis, i)
    return "workload"


def _family_keys(name: Any) -> set:
    """The workload keys a family knows (the neutral ones only, for an unknown family: the
    run is then reported as an unknown family)."""
    try:
        return set(families.get(name).model.model_fields)
    except FamilyError:
        return set(families.WorkloadModel.model_fields) | {"family"}


def _workload_label(value: Any) -> Any:
    try:
        key = families.get(value.get("family", families.DEFAULT)).label_key
    except FamilyError:
        key = ""
    label = value.get(key) if key else None
    if isinstance(label, (int, float)) and not isinstance(label, bool):
        # a number names nothing on its own ("004-1"): the family and the key say what it counts
        return f"{value.get('family', families.DEFAULT)} {key} {label:g}"
    return label or value.get("family") or "workload"


def _slug(value: Any) -> Any:
    return re.sub(r"[^A-Za-z0-9.]+", "_", str(value)).strip("_") or "x"


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask (taskset, a container's cpuset),
    not the machine's count. Shard processes are this process's children and inherit it:
    two shards on one usable CPU only take the GIL and the CPU from each other."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def auto_fanout(campaign: Campaign, run: Optional["Run"], threads: int, cpu_count: int | None = None) -> dict:
    """``threads_per_shard: auto``'s plan for one run (campaign/fanout_auto.py): locally on
    ``cpu_count`` (else the usable CPUs), in the cloud one function per shard."""
    f = campaign.fanout
    family = run.workload.family if run is not None else ""
    engine = run.target.engine if run is not None else ""
    return auto_plan(family, engine, threads, f.headroom, cpu_count or usable_cpus(), in_cloud(), f.max_shards)


def shard_count(campaign: Campaign, threads: int, cpu_count: int | None = None, run: Optional["Run"] = None) -> int:
    f = campaign.fanout
    if f.shards:
        n = f.shards
    elif f.threads_per_shard == "auto":
        n = auto_fanout(campaign, run, threads, cpu_count)["shards"]
    elif f.threads_per_shard:
        n = math.ceil(threads / f.threads_per_shard)
    else:
        n = cpu_count or usable_cpus()
    return max(1, min(n, threads, f.max_shards))


def load_campaign(source: Any) -> tuple[Campaign, list[Run]]:
    """Parse (path, YAML/JSON text, or dict) and validate; raises CampaignError."""
    data = read_campaign_data(source)
    check_campaign_size(data)  # before the matrix is expanded
    try:
        campaign = Campaign.model_validate(data)
    except ValidationError as err:
        problems = _messages(err)  # and the workloads' problems with them: every problem at once
        raise CampaignError(problems + [p for p in _workload_problems(data) if p not in problems]) from None
    across = consistency.campaign_problems(campaign)  # keys valid alone, not together
    try:
        runs = expand_runs(campaign)
    except CampaignError as err:
        raise CampaignError(err.problems + [p for p in across if p not in err.problems]) from None
    problems = across + consistency.run_problems(campaign, runs)
    problems += threads_per_shard_problems(runs, {r.run_id: shard_count(campaign, r.workload.threads) for r in runs})
    if not problems:  # what a shard's threads hold against the memory it runs in (the cloud's or this machine's)
        problems += memory_problems(runs, lambda r: shard_count(campaign, r.workload.threads, run=r))
    for run in runs:
        engine = bindings.engine(run.target.engine)
        if run.target.password and not engine.needs_url and engine.is_real_database:
            problems.append(f"target.password: {engine.name} takes no password")
    if problems:
        raise CampaignError(problems)
    return campaign, runs


def password_refs(campaign: Campaign) -> list[tuple[str, dict]]:
    """(field path, reference) of every password reference of a campaign."""
    out = []
    if campaign.target.password:
        out.append(("target.password", campaign.target.password.describe()))
    for i, t in enumerate(campaign.matrix.get("target") or []):
        if isinstance(t, dict) and isinstance(t.get("password"), dict):
            out.append((f"matrix.target[{i}].password", t["password"]))
    return out


def local_reference_problems(campaign: Campaign) -> list[str]:
    """Every {env: VAR} and {file: PATH} password reference resolved now, on this machine, as the
    shards will resolve it (the value is discarded, never printed): an unset variable or an
    unreadable file is a problem of the campaign, reported before anything starts (``dbswarm
    validate``, ``dbswarm run``). {secret: NAME} is read where the campaign runs: not here."""
    problems = []
    for where, ref in password_refs(campaign):
        data = ref if isinstance(ref, dict) else {}
        if not (data.get("env") or data.get("file")):
            continue
        try:
            secrets.resolve(data)
        except SecretError as err:
            text = str(err)
            problems.append(where + text[len("target.password"):] if text.startswith("target.password") else
                            f"{where}: {text}")
    return problems


def check_deployed_references(campaign: Campaign, secret_prefix: Optional[str]) -> None:
    """A campaign arriving through the API (or planned by a deployed function) may only
    reference {secret: NAME} under the deployment's secret prefix."""
    problems = [p for where, ref in password_refs(campaign)
                for p in reference_problems(ref, where, api=True, secret_prefix=secret_prefix)]
    if problems:
        raise CampaignError(problems)


class _UniqueKeyLoader(BoundedComposer, yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML keeps the last,
    silently), and a document past the bounds of ``campaign.bounds`` (at the line crossing one)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (line {seen[key] + 1} and line {key_node.start_mark.line + 1}): "
                    "give each key once", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def _yaml_problem(err: Any) -> str:
    """A YAML error as "what, line L, column C": never the snippet of the line (a password's)."""
    problem = getattr(err, "problem", None)
    mark = getattr(err, "problem_mark", None)
    if isinstance(err, yaml.reader.ReaderError):
        char = err.character if isinstance(err.character, int) else ord(err.character)
        return f"a control character (U+{char:04X}) at offset {err.position}: a campaign is printable text"
    if not problem:
        return type(err).__name__
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    context, cmark = getattr(err, "context", None), getattr(err, "context_mark", None)
    also = f" ({context} at line {cmark.line + 1})" if context and cmark is not None else ""
    return f"{problem}{where}{also}"


def read_campaign_data(source: Any) -> Any:
    if isinstance(source, dict):
        problems = shape_problems(source)
        if problems:
            raise CampaignError(problems)
        return source
    text = None
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and os.path.exists(source)):
        try:
            text = read_text(source)
        except OSError as err:
            raise CampaignError([f"(file): cannot read {source}: {err.strerror}"]) from None
        except UnicodeDecodeError as err:
            raise CampaignError([f"(file): {source} is not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset "
                                 f"{err.start}): a campaign file is YAML or JSON in UTF-8"]) from None
    elif isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{")):
        text = source
        too_big = document_size_problem(len(text.encode("utf-8", "surrogatepass")), "the campaign")
        if too_big:
            raise CampaignError([too_big])
    else:
        raise CampaignError([f"(file): no such campaign file: {source}"])
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        raise CampaignError([f"(file): not valid YAML/JSON: {_yaml_problem(err)}"]) from None
    except RecursionError:
        raise CampaignError([f"(file): nested too deeply to read: a campaign is at most {MAX_DEPTH} levels "
                             "deep"]) from None
    if not isinstance(data, dict):
        raise CampaignError(["(top level): expected a mapping of campaign keys"])
    problems = shape_problems(data)
    if problems:
        raise CampaignError(problems)
    return data


def workload_file_problems(path: str, where: str) -> list[str]:
    """A workload file (``workload.file``) read within the campaign's bounds (``campaign.bounds``:
    its size, aliases, values, depth and strings; a key given twice), each problem named at
    ``where`` and the file's name. A file that cannot be read, is too large, is not YAML in
    UTF-8 or holds no mapping is the family's to name (it reads the file next)."""
    file = Path(path)
    if not file.is_file() or file.stat().st_size > MAX_DOCUMENT_BYTES:
        return []
    try:
        read_campaign_data(file)
    except CampaignError as err:
        theirs = ("(file): not valid YAML", "(top level): expected a mapping", f"(file): {file} is not UTF-8")
        return [f"{where}: {bounds_shown(path)}: {p.removeprefix('(file): ')}" for p in err.problems
                if not p.startswith(theirs)]
    return []


def workload_file_refs(data: Any) -> list[str]:
    """The fields of a campaign's data naming a workload file (``workload.file``, a matrix's
    ``workload`` or ``file`` axis, a repeat baseline's workload): a deployment reads no file of
    its own machine for a caller (the API refuses them before anything is read)."""
    if not isinstance(data, dict):
        return []

    def mapping(value: Any) -> dict:
        return value if isinstance(value, dict) else {}
    matrix = mapping(data.get("matrix"))
    axis: list = matrix["workload"] if isinstance(matrix.get("workload"), list) else []
    tops = [("workload", data.get("workload")),
            ("repeat.baseline.workload", mapping(mapping(data.get("repeat")).get("baseline")).get("workload")),
            *((f"matrix.workload[{i}]", w) for i, w in enumerate(axis))]
    out = [f"{where}.file" for where, w in tops if isinstance(w, dict) and "file" in w]
    return out + (["matrix.file"] if "file" in matrix else [])


def json_schema() -> dict:
    """The published JSON Schema of a campaign file (workloads documented as $defs)."""
    schema = Campaign.model_json_schema()
    defs = schema.setdefault("$defs", {})
    models = [f.model for f in families.all_families()]
    for model in models:
        defs[model.__name__] = model.model_json_schema()
    schema["properties"]["workload"] = {
        "description": "defaults for every run: keys of " + " or ".join(m.__name__ for m in models)
                       + " (validated per run after the matrix is applied)",
        "type": "object"}
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "dbswarm campaign"
    return schema


def redacted_campaign(campaign: Campaign) -> dict:
    """The campaign as stored in campaign.json: secret references kept, credentials redacted
    (dbswarm.credentials.redact: the store applies the same to every document)."""
    return redact_doc(campaign.model_dump(mode="json", exclude_none=True))


if __name__ == "__main__":  # pragma: no cover - `python -m dbswarm.campaign.spec` prints the schema
    print(json.dumps(json_schema(), indent=2))
