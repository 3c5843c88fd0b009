"""The local progress display at 80 columns: counts, ops/s, errors and elapsed time uncut;
a finished phase shows its average rate, not 0."""
import io
import json
import time

import pytest
from rich.console import Console

from dbswarm.run.runtime.local import ProgressBoard


@pytest.fixture(autouse=True)
def _a_terminal_not_dumb(monkeypatch):
    """Rich takes TERM=dumb (a chroot's, some CI runners') as 80 columns whatever width its
    Console is given: these tests draw at the widths they name."""
    monkeypatch.setenv("TERM", "xterm")


def _board(tmp_path, width):
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True, color_system=None, legacy_windows=False)
    return ProgressBoard(str(tmp_path), console=console), buf


def _shard(tmp_path, prefix, i, done, errors=0, classes=None):
    (tmp_path / f"{prefix}{i}.json").write_text(json.dumps({"done": done, "errors": errors,
                                                             "error_classes": classes or {}}))


def _row(board) -> str:
    board.progress.refresh()
    console = Console(width=board.console.width, record=True, file=io.StringIO(), color_system=None)
    console.print(board.progress.get_renderable())
    return [ln for ln in console.export_text().splitlines() if "ops/s" in ln][0]


def test_progress_fits_80_columns_with_counts_rate_and_time_uncut(tmp_path):
    board, buf = _board(tmp_path, 80)
    board.start_phase("003-oltp_read_write run (2 shards)", 1_000_000, "003.run.")
    _shard(tmp_path, "003.run.", 0, 600_000, 12_345)
    _shard(tmp_path, "003.run.", 1, 400_000)
    board._last = (0, time.time() - 1.0)
    board.poll()
    board.progress.refresh()
    line = board.progress.get_renderable()
    console = Console(width=80, record=True, file=io.StringIO(), color_system=None)
    console.print(line)
    out = console.export_text()
    board.stop()
    row = [ln for ln in out.splitlines() if "ops/s" in ln][0]
    assert len(row) <= 80, row
    assert "1,000,000/1,000,000" in row and "12,345 err" in row and "0:00:0" in row, row
    assert "…" not in row.split("━")[-1]  # nothing right of the bar is cut
    ops = int(row.split(" ops/s")[0].split()[-1].replace(",", ""))
    assert ops > 500_000


def test_a_finished_phase_shows_its_average_rate(tmp_path):
    board, buf = _board(tmp_path, 120)
    board.start_phase("000-S2 load (1 shard)", 5000, "000.load.")
    _shard(tmp_path, "000.load.", 0, 5000)
    time.sleep(0.2)
    board.end_phase()
    task = board.progress.tasks[-1]
    board.stop()
    assert task.fields["ops"] > 1000 and task.completed == 5000
    assert "(1 shard)" in buf.getvalue()


def test_state_machine_errors_are_unwrapped_into_one_line():
    import pytest

    from dbswarm.errors import DbswarmError
    from dbswarm.run.runtime.local import _unwrapped, _Watch
    assert _unwrapped("ValueError", "ValueError: ValueError: results: unsupported scheme 'ftp'") \
        == "results: unsupported scheme 'ftp'"
    assert _unwrapped("dbswarm.CampaignError", "CampaignError: invalid campaign:\n  - target.url: missing") \
        == "invalid campaign:\n  - target.url: missing"
    assert _unwrapped("States.TaskFailed", "the worker died") == "the worker died"
    watch = _Watch("c-1", print, board=None)
    cause = '{"errorType": "ValueError", "errorMessage": "results: unsupported scheme \'ftp\'"}'
    with pytest.raises(DbswarmError) as err:
        watch.outcome({"status": "FAILED", "error": "ValueError", "cause": cause}, {}, [])
    assert str(err.value) == "results: unsupported scheme 'ftp'"


