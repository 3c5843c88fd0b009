"""Issue 33 ("Also"): a server restarted inside a phase's measured window starts its counters
again from zero; the client/server ratio then read 1.73 with no warning. Each edge records when
the server started (PostgreSQL's pg_postmaster_start_time, MariaDB's clock less its Uptime); a
window whose edges disagree says so and leaves the server-side figures and the cross-check out."""
import pytest

from dbswarm.results.aggregate import window_deltas
from tests import servers


@pytest.fixture(scope="module")
def env():
    return servers.start()


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_each_edge_says_when_the_server_started(env, engine):
    from types import SimpleNamespace

    from dbswarm.engine.target import make_binding
    b = make_binding(SimpleNamespace(target=servers.target(engine, env)), servers.password(env))
    b.connect()
    try:
        first, second = b.server_counters(), b.server_counters()
    finally:
        b.close()
    assert isinstance(first["server_started_at"], float) and first["server_started_at"] > 1.6e9
    assert abs(second["server_started_at"] - first["server_started_at"]) <= 3.0
    window = window_deltas({"at": 1.0, "server": first}, {"at": 2.0, "server": second})
    assert "server_started_at" not in window["server"] and window["server"]["transactions"] >= 0
    assert not any("restarted" in w for w in window["warnings"])


def test_a_restart_inside_the_window_is_said_and_its_counters_left_out():
    start = {"at": 100.0, "server": {"transactions": 90_000, "statements": 400_000, "server_started_at": 1.7e9}}
    end = {"at": 160.0, "server": {"transactions": 52_000, "statements": 230_000, "server_started_at": 1.7e9 + 130}}
    window = window_deltas(start, end)
    assert "server" not in window, window
    assert any(w.startswith("the server restarted inside the measured window") for w in window["warnings"])
    # and the phase: no cross-check ratio from counters that started again
    from dbswarm.measure.recorder import Measurement, Timeline
    from dbswarm.results.aggregate import merge_phase
    m = Measurement()
    s = m.op("READ")
    s.count = 6000
    s.histogram.record_value(200, s.count)
    m.timeline = Timeline(100)
    m.timeline.ops = {"READ": [100] * 60}
    doc = {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": 0, "threads": 1,
           "binding": {"engine": "postgresql", "is_real_database": True}, "measurement": m.to_dict(),
           "started_at": 100.0, "ended_at": 160.0, "status": "done", "start_skew_s": 0.01}
    phase = merge_phase("ycsb", {"family": "ycsb", "warmuptime": 0}, 1, "run", {0: doc}, {}, window=window)
    assert phase["server"]["counters"] is None and not phase["server"]["cross_check"], phase["server"]
    assert any("restarted" in w for w in phase["server"]["warnings"])
