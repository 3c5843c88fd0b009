"""Issue 20 item 2: the deployment's AllowedTargets (CIDRs and host patterns) is checked when
a campaign is planned, not only when the API accepts it: an execution started directly (a
schedule, the console, `aws stepfunctions start-execution`) with a target outside the
networks fails in its plan step with a message naming the host, before anything connects.
And the pieces that check: ``limits.host_allowed`` and ``limits.target_hosts``."""
import json
import time

import pytest

from dbswarm.campaign import admission as limits
from tests.faults.conftest import ROOT


def _resolver(table):
    """A name resolver answering from ``table`` (name -> addresses), as socket.getaddrinfo does."""
    def resolve(host, port):
        if host not in table:
            raise OSError(f"unknown host {host}")
        return [(None, None, None, "", (a, 0)) for a in table[host]]
    return resolve


NOWHERE = _resolver({})


@pytest.mark.parametrize("host,allowed,expected", [
    ("10.1.2.3", "10.0.0.0/8", True),
    ("10.1.2.3", "192.168.0.0/16,10.0.0.0/8", True),
    ("11.0.0.1", "10.0.0.0/8", False),
    ("192.0.2.1", "10.0.0.0/8,172.16.0.0/12", False),
    ("fd00::5", "10.0.0.0/8,fc00::/7", True),
    ("2001:db8::1", "fc00::/7", False),
    ("8.8.8.8", "*", True),
    ("db.example.com", "*.example.com", True),
    ("DB.Example.COM", "*.example.com", True),          # host names are case-insensitive
    ("a.b.example.com", "*.example.com", True),
    ("example.com", "*.example.com", False),            # the pattern needs a subdomain
    ("example.com.evil.net", "*.example.com", False),
    ("db.example.org", "*.example.com,10.0.0.0/8", False),  # not resolvable here: refused
])
def test_host_allowed_by_cidr_and_pattern(host, allowed, expected):
    assert limits.host_allowed(host, allowed, resolve=NOWHERE) is expected


def test_a_name_is_allowed_when_every_address_it_resolves_to_is_in_the_networks():
    resolve = _resolver({"db.internal": ["10.0.0.5"], "split.internal": ["10.0.0.5", "203.0.113.9"],
                         "v6.internal": ["fd00::1%eth0"]})
    assert limits.host_allowed("db.internal", "10.0.0.0/8", resolve=resolve)
    assert not limits.host_allowed("db.internal", "192.168.0.0/16", resolve=resolve)
    assert not limits.host_allowed("split.internal", "10.0.0.0/8", resolve=resolve)   # one address outside
    assert limits.host_allowed("v6.internal", "fc00::/7", resolve=resolve)             # scope id stripped
    assert not limits.host_allowed("gone.internal", "10.0.0.0/8", resolve=resolve)     # does not resolve


def test_a_name_resolved_by_this_machine():
    assert limits.host_allowed("localhost", "127.0.0.0/8,::1/128")
    assert not limits.host_allowed("localhost", "10.0.0.0/8")


def test_target_hosts_finds_every_host_a_target_connects_to():
    hosts = limits.target_hosts
    assert hosts({"url": "postgresql://u@db1.internal:5432/app"}) == ["db1.internal"]
    assert hosts({"url": "mongodb://u@m1:27017,m2:27018,[fd00::7]:27019/app"}) == ["m1", "m2", "fd00::7"]
    assert hosts({"url": "host=pg1,pg2 port=5432 dbname=app user=u"}) == ["pg1", "pg2"]
    assert hosts({"url": "postgresql:///app?host=10.9.9.9"}) == ["10.9.9.9"]
    assert hosts({"url": "postgresql:///app?host=/var/run/postgresql"}) == []          # a socket, not a host
    assert hosts({"url": "sqlite:///tmp/x.db"}) == [] and hosts({"url": "noop://"}) == []
    # hosts inside options: a backend URL, a host key, at any depth
    assert hosts({"url": "mongodb://f.internal/app",
                  "options": {"ferretdb_backend_url": "postgresql://u@pg.internal/ferretdb"}}) == \
        ["f.internal", "pg.internal"]
    assert hosts({"url": "postgresql://a.internal/app",
                  "options": {"replica": {"host": "b.internal"}, "list": [{"dsn": "mysql://c.internal/x"}],
                              "hostaddr": "10.1.1.1"}}) == ["a.internal", "b.internal", "c.internal", "10.1.1.1"]


def test_target_network_problems_names_the_host_and_the_parameter():
    problems = limits.target_network_problems(
        [("target", {"url": "postgresql://u@10.0.0.5/app", "options": {"backend": "postgresql://203.0.113.7/x"}})],
        "10.0.0.0/8")
    assert problems == ["target.url: host '203.0.113.7' is not in the networks this deployment may reach "
                        "(template parameter AllowedTargets: 10.0.0.0/8)"]


def test_an_execution_started_directly_is_checked_at_plan_time(tmp_path, monkeypatch):
    """The state machine started without the API (as a schedule or the console would) with a
    target outside AllowedTargets: the execution fails in its plan step, says which host and
    which parameter, and nothing is written."""
    from dbswarm.run.emulator import LocalCloud
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    campaign = {"name": "faults-allowed", "target": {"engine": "postgresql",
                                                     "url": "postgresql://dbswarm@127.0.0.1:5432/dbswarm"},
                "workload": {"preset": "c", "table": "faults_allowed", "recordcount": 10, "operationcount": 10},
                "phases": ["prepare", "load", "run"]}
    with LocalCloud(ROOT / "template.yaml", {"RetryIntervalSeconds": 1, "AllowedTargets": "10.0.0.0/8"},
                    validate_definition=False) as cloud:
        arn = cloud.start({"campaign": campaign, "results": str(tmp_path / "r")},
                          name=f"faults-allowed-{int(time.time())}")
        desc = cloud.wait(arn, timeout_s=120)
        history = cloud.history(arn)
    assert desc["status"] == "FAILED", desc
    text = json.dumps({"error": desc.get("error"), "cause": desc.get("cause")})
    assert "host '127.0.0.1' is not in the networks this deployment may reach" in text, text
    assert "AllowedTargets: 10.0.0.0/8" in text, text
    # the plan step refused it: no worker was called, nothing was written
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered and not any("Worker" in name or "Prepare" in name for name in entered[1:]), entered
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.json"))
