"""The campaign lock in the target (issue 20, item 8): one campaign at a time on a set of tables.

A second campaign whose prepare drops and re-creates the tables of a running one destroys it
(the first then counts operations against a missing table). So every step that touches a
run's tables takes the lock first, and a second campaign on any of the same tables fails
fast, naming the campaign that holds them and since when.

The lock lives in the target itself, as rows of a small table ``dbswarm_lock`` (a collection
on MongoDB), one row per table name (``Family.tables``), written through the bindings' ``kv``
capability, so it is the same on every engine: PostgreSQL, MariaDB/MySQL, MongoDB and
FerretDB, SQLite. A session-level advisory lock would not do: the steps of a campaign are
separate processes (Lambda calls), and such a lock dies with its connection.

- taken by the prepare step (before_load) and by the Arm step before every phase (a campaign
  without prepare), each inserting the rows it does not hold yet (an insert on the primary key:
  of two campaigns racing, one wins);
- kept fresh (``heartbeat``) while a step runs: the prepare steps and shard 0 of every phase
  refresh it every ``HEARTBEAT_S``;
- released by the cleanup step and by the aggregate step, and on the terminal paths that never
  reach it (an API cancel, a local execution that ended before aggregating); not when the
  campaign was interrupted: ``dbswarm resume`` continues it, and the lock goes stale on its own;
- stale when not refreshed for ``DBSWARM_LOCK_STALE_S`` (default 600 s: a campaign that
  died): the next campaign takes it over and says so in its prepare record.

``target.options.shared_tables: true`` opts out: the campaign neither takes nor checks the
lock (several campaigns on the same tables on purpose; their loads and prepares then disturb
each other).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Callable, Iterator, Optional, TypeVar

from dbswarm.bindings.base import KeyValueBinding, rollback
from dbswarm.documents import RunPlan
from dbswarm.engine.target import make_binding
from dbswarm.errors import DUPLICATE, DbswarmError
from dbswarm.families import base as families

T = TypeVar("T")

LOCK_TABLE = "dbswarm_lock"
FIELDS = 4   # field0 campaign id, field1 started at (epoch), field2 heartbeat (epoch), field3 run id
SHARED_OPTION = "shared_tables"
STALE_ENV = "DBSWARM_LOCK_STALE_S"
STALE_S = 600.0
HEARTBEAT_S = 30.0


class CampaignLocked(DbswarmError):
    """Another campaign holds the lock on (some of) this run's tables."""


def stale_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get(STALE_ENV) or STALE_S))
    except ValueError:
        return STALE_S


def wanted(run: RunPlan) -> bool:
    """Whether this run takes the lock: a real database, tables named, no opt-out."""
    if not run.is_real_database:
        return False
    opt = (run.target.get("options") or {}).get(SHARED_OPTION, False)
    if opt is True or str(opt).lower() in ("true", "1", "yes"):
        return False
    family = families.get(run.family)
    return bool(family.tables(family.workload(run.workload)))


def _tables(run: RunPlan) -> list[str]:
    family = families.get(run.family)
    return sorted(set(family.tables(family.workload(run.workload))))


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def _row(campaign_id: str, run_id: str, started: float, beat: float) -> dict[str, str]:
    return {"field0": campaign_id, "field1": f"{started:.3f}", "field2": f"{beat:.3f}", "field3": run_id}


def _read(b: KeyValueBinding, table: str) -> Optional[dict[str, Any]]:
    row = b.read(LOCK_TABLE, table, ["field0", "field1", "field2", "field3"])
    if not row:
        return None
    try:
        return {"campaign_id": row["field0"], "started_at": float(row["field1"]), "heartbeat_at": float(row["field2"]),
                "run_id": row.get("field3")}
    except (KeyError, TypeError, ValueError):
        return {"campaign_id": str(row.get("field0")), "started_at": 0.0, "heartbeat_at": 0.0, "run_id": None}


def _insert(b: KeyValueBinding, table: str, values: dict[str, str]) -> bool:
    """Insert one lock row; False when the row exists (another holder won)."""
    try:
        b.insert(LOCK_TABLE, table, values)
        return True
    except Exception as exc:
        if b.classify(exc).kind != DUPLICATE:
            raise
        _rollback(b)
        return False


def _rollback(b: KeyValueBinding) -> None:
    try:
        rollback(b)
    except Exception:
        pass


