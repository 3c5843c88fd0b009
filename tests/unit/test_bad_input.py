"""Issue 20 items 10-11: a corpus of bad input, each refused with the field it is about named
in the message: campaign files (YAML and dicts), CLI arguments and API requests. No socket,
no process: the refusals happen before anything runs."""
import json

import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.cli import main
from dbswarm.errors import CampaignError
from dbswarm.results.store import LocalStore
from dbswarm.run.front import api

PG = "postgresql://u@db.internal/app"
BIG_MATRIX = {"recordcount": list(range(1, 101)), "operationcount": list(range(1, 101)), "threads": list(range(1, 101))}

CAMPAIGNS = [
    # (campaign, field the message must start with)
    ("name: a\nname: b\n", "(file): "),                                              # duplicate top-level key
    ("workload:\n  recordcount: 1\n  recordcount: 2\n", "(file): "),                  # duplicate nested key
    ("target: [1, 2]\n", "target"),
    ("- a\n- b\n", "(top level)"),
    ("workload: {preset: S1\n", "(file): "),                                          # not YAML
    ({"name": ""}, "name"),
    ({"name": "a b"}, "name"),
    ({"seed": -1}, "seed"),
    ({"bogus": 1}, "bogus"),
    ({"phases": []}, "phases"),
    ({"phases": ["run", "load"]}, "phases"),
    ({"phases": ["explode"]}, "phases[0]"),
    ({"fanout": {"shards": 0}}, "fanout.shards"),
    ({"fanout": {"shards": 3, "threads_per_shard": 2}}, "fanout"),
    ({"fanout": {"threads_per_shard": 0}}, "fanout.threads_per_shard"),
    ({"fanout": {"shards": 20_000}}, "fanout.shards"),
    ({"matrix": {"threads": []}}, "matrix"),
    ({"matrix": {"threads": 5}}, "matrix"),
    ({"matrix": BIG_MATRIX}, "matrix: expands to 1,000,000 runs"),
    ({"matrix": {"recordcount": list(range(1, 501))}, "fanout": {"shards": 1000}}, "fanout: 1,000 shards x 500 runs"),
    # repeat multiplies the runs (x2 with an interleaved baseline), counted before expanding
    ({"matrix": {"recordcount": list(range(1, 1001))}, "repeat": 1000}, "repeat: expands to 1,000 cells x 1,000"),
    ({"matrix": {"recordcount": list(range(1, 11))}, "repeat": {"count": 60, "baseline": {"workload": {"threads": 2}}}},
     "repeat: expands to 10 cells x 120 repeated runs = 1,200 runs"),
    ({"matrix": {"recordcount": list(range(1, 101))}, "repeat": 10, "fanout": {"shards": 200}},
     "fanout: 200 shards x 1,000 runs"),
    ({"workload": {"preset": "S42"}}, "workload.preset"),
    ({"workload": {"recordcount": 0}}, "workload.recordcount"),
    ({"workload": {"recordcount": "many"}}, "workload.recordcount"),
    ({"workload": {"threads": 0}}, "workload.threads"),
    ({"workload": {"threads": 100_000}}, "workload.threads"),                       # threads per shard limit
    ({"workload": {"fieldlength": 100_000}}, "workload.fieldlength"),               # beyond the value pool
    ({"workload": {"fieldcount": 0}}, "workload.fieldcount"),
    ({"workload": {"readproportion": 1.5}}, "workload.readproportion"),
    ({"workload": {"requestdistribution": "gauss"}}, "workload.requestdistribution"),
    ({"workload": {"family": "nope"}}, "workload.family"),
    ({"workload": {"maxexecutiontime": -5}}, "workload.maxexecutiontime"),
    ({"workload": {"target": 0}}, "workload.target"),
    ({"workload": {"family": "sysbench", "test": "oltp_everything"}}, "workload.test"),
    ({"workload": {"family": "sysbench", "tables": 0}}, "workload.tables"),
    ({"matrix": {"workload": ["x"]}}, "matrix.workload[0]"),
    ({"target": {"engine": "oracle"}}, "target.engine"),
    ({"target": {"engine": "postgresql"}}, "target.url"),
    ({"target": {"engine": "postgresql", "url": "mysql://h/db"}}, "target.url"),
    ({"target": {"engine": "postgresql", "url": PG + "?password=x"}}, "target.url"),
    ({"target": {"engine": "postgresql", "url": "host=h password=x"}}, "target.url"),
    ({"target": {"engine": "postgresql", "url": PG, "password": "x"}}, "target.password"),
    ({"target": {"engine": "postgresql", "url": PG, "password": {"env": "AWS_SECRET_ACCESS_KEY"}}}, "target.password"),
    ({"target": {"engine": "postgresql", "url": PG, "password": {"file": "/proc/self/environ"}}}, "target.password"),
    ({"target": {"engine": "postgresql", "url": PG, "options": {"ssl": {"password": "x"}}}}, "target.options"),
    ({"target": {"engine": "sqlite", "frob": 1}}, "target.frob"),
    ({"results": "ftp://x"}, "results.location"),
    ({"results": {"max_error_rate": 2}}, "results.max_error_rate"),
    ({"results": {"baseline": "../etc"}}, "results.baseline"),
]


