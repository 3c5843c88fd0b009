"""TPC-C's consistency conditions (clause 3.3.2), a warehouse at a time on an SQL session, and
the check's outcome; the planner's statistics refreshed after the load."""
from __future__ import annotations

import time
from typing import Iterable

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families.tpcc import sql as S


def refresh_statistics(binding: SqlSession) -> None:
    """The planner's statistics of the TPC-C tables brought up to date (``tpcc_sql.ANALYZE``:
    why), where the dialect needs it."""
    sql = S.ANALYZE.get(binding.dialect)
    if sql:
        binding.execute(sql)


def check_warehouse(binding: SqlSession, warehouse: int, after_load: bool = False) -> list[dict]:
    """The consistency conditions of one warehouse on an SQL session: the failures, each naming
    the condition, the warehouse and (where it applies) the district."""
    failures = []
    for cond, (title, sql, nparams) in S.CONDITIONS.items():
        if cond in S.AFTER_LOAD_ONLY and not after_load:
            continue
        for district, found in binding.fetchall(binding.prepare(sql), (warehouse,) * nparams):
            failures.append({"condition": cond, "title": title, "warehouse": warehouse,
                             "district": int(district) if district is not None else None,
                             "found": float(found) if found is not None else None})
    return failures


def check(binding: SqlSession, warehouses: Iterable[int], after_load: bool = False) -> dict:
    """Every condition on every warehouse given; {"passed", "conditions", "warehouses", "failures"}."""
    t0 = time.time()
    failures = []
    warehouses = list(warehouses)
    for wh in warehouses:
        failures += check_warehouse(binding, wh, after_load)
    return check_result(failures, len(warehouses), after_load, time.time() - t0)


def check_result(failures: list[dict], warehouses: int, after_load: bool, seconds: float) -> dict:
    """A check's outcome from its failures (in warehouse order): what the campaign's stages,
    ``check`` and the command report."""
    conds = [c for c in S.CONDITIONS if after_load or c not in S.AFTER_LOAD_ONLY]
    return {"passed": not failures, "conditions": conds, "warehouses": warehouses,
            "failures": failures[:100], "failures_total": len(failures), "seconds": round(seconds, 3)}


