"""TPC-C (standard specification 5.11) as a workload family: the nine tables and their
population (clause 4.3), the five transactions (clause 2.4 - 2.8) dealt from a card deck
(45/43/4/4/4, clause 5.2.4.2), keying and think times (off by default), the consistency
conditions (clause 3.3.2) and the white papers' figures: tpmC / tpmTotal from the clients,
NOPM from the database (HammerDB: the change of sum(d_next_o_id) over the window), the
clients' count of the same window, exact (the New-Orders committed around the ramp-up's end
placed by their o_id: ``BAND_S``), and TPM from the server's commit + rollback counters.

Warehouses are the unit of partitioning (go-tpc, CockroachDB's workload/tpcc):
- load: units of work are ITEM chunks (10 x 10,000 items, all for global client thread 0)
  and districts (one unit = one district of one warehouse: its DISTRICT row, 3,000
  customers and their history, 3,000 orders, their order lines, 900 new orders, and a tenth
  of the warehouse's STOCK; district 1 also writes the WAREHOUSE row), each in one
  transaction. A unit whose DISTRICT row (ITEM chunk's last item) exists was committed
  before: it is skipped, so a load that stopped half-way (a deadline, a killed shard) resumes
  without duplicates, and re-running a whole load changes nothing.
- run: virtual user g of G (global client thread index) has home warehouse g mod W + 1 and
  home district (g div W) mod 10 + 1; remote accesses (1% of order lines, 15% of payments)
  go to any other warehouse.

Transactions run through the binding's ``sql`` session inside ``Measured.event``, which times
them and rolls back and reruns deadlocks / serialization failures (counted in ``retries``).
The 1% New-Order rollback (an unused item number) is the transaction's own outcome, not an
error: its body rolls back itself and returns, so it is neither retried nor an error; it is
timed as a New-Order and counted in ``new_order_rollbacks`` (tpmC counts it, as go-tpc and
the specification's clause 5.4.2 do; the committed New-Orders are reported beside it).

In BenchBase's shape: ``model`` (the sizes, the mix, the workload's keys, the random values),
``load`` (the population and its loader), ``transactions`` (the deck, the session, the five
transactions, the virtual user's loop), ``check`` (the consistency conditions), ``summary``
(the phase's figures, its CSV columns and report table); this module wires them into the
family.
"""
from __future__ import annotations

from typing import Optional

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families import base as families
from dbswarm.families.base import Client, Family, RunLimits, ThreadContext, split
from dbswarm.families.tpcc import sql as S
from dbswarm.families.tpcc import summary
from dbswarm.families.tpcc.check import check, check_result, check_warehouse, refresh_statistics
from dbswarm.families.tpcc.load import LoadClient
from dbswarm.families.tpcc.model import DISTRICTS, ITEM_UNITS, PRESETS, READ_ONLY, TRANSACTIONS, TpccWorkload
from dbswarm.families.tpcc.transactions import RunClient
from dbswarm.measure.recorder import Measurement


