"""Issue 20 item 2: the deployment's AllowedTargets (CIDRs and host patterns) is checked when
a campaign is planned, not only when the API accepts it: an execution started directly (a
schedule, the console, `aws stepfunctions start-execution`) with a target outside the
networks fails in its plan step with a message naming the host, before anything connects.
And the pieces that check: ``admission.host_allowed`` and ``endpoints.target_hosts``."""
import json
import time

import pytest

from dbswarm.bindings import endpoints
from dbswarm.campaign import admission
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
    assert admission.host_allowed(host, allowed, resolve=NOWHERE) is expected


def test_a_name_is_allowed_when_every_address_it_resolves_to_is_in_the_networks():
    resolve = _resolver({"db.internal": ["10.0.0.5"], "split.internal": ["10.0.0.5", "203.0.113.9"],
                         "v6.internal": ["fd00::1%eth0"]})
    assert admission.host_allowed("db.internal", "10.0.0.0/8", resolve=resolve)
    assert not admission.host_allowed("db.internal", "192.168.0.0/16", resolve=resolve)
    assert not admission.host_allowed("split.internal", "10.0.0.0/8", resolve=resolve)   # one address outside
    assert admission.host_allowed("v6.internal", "fc00::/7", resolve=resolve)             # scope id stripped
    assert not admission.host_allowed("gone.internal", "10.0.0.0/8", resolve=resolve)     # does not resolve


def test_a_name_resolved_by_this_machine():
    assert admission.host_allowed("localhost", "127.0.0.0/8,::1/128")
    assert not admission.host_allowed("localhost", "10.0.0.0/8")


def test_target_hosts_finds_every_host_a_target_connects_to():
    hosts = endpoints.target_hosts
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
    problems = admission.target_network_problems(
        [("target", {"url": "postgresql://u@10.0.0.5/app", "options": {"backend": "postgresql://203.0.113.7/x"}})],
        "10.0.0.0/8")
    assert problems == ["target.url: host '203.0.113.7' is not in the networks this deployment may reach "
                        "(template parameter AllowedTargets: 10.0.0.0/8)"]


def test_an_execution_started_directly_is_checked_at_plan_time(tmp_path, monkeypatch):
    """The state machine started without the API (as a schedule or the console would) with a
    target outside AllowedTargets: the execution fails in its plan step, says which host and
    which parameter, and nothing is written."""
    from dbswarm.run.runtime.emulator import LocalCloud
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


# ---- issue 33 item 1: the check sees exactly the hosts the driver connects to ------------------

def _template_default() -> str:
    """AllowedTargets' Default in template.yaml: the private ranges a deployment allows unless told."""
    import re
    text = (ROOT / "template.yaml").read_text()
    block = text[text.index("  AllowedTargets:"):]
    return re.search(r'Default:\s*"([^"]+)"', block).group(1)


DEFAULT = _template_default()


def _refused(url, allowed=DEFAULT, **target):
    return admission.target_network_problems([("target", {"url": url, **target})], allowed)


def test_the_default_is_the_private_ranges():
    assert DEFAULT == "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,100.64.0.0/10,fc00::/7"
    assert _refused("postgresql://u@10.0.0.5/db") == []          # a private address passes
    assert _refused("postgresql://u@127.0.0.1/db")               # loopback is not a private range