@pytest.mark.parametrize("campaign,field", CAMPAIGNS, ids=[f"{i}-{f.split(':')[0]}" for i, (_, f) in enumerate(CAMPAIGNS)])
def test_bad_campaign_names_its_field(campaign, field):
    with pytest.raises(CampaignError) as err:
        load_campaign(campaign)
    assert any(p.startswith(field) for p in err.value.problems), err.value.problems


# Issue 57 item 9: keys each valid alone, not together; a choice refused with the value given.
# (campaign, the field the problem starts with, the other words it must hold: the other field, the value)
CROSS = [
    # a key range past the record count
    ({"workload": {"recordcount": 100, "insertstart": 50, "insertcount": 100}}, "workload",
     ["insertstart (50)", "insertcount (100)", "recordcount (100)"]),
    ({"workload": {"recordcount": 100, "insertstart": 200, "insertcount": 10}}, "workload",
     ["insertstart (200)", "recordcount (100)"]),
    ({"matrix": {"recordcount": [10, 1000]}, "workload": {"insertcount": 500}}, "matrix.recordcount[0]",
     ["insertcount (500)", "recordcount (10)"]),
    ({"workload": {"family": "sysbench", "range_size": 200, "table_size": 100}}, "workload",
     ["range_size (200)", "table_size (100)"]),
    # a ratio whose parts cannot be a mix
    ({"workload": {"preset": "nan:5"}}, "workload.preset", ["'nan:5'", "read:write ratio"]),
    ({"workload": {"preset": "inf:1"}}, "workload.preset", ["'inf:1'", "read:write ratio"]),
    ({"workload": {"preset": "0:0"}}, "workload.preset", ["'0:0'", "not both 0"]),
    ({"workload": {"preset": "95:5", "insertproportion": 0.1}}, "workload",
     ["sum to 1.1", "insertproportion=0.1", "preset '95:5'", "readproportion=0.95"]),
    ({"workload": {"preset": "S2", "readproportion": 0.5}}, "workload",
     ["readproportion=0.5", "preset 'S2'", "updateproportion=0.9"]),
    # a choice refused: the value given echoed back, the nearest valid one named
    ({"workload": {"requestdistribution": "zipf"}}, "workload.requestdistribution", ["got 'zipf'", "`zipfian`"]),
    ({"workload": {"insertorder": "random"}}, "workload.insertorder", ["got 'random'", "'hashed'"]),
    ({"workload": {"family": "sysbench", "rand_type": "gaussian"}}, "workload.rand_type", ["got 'gaussian'"]),
    ({"workload": {"family": "tpcc", "check": ["after_loading"]}}, "workload.check[0]",
     ["got 'after_loading'", "`after_load`"]),
    ({"fanout": {"client_model": "multiplex"}}, "fanout.client_model", ["got 'multiplex'", "`multiplexed`"]),
    ({"phases": ["prepare", "lod"]}, "phases[1]", ["got 'lod'", "`load`"]),
    # results, search, repeat, fanout, phases: sections that disagree
    ({"results": {"save_baseline": True}}, "results.save_baseline", ["results.baseline"]),
    ({"results": {"verdict": {"recent": 100, "history_runs": 10}}}, "results.verdict.recent",
     ["100", "results.verdict.history_runs (10)"]),
    ({"results": {"thresholds": {"throughputt": 0.1}}}, "results.thresholds.throughputt",
     ["unknown metric", "`throughput`"]),
    ({"results": {"thresholds": {"read_p99_us": -0.1}}}, "results.thresholds.read_p99_us", ["-0.1"]),
    ({"search": {"key": "threads"}, "phases": ["prepare", "load"]}, "search", ["phases (prepare, load)"]),
    ({"search": {"key": "threads"}, "matrix": {"threads": [1, 2]}}, "search.key", ["matrix.threads"]),
    ({"search": {"key": "threads", "start": 0.2, "max": 0.5}}, "search.start", ["0.2", "search.key threads"]),
    ({"search": {"key": "threads", "stop": {"achieved_below": 0.9}}}, "search.stop.achieved_below",
     ["search.key threads"]),
    ({"repeat": {"count": 3, "baseline": {}}}, "repeat.baseline", ["neither target nor workload"]),
    ({"repeat": {"count": 3, "baseline": {"workload": {"threads": 1}}}, "workload": {"threads": 1}},
     "repeat.baseline", ["the same target and workload"]),
    ({"fanout": {"headroom": 0.3, "shards": 2}}, "fanout.headroom", ["fanout.threads_per_shard: auto"]),
    ({"fanout": {"adaptive_max": 2}}, "fanout.adaptive_max", ["fanout.adaptive: true"]),
    ({"workload": {"family": "tpcc", "check": ["after_load"]}, "phases": ["run"]}, "workload.check",
     ["after_load", "phases (run)"]),
    ({"workload": {"family": "tpcc", "check": ["after_run"]}, "phases": ["prepare", "load"]}, "workload.check",
     ["after_run", "phases (prepare, load)"]),
]