class Tpcc(Family[TpccWorkload]):
    name = "tpcc"
    model = TpccWorkload
    requires = "sql"
    label_key = "warehouses"
    dialects = tuple(S.TYPES)  # the dialects sql.py has rows for (a test checks every table has them)

    def read_operations(self, w: TpccWorkload) -> tuple[str, ...]:
        return READ_ONLY  # Order-Status and Stock-Level only read (clauses 2.6, 2.8)

    def write_operations(self, w: TpccWorkload) -> tuple[str, ...]:
        return tuple(t for t in TRANSACTIONS if t not in READ_ONLY) + ("LOAD_ITEMS", "LOAD_DISTRICT")

    def presets_text(self) -> list[str]:
        return ["tpcc (workload.family: tpcc): warehouses, threads (virtual users), time, rampup;",
                "  preset: quick      " + ", ".join(f"{k}: {v}" for k, v in PRESETS["quick"].items()),
                "  preset: published  " + ", ".join(f"{k}: {v}" for k, v in PRESETS["published"].items())
                + " (the white papers: 100-1000 warehouses, threads stepped 8..256 until tpmC peaks)",
                "  mix 45/43/4/4/4 (New-Order, Payment, Order-Status, Delivery, Stock-Level) from a card deck; "
                "keying_and_thinking: false"]

    def limits(self, w: TpccWorkload) -> RunLimits:
        return RunLimits(count=w.transactions, time=w.rampup + w.time)

    def load_range(self, w: TpccWorkload) -> tuple[int, int]:
        return 0, ITEM_UNITS + DISTRICTS * w.warehouses

    def split_load(self, w: TpccWorkload, threads: int) -> list[list[int]]:
        """ITEM (units 0..9) to global thread 0, then the districts in contiguous ranges of whole
        warehouses (of districts when there are more threads than warehouses)."""
        W = w.warehouses
        if threads <= W:
            shares = [n * DISTRICTS for n in split(W, threads)]
        else:
            shares = split(DISTRICTS * W, threads)
        out, start = [], ITEM_UNITS
        for i, n in enumerate(shares):
            if i == 0:
                out.append([0, ITEM_UNITS + n])
            else:
                out.append([start, n])
            start += n
        return out

    def tables(self, w: TpccWorkload) -> list[str]:
        return list(S.TABLES)

    def prepare(self, binding: SqlSession, w: TpccWorkload, stage: str) -> Optional[dict]:
        d = binding.dialect
        if stage == "before_load":
            for t in S.TABLES:
                binding.execute(S.DROP.format(t=t))
                binding.execute(S.text(S.CREATE[t], d, options=binding.table_options))
        elif stage == "after_load":
            for name, (table, cols) in S.INDEXES.items():
                exists = S.INDEX_EXISTS.get(d)
                if exists and (binding.fetchone(binding.prepare(exists), (table, name)) or (0,))[0]:
                    continue
                binding.execute(S.CREATE_INDEX[d].format(name=name, table=table, cols=cols))
            refresh_statistics(binding)  # the check after the load plans its joins on them
        elif stage == "cleanup":
            for t in S.TABLES:
                binding.execute(S.DROP.format(t=t))
        return None

    def has_stage(self, w: TpccWorkload, stage: str) -> bool:
        return stage != "after_run"  # the check after the run is dbswarm.engine.checks', by warehouse

    # the consistency check, a warehouse at a time (dbswarm.engine.checks splits the warehouses into
    # ranges over the run's shards, checked in parallel, each over as many calls as it takes)
    check_unit_name = "warehouses"

    def check_units(self, w: TpccWorkload, stage: str) -> int:
        return w.warehouses if stage in w.check else 0

    def check_unit(self, binding: SqlSession, w: TpccWorkload, stage: str, unit: int) -> list[dict]:
        return check_warehouse(binding, unit + 1, after_load=stage == "after_load")

    def check_summary(self, w: TpccWorkload, stage: str, failures: list[dict], seconds: float) -> dict:
        return check_result(failures, w.warehouses, stage == "after_load", seconds)

    def window_after_warmup(self, w: TpccWorkload) -> bool:
        return w.rampup > 0

    def check(self, binding: SqlSession, w: TpccWorkload, after_load: bool = False) -> dict:
        """The consistency conditions on every warehouse of the workload."""
        return check(binding, range(1, w.warehouses + 1), after_load)

    def run_client(self, w: TpccWorkload, ctx: ThreadContext) -> Client:
        return RunClient(w, ctx)

    def load_client(self, w: TpccWorkload, ctx: ThreadContext, start: int, count: int) -> Client:
        return LoadClient(w, ctx, start, count)

    def window_snapshot(self, binding: SqlSession, w: TpccWorkload, phase: str) -> Optional[dict]:
        return summary.window_snapshot(binding, phase)

    def client_statements(self, w: TpccWorkload, phase: str, measurement: Measurement) -> Optional[dict]:
        if phase != "run":
            return None
        return summary.client_statements(measurement, self.window_after_warmup(w))

    def window_client_statements(self, w: TpccWorkload, phase: str, measurement: Measurement,
                                 window: dict) -> Optional[dict]:
        """The clients' transactions over the window as read: from the ramp-up's end where the
        start edge was read then, else (read before the shards) over the whole phase."""
        if phase != "run" or not self.window_after_warmup(w) or (window or {}).get("after_warmup_s"):
            return self.client_statements(w, phase, measurement)
        return summary.client_statements(measurement, False)

    def committed_new_orders(self, measurement: Measurement) -> int:
        return summary.committed_new_orders(measurement)

    def clients_in_window(self, measurement: Measurement, start: Optional[dict]) -> tuple[Optional[int], str]:
        return summary.clients_in_window(measurement, start)

    def phase_summary(self, w: TpccWorkload, phase: str, measurement: Measurement, duration: float,
                      window: Optional[dict] = None) -> Optional[dict]:
        return summary.phase_summary(w, phase, measurement, duration, window)

    CSV = summary.CSV

    def csv_fields(self) -> list[str]:
        return summary.csv_fields()

    def csv_values(self, run: dict, phase: str, result: dict) -> dict:
        return summary.csv_values(self.name, run, phase, result)

    def report_tables(self, runs: list[dict]) -> str:
        return summary.report_tables(runs)


families.register(Tpcc())  # the consistency check as a command: `dbswarm check` (run/front/tpcc_check.py)