def acquire(b: KeyValueBinding, run: RunPlan, campaign_id: str) -> dict:
    """Take (or refresh) this campaign's lock on the run's tables, on the connected binding ``b``.
    Raises CampaignLocked naming the holder. Returns {"tables", "taken_over": [...]}."""
    tables = _tables(run)
    b.ensure_table(LOCK_TABLE, FIELDS)
    now = time.time()
    stale = stale_seconds()
    inserted: list[str] = []
    taken_over: list[dict] = []
    try:
        for t in tables:
            for _ in range(3):
                held = _read(b, t)
                if held is None:
                    if _insert(b, t, _row(campaign_id, run.run_id, now, now)):
                        inserted.append(t)
                        break
                    continue  # another campaign inserted it meanwhile: read who
                if held["campaign_id"] == campaign_id:
                    b.update(LOCK_TABLE, t, {"field2": f"{now:.3f}", "field3": run.run_id})
                    break
                if now - held["heartbeat_at"] > stale:
                    b.delete(LOCK_TABLE, t)   # its holder stopped refreshing it: it died
                    if _insert(b, t, _row(campaign_id, run.run_id, now, now)):
                        inserted.append(t)
                        taken_over.append({"table": t, **held})
                        break
                    continue
                raise CampaignLocked(locked_message(t, run.run_id, held, now, stale))
            else:
                raise CampaignLocked(f"table {t} of run {run.run_id}: the campaign lock changed hands "
                                     "three times while it was being taken; try again")
    except CampaignLocked:
        for t in inserted:  # all or nothing: the rows this call took go back
            _release_row(b, t, campaign_id)
        raise
    return {"tables": tables, "taken_over": taken_over}


def locked_message(table: str, run_id: str, held: dict, now: float, stale: float) -> str:
    """Who holds the table, since when, and each way to free it: the command that finishes a
    killed holder (which releases the lock), the wait until it goes stale, the opt-out."""
    holder = held["campaign_id"]
    seen = max(0.0, now - held["heartbeat_at"])
    return (f"table {table} of run {run_id} is in use by campaign {holder} (started {_when(held['started_at'])}, "
            f"last seen {seen:.0f} s ago). If {holder} still runs, wait until it ends or stop it. If it was killed "
            f"(SIGKILL, a lost machine), `dbswarm resume {holder} --results <its results folder>` finishes it and "
            f"frees the tables (a deployed campaign: `dbswarm cancel {holder}`); else its lock is taken over in "
            f"{max(0.0, stale - seen):.0f} s (a lock not refreshed for {stale:.0f} s, {STALE_ENV}, is stale). To run "
            f"both on the same tables on purpose, set target.options.{SHARED_OPTION}: true.")


def _release_row(b: KeyValueBinding, table: str, campaign_id: str) -> None:
    held = _read(b, table)
    if held is not None and held["campaign_id"] == campaign_id:
        b.delete(LOCK_TABLE, table)


def refresh(b: KeyValueBinding, run: RunPlan, campaign_id: str) -> bool:
    """Heartbeat: False when a row is no longer this campaign's (it went stale and was taken)."""
    now, ok = time.time(), True
    b.ensure_table(LOCK_TABLE, FIELDS)
    for t in _tables(run):
        held = _read(b, t)
        if held is not None and held["campaign_id"] == campaign_id:
            b.update(LOCK_TABLE, t, {"field2": f"{now:.3f}"})
        else:
            ok = False
    return ok


def release(b: KeyValueBinding, run: RunPlan, campaign_id: str) -> None:
    b.ensure_table(LOCK_TABLE, FIELDS)
    for t in _tables(run):
        _release_row(b, t, campaign_id)


def on_target(run: RunPlan, password: Optional[str], fn: Callable[..., T], *args: Any) -> T:
    """``fn(binding, run, *args)`` on a fresh connection to the run's target."""
    b = make_binding(run, password)
    b.connect()
    try:
        return fn(b, run, *args)
    finally:
        try:
            b.close()
        except Exception:
            pass


@contextlib.contextmanager
def heartbeat(run: RunPlan, password: Optional[str], campaign_id: str, enabled: bool = True,
              every: float = HEARTBEAT_S) -> Iterator[None]:
    """Refresh the lock every ``every`` seconds in a background thread while the block runs
    (best effort: a target that does not answer is the step's problem, not the lock's)."""
    if not enabled or not wanted(run):
        yield
        return
    done = threading.Event()

    def beat() -> None:
        while not done.wait(every):
            try:
                on_target(run, password, refresh, campaign_id)
            except Exception:
                pass
    t = threading.Thread(target=beat, name="dbswarm-lock-heartbeat", daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
