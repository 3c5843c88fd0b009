"""Result files: white-paper tables, published figures, CSV shapes; the format round-trips."""
import csv
import io
import json

import pytest

from dbswarm.families.published import published_for
from dbswarm.measure.recorder import Measurement, Timeline
from dbswarm.results.aggregate import merge_phase as merge_run_phase
from dbswarm.results.phase import PhaseResult
from dbswarm.results.report.files import CSV_FIELDS, result_csv, summary_markdown, timeseries_csv


def _shard_doc(ops, start):
    m = Measurement()
    for op, (count, lat) in ops.items():
        s = m.op(op)
        s.count = count
        s.histogram.record_value(lat, count)
    m.timeline = Timeline(start)
    m.timeline.ops = {op: [c // 4] * 4 for op, (c, _) in ops.items()}
    return {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": 0, "threads": 1,
            "binding": {"engine": "mongodb", "is_real_database": True},
            "measurement": m.to_dict(), "started_at": start, "ended_at": start + 4.0, "status": "done",
            "start_skew_s": 0.01}


def merge_phase(run, phase, docs, failures):
    return merge_run_phase(run["family"], run["workload"], run["shard_count"], phase, docs, failures)


def _result(label="4 vCPUs 16 GB", presets=("S2", "S6")):
    runs = []
    for i, preset in enumerate(presets):
        run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "preset": preset,
                                                                "recordcount": 1000, "warmuptime": 0}}
        docs = {0: _shard_doc({"READ": (400, 200), "UPDATE": (400, 900)}, 1000),
                1: _shard_doc({"READ": (400, 300), "UPDATE": (400, 1100)}, 1000)}
        phase = merge_phase(run, "run", docs, {})
        runs.append({"run_id": f"00{i}-{preset}", "index": i, "axes": {}, "threads": 8, "shard_count": 2,
                     "target": {"engine": "mongodb", "label": label, "url": None, "is_real_database": True,
                                "options": {"reference": {"version": "4.0", "topology": "Replica Set"}}},
                     "workload": {"family": "ycsb", "name": preset, "recordcount": 1000},
                     "phases": {"run": phase}})
    return {"schema_version": 1, "campaign_id": "c", "name": "n", "seed": 1, "status": "complete",
            "runs": runs, "missing_shards": []}


def test_merge_phase_exact_and_white_paper_table():
    result = _result()
    phase = result["runs"][0]["phases"]["run"]
    assert phase["operations_total"] == 1600 and phase["mix"] == {"READ": 0.5, "UPDATE": 0.5}
    assert phase["steady"]["seconds"] == 4 and phase["throughput"] == 400.0
    assert phase["read_latency"]["p50_us"] in (200, 300) and phase["read_latency"]["max_us"] >= 300
    md = summary_markdown(result)
    assert "| instance | threads | S2 | S6 |" in md and "| 4 vCPUs 16 GB | 8 | 400 | 400 |" in md
    assert "Published figures for the same instance class" in md
    assert "DDS (MongoDB) 4.0" in md and "Cluster" not in md.split("Published figures")[1].split("###")[0]


def test_published_figures_match_reference_rows():
    figures = published_for("4 vCPUs 16 GB", ["S1", "S6"], {"version": "4.0"})
    assert figures and all(k[1] == "4.0" for k in figures)
    assert all(v > 0 for f in figures.values() for v in f.values())
    assert published_for("no such class", ["S1"]) == {}


def test_csv_files_parse():
    result = _result()
    rows = list(csv.DictReader(io.StringIO(result_csv(result))))
    assert {r["operation"] for r in rows} == {"READ", "UPDATE"} and rows[0]["count"] == "800"
    # a family adds its columns only to results that hold its runs (this one: YCSB, which adds none)
    assert list(rows[0]) == CSV_FIELDS
    ts = list(csv.DictReader(io.StringIO(timeseries_csv(result))))
    assert sum(int(r["count"]) for r in ts) == 3200


def test_missing_shard_is_named():
    run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}
    phase = merge_phase(run, "run", {0: _shard_doc({"READ": (100, 50)}, 10), 1: None}, {1: "process died"})
    assert phase["status"] == "partial" and phase["shards"]["missing"] == [{"shard": 1, "reason": "process died"}]
    assert phase["operations_total"] == 100
    json.dumps(phase)


