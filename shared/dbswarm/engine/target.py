"""The target of a run, apart from its shards' client threads: the binding every connection of
a run is made with (``make_binding``: the deployment's AllowedTargets checked on each connected
socket), the family's un-sharded steps (``prepare_target``: create the schema before the load,
secondary indexes after it, drop everything at cleanup) and the edges of a phase's measured
window (``read_window_edge``). The lock, the checks and the connection room use these beside
the worker (``engine.worker``), not through it.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from dbswarm import bindings
from dbswarm.bindings.base import Binding, Connection, SqlSessionBinding, rollback
from dbswarm.campaign import admission as limits
from dbswarm.credentials.secrets import redact_url
from dbswarm.documents import RunPlan
from dbswarm.families import base as families


def make_binding(run: RunPlan, password: Optional[str]) -> Binding:
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

        def checked_connect() -> None:
            connect()
            limits.check_connected(b, allowed)
        b.connect = checked_connect  # type: ignore[method-assign]  # the binding's own, checked
    return b


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


def read_window_edge(run: RunPlan, password: Optional[str], phase: str, edge: str, binding: Optional[Binding] = None,
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
    own = b if isinstance(b, SqlSessionBinding) and b.statement_is_transaction and not mid_phase else None
    wrapped = own is not None
    ended = 0
    try:
        for key, read in (("server", lambda: b.server_counters(settle=not mid_phase)),
                          ("family", lambda: family.window_snapshot(b, w, phase))):
            try:
                if own is not None and not own.in_transaction():
                    own.begin_own()
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
        if own is not None and own.in_transaction():
            own.end_own()
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


def _end_failed(b: Binding, wrapped: bool) -> int:
    """Roll back the edge's transaction after a failed read; 1 where that ended a transaction
    of the edge's own (counted in the server's counters), else 0."""
    try:
        was = wrapped and isinstance(b, SqlSessionBinding) and b.in_transaction()
        rollback(b)
        return 1 if was else 0
    except Exception:
        return 0


def _keep_edge_value(key: str, value: Any, edge: str, out: dict) -> None:
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