@pytest.mark.parametrize("url", [
    "postgresql://u@127.0.0.1,@10.0.0.5/db?port=5432",   # libpq: the first '@' ends the user; 127.0.0.1 first
    "postgresql://u@127.0.0.1,10.0.0.5/db",              # a host list: every host is connected to in turn
    "postgresql://u@10.0.0.5,127.0.0.1:5433/db",
    "postgresql://u@10.0.0.5/db?host=127.0.0.1",         # the query's host replaces the authority's
    "postgresql://u@10.0.0.5/db?hostaddr=127.0.0.1",     # hostaddr is what libpq connects to
    "postgresql://u@10.0.0.5/db?host=10.0.0.5,127.0.0.1",
    "postgresql://u@%31%32%37.0.0.1/db",                 # percent-encoded: libpq decodes it
    "postgresql://u@10.0.0.5/db?service=evil",           # the hosts would come from a service file
    "postgresql://u@/db",                                # no host: libpq's default local socket
    "postgresql:///db?host=@abstract",                   # a Linux abstract socket
    "host=10.0.0.5 host=127.0.0.1 dbname=db",            # keywords: the last host= wins
    "host=10.0.0.5,127.0.0.1 dbname=db",
    "hostaddr=127.0.0.1 host=db.internal dbname=db",
    "dbname=db user=u",                                  # keywords without a host: the local socket
    "postgresql://a?x@10.0.0.5/db",                      # '?' before '@': parsers disagree on the user
    "postgresql://u@10.0.0.5/db\n",                      # a control character
    "10.0.0.5",                                          # neither a URL nor a keyword string
])
def test_postgresql_urls_that_reach_a_host_outside_are_refused(url):
    problems = _refused(url)
    assert problems, url
    assert all(p.startswith("target.url") for p in problems), problems


def test_postgresql_host_lists_are_read_by_libpq():
    hosts = endpoints.target_hosts
    assert hosts({"url": "postgresql://u@127.0.0.1,10.0.0.5/db"}) == ["127.0.0.1", "10.0.0.5"]
    assert hosts({"url": "postgresql://u@10.0.0.5/db?host=127.0.0.1"}) == ["127.0.0.1"]
    assert hosts({"url": "postgresql://u@h.internal/db?hostaddr=127.0.0.1"}) == ["127.0.0.1"]
    assert hosts({"url": "postgresql://u@%31%32%37.0.0.1/db"}) == ["127.0.0.1"]
    assert hosts({"url": "postgresql://u@[fd00::1]:5432,10.0.0.5/db"}) == ["fd00::1", "10.0.0.5"]
    assert hosts({"url": "host=10.0.0.5 host=10.0.0.6 dbname=db"}) == ["10.0.0.6"]
    problems = _refused("postgresql://u@127.0.0.1,10.0.0.5/db")
    assert problems == ["target.url: host '127.0.0.1' is not in the networks this deployment may reach "
                        f"(template parameter AllowedTargets: {DEFAULT})"]
    assert "more than one '@'" in _refused("postgresql://u@127.0.0.1,@10.0.0.5/db?port=5432")[0]
    # unambiguous private hosts pass
    assert _refused("postgresql://u@10.0.0.5,10.0.0.6:5433/db?target_session_attrs=read-write") == []
    assert _refused("host=10.0.0.5 port=5432 dbname=db user=u") == []


def test_pghost_is_what_libpq_uses_when_the_url_names_no_host(monkeypatch):
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    assert endpoints.target_hosts({"url": "dbname=db"}) == ["127.0.0.1"]
    monkeypatch.setenv("PGHOST", "10.0.0.5")
    assert _refused("dbname=db") == []


def test_a_socket_passes_only_under_a_pattern_naming_it():
    url = "postgresql:///db?host=/var/run/postgresql"
    assert endpoints.target_hosts({"url": url}) == []
    assert _refused(url) and "unix socket '/var/run/postgresql/.s.PGSQL.5432'" in _refused(url)[0]
    assert _refused(url, DEFAULT + ",/var/run/postgresql*") == []
    assert _refused(url, "*") == []
    assert _refused(url, DEFAULT + ",/var/run/mysqld/*") and _refused(url, DEFAULT + ",/var/run/postgres")


