"""bench/acceptance.py judges each of issue 36's cells against its bar from the comparison
scripts' records: synthetic records (the scripts' own field names), no servers, no runs."""
from bench import acceptance as A

LOCAL = {"mysql": {"engine": "mysql", "url": "mysql://u@127.0.0.1:3306/db"},
         "postgresql": {"engine": "postgresql", "url": "postgresql://u@127.0.0.1:5432/db"}}
REMOTE = {e: dict(t, url=t["url"].replace("127.0.0.1", "db.example.com")) for e, t in LOCAL.items()}


def ratio(median, lo=None, hi=None):
    return {"median": median, "min": lo if lo is not None else median, "max": hi if hi is not None else median}


def test_sysbench_cells_are_the_pinned_ones_at_095():
    data = {"comparisons": [
        {"engine": "mysql", "test": "oltp_read_only", "threads": 16, "mode": "pinned", "tps_ratio": ratio(0.94)},
        {"engine": "mysql", "test": "oltp_read_write", "threads": 128, "mode": "pinned", "tps_ratio": ratio(0.95),
         "dbswarm_server_busy": 0.994, "sysbench_server_busy": 1.0, "dbswarm_server_cpu_ms_per_trx": 1.1725,
         "sysbench_server_cpu_ms_per_trx": 1.0295},
        {"engine": "postgresql", "test": "oltp_read_only", "threads": 16, "mode": "shared", "tps_ratio": ratio(2.0)},
        {"engine": "postgresql", "test": "oltp_read_write", "threads": 16, "mode": "pinned", "failed": "boom"}]}
    cells = A.judge_sysbench(data, "r.json")
    assert [c["met"] for c in cells] == [False, True, False]
    assert "MariaDB oltp_read_only, 16 threads" in cells[0]["what"] and cells[2]["value"] is None
    assert all(c["record"] == "r.json" for c in cells)
    # where the record has the server's busy share (since 2026-11-28 night), the note says it
    assert cells[0]["note"] == "" and cells[1]["note"] == ("server busy 0.99 / 1.00 of the window, CPU per "
                                                           "transaction over the run 1.17 / 1.03 ms (dbswarm / sysbench)")


def test_ycsb_cpu_cell_only_for_a_and_b_pinned_from_per_round_ratios():
    def row(w, mode, ops, cpus_db, cpus_go):
        return {"engine": "postgresql", "workload": w, "threads": 128, "mode": mode, "ops_ratio": ratio(ops),
                "dbswarm": [{"cpu_us_per_op": c} for c in cpus_db], "go-ycsb": [{"cpu_us_per_op": c} for c in cpus_go]}
    data = {"comparisons": [row("a", "pinned", 0.91, [60, 130, 70], [50, 100, 60]),  # 1.2, 1.3, 1.167
                            row("c", "pinned", 0.89, [1], [1]),
                            dict(row("a", "pinned", 5, [1], [1]), engine="mongodb")]}
    cells = A.judge_ycsb(data, "y.json", "pinned", 0.9)
    assert [c["what"].split(":")[0] for c in cells] == [
        "÷ go-ycsb ops/s, pinned", "client CPU per operation ÷ go-ycsb's, pinned", "÷ go-ycsb ops/s, pinned"]
    assert cells[0]["met"] and not cells[2]["met"]
    cpu = cells[1]["value"]
    assert (cpu["median"], cpu["min"], cpu["max"]) == (1.2, 1.167, 1.3) and cells[1]["met"]
    shared = A.judge_ycsb({"comparisons": [row("a", "shared", 0.79, [1], [1])]}, "y.json", "shared", 0.8)
    assert len(shared) == 1 and not shared[0]["met"] and shared[0]["bar"] == "≥ 0.8"


def test_tpcc_cells_at_095_pinned_only():
    data = {"comparisons": [{"engine": "postgresql", "threads": 128, "mode": "pinned", "tpmC_ratio": ratio(0.96)},
                            {"engine": "mysql", "threads": 128, "mode": "shared", "tpmC_ratio": ratio(0.5)}]}
    cells = A.judge_tpcc(data, "t.json")
    assert len(cells) == 1 and cells[0]["met"] and "PostgreSQL, 128 threads" in cells[0]["what"]


def _flat_record(cpu):
    """cpu: {(engine, threads): {model: µs}} -> a client_model record's rows."""
    return {"comparisons": [{"engine": e, "workload": "c", "threads": n, "mode": "pinned", "cpu_us_per_op": m}
                            for (e, n), m in cpu.items()]}


def test_flat_compares_the_default_models_choice_at_each_count():
    models = {16: {"threads": 50, "multiplexed": 80, "go-ycsb": 20},
              128: {"threads": 100, "multiplexed": 57, "go-ycsb": 30},
              512: {"threads": 200, "multiplexed": 58, "go-ycsb": 90}}
    data = _flat_record({(e, n): m for e in ("mysql", "postgresql") for n, m in models.items()})
    cells = A.judge_flat(data, "f.json", LOCAL)
    assert len(cells) == 4
    # a local server: threads at 16 connections, the multiplexer at 128 and 512 (auto)
    assert [c["value"]["median"] for c in cells] == [1.14, 1.16] * 2
    assert [c["met"] for c in cells] == [True, False] * 2
    assert "default: threads 50 µs → multiplexed 57 µs" in cells[0]["note"]
    assert "threads 50 → 100 µs (2.00)" in cells[0]["note"]
    # a remote server: auto keeps threads everywhere
    remote = A.judge_flat(data, "f.json", REMOTE)
    assert [c["value"]["median"] for c in remote] == [2.0, 4.0] * 2 and not any(c["met"] for c in remote)


def test_flat_missing_counts_are_cells_not_met():
    data = _flat_record({("postgresql", 16): {"threads": 50}, ("postgresql", 128): {"threads": 55}})
    cells = A.judge_flat(data, "f.json", REMOTE)
    assert len(cells) == 4
    assert all(c["note"] == "not measured" and not c["met"] for c in cells if "MariaDB" in c["what"])
    pg = [c for c in cells if "PostgreSQL" in c["what"]]
    assert pg[0]["met"] and pg[0]["value"]["median"] == 1.1
    assert pg[1]["note"] == "not measured" and not pg[1]["met"]


def test_markdown_counts_and_marks():
    data = {"command": "python bench/acceptance.py", "date": "d", "loadavg": {"before": [1], "after": [2]},
            "machine": {"nproc": 2, "cpu_model": "x", "memory_gb": 1, "kernel": "k", "python": "3"},
            "records": {"sysbench": "bench/results/vs_sysbench-1.json"},
            "cells": [A.cell("one", ratio(1.0, 0.9, 1.1), "≥ 0.95", True, "r"),
                      A.cell("two", None, "≥ 0.95", False, "r", "not measured")]}
    md = A.markdown(data)
    assert "**1 of 2 cells meet their bar.**" in md
    assert "| one | 1.000 (0.90–1.10) | ≥ 0.95 | yes |  |" in md
    assert "| two | n/a | ≥ 0.95 | **no** | not measured |" in md
    assert "sysbench `bench/results/vs_sysbench-1.json`" in md
