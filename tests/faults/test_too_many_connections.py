"""Issue 33 ("Also"): a server refusing connections because of its connection limit is said so,
not reported as an unreachable target. On the real PostgreSQL, a role whose CONNECTION LIMIT
is 0 gets what a server at max_connections answers (SQLSTATE 53300)."""
import pytest

from tests import servers


@pytest.fixture(scope="module")
def limited_role():
    env = servers.start()
    with servers.pg_admin(env) as db:
        db.execute("DROP ROLE IF EXISTS faults_limited")
        db.execute("CREATE ROLE faults_limited LOGIN PASSWORD 'faults-limited-pw' CONNECTION LIMIT 0")
    yield env
    with servers.pg_admin(env) as db:
        db.execute("DROP ROLE IF EXISTS faults_limited")


def test_too_many_connections_is_named_as_such(limited_role, monkeypatch):
    from types import SimpleNamespace

    from dbswarm.engine import calls, worker
    from dbswarm.measure.recorder import Recorder
    url = limited_role["DBSWARM_TEST_PG_URL"]
    user_at = url.split("://", 1)[1].split("@", 1)[0]
    url = url.replace(f"{user_at}@", "faults_limited@", 1)
    binding = worker.make_binding(SimpleNamespace(target={"engine": "postgresql", "url": url}), "faults-limited-pw")
    with pytest.raises(Exception) as err:
        binding.connect()
    cls = binding.classify(err.value)
    assert (cls.kind, cls.name) == ("connection", "too_many_connections"), (cls, str(err.value))
    monkeypatch.setattr(calls, "RECONNECT_GIVE_UP_S", 0.3)
    m = calls.Measured(binding, Recorder(1.0))
    with pytest.raises(calls.TargetUnreachable) as gave_up:
        m.reconnect()
    text = str(gave_up.value)
    assert "refused every connection" in text and "too many connections" in text, text
    assert "unreachable" not in text