@pytest.mark.parametrize("campaign,field,words", CROSS, ids=[f"{i}-{f}" for i, (_, f, _) in enumerate(CROSS)])
def test_keys_valid_alone_but_not_together_name_both(campaign, field, words):
    with pytest.raises(CampaignError) as err:
        load_campaign(campaign)
    hits = [p for p in err.value.problems if p.startswith(field + ": ")]
    assert hits and any(all(w in p for w in words) for p in hits), err.value.problems


def test_problems_across_sections_come_with_the_workloads_own():
    """A disagreement between sections is named in the same answer as a workload's typo."""
    with pytest.raises(CampaignError) as err:
        load_campaign({"results": {"save_baseline": True}, "workload": {"recordcont": 5}})
    assert [p.split(":")[0] for p in err.value.problems] == ["workload.recordcont", "results.save_baseline"]


def test_a_preset_given_checks_do_not_need_every_phase():
    """TPC-C's quick preset checks after the load and the run: a campaign running only the run
    phase on loaded tables is not refused for the preset's own after_load check."""
    _, runs = load_campaign({"workload": {"family": "tpcc", "preset": "quick"}, "phases": ["run"]})
    assert runs[0].workload.check == ["after_load", "after_run"]


# The round's new keys (issue 57 item 9): custom workloads, live metrics, compare and the indexed
# path's coordinator, each a pair of keys valid alone but not together, both named. (campaign or
# workload keys, the field the problem starts with, the words it must hold)
def _custom(**changes):
    import copy

    from tests.unit.test_custom_workload import GOOD
    w = copy.deepcopy(GOOD)
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = w
        for k in parents:
            node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
        node[int(last) if isinstance(node, list) else last] = value
    return {"workload": w, "target": {"engine": "postgresql", "url": PG}}