def test_abandoned_client_threads_are_counted_and_listed():
    result = _result(presets=("S2",))
    assert "Client threads abandoned" not in summary_markdown(result)
    run = {"shard_count": 2, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}
    stuck = dict(_shard_doc({"READ": (100, 50)}, 10), segments=[{"abandoned_threads": 1}, {"abandoned_threads": 2}])
    phase = merge_phase(run, "run", {0: _shard_doc({"READ": (100, 50)}, 10), 1: stuck}, {})
    assert phase["abandoned_threads"] == {"count": 3, "per_shard": {1: 3}}
    result["runs"][0]["phases"]["run"] = phase
    md = summary_markdown(result)
    assert "**Client threads abandoned**" in md and "- run 000-S2, run phase: 3 (shard 1: 3)" in md
    json.dumps(phase)


def test_error_threshold_decides_complete_with_errors():
    run = {"shard_count": 1, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}

    def with_errors(n, key="READ:fatal:UndefinedTable"):
        doc = _shard_doc({"READ": (99, 50)}, 10)
        doc["measurement"]["errors"] = {key: n}
        return {0: doc}
    ok = merge_phase(run, "run", with_errors(1), {})        # 1 of 100 calls: at the 1 % threshold
    assert ok["status"] == "complete" and ok["error_rate"] == 0.01 and "error_problems" not in ok
    bad = merge_phase(run, "run", with_errors(2), {})       # 2 of 101
    assert bad["status"] == "complete_with_errors"
    assert bad["error_problems"] == ["READ: 2 of 101 calls failed (fatal: UndefinedTable ×2)"]
    resumed_load = merge_phase(run, "load", with_errors(50, "READ:duplicate:duplicate_key"), {})
    assert resumed_load["status"] == "complete" and resumed_load["error_rate"] == 0
    strict = merge_run_phase("ycsb", run["workload"], 1, "run", with_errors(1), {}, max_error_rate=0.0)
    assert strict["status"] == "complete_with_errors"
    # deadlocks that were rolled back and retried until the transaction committed lost no work
    retried = with_errors(30, "READ:retryable:deadlock")
    retried[0]["measurement"]["counters"] = {"retries": 30}
    assert merge_phase(run, "run", retried, {})["status"] == "complete"
    retried[0]["measurement"]["counters"] = {"retries": 28}  # two were given up on: 2 of 101
    assert merge_phase(run, "run", retried, {})["status"] == "complete_with_errors"


def _charts(page: str) -> list[dict]:
    import re
    m = re.search(r"<script type='application/json' id='dbswarm-charts'>(.*?)</script>", page, re.S)
    return json.loads(m.group(1))


def test_report_html_is_self_contained_with_charts_and_error_classes():
    from dbswarm.results.report.files import report_html
    result = _result()
    result["runs"][0]["phases"]["run"]["errors"] = {"UPDATE:retryable:deadlock": 3, "READ:fatal:OperationalError": 1}
    result["runs"][0]["phases"]["run"]["intervals"] = {  # per-interval percentiles (merged in test_intervals)
        "interval_s": 2, "start": 1000, "intervals": 2,
        "all": {"count": [1600, 1600], "p50_us": [200, 210], "p99_us": [1100, 0], "p99_9_us": [1100, 1100],
                "max_us": [1100, 1100]}}
    page = report_html(result)
    assert "<script src" not in page and "uPlot" in page and "MIT License" in page
    assert "}}" not in page.split("<script")[0]  # the CSS typo that dropped the table rule
    charts = {c["id"].rsplit("-", 1)[1]: c for c in _charts(page) if "000_S2" in c["id"]}
    assert set(charts) == {"tput", "lat", "spec", "shards"}
    assert charts["tput"]["x"] == [0, 1, 2, 3] and charts["tput"]["series"][0]["values"] == [400, 400, 400, 400]
    assert {s["label"] for s in charts["lat"]["series"]} == {"p50", "p99", "p99.9", "max"} and charts["lat"]["ylog"]
    assert charts["lat"]["x"] == [0, 2] and charts["lat"]["series"][1]["values"] == [1100, None]  # log axis: no 0
    spec = charts["spec"]
    assert spec["xlog"] and spec["x"][0] == 1 and spec["x"][8] == pytest.approx(10)  # 0 %, then 90 % a decade on
    read = next(s for s in spec["series"] if s["label"] == "READ")["values"]
    assert read[0] == 200 and read[-1] in (300, 301)  # shard 0 at 200 µs, shard 1 at 300 µs
    assert [s["label"] for s in charts["shards"]["series"]] == ["shard 0", "shard 1"]
    assert "rolled back and retried <b>(retried)</b>" in page and "counted, not retried" in page
    md = summary_markdown(result)
    assert "| 000-S2 | run | UPDATE | retryable | deadlock | 3 | rolled back and retried (**retried**) |" in md


