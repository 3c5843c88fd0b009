"""Before the fan-out: each run's statements prepared on one connection (``Family.check_statements``,
the custom family's), so that a statement the server rejects is named before any load or run
starts — by ``dbswarm validate`` (the tables the workload creates made as temporary ones first)
and by the plan step of a campaign that creates no tables (its own are created by the prepare
phase, whose before_load step checks them once they exist).

The check needs the target: when it cannot be reached (or its password resolved, or SQLite's
file does not exist yet), the statements are not checked and a note says why; only a statement
the server answered with an error is a problem.
"""
from __future__ import annotations

import json
import os
from typing import Any

from dbswarm import bindings
from dbswarm.bindings.sqlite import sqlite_path
from dbswarm.credentials import secrets
from dbswarm.engine.target import make_binding
from dbswarm.families import base as families

CONNECT_TIMEOUT_S = 5  # an unreachable target costs validate and the plan step this, not the binding's default


def _short_timeout(run: Any) -> Any:
    options = dict(run.target.get("options") or {})
    options["connect_timeout"] = min(int(options.get("connect_timeout", CONNECT_TIMEOUT_S)), CONNECT_TIMEOUT_S)
    return run.model_copy(update={"target": {**run.target, "options": options}})


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def check_runs(runs: list, temporary: bool) -> tuple[list[str], list[str]]:
    """(problems, notes) over the plan's runs (``RunPlan``): the statements the server rejects,
    once per distinct target and workload; notes for the runs whose statements were not checked."""
    problems: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for run in runs:
        fam = families.get(run.family)
        w = fam.workload(run.workload)
        if not fam.checks_statements(w):
            continue
        key = json.dumps([run.target, run.workload], sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        engine = bindings.engine(run.target["engine"])
        if engine.embedded:
            try:
                if not os.path.exists(sqlite_path(run.target.get("url"))):
                    notes.append(f"run {run.run_id}: statements not checked: {engine.name}'s file does not exist yet")
                    continue
            except ValueError:
                continue
        try:
            b = make_binding(run if engine.embedded else _short_timeout(run),
                             secrets.resolve(run.target.get("password")))
            b.connect()
        except Exception as exc:
            notes.append(f"run {run.run_id}: statements not checked: the target is not reachable ({_why(exc)})")
            continue
        try:
            found = fam.check_statements(b, w, temporary)
        except Exception as exc:  # the check itself broke (a lost connection): not the statements' fault
            notes.append(f"run {run.run_id}: statements not checked: {_why(exc)}")
            found = []
        finally:
            try:
                b.close()
            except Exception:
                pass
        problems += [p for p in found if p not in problems]
        if not found:
            notes.append(f"run {run.run_id}: every statement prepared on {run.target.get('engine')}: accepted")
    return problems, notes
