"""What the report says dbswarm did after an error, per family and phase, as the worker does it
(engine/calls.py) and as sysbench does (its PostgreSQL driver rolls back and restarts the event
on SQLSTATE 23505, a unique violation)."""
from dbswarm.results.report.files import errors_table
from dbswarm.results.report.html import error_rows


def _result():
    def run(run_id, family, phase, errors):
        return {"run_id": run_id, "workload": {"family": family}, "phases": {phase: {"errors": errors}}}
    return {"runs": [run("000-oltp_read_write", "sysbench", "run", {"TRANSACTION:duplicate:duplicate_key": 3,
                                                                    "TRANSACTION:retryable:deadlock": 2}),
                     run("001-oltp_read_write", "sysbench", "load", {"INSERT:duplicate:duplicate_key": 1}),
                     run("002-S4", "ycsb", "run", {"INSERT:duplicate:duplicate_key": 4}),
                     run("003-tpcc_warehouses_1", "tpcc", "load", {"LOAD_DISTRICT:duplicate:duplicate_key": 1})]}


def test_a_duplicate_key_is_reported_as_what_the_worker_did():
    actions = {(r[0], r[2], r[3]): r[6] for r in error_rows(_result())}
    restarted = "rolled back, the event run again (as sysbench does on SQLSTATE 23505)"
    assert actions[("000-oltp_read_write", "TRANSACTION", "duplicate")] == restarted
    assert actions[("000-oltp_read_write", "TRANSACTION", "retryable")] == "rolled back and retried"
    assert actions[("001-oltp_read_write", "INSERT", "duplicate")].startswith("counted as written")
    assert actions[("002-S4", "INSERT", "duplicate")] == "counted, not retried (a key that exists)"
    assert actions[("003-tpcc_warehouses_1", "LOAD_DISTRICT", "duplicate")] == restarted
    table = "\n".join(errors_table(_result()))
    assert f"| 000-oltp_read_write | run | TRANSACTION | duplicate | duplicate_key | 3 | {restarted} (**retried**) |" \
        in table, table
    assert "| 002-S4 | run | INSERT | duplicate | duplicate_key | 4 | counted, not retried (a key that exists) |" in table
