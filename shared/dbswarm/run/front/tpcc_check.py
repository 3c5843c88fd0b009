"""TPC-C's consistency check as a command, on the database as it is now (after a load, a run,
or another tool's load):

    dbswarm check CAMPAIGN [--after-load] [--jobs N] [--json]

Everything in one call: the warehouses of each TPC-C run's target split into ``--jobs``
contiguous ranges (default: up to 4), each checked in its own thread on its own connection
(the database does the work; the driver waits without the GIL), a progress line on stderr per
warehouse checked. The outcome is the same whatever the jobs: failures in warehouse order.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any, Callable, Optional

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.campaign.spec import load_campaign
from dbswarm.credentials import secrets
from dbswarm.credentials.secrets import redact_url
from dbswarm.engine.checks import range_bounds
from dbswarm.engine.parallel import run_in_threads
from dbswarm.families.tpcc.check import check_result, check_warehouse, refresh_statistics
from dbswarm.families.tpcc.family import Tpcc

DEFAULT_JOBS = 4


def check_parallel(connect: Callable, warehouses: int, after_load: bool = False, jobs: Optional[int] = None,
                   progress: Optional[Callable[[int, int, int, int], None]] = None) -> dict:
    """Warehouses 1..``warehouses`` in ``jobs`` contiguous ranges at once (``connect()``: a new
    connected binding, one per range). ``progress(warehouse, checked, total, failures)`` after
    each warehouse. -> ``check_result``'s dict; the first error of a range is raised after every
    range ended."""
    jobs = max(1, min(jobs or DEFAULT_JOBS, warehouses))
    b = connect()
    try:
        refresh_statistics(b)  # data loaded by another tool may never have been analyzed
    finally:
        b.close()
    found: list[list[dict]] = [[] for _ in range(jobs)]
    lock = threading.Lock()
    tally = {"checked": 0, "failures": 0}

    def one(i: int, first: Any, end: Any) -> None:
        b = connect()
        try:
            for wh in range(first, end):
                failures = check_warehouse(b, wh, after_load)
                found[i] += failures
                with lock:
                    tally["checked"] += 1
                    tally["failures"] += len(failures)
                    if progress:
                        progress(wh, tally["checked"], warehouses, tally["failures"])
        finally:
            b.close()
    t0 = time.time()
    bounds = [range_bounds(warehouses, jobs, i) for i in range(jobs)]  # units from 0: warehouses from 1
    run_in_threads(one, [(i, first + 1, end + 1) for i, (first, end) in enumerate(bounds)])
    return check_result([f for part in found for f in part], warehouses, after_load, time.time() - t0)


def check_campaign(source: Any, after_load: bool = False, jobs: Optional[int] = None,
                   progress: Optional[Callable[[str, int, int, int, int], None]] = None) -> list[dict]:
    """The consistency conditions on the target of every TPC-C run of a campaign file. One entry
    per run: {"run_id", "label", "check": ``check_result``'s dict}. ``progress(label, warehouse,
    checked, total, failures)`` after each warehouse."""
    _, runs = load_campaign(source)
    out, seen = [], set()
    for run in runs:
        t = run.target
        key = (t.engine, t.url, getattr(run.workload, "warehouses", None))
        if run.workload.family != Tpcc.name or key in seen:  # runs of a matrix share their database
            continue
        seen.add(key)
        password = secrets.resolve(t.password.model_dump(exclude_none=True)) if t.password else None
        conn = Connection(engine=t.engine, url=t.url, password=password, options=dict(t.options or {}),
                          display=redact_url(t.url) or t.engine)

        def connect(conn: Any = conn) -> Any:
            b = bindings.get(conn.engine)(conn)
            b.connect()
            return b
        tell = (lambda *a, label=t.display: progress(label, *a)) if progress else None
        out.append({"run_id": run.run_id, "label": t.display,
                    "check": check_parallel(connect, run.workload.warehouses, after_load, jobs, tell)})
    return out


def stderr_progress(label: Any, warehouse: Any, checked: Any, total: Any, failures: Any) -> None:
    """A progress line on stderr per warehouse checked (``dbswarm check``)."""
    print(f"check {label}: warehouse {warehouse} checked ({checked}/{total}, {failures} failure"
          f"{'' if failures == 1 else 's'} so far)", file=sys.stderr, flush=True)


def print_results(results: list[dict], as_json: bool = False) -> int:
    """``check_campaign``'s outcome on stdout (one block per run, or JSON); the exit status:
    0 when every run's check passed, else 1."""
    ok = all(r["check"]["passed"] for r in results)
    if as_json:
        print(json.dumps(results, indent=1))
    else:
        for r in results:
            ch = r["check"]
            print(f"{r['run_id']} ({r['label']}): {ch['warehouses']} warehouses, conditions "
                  f"{', '.join(ch['conditions'])}: {'passed' if ch['passed'] else 'FAILED'} ({ch['seconds']} s)")
            for f in ch["failures"]:
                where = f"warehouse {f['warehouse']}" + (f", district {f['district']}" if f["district"] else "")
                print(f"  {f['condition']} {f['title']}: {where} (found {f['found']})")
    return 0 if ok else 1