def test_scaling_charts_for_a_matrix_over_threads():
    from dbswarm.results.report.html import scaling_charts
    result = _result(presets=("S2", "S2"))
    result["runs"][1]["threads"] = 16
    tput, p99 = scaling_charts("c", result)
    assert tput["x"] == [8, 16] and tput["series"][0]["values"] == [400.0, 400.0]
    assert p99["ylog"] and all(v > 0 for v in p99["series"][0]["values"])


def test_shard_series_stays_small():
    from dbswarm.results.aggregate import SHARD_SERIES_NUMBERS, shard_series
    one_hour = {i: (1000, [5] * 3600) for i in range(1000)}
    s = shard_series(one_hour)
    assert s["step_s"] == 180 and s["start"] == 1000
    assert sum(len(v) for v in s["ops"].values()) <= SHARD_SERIES_NUMBERS
    assert sum(sum(v) for v in s["ops"].values()) == 1000 * 3600 * 5  # every operation kept
    few = shard_series({0: (10, [1, 2, 3]), 1: (11, [4, 5])})
    assert few == {"start": 10, "step_s": 1, "ops": {"0": [1, 2, 3], "1": [0, 4, 5]}}


def test_the_summary_renders_as_rich_tables_in_a_terminal():
    """On a terminal the summary's Markdown tables are drawn as tables (rich); piped, it stays
    Markdown (the CLI tests read that)."""
    import io as _io

    from rich.console import Console

    from dbswarm.cli import _print_summary
    buf = _io.StringIO()
    _print_summary(summary_markdown(_result()), console=Console(file=buf, width=120, force_terminal=False))
    text = buf.getvalue()
    assert "|---|" not in text  # not Markdown's rule row
    assert any(ch in text for ch in "━─┃│")  # a drawn table
    assert "4 vCPUs 16 GB" in text and "S2" in text


def test_report_html_shows_start_skew_server_cross_check_and_published_figures():
    from dbswarm.results.report.files import report_html
    result = _result()
    run = result["runs"][0]["phases"]["run"]
    run["start_skew_s"] = {"max": 0.0123, "per_shard": {0: 0.0045, 1: 0.0123}}
    run["server"] = {"window_s": 4.0, "warnings": ["pg_stat_statements is not installed: statements not counted"],
                     "cross_check": {"transactions": {"client": 1600, "server": 1604, "ratio": 0.9975},
                                     "rows read": {"client": 800, "server": 0, "ratio": None}}}
    page = report_html(result)
    assert "start skew <b>max 12.3 ms <small>(0: 4.5 ms, 1: 12.3 ms)</small></b>" in page
    cross = page.split("<h4>Client-counted against server-counted</h4>")[1].split("</table>")[0]
    assert "<td>transactions</td><td>1,600</td><td>1,604</td><td>0.9975</td>" in cross
    assert "<td>rows read</td><td>800</td><td>0</td><td>–</td>" in cross  # no ratio against 0
    assert "pg_stat_statements is not installed" in page  # the summary's warning reaches the page
    published = page.split("<h3>Published figures for the same instance class (OPS)</h3>")[1].split("</table>")[0]
    assert "<strong>measured: 4 vCPUs 16 GB, 8 threads</strong></td>\n<td>400</td>\n<td>400</td>" in published
    assert "DDS (MongoDB) 4.0" in published
    # without the data, none of the three appears
    plain = report_html(_result(label="no such class"))
    assert "start skew <b>max 10.0 ms" in plain  # both shards' 10 ms of _shard_doc
    assert "Client-counted against server-counted" not in plain and "Published figures" not in plain


