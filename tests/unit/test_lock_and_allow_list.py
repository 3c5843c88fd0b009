"""Issue 57 item 6: a refusal says how to get past it. The campaign lock names its holder and
the command that frees the tables; DBSWARM_ALLOWED_TARGETS set for a local run is enforced
(no connection made), never silently ignored; the client-bound hint names both ways to accept
a bound phase. On SQLite (a real database) and a listening socket that must stay untouched."""
import socket
from types import SimpleNamespace

import pytest

from dbswarm.cli import main


def test_the_lock_names_its_holder_and_the_command_that_frees_it(tmp_path):
    from dbswarm.engine import lock
    run = SimpleNamespace(run_id="r1", family="ycsb", workload={"table": "locked_t"}, is_real_database=True,
                          target={"engine": "sqlite", "url": str(tmp_path / "lock.db"), "options": {}})
    lock.on_target(run, None, lock.acquire, "holder-57")
    with pytest.raises(lock.CampaignLocked) as err:
        lock.on_target(run, None, lock.acquire, "second-57")
    text = str(err.value)
    assert "in use by campaign holder-57 (started " in text
    assert "`dbswarm resume holder-57 --results <its results folder>` finishes it and frees the tables" in text
    assert "`dbswarm cancel holder-57`" in text
    # the seconds until it goes stale on its own (600 s by default, less the few since its heartbeat)
    left = int(text.split("its lock is taken over in ")[1].split(" s")[0])
    assert 590 <= left <= 600, text
    assert "DBSWARM_LOCK_STALE_S" in text and "target.options.shared_tables: true" in text


@pytest.fixture
def listener():
    """A TCP socket on loopback that counts on nobody connecting to it."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    s.setblocking(False)
    yield s
    s.close()


def _spec(tmp_path, port):
    spec = tmp_path / "c.yaml"
    spec.write_text(f"name: allow\ntarget: {{engine: postgresql, url: 'postgresql://u@127.0.0.1:{port}/db"
                    "?connect_timeout=2'}\nworkload: {recordcount: 10, operationcount: 10}\n")
    return spec


@pytest.mark.parametrize("command", ["run", "validate"])
def test_allowed_targets_set_here_is_enforced_locally(tmp_path, monkeypatch, capsys, listener, command):
    monkeypatch.setenv("DBSWARM_ALLOWED_TARGETS", "10.0.0.0/8")
    port = listener.getsockname()[1]
    args = [command, str(_spec(tmp_path, port))] + (["--results", str(tmp_path / "r"), "--quiet"]
                                                     if command == "run" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "target.url: host '127.0.0.1' is not in the networks" in err, err
    assert "DBSWARM_ALLOWED_TARGETS" in err and "10.0.0.0/8" in err
    with pytest.raises(BlockingIOError):
        listener.accept()   # no connection was made
    assert not (tmp_path / "r").exists()


def test_allowed_targets_passes_a_target_it_holds(tmp_path, monkeypatch):
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.run.runtime.local import local_parameters
    monkeypatch.setenv("DBSWARM_ALLOWED_TARGETS", "127.0.0.0/8")
    _, runs = load_campaign(str(_spec(tmp_path, 5432)))
    # the functions get the list too: each connection is checked on its socket (target.make_binding)
    assert local_parameters(runs)["AllowedTargets"] == "127.0.0.0/8"
    monkeypatch.delenv("DBSWARM_ALLOWED_TARGETS")
    assert local_parameters(runs)["AllowedTargets"] == "*"


def test_the_client_bound_hint_names_the_key_and_the_variable(tmp_path, capsys):
    from dbswarm.cli import report_outcome
    from dbswarm.results.store import open_store
    store = open_store(str(tmp_path))
    client = {"verdict": "bound", "allowed": False, "reason": "the shard's CPU share 0.97"}
    store.put_json(store.key("bound-57", "result.json"), {"campaign_id": "bound-57", "runs": [
        {"run_id": "000", "phases": {"run": {"status": "complete", "client": client}}}]})
    assert report_outcome({"store": str(tmp_path), "campaign_id": "bound-57", "status": "complete"}, True) == 9
    err = capsys.readouterr().err
    assert "results.allow_client_bound: true" in err and "DBSWARM_ALLOW_CLIENT_BOUND=1" in err, err
