"""A run's merged phase, typed: what ``aggregate.merge`` builds and result.json's
``runs[].phases.<phase>`` holds, read by the reports and the verdict as attributes.

``PhaseResult.to_dict()`` is the JSON result.json has always written, key for key and in the same
order (``schema/result.schema.json``'s PhaseResult, which ``results.documents`` publishes,
describes it and does not change); ``PhaseResult.of(d)`` reads one back, from this version's
result.json or an older one (a key it lacks is None). A key the merge writes only when it has
something to say (``paused_s``, ``stalls``, ``problems``, ...) is None when absent and is left out
of the JSON; the family's own figures (``Family.phase_summary``: ``sysbench``, ``tpcc``,
``custom``) are ``extra`` under the family's name, as are keys this version does not know.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

# the keys of a measured phase, in result.json's order: (name, written when None)
_MEASURED: tuple[tuple[str, bool], ...] = (
    ("started_at", True), ("ended_at", True), ("duration_s", True), ("paused_s", False),
    ("operations_total", True), ("errors_total", True), ("ops_per_s", True), ("steady", True),
    ("throughput", True), ("throughput_basis", True), ("operations", True), ("errors", True),
    ("counters", True), ("start_skew_s", True), ("abandoned_threads", True), ("client_cpu_s", True),
    ("usage", True), ("mix", True), ("metrics_export", False), ("stalls", False),
    ("throughput_caveat", False), ("problems", False), ("lost_seconds", False), ("warmup", False),
    ("operations_after_warmup", False), ("error_rate", True), ("error_problems", False),
    ("read_latency", True), ("write_latency", True), ("latency_operations", True), ("latency_basis", True),
    ("schedule", False), ("server", False))
_TAIL = ("histograms", "timeline", "intervals", "shard_series", "client")
_KNOWN = {"phase", "status", "shards", "binding_settings", *(k for k, _ in _MEASURED), *_TAIL}


@dataclass
class PhaseShards:
    """``shards``: how many were expected, and which completed, stopped early or wrote nothing."""
    expected: int
    complete: list[int] = field(default_factory=list)
    partial: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, d: dict[str, Any]) -> PhaseShards:
        return cls(expected=d.get("expected", 0), complete=list(d.get("complete") or []),
                   partial=list(d.get("partial") or []), missing=list(d.get("missing") or []))

    def to_dict(self) -> dict[str, Any]:
        return {"expected": self.expected, "complete": self.complete, "partial": self.partial,
                "missing": self.missing}


@dataclass
class Steady:
    """``steady``: the steady-state window [start, end) in epoch seconds, its whole seconds and
    their operations per second (None: fewer than aggregate.MIN_STEADY_SECONDS)."""
    window: list[int]
    seconds: int
    ops_per_s: Optional[float]
    stalled_seconds_left_out: Optional[list[int]] = None

    @classmethod
    def of(cls, d: dict[str, Any]) -> Steady:
        return cls(window=list(d.get("window") or []), seconds=d.get("seconds", 0), ops_per_s=d.get("ops_per_s"),
                   stalled_seconds_left_out=d.get("stalled_seconds_left_out"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"window": self.window, "seconds": self.seconds, "ops_per_s": self.ops_per_s}
        if self.stalled_seconds_left_out is not None:
            out["stalled_seconds_left_out"] = self.stalled_seconds_left_out
        return out


@dataclass
class PhaseResult:
    """One run's phase (load or run) merged over its shards; see ``aggregate.merge``."""
    phase: str
    status: Optional[str]  # None: a phase of a document written by hand (tests), without one
    shards: Optional[PhaseShards] = None
    binding_settings: Optional[dict[str, Any]] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    duration_s: Optional[float] = None
    paused_s: Optional[float] = None
    operations_total: Optional[int] = None
    errors_total: Optional[int] = None
    ops_per_s: Optional[float] = None
    steady: Optional[Steady] = None
    throughput: Optional[float] = None
    throughput_basis: Optional[str] = None
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    start_skew_s: dict[str, Any] = field(default_factory=dict)
    abandoned_threads: dict[str, Any] = field(default_factory=dict)
    client_cpu_s: Optional[float] = None
    usage: dict[str, Any] = field(default_factory=dict)
    mix: dict[str, float] = field(default_factory=dict)
    metrics_export: Optional[dict[str, Any]] = None
    stalls: Optional[dict[str, Any]] = None
    throughput_caveat: Optional[str] = None
    problems: Optional[list[str]] = None
    lost_seconds: Optional[float] = None
    warmup: Optional[dict[str, Any]] = None
    operations_after_warmup: Optional[int] = None
    error_rate: Optional[float] = None
    error_problems: Optional[list[str]] = None
    read_latency: Optional[dict[str, Any]] = None
    write_latency: Optional[dict[str, Any]] = None
    latency_operations: dict[str, list[str]] = field(default_factory=dict)
    latency_basis: Optional[str] = None
    schedule: Optional[dict[str, Any]] = None
    server: Optional[dict[str, Any]] = None
    extra: dict[str, Any] = field(default_factory=dict)  # the family's figures under its name; unknown keys
    histograms: dict[str, str] = field(default_factory=dict)
    timeline: dict[str, Any] = field(default_factory=dict)
    intervals: Optional[dict[str, Any]] = field(default_factory=dict)
    shard_series: Optional[dict[str, Any]] = None
    client: dict[str, Any] = field(default_factory=dict)
    # ``server`` written last (after ``client``): a phase the merge gave none, to which the
    # campaign's aggregation added why (an edge of its window never read: ``aggregate.run_phases``)
    server_last: bool = False

    @property
    def measured(self) -> bool:
        """Whether any shard wrote what it measured (else only phase, status, shards)."""
        return self.started_at is not None

    def family(self, name: str) -> Optional[dict[str, Any]]:
        """The family's own figures (``Family.phase_summary``), None when it has none."""
        v = self.extra.get(name)
        return v if isinstance(v, dict) else None

    @classmethod
    def of(cls, d: dict[str, Any]) -> PhaseResult:
        """A phase of result.json as written (this version or an older one)."""
        values: dict[str, Any] = {k: d[k] for k in _KNOWN if k in d}
        shards, steady = values.pop("shards", None), values.pop("steady", None)
        for k in ("operations", "errors", "counters", "start_skew_s", "abandoned_threads", "usage", "mix",
                  "latency_operations", "histograms", "timeline", "intervals", "client"):
            if values.get(k) is None:
                values.pop(k, None)
        keys = list(d)
        server_last = "server" in d and "client" in d and keys.index("server") > keys.index("client")
        return cls(**{"phase": d.get("phase", ""), "status": d.get("status"), **values},
                   shards=PhaseShards.of(shards) if isinstance(shards, dict) else None,
                   steady=Steady.of(steady) if isinstance(steady, dict) else None,
                   extra={k: v for k, v in d.items() if k not in _KNOWN}, server_last=server_last)

    def to_dict(self) -> dict[str, Any]:
        """result.json's phase: the keys and their order as the merge has always written them."""
        out: dict[str, Any] = {"phase": self.phase}
        if self.shards is not None:
            out["shards"] = self.shards.to_dict()
            out["binding_settings"] = self.binding_settings
        out["status"] = self.status
        if self.measured:
            for name, always in _MEASURED:
                if name == "server" and self.server_last:
                    continue
                value = getattr(self, name)
                if name == "steady" and value is not None:
                    value = value.to_dict()
                if always or value is not None:
                    out[name] = value
            out.update(self.extra)
            for name in _TAIL:
                out[name] = getattr(self, name)
        else:
            out.update(self.extra)
        if self.server is not None and (self.server_last or not self.measured):
            out["server"] = self.server
        return out


def phases_of(run: dict[str, Any]) -> list[tuple[str, PhaseResult]]:
    """A result.json run's phases, typed: [(name, phase)] in the run's order."""
    return [(name, PhaseResult.of(p)) for name, p in (run.get("phases") or {}).items()]


def main_phase(run: dict[str, Any]) -> Optional[PhaseResult]:
    """The run's run phase, else its load phase (what the verdict judges), None without either."""
    phases = run.get("phases") or {}
    p = phases.get("run") or phases.get("load")
    return PhaseResult.of(p) if p else None