PROM = {"remote_write": "http://127.0.0.1:9/api/v1/write"}
PAY = "transactions__pay__statements"
CROSS_ROUND = [
    # custom workloads: a generator's bounds, a generator against the column it loads
    (_custom(generators__aid={"type": "gaussian", "mean": 5, "stddev": 1, "min": 10, "max": 1}),
     "workload.generators.aid.gaussian", ["max (1) is below min (10)"]),
    (_custom(generators__aid={"type": "exponential", "mean": 5, "min": 10, "max": 2}),
     "workload.generators.aid.exponential", ["max (2) is below min (10)"]),
    (_custom(generators__ts={"type": "timestamp", "min": "2025-01-01 00:00:00", "max": "2020-01-01 00:00:00"}),
     "workload.generators.ts.timestamp", ["max (2020-01-01 00:00:00) is before min (2025-01-01 00:00:00)"]),
    (_custom(generators__amount={"type": "string", "max_length": 60},
             tables__accounts__columns__1={"name": "balance", "type": "varchar(10)"}),
     "workload.tables.accounts.load.columns.balance", ["generators.amount.max_length", "column balance (varchar(10))"]),
    (_custom(generators__nm={"type": "latest", "counter": "aid"}), "workload.generators.nm.counter",
     ["'aid' is a uniform generator", "unique or sequential"]),
    (_custom(**{f"{PAY}__0__sql": "SELECT balance FROM accounts WHERE id = :bal"}), f"workload.{PAY.replace('__', '.')}[0].sql",
     [":bal is captured by statement 0"]),
    (_custom(transactions__pay__bind={"zzz": "aid"}), "workload.transactions.pay.bind.zzz",
     ["no statement of the transaction has a parameter :zzz"]),
    (_custom(**{f"{PAY}__0__capture": ["aid"]}), f"workload.{PAY.replace('__', '.')}[0].capture",
     ["'aid' is a generator's name too"]),
    (_custom(tables__accounts__load__columns={"balance": "amount", "id": "aid"}),
     "workload.tables.accounts.load.columns.id", ["the key column gets the row number"]),
    (_custom(transactions__pay__think_time={"distribution": "uniform", "min": 2, "max": 1}),
     "workload.transactions.pay.think_time.max", ["below min"]),
    (_custom(operations=0, time=5, warmuptime=5), "workload.warmuptime", ["5 s is not shorter than run 000's 5 s"]),
    ({**_custom(), "search": {"key": "recordcount"}}, "search.key", ["'recordcount'", "custom workload of run 000"]),
    ({**_custom(), "target": {"engine": "mongodb", "url": "mongodb://db.internal/app"}}, "workload.tables.accounts",
     ["a SQL table: target.engine mongodb"]),
    # live metrics: basic auth in halves
    ({"results": {"metrics": {"prometheus": {**PROM, "username": "u"}}}}, "results.metrics.prometheus",
     ["username without password"]),
    ({"results": {"metrics": {"prometheus": {**PROM, "password": {"env": "PROM_PW"}}}}}, "results.metrics.prometheus",
     ["password without username"]),
]


@pytest.mark.parametrize("campaign,field,words", CROSS_ROUND,
                         ids=[f"{i}-{f}" for i, (_, f, _) in enumerate(CROSS_ROUND)])
def test_the_rounds_keys_valid_alone_but_not_together_name_both(campaign, field, words):
    with pytest.raises(CampaignError) as err:
        load_campaign(campaign)
    hits = [p for p in err.value.problems if p.startswith(field + ": ")]
    assert hits and any(all(w in p for w in words) for p in hits), err.value.problems


@pytest.fixture
def compared(tmp_path):
    """Two results to compare (noop campaigns, in-process)."""
    assert main(["run", _noop_spec(tmp_path, "base"), "--results", str(tmp_path / "r"), "--quiet"]) == 0
    return [str(p) for p in (tmp_path / "r").glob("*/result.json")][:1] * 2


def _noop_spec(tmp_path, name) -> str:
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps({"name": name, "target": {"engine": "noop"},
                                "workload": {"recordcount": 10, "operationcount": 50}}))
    return str(spec)