def test_progress_names_the_top_error_class_and_marks_it_retried(tmp_path):
    """At 120 columns the class and "retried" in full; at 80 the class is abbreviated first,
    and counts, ops/s and elapsed time stay uncut."""
    classes = {"UPDATE:retryable:deadlock_detected_during_update": 9_000, "READ:retryable:deadlock_detected_during_update": 3_000,
               "READ:fatal:OperationalError": 345}
    for width, expect in ((120, "12,345 err deadlock_detected_during_update retried"),
                          (80, "12,345 err dead… retried")):
        board, _ = _board(tmp_path, width)
        board.start_phase("003-oltp_read_write run (2 shards)", 1_000_000, f"{width}.run.")
        _shard(tmp_path, f"{width}.run.", 0, 600_000, 12_000, {k: v for k, v in classes.items() if "retryable" in k})
        _shard(tmp_path, f"{width}.run.", 1, 400_000, 345, {"READ:fatal:OperationalError": 345})
        board._last = (0, time.time() - 1.0)
        board.poll()
        row = _row(board)
        board.stop()
        assert len(row) <= width, row
        assert "1,000,000/1,000,000" in row and "0:00:0" in row and " ops/s" in row, row
        assert int(row.split(" ops/s")[0].split()[-1].replace(",", "")) > 500_000, row  # the rate uncut
        assert expect in row, row
    # a class that is not retried carries no mark; no classes: the bare count
    board, _ = _board(tmp_path, 120)
    board.start_phase("000-S2 run (1 shard)", 1000, "fatal.run.")
    _shard(tmp_path, "fatal.run.", 0, 1000, 7, {"READ:fatal:OperationalError": 7})
    board.poll()
    row = _row(board)
    board.stop()
    assert "7 err OperationalError " in row + " " and "retried" not in row, row


def test_shards_write_their_error_classes_into_the_progress_file(tmp_path, monkeypatch):
    from dbswarm.run.runtime import service
    monkeypatch.setenv("DBSWARM_PROGRESS_DIR", str(tmp_path))
    write = service._progress_writer("000-S2", "run", 0)

    from dbswarm.engine.snapshots import Snapshots
    from dbswarm.engine.worker import ShardPhase

    class Recorder:
        def __init__(self, errors):
            self.m = type("M", (), {"errors": errors})()

    class Phase:  # what ShardPhase.error_counts reads: a thread's recorder, a part handed over
        states = [type("State", (), {"recorder": Recorder({"READ:retryable:deadlock": 2})})()]
        snapshots = Snapshots(None, None)
        mux = None
        error_counts = ShardPhase.error_counts
    shard_phase = Phase()
    shard_phase.snapshots.moved.append(Recorder({"READ:retryable:deadlock": 3}))
    service._with_error_classes(write, shard_phase)(100, 5)
    doc = json.loads((tmp_path / "000-S2.run.0.json").read_text())
    assert doc["errors"] == 5 and doc["error_classes"] == {"READ:retryable:deadlock": 5}


def test_the_live_rate_is_smoothed_not_the_last_seconds_jump(tmp_path):
    """Issue 58 item 6: shards write their progress about once a second, so one poll's second
    holds two writes of a shard and the next none: the one-second rate jumps (0, then twice the
    rate). The bar's ops/s is a moving average that stays near the steady rate."""
    board, _ = _board(tmp_path, 120)
    board.start_phase("000-S6 run (1 shard)", None, "000.run.", seconds=60)
    done, shown = 0, []
    for step in [47_000, 94_000, 0, 47_000, 94_000, 0, 47_000, 47_000, 94_000, 0]:
        done += step
        _shard(tmp_path, "000.run.", 0, done)
        board._last = (board._last[0], time.time() - 1.0)  # a poll a second after the last one
        board.poll()
        shown.append(board.progress.tasks[-1].fields["ops"])
    board.stop()
    assert shown[0] > 40_000  # the first measured second as it is
    assert all(25_000 < ops < 70_000 for ops in shown[1:]), shown
