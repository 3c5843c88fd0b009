"""The binding protocol: what a database must offer dbswarm.

One Binding instance is one client connection, used by one thread. Bindings never time
themselves: ``dbswarm.measure`` wraps every call. They raise their driver's exceptions and
say, in ``classify``, what kind of error each is; the retry and reconnect policy lives in
the worker, once for all engines (BenchBase's approach).

Capabilities are plain methods; an engine that lacks one raises NotImplementedError and
the plan rejects workloads it cannot serve (``supports``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

# Error kinds, as the worker acts on them.
RETRYABLE = "retryable"    # deadlock, lock wait timeout, serialization failure: retry the event
CONNECTION = "connection"  # the connection is gone: reconnect, count, go on
DUPLICATE = "duplicate"    # duplicate key on insert (a resumed load): counted, not fatal
FATAL = "fatal"            # anything else: counted; the shard goes on, the error is reported


@dataclass(frozen=True)
class ErrorClass:
    kind: str   # one of the four kinds above
    name: str   # short, stable, e.g. "deadlock", "lock_wait_timeout", "connection_lost"


@dataclass
class Connection:
    """What a binding needs to connect: never printed (password) — use ``display``."""
    engine: str
    url: Optional[str]
    password: Optional[str] = None
    options: dict[str, Any] = field(default_factory=dict)
    display: str = ""


class Binding:
    """Base class; subclasses set ``name`` and implement what they support."""
    name = "base"
    families = ("ycsb", "sysbench")
    is_real_database = True

    def __init__(self, conn: Connection):
        self.conn = conn

    # -- life cycle ------------------------------------------------------------------
    def connect(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reconnect(self) -> None:
        try:
            self.close()
        except Exception:
            pass
        self.connect()

    def classify(self, exc: BaseException) -> ErrorClass:
        return ErrorClass(FATAL, type(exc).__name__)

    def describe(self) -> dict:
        """Settings recorded in the result (write concern, isolation ...): no secrets."""
        return {}

    # -- YCSB (CoreWorkload); values are dicts field name -> str ------------------------
    def ycsb_create(self, table: str, fieldcount: int) -> None:
        """Drop and create the table/collection (prepare phase)."""
        raise NotImplementedError

    def ycsb_drop(self, table: str) -> None:
        raise NotImplementedError

    def ycsb_count(self, table: str) -> int:
        raise NotImplementedError

    # read and scan return the records, or with rows=False only how many there were (read:
    # 1 or 0): the same query, the whole result still read from the server, its values not
    # turned into Python objects. The worker's YCSB operations use rows=False (they only
    # count not-found reads), as sysbench's events do for their SELECTs below.
    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any:
        """The record's fields, or None when the key does not exist."""
        raise NotImplementedError

    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]],
             rows: bool = True) -> Any:
        """Up to ``count`` records with key >= startkey, in key order."""
        raise NotImplementedError

    def update(self, table: str, key: str, values: dict) -> bool:
        """False when the key does not exist."""
        raise NotImplementedError

    def insert(self, table: str, key: str, values: dict) -> None:
        raise NotImplementedError

    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
        """Load-phase insert; must be idempotent (existing keys are skipped, not errors)."""
        for key, values in rows:
            try:
                self.insert(table, key, values)
            except Exception as exc:
                if self.classify(exc).kind != DUPLICATE:
                    raise

    def delete(self, table: str, key: str) -> bool:
        raise NotImplementedError

    # -- sysbench OLTP (tables are numbered 1..N: sbtest1 ..) -------------------------
    def sb_create(self, table_no: int) -> None:
        """Drop and create sbtest<N> without the secondary index on k."""
        raise NotImplementedError

    def sb_load(self, table_no: int, rows: list[tuple[int, int, str, str]]) -> None:
        """Insert (id, k, c, pad) rows; idempotent."""
        raise NotImplementedError

    def sb_create_index(self, table_no: int) -> None:
        """CREATE INDEX k_<N> ON sbtest<N>(k), after the load as sysbench does."""
        raise NotImplementedError

    def sb_drop(self, table_no: int) -> None:
        raise NotImplementedError

    def sb_count(self, table_no: int) -> int:
        raise NotImplementedError

    def begin(self, writes: bool = True) -> None:
        """BEGIN; ``writes`` says whether the transaction will write (SQLite locks early)."""
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def rollback(self) -> None:
        raise NotImplementedError

    # The five SELECTs return the rows, or with rows=False only how many there were: the
    # whole result is still read from the server, its values are not turned into Python
    # objects (sysbench never looks at them either; the worker's events use rows=False).
    def sb_point_select(self, table_no: int, id_: int, rows: bool = True) -> Any:
        raise NotImplementedError

    def sb_simple_range(self, table_no: int, lo: int, hi: int, rows: bool = True) -> Any:
        raise NotImplementedError

    def sb_sum_range(self, table_no: int, lo: int, hi: int, rows: bool = True) -> Any:
        raise NotImplementedError

    def sb_order_range(self, table_no: int, lo: int, hi: int, rows: bool = True) -> Any:
        raise NotImplementedError

    def sb_distinct_range(self, table_no: int, lo: int, hi: int, rows: bool = True) -> Any:
        raise NotImplementedError

    def sb_index_update(self, table_no: int, id_: int) -> Any:
        raise NotImplementedError

    def sb_non_index_update(self, table_no: int, id_: int, c: str) -> Any:
        raise NotImplementedError

    def sb_delete(self, table_no: int, id_: int) -> Any:
        raise NotImplementedError

    def sb_insert(self, table_no: int, id_: int, k: int, c: str, pad: str) -> Any:
        raise NotImplementedError


def chunks(items: Iterable, size: int):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