CROSS_CLI = [
    # compare: one metric given two shares; the report and the JUnit file on one path
    (["--max-regression", "p99=10%", "--max-regression", "p99=20%"],
     ["--max-regression p99=20%: p99 is also given as --max-regression p99=10%"]),
    (["--max-regression", "5%", "--max-regression", "10%"],
     ["--max-regression 10%: the default share is also given as --max-regression 5%"]),
    (["--format", "json", "--output", "{tmp}/out.xml", "--junit", "{tmp}/out.xml"],
     ["--junit {tmp}/out.xml: the same file as --output {tmp}/out.xml"]),
]


@pytest.mark.parametrize("args,words", CROSS_CLI, ids=[a[1] for a, _ in CROSS_CLI])
def test_compare_options_valid_alone_but_not_together_name_both(tmp_path, capsys, compared, args, words):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["compare", *compared, *args]) == 2
    err = capsys.readouterr().err
    assert all(w.replace("{tmp}", str(tmp_path)) in err for w in words), err
    assert not (tmp_path / "out.xml").exists()


def test_a_coordinator_with_fewer_workers_than_shards_is_refused_naming_both(tmp_path, capsys):
    """The indexed path: a worker runs the shard of its index only; with fanout.shards 4 and
    --workers 2, shards 2 and 3 would never run (the coordinator waited --phase-timeout)."""
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({"name": "idx", "target": {"engine": "noop"}, "fanout": {"shards": 4},
                                "workload": {"recordcount": 10, "operationcount": 50, "threads": 4}}))
    args = ["coordinate", str(spec), "--results", str(tmp_path / "r"), "--campaign-id", "idx-1",
            "--phase-timeout", "3", "--lead-seconds", "0"]   # (were it not refused: no worker comes)
    assert main(args + ["--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "fanout.shards: run 000 has 4 shards, more than --workers 2" in err and "shards 2-3 would never run" in err
    assert not (tmp_path / "r").exists()


def test_kubernetes_refuses_what_the_indexed_path_cannot_run(tmp_path, capsys):
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({"name": "idx", "target": {"engine": "noop"}, "search": {"key": "threads"},
                                "workload": {"recordcount": 10, "operationcount": 50}}))
    assert main(["kubernetes", str(spec), "--results", "s3://bucket/p"]) == 2
    assert "search / fanout.adaptive: the indexed path does not run peak searches" in capsys.readouterr().err


def test_duplicate_key_message_says_which_and_where():
    with pytest.raises(CampaignError) as err:
        load_campaign("name: a\nseed: 1\nname: b\n")
    assert "duplicate key 'name' (line 1 and line 3)" in err.value.problems[0]


CLI = [
    (["--shards", "0"], "--shards"),
    (["--shards", "-2"], "--shards"),
    (["--max-call-seconds", "-1"], "--max-call-seconds"),
    (["--max-call-seconds", "0"], "--max-call-seconds"),
    (["--max-call-seconds", "nan"], "--max-call-seconds"),
]


@pytest.mark.parametrize("args,field", CLI, ids=[" ".join(a) for a, _ in CLI])
def test_bad_cli_arguments_are_refused_before_anything_runs(tmp_path, capsys, args, field):
    spec = tmp_path / "c.yaml"
    spec.write_text("name: c\nworkload: {recordcount: 10, operationcount: 10}\n")
    assert main(["run", str(spec), "--results", str(tmp_path / "r"), "--quiet", *args]) == 2
    assert field in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_quiet_still_says_why_on_stderr(tmp_path, capsys):
    spec = tmp_path / "c.yaml"
    spec.write_text("name: c\nworkload: {recordcount: 0}\n")
    assert main(["run", str(spec), "--quiet"]) == 2
    assert "workload.recordcount" in capsys.readouterr().err


def _dep(tmp_path):
    return api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                          LocalStore(tmp_path), secret_prefix="dbswarm/", allowed_targets="10.0.0.0/8")


