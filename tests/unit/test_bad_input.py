"""Issue 20 items 10-11: a corpus of bad input, each refused with the field it is about named
in the message: campaign files (YAML and dicts), CLI arguments and API requests. No socket,
no process: the refusals happen before anything runs."""
import json

import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.cli import main
from dbswarm.errors import CampaignError
from dbswarm.results.store import LocalStore
from dbswarm.run import api

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