def test_short_phases_get_a_note_not_a_stub_chart_and_no_steady_window_is_a_dash():
    from dbswarm.results.report.files import report_html
    from dbswarm.results.report.html import throughput_chart
    result = _result(presets=("S2",))
    phase = result["runs"][0]["phases"]["run"]
    assert throughput_chart("c", "000-S2", "run", PhaseResult.of(phase))["title"].endswith("steady window 0–4 s")
    phase["timeline"]["ops"] = {op: seq[:2] for op, seq in phase["timeline"]["ops"].items()}  # a 2-second phase
    phase["duration_s"], phase["steady"] = 1.6, {"window": [1001, 1001], "seconds": 0, "ops_per_s": None}
    assert throughput_chart("c", "000-S2", "run", PhaseResult.of(phase)) is None
    page = report_html(result)
    assert "The phase lasted 1.6 s: too short for a chart over time" in page
    assert not [c for c in _charts(page) if c["id"].endswith("tput")] and "steady window 1–1 s" not in page
    assert "ops/s steady <b>– (no steady window)</b>" in page
    md = summary_markdown(result)
    runs = md.split("### Runs")[1]
    assert "| – | READ 50.0%" in runs and "(0)" not in runs


def test_timeseries_csv_has_the_intended_start_percentiles_of_a_paced_run(tmp_path):
    """At a target rate, timeseries.csv carries each interval's response-time percentiles from the
    intended start (result.json's intervals.intended) beside the service-time ones."""
    from pathlib import Path

    from dbswarm.run.runtime import service
    out = service.run_steps({"name": "paced", "target": {"engine": "noop"}, "phases": ["run"],
                             "workload": {"preset": "c", "recordcount": 100, "operationcount": 400, "target": 200,
                                          "threads": 2}},
                            str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)],
                            lead_seconds=0)
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    iv = result["runs"][0]["phases"]["run"]["intervals"]
    rows = list(csv.DictReader(io.StringIO((folder / "timeseries.csv").read_text())))
    assert rows and "interval_intended_p99_us" in rows[0] and "interval_p99_us" in rows[0]
    for row in rows:
        k = (int(row["epoch_second"]) - iv["start"]) // iv["interval_s"]
        if not 0 <= k < iv["intervals"]:
            assert row["interval_intended_p99_us"] == ""
            continue
        want = iv["intended"]["by_operation"][row["operation"]]["p99_us"][k]
        assert row["interval_intended_p99_us"] == ("" if want is None else str(want))
    assert any(row["interval_intended_p99_us"] for row in rows)


def test_workload_e_scans_are_in_the_read_latency_table():
    """Workload e is 95 % SCAN, 5 % INSERT: its read latency is its scans' (it was "–")."""
    run = {"shard_count": 1, "family": "ycsb", "workload": {"family": "ycsb", "warmuptime": 0}}
    phase = merge_phase(run, "run", {0: _shard_doc({"SCAN": (380, 900), "INSERT": (20, 300)}, 1000)}, {})
    assert phase["read_latency"]["calls"] == 380 and phase["read_latency"]["p50_us"] in range(895, 905)
    result = _result(presets=("S2",))
    result["runs"][0]["workload"]["name"] = "e"
    result["runs"][0]["phases"]["run"] = phase
    md = summary_markdown(result)
    section = md.split("### Read latency (RAL)")[1].split("###")[0]
    row = next(line for line in section.splitlines() if line.startswith("| 4 vCPUs 16 GB"))
    assert row.endswith(f"| {phase['read_latency']['avg_us']:,.0f} / {phase['read_latency']['p99_us']:,} |"), row


def test_no_client_chart_of_lone_dots():
    """One client sample per shard, seconds after the timeline's start (a 2-s TPC-C load): no
    chart (it drew a dot per shard on an empty plot, and the browser check found it blank);
    two samples of one shard: a chart."""
    from dbswarm.results.report.html import client_charts
    one = {"start": 1002.03, "step_s": 1.0, "cpu_share": [0.8], "wakeup_delay_us": [2700.0]}
    phase = {"timeline": {"start": 1000}, "client": {"series": {"0": [one], "1": [dict(one, cpu_share=[0.9])]}}}
    assert client_charts("c", "004", "load", PhaseResult.of(phase)) == []
    two = dict(one, cpu_share=[0.8, 0.7], wakeup_delay_us=[2700.0, 2500.0])
    phase["client"]["series"]["0"] = [two]
    charts = client_charts("c", "004", "load", PhaseResult.of(phase))
    assert len(charts) == 2 and all(len(c["x"]) == 5 for c in charts), charts