def _call(dep, method, body=None, query=None):
    event = {"requestContext": {"http": {"method": method}}, "rawPath": "/campaigns", "body": body,
             "queryStringParameters": query}
    out = api.handle(event, dep)
    return out["statusCode"], json.loads(out["body"])


API = [
    ("POST", {"max_call_seconds": "-5"}, "query parameter max_call_seconds"),
    ("POST", {"max_call_seconds": "abc"}, "query parameter max_call_seconds"),
    ("POST", {"max_call_seconds": "inf"}, "query parameter max_call_seconds"),
    ("POST", {"lead_seconds": "nan"}, "query parameter lead_seconds"),
    ("POST", {"lead_seconds": "100000"}, "query parameter lead_seconds"),
    ("GET", {"limit": "abc"}, "query parameter limit"),
    ("GET", {"limit": "0"}, "query parameter limit"),
    ("GET", {"limit": "-3"}, "query parameter limit"),
    ("GET", {"status": "DANCING"}, "query parameter status"),
]


@pytest.mark.parametrize("method,query,field", API, ids=[f"{m}-{list(q)[0]}={list(q.values())[0]}" for m, q, _ in API])
def test_bad_api_query_parameters(tmp_path, method, query, field):
    code, doc = _call(_dep(tmp_path), method, "name: c\n" if method == "POST" else None, query)
    assert code == 400 and doc["error"].startswith(field), doc


API_BODIES = [
    ("", "(body)"),
    ("name: c\n" + "#" * 300_000 + "\n", "(body)"),
    ("matrix: {recordcount: [" + ",".join(map(str, range(1, 101))) + "], operationcount: [" + ",".join(
        map(str, range(1, 101))) + "], threads: [" + ",".join(map(str, range(1, 101))) + "]}\n", "matrix: expands to"),
    ("matrix: {recordcount: [" + ",".join(map(str, range(1, 1001))) + "]}\nrepeat: 1000\n",
     "repeat: expands to 1,000 cells x 1,000 repeated runs = 1,000,000 runs"),
    ("matrix: {threads: [1, 2, 3, 4, 5, 6]}\nrepeat: {count: 100, baseline: {workload: {threads: 8}}}\n",
     "repeat: expands to 6 cells x 200 repeated runs"),
    ("target: {engine: postgresql, url: 'postgresql://u@10.0.0.5/db', password: {env: PGPASSWORD}}\n",
     "target.password"),
    ("target: {engine: postgresql, url: 'postgresql://u@10.0.0.5/db', password: {secret: other/x}}\n",
     "target.password.secret"),
    ("target: {engine: postgresql, url: 'postgresql://u@192.0.2.1/db', password: {secret: dbswarm/x}}\n",
     "target.url"),
]


@pytest.mark.parametrize("body,field", API_BODIES, ids=[f for _, f in API_BODIES])
def test_bad_api_bodies(tmp_path, body, field):
    code, doc = _call(_dep(tmp_path), "POST", body)
    assert code == 400 and any(p.startswith(field) for p in doc["problems"]), doc


def test_corpus_size():
    assert len(CAMPAIGNS) + len(CLI) + len(API) + len(API_BODIES) >= 40
    assert len(CROSS) >= 20
    # the round's new keys: custom workloads, metrics, compare, the indexed path (2 tests of their own)
    assert len(CROSS_ROUND) + len(CROSS_CLI) + 2 >= 20


def test_bogus_page_token_is_a_400_not_a_traceback(tmp_path, monkeypatch):
    import boto3
    from moto import mock_aws
    for k, v in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        sfn = boto3.client("stepfunctions")
        role = boto3.client("iam").create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        arn = sfn.create_state_machine(name="m", roleArn=role, definition=json.dumps(
            {"StartAt": "a", "States": {"a": {"Type": "Pass", "End": True}}}))["stateMachineArn"]
        dep = api.Deployment(arn, LocalStore(tmp_path), _sfn=sfn)
        code, doc = _call(dep, "GET", query={"next": "bogus"})
    assert code == 400 and doc["error"].startswith("query parameter next"), doc
