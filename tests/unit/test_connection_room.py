"""The connection-room check's arithmetic and words (engine.connection_room), without a server;
tests/faults/test_connection_room.py runs it against the real ones."""
from types import SimpleNamespace

import pytest

from dbswarm.engine import connection_room
from dbswarm.results.report.files import _refused_what


def _run(threads_per_shard, options=None, real=True):
    shards = [SimpleNamespace(threads=t) for t in threads_per_shard]
    target = {"engine": "postgresql", **({"options": options} if options is not None else {})}
    return SimpleNamespace(run_id="003", threads=sum(threads_per_shard), shards=shards, target=target,
                           is_real_database=real)


def test_the_tightest_limit_is_named_with_its_open_connections():
    room = {"free": 5, "limits": [{"name": "max_connections", "value": 300, "in_use": 12},
                                  {"name": "role app's CONNECTION LIMIT", "value": 10, "in_use": 5}]}
    text = connection_room.shortfall(_run([64, 64]), "run", room)
    assert text.startswith("the run phase of run 003 opens 128 client connections (2 shards, 128 threads) but "
                           "the postgresql server admits 5 more (role app's CONNECTION LIMIT 10, 5 other "
                           "connections open)"), text
    assert "target.options.connection_limit_check: false" in text
    assert connection_room.shortfall(_run([5]), "load", room) is None          # exactly the room: it fits
    assert "opens 6 client connections (6 threads)" in connection_room.shortfall(_run([6]), "load", room)


@pytest.mark.parametrize("room", (None, {}, {"free": None, "limits": []}))
def test_a_server_that_states_no_limit_is_not_refused(room):
    assert connection_room.shortfall(_run([1000]), "run", room) is None


@pytest.mark.parametrize("options,real,wanted", [(None, True, True), ({}, True, True),
                                                 ({"connection_limit_check": False}, True, False),
                                                 ({"connection_limit_check": "false"}, True, False),
                                                 ({"connection_limit_check": "off"}, True, False),
                                                 ({"connection_limit_check": True}, True, True),
                                                 (None, False, False)])
def test_who_is_checked(options, real, wanted):
    assert connection_room.wanted(_run([4], options, real)) is wanted


def test_a_refusal_after_a_phase_ran_says_which_ran():
    assert _refused_what({"phases": {"load": {"status": "not run"}, "run": {"status": "not run"}}}) == "did not run"
    assert _refused_what({"phases": {"load": {"status": "complete"}, "run": {"status": "not run"}}}) == \
        "stopped after its load phase"