@pytest.mark.parametrize("url,socket", [
    ("postgresql:///db?host=/var/run/postgresql", "/var/run/postgresql/.s.PGSQL.5432"),
    ("postgresql://u@%2Fvar%2Frun%2Fpostgresql:5433/db", "/var/run/postgresql/.s.PGSQL.5433"),
    ("host=/var/run/postgresql/ port=5434 dbname=db", "/var/run/postgresql/.s.PGSQL.5434"),
])
def test_the_documented_socket_pattern_holds_libpq_s_socket_directory(url, socket):
    """Issue 56, item 7: a libpq URL names a socket's directory, which the documented pattern
    /var/run/postgresql/* did not match: the check reads the socket libpq connects to in it
    (DIR/.s.PGSQL.PORT, what the binding's peer_addresses says once connected), and a pattern
    naming the directory itself holds it too."""
    assert endpoints.target_endpoints({"engine": "postgresql", "url": url})[1] == [socket]
    for pattern in ("/var/run/postgresql/*", "/var/run/postgresql"):
        assert _refused(url, DEFAULT + "," + pattern) == [], pattern
        assert admission.socket_allowed(socket, pattern)


@pytest.mark.parametrize("url", [
    "mysql://u@127.0.0.1#@10.0.0.5/db",                  # the driver reads 127.0.0.1 (the fragment is not the host)
    "mysql://u@10.0.0.5#@10.0.0.6/db",                   # a fragment: refused, whatever it says
    "mysql://u@127.0.0.1,10.0.0.5/db",                   # MySQL takes one host
    "mysql://u@10.0.0.5/db?unix_socket=/var/run/mysqld/mysqld.sock",  # the socket, not the host, is connected to
    "mysql://u@%31%30.0.0.5/db",                         # the drivers do not decode a host
    "mysql://u@[::1]:3306/db",
    "mysql://u@a@10.0.0.5/db",                           # two '@'
    "mariadb://u@localhost/db",                          # localhost is loopback
    "mysql://u@10.0.0.5:notaport/db",
])
def test_mysql_urls_that_reach_a_host_outside_are_refused(url):
    problems = _refused(url)
    assert problems, url


def test_mysql_hosts_are_read_by_the_binding_parser():
    assert endpoints.target_hosts({"url": "mysql://u@10.0.0.5:3307/db?charset=utf8mb4"}) == ["10.0.0.5"]
    assert _refused("mysql://u@10.0.0.5:3307/db") == [] and _refused("mariadb://u@[fd00::5]/db") == []
    assert endpoints.target_endpoints({"url": "mysql://u@10.0.0.5/db?unix_socket=/tmp/m.sock"})[:2] == \
        ([], ["/tmp/m.sock"])


@pytest.mark.parametrize("url", [
    "mongodb://u@127.0.0.1,@10.0.0.5/db",                # pymongo refuses it; the check too
    "mongodb://u@127.0.0.1#@10.0.0.5/db",
    "mongodb://u@10.0.0.5,127.0.0.1:27018/db",
    "mongodb://%2Ftmp%2Fmongodb-27017.sock/db",          # a socket
    "mongodb://u@%31%32%37.0.0.1/db",
    "mongodb+srv://u@cluster.invalid/db",                # its SRV record does not resolve: no hosts to check
])
def test_mongodb_urls_that_reach_a_host_outside_are_refused(url):
    assert _refused(url), url


def test_mongodb_seed_lists_are_read_by_pymongo():
    assert endpoints.target_hosts({"url": "mongodb://u@10.0.0.5:27017,10.0.0.6/db?replicaSet=rs"}) == \
        ["10.0.0.5", "10.0.0.6"]
    assert endpoints.target_endpoints({"url": "mongodb://%2Ftmp%2Fm.sock/db"})[:2] == ([], ["/tmp/m.sock"])
    assert "Percent-encoding is only allowed" in _refused("mongodb://u@%31%32%37.0.0.1/db")[0]   # pymongo's words
    assert _refused("mongodb://u@10.0.0.5:27017,10.0.0.6/db?replicaSet=rs") == []


def test_urls_inside_options_are_read_by_their_own_grammar():
    assert _refused("mongodb://10.0.0.5/db", options={"ferretdb_backend_url": "postgresql://u@127.0.0.1,@10.0.0.5/f"})
    assert _refused("mongodb://10.0.0.5/db", options={"x": {"dsn": "mysql://u@127.0.0.1#@10.0.0.5/db"}})
    assert _refused("mongodb://10.0.0.5/db", options={"host": "10.0.0.5,127.0.0.1"})
    assert _refused("mongodb://10.0.0.5/db", options={"ferretdb_backend_url": "postgresql://u@10.0.0.6/f"}) == []