HOSTILE_LABEL = "<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) a|b `c"


def test_summary_md_writes_every_string_as_literal_markdown():
    """Issue 57 item 5: a label (and a driver's error text) kept raw HTML and a javascript: link,
    which Markdown renderers on code hosts render, and its `|` broke the table it was a cell of."""
    import re

    import markdown_it
    result = _result(label=HOSTILE_LABEL)
    result["runs"][0]["phases"]["run"]["problems"] = [
        "the server said <img src=y onerror=alert(4)> | [y](javascript:alert(5))\n# heading"]
    md = summary_markdown(result)
    assert "<script" not in md and "<img" not in md and "\n# heading" not in md
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # an escaped "\]" is no link
    # rendered as a code host renders it: CommonMark with raw HTML allowed, GFM tables
    page = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert "<script" not in page and "<img" not in page and "href=\"javascript" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "[x](javascript:alert(3)) a|b `c" in page
    # the white-paper table: the label one cell, the row as many cells as the header
    lines = md.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| instance |"))
    cells = [len(re.findall(r"(?<!\\)\|", line)) for line in lines[head:head + 3]]
    assert cells[0] == cells[1] == cells[2], lines[head:head + 3]
    row = re.split(r"(?<!\\)\|", lines[head + 2])
    assert row[1].strip().startswith("&lt;script&gt;") and row[1].strip().endswith("a\\|b \\`c"), row
    rendered_rows = re.findall(r"<tr>\s*<td>(.*?)</td>", page, re.S)
    assert any(r.startswith("&lt;script&gt;") and r.endswith("a|b `c") for r in rendered_rows), rendered_rows


def test_an_average_above_p99_is_said_under_its_table():
    result = _result()
    p = result["runs"][0]["phases"]["run"]
    p["read_latency"] = dict(p["read_latency"] or {}, calls=1000, avg_us=125.0, p99_us=37, max_us=90_000)
    md = summary_markdown(result)
    assert "An average above p99 means fewer than 1 %" in md and "average 125 µs above p99 37 µs" in md
    p["read_latency"]["avg_us"] = 20.0
    assert "An average above p99" not in summary_markdown(result)


def test_the_report_shows_its_charts_before_its_tables_and_trims_empty_seconds():
    from dbswarm.results.report.files import report_html
    result = _result()
    tl = result["runs"][0]["phases"]["run"]["timeline"]
    tl["ops"] = {op: [0, 0] + seq + [0, 0] for op, seq in tl["ops"].items()}  # idle seconds at both ends
    page = report_html(result)
    first_chart = page.index("class='chart'")
    assert first_chart < page.index(">Tables</h2>") and first_chart < page.index("class='ops'")
    assert first_chart < page.index("<h2>Targets") and page.index("<h2>Overview") < first_chart
    tput = next(c for c in _charts(page) if c["id"].endswith("000_S2-run-tput"))
    assert tput["x"] == [2, 3, 4, 5] and all(v > 0 for v in tput["series"][0]["values"])


def test_a_row_per_workload_with_its_records_threads_ops_ral_and_wal():
    """Issue 56 item 6: the ApsaraDB papers' shape, one row per read:write ratio with its record
    count, threads, throughput, RAL and WAL (dbswarm printed one-column tables, no record count)."""
    result = _result(presets=("95:5", "50:50"))
    md = summary_markdown(result)
    section = md.split("### One row per workload: records, threads, OPS, RAL, WAL")[1].split("###")[0]
    assert "| instance | workload | records | threads | OPS | RAL µs | WAL µs |" in section
    for run in result["runs"]:
        p = run["phases"]["run"]
        row = (f"| 4 vCPUs 16 GB | {run['workload']['name']} | 1,000 | 8 | {p['throughput']:,.0f} | "
               f"{p['read_latency']['avg_us']:,.0f} | {p['write_latency']['avg_us']:,.0f} |")
        assert row in section, (row, section)
