"""Before a phase's shards start: does the server admit every client connection the phase opens?

A phase of more client threads than the server has connection slots for (max_connections, an
account's or a database's limit, less the connections already open) does not fail by itself:
each shard waits ``shard_state.READY_TIMEOUT_S`` (60 s) for its refused threads, starts without
them, and the run ends ``incomplete``, its figures those of fewer threads than asked. The arm
step (``run.service.arm``) reads the server's room on one connection first
(``Binding.connection_room``) and refuses the phase at once, naming the limit, the count and
what to change. An engine that states no limit (SQLite, MongoDB) is not checked;
``target.options.connection_limit_check: false`` turns the check off (a pooler in front of the
server that admits more clients than the server reports).
"""
from __future__ import annotations

from typing import Optional

from dbswarm.documents import RunPlan
from dbswarm.engine.target import make_binding
from dbswarm.errors import DbswarmError

OPTION = "connection_limit_check"


class TooFewConnections(DbswarmError):
    """The server admits fewer client connections than the phase opens."""


def wanted(run: RunPlan) -> bool:
    """Whether the run's phases are checked: a real database and no opt-out."""
    if not run.is_real_database:
        return False
    opt = (run.target.get("options") or {}).get(OPTION, True)
    return not (opt is False or str(opt).lower() in ("false", "0", "no", "off"))


def phase_connections(run: RunPlan) -> int:
    """Client connections a phase holds at once over all its shards: one per client thread,
    in the load phase too (a thread without rows to write connects as well)."""
    return sum(shard.threads for shard in run.shards) or run.threads


def shortfall(run: RunPlan, phase: str, room: Optional[dict]) -> Optional[str]:
    """The message refusing the phase, or None when the server has room for it (or says
    nothing of its limits)."""
    if not room or room.get("free") is None:
        return None
    need, free = phase_connections(run), int(room["free"])
    if need <= free:
        return None
    tight = min(room.get("limits") or [], key=lambda lim: lim["value"] - lim["in_use"], default=None)
    limit = (f"{tight['name']} {tight['value']}, {tight['in_use']} other connection"
             f"{'' if tight['in_use'] == 1 else 's'} open" if tight else "its limits")
    shards = len(run.shards)
    layout = f"{shards} shards, {need} threads" if shards > 1 else f"{need} threads"
    return (f"the {phase} phase of run {run.run_id} opens {need} client connections ({layout}) but the "
            f"{run.target.get('engine', 'server')} server admits {free} more ({limit}): fewer threads, a higher "
            f"limit, or fewer other connections; target.options.{OPTION}: false skips this check (a "
            f"pooler in front of the server admitting more clients than it reports)")


def check(run: RunPlan, phase: str, password: Optional[str]) -> Optional[dict]:
    """The server's room read on one connection; raises
    ``TooFewConnections`` when the phase does not fit. Returns the room read (None: not
    checked, or not readable: the shards find out, as before)."""
    if not wanted(run):
        return None
    binding = make_binding(run, password)
    try:
        binding.connect()
    except Exception:  # the target does not answer: the shards say what is wrong with it
        return None
    try:
        room = binding.connection_room()
    except Exception:  # a missing privilege or view: not checked
        room = None
    finally:
        binding.close()
    message = shortfall(run, phase, room)
    if message:
        raise TooFewConnections(message)
    return room