def test_the_api_refuses_a_host_list_url(tmp_path):
    """The API under the template's default AllowedTargets: the issue's URL is a 400."""
    from dbswarm.results.store import LocalStore
    from dbswarm.run.front import api
    dep = api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                         LocalStore(tmp_path / "r"), secret_prefix="dbswarm/", allowed_targets=DEFAULT)
    for url in ("postgresql://u@127.0.0.1,@10.0.0.5/db?port=5432", "postgresql://u@127.0.0.1,10.0.0.5/db"):
        out = api.handle({"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                          "body": json.dumps({"name": "faults-hostlist",
                                              "target": {"engine": "postgresql", "url": url,
                                                         "password": {"secret": "dbswarm/x"}}})}, dep)
        assert out["statusCode"] == 400, out
        assert any(p.startswith("target.url") for p in json.loads(out["body"])["problems"]), out["body"]


@pytest.fixture(scope="module")
def servers_env():
    from tests import servers
    return servers.start()


@pytest.mark.parametrize("engine", ["postgresql", "mysql", "mysql-pymysql", "mongodb"])
def test_the_address_connected_to_is_checked_before_anything_runs(servers_env, engine, monkeypatch):
    """Past the plan-time check of the URL (a name that resolved elsewhere then, a replica set
    member the server named): every connect of a worker's binding reads the address its socket
    reached and closes a connection outside AllowedTargets before the workload runs on it."""
    from types import SimpleNamespace

    from dbswarm.engine.target import make_binding
    from dbswarm.errors import TargetNotAllowed
    from tests import servers
    base, extra = servers.variant(engine)
    target = servers.target(base, servers_env, **extra)
    password = servers.password(servers_env)
    run = SimpleNamespace(target=target)
    monkeypatch.setenv("DBSWARM_ALLOWED_TARGETS", "10.0.0.0/8")
    b = make_binding(run, password)
    with pytest.raises(TargetNotAllowed) as err:
        b.connect()
    assert "not in the networks this deployment may reach (template parameter AllowedTargets: 10.0.0.0/8)" \
        in str(err.value)
    assert password not in str(err.value)
    # the same target under networks that hold it: connects, and says where
    monkeypatch.setenv("DBSWARM_ALLOWED_TARGETS", "127.0.0.0/8,::1/128,localhost")
    b = make_binding(run, password)
    b.connect()
    try:
        assert b.peer_addresses() and all(p in ("127.0.0.1", "::1", "localhost") for p in b.peer_addresses())
    finally:
        b.close()


def test_a_database_file_or_no_database_has_no_host():
    """SQLite's url is a file path, noop has none: nothing to check, under any AllowedTargets."""
    for target in ({"engine": "sqlite", "url": "/tmp/x/shared.db"}, {"engine": "sqlite3", "url": "relative.db"},
                   {"engine": "noop", "url": "anything"}, {"engine": "sqlite"}):
        assert endpoints.target_endpoints(target) == ([], [], [])
        assert admission.target_network_problems([("target", target)], DEFAULT) == []
        assert admission.target_network_problems([("target", target)], "*") == []
    # "*" (local mode) allows any URL, even one the check could not read
    assert admission.target_network_problems([("target", {"engine": "postgresql", "url": "10.0.0.5"})], "*") == []


def test_a_local_campaign_on_a_sqlite_file_runs(tmp_path):
    import subprocess
    import sys

    from tests.faults.conftest import dbswarm_env
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({"name": "faults-sqlite-file", "target": {"engine": "sqlite", "url": str(tmp_path / "s.db")},
                                "workload": {"preset": "c", "table": "faults_file", "recordcount": 50,
                                             "operationcount": 50, "threads": 1}, "phases": ["prepare", "load", "run"]}))
    for command in (["validate", str(spec)], ["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"]):
        proc = subprocess.run([sys.executable, "-m", "dbswarm", *command], env=dbswarm_env(), capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
