"""template.yaml and statemachines/campaign.asl.json: SAM's and cfn-lint's checks, the
ASL after substitution, and what the template promises (least privilege, encryption,
IAM-authenticated API, disabled schedule, layers)."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dbswarm.run.runtime.template import SamApp, TemplateError, load_yaml, placeholders, substitute
from tests import timing

from .conftest import ROOT

TEMPLATE = ROOT / "template.yaml"
ASL = ROOT / "statemachines" / "campaign.asl.json"


def _sam():
    """`sam` (aws-sam-cli 1.170.0): $SAM_CLI, on PATH, or in the venv scripts/install --sam makes
    (scripts/lib/sam-cli-dir; docs/serverless.md)."""
    def venv(**env):
        script = str(ROOT / "scripts" / "lib" / "sam-cli-dir")
        return subprocess.run([script], capture_output=True, text=True, env=dict(os.environ, **env)).stdout.strip()
    # its own folder (DBSWARM_TEST_SERVERS_DIR-sam-cli), else the machine's default one, used as it is
    folders = (venv(), venv(SAM_CLI_VENV="", DBSWARM_TEST_SERVERS_DIR=""))
    for candidate in (os.environ.get("SAM_CLI"), shutil.which("sam"), *(f"{f}/bin/sam" for f in folders if f)):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _fake_aws_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_DEFAULT_REGION="us-east-1", AWS_REGION="us-east-1", AWS_ACCESS_KEY_ID="testing",
               AWS_SECRET_ACCESS_KEY="testing", SAM_CLI_TELEMETRY="0")
    return env


def test_sam_validate_lint_passes():
    assert _sam(), "aws-sam-cli is not installed: scripts/install --sam (or --test) installs it"
    proc = subprocess.run([_sam(), "validate", "--lint", "--template-file", str(TEMPLATE)], cwd=ROOT,
                          capture_output=True, text=True, env=_fake_aws_env(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "is a valid SAM Template" in proc.stdout + proc.stderr


def test_cfn_lint_passes():
    from cfnlint.api import ManualArgs, lint_file
    matches = lint_file(TEMPLATE, config=ManualArgs(regions=["us-east-1", "eu-west-1"]))
    assert matches == [], "\n".join(str(m) for m in matches)


def test_asl_parses_after_substitution_and_every_placeholder_has_a_value():
    raw = ASL.read_text()
    sm = load_yaml(TEMPLATE)["Resources"]["CampaignStateMachine"]["Properties"]
    assert sm["DefinitionUri"] == "statemachines/campaign.asl.json"
    subs = set(sm["DefinitionSubstitutions"])
    assert placeholders(raw) == subs           # every ${...} has a value, and no value is unused
    spec = SamApp(TEMPLATE).state_machine()
    definition = spec.definition               # valid JSON once substituted
    assert definition["StartAt"] == "Plan" and isinstance(definition["TimeoutSeconds"], int)
    assert "${" not in spec.definition_text
    with pytest.raises(TemplateError, match="no DefinitionSubstitutions value for MaxShards"):
        substitute(raw, {k: "1" for k in subs - {"MaxShards"}})


def _states(definition):
    """Every state of a definition, nested Map processors included: name -> state."""
    out = {}
    for name, state in definition["States"].items():
        out[name] = state
        for key in ("ItemProcessor", "Iterator"):
            if key in state:
                out.update(_states(state[key]))
    return out


def test_state_machine_flow():
    definition = SamApp(TEMPLATE, {"RetryIntervalSeconds": 3}).state_machine().definition
    states = _states(definition)
    top = definition["States"]
    assert top["Plan"]["Next"] == "ForEachRun"
    # a peak search: after the runs, NextStep (the plan function) plans the next step and loops back
    assert top["ForEachRun"]["Next"] == "Search?" and top["Search?"]["Default"] == "Aggregate"
    assert top["Search?"]["Choices"][0]["Next"] == "NextStep"
    assert top["NextStep"]["Parameters"]["Payload"]["action"] == "next_step" and top["NextStep"]["Next"] == "More?"
    assert top["More?"]["Choices"][0] == {"Variable": "$.more", "BooleanEquals": True, "Next": "ForEachRun"}
    assert top["ForEachRun"]["MaxConcurrency"] == 1                        # runs one after the other
    assert top["ForEachRun"]["Catch"][0]["Next"] == "Aggregate"            # partial campaigns aggregate
    assert top["Aggregate"]["Next"] == "Compare?"
    assert top["Regressed?"]["Choices"][0]["Next"] == "Regressed" and top["Regressed"]["Type"] == "Fail"
    assert states["ForEachPhase"]["MaxConcurrency"] == 1
    # each shard: worker call, loop while it answers continue, failures caught and recorded
    for map_name in ("Shards", "ShardsDistributed"):
        loop = states[map_name]["ItemProcessor"]["States"]
        assert loop["Work"]["Parameters"]["Payload"]["checkpoint.$"] == "$.last.checkpoint"
        assert loop["Continue?"]["Choices"][0] == {"Variable": "$.last.status", "StringEquals": "continue",
                                                   "Next": "Work"}
        assert loop["Work"]["Catch"][0]["Next"] == "RecordFailure"
        assert loop["RecordFailure"]["Parameters"]["Payload"]["action"] == "record_failure"
    assert states["Shards"]["ItemProcessor"]["ProcessorConfig"]["Mode"] == "INLINE"
    dist = states["ShardsDistributed"]
    assert dist["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    assert dist["ItemReader"]["Resource"] == "arn:aws:states:::s3:getObject"
    # every Lambda task retries the service's transient errors, with the template's interval
    tasks = [s for s in states.values() if s["Type"] == "Task"]
    # Plan, Prepare, Arm, Work, RecordFailure, WindowEnd, Index, AfterRun, CheckRange, CheckMerge, Cleanup,
    # NextStep, Aggregate, Compare
    assert len(tasks) == 14
    # the measured window's edges around the shards: the server's counters before and after
    assert states["Arm"]["Parameters"]["Payload"]["phase.$"] == "$.phase"
    for map_name in ("Shards", "ShardsDistributed"):
        assert states[map_name]["Next"] == "WindowEnd"
    assert states["WindowEnd"]["Parameters"]["Payload"]["action"] == "window"
    assert states["WindowEnd"]["Next"] == "AfterLoad?"
    # the family's un-sharded step after each shard phase: after_load (Index), after_run (AfterRun)
    assert [(c["StringEquals"], c["Next"]) for c in states["AfterLoad?"]["Choices"]] == [("load", "Index"),
                                                                                      ("run", "AfterRun")]
    assert states["Index"]["Parameters"]["Payload"]["stage"] == "after_load"
    assert states["AfterRun"]["Parameters"]["Payload"]["stage"] == "after_run"
    # a consistency check after either stage: the stage answers its ranges; none, and the phase ends there
    for first, stage in (("Index", "after_load"), ("AfterRun", "after_run")):
        assert states[first]["Next"] == "Check?"
        assert states[first]["ResultSelector"] == {"stage": stage, "ranges.$": "$.Payload.check_ranges"}
        assert states[first]["ResultPath"] == "$.check"
    assert states["Check?"]["Choices"] == [{"Variable": "$.check.ranges[0]", "IsPresent": True,
                                            "Next": "CheckRanges"}]
    assert states["Check?"]["Default"] == "PhaseDone"
    # ... its ranges all at once (an inline Map over range indices), each looping while it answers more,
    # then one merge into the stage's record
    ranges = states["CheckRanges"]
    assert ranges["Type"] == "Map" and ranges["ItemsPath"] == "$.check.ranges" and ranges["MaxConcurrency"] == 0
    assert ranges["ItemProcessor"]["ProcessorConfig"]["Mode"] == "INLINE"
    assert ranges["ItemSelector"]["range.$"] == "$$.Map.Item.Value" and ranges["ResultPath"] is None
    assert states["CheckRange"]["Parameters"]["Payload"]["action"] == "check_range"
    assert states["CheckRange"]["Next"] == "RangeMore?"
    assert states["RangeMore?"]["Choices"] == [{"Variable": "$.last.more", "BooleanEquals": True,
                                                "Next": "CheckRange"}]
    assert ranges["Next"] == "CheckMerge" and states["CheckMerge"]["Next"] == "PhaseDone"
    assert states["CheckMerge"]["Parameters"]["Payload"]["action"] == "check_merge"
    assert states["CheckMerge"]["Parameters"]["Payload"]["stage.$"] == "$.check.stage"
    for task in tasks:
        retry, = task["Retry"]
        assert {"Lambda.ServiceException", "Lambda.TooManyRequestsException",
                "Lambda.SdkClientException"} <= set(retry["ErrorEquals"])
        assert retry["IntervalSeconds"] == 3
        assert task["Parameters"]["FunctionName"].startswith("arn:aws:lambda:")


def test_handlers_and_events_exist_for_every_function():
    app = SamApp(TEMPLATE)
    functions = app.functions()
    assert set(functions) == {"PlanFunction", "PrepareFunction", "WorkerFunction", "AggregateFunction",
                              "CompareFunction", "ApiFunction"}
    for spec in functions.values():
        assert spec.runtime == "python3.12" and spec.module_file.is_file()
        text = spec.module_file.read_text()
        assert "def handler(event, context)" in text and len(text.splitlines()) < 20   # thin
    events = {p.stem for p in (ROOT / "events").glob("*.json")}
    assert {"plan", "prepare", "arm", "worker", "record-failure", "aggregate", "compare", "api-post"} <= events
    for p in (ROOT / "events").glob("*.json"):
        json.loads(p.read_text())


def test_template_promises():
    doc = load_yaml(TEMPLATE)
    res = doc["Resources"]
    bucket = res["ResultsBucket"]["Properties"]
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert all(bucket["PublicAccessBlockConfiguration"].values()) and len(bucket["PublicAccessBlockConfiguration"]) == 4
    auth = res["CampaignApi"]["Properties"]["Auth"]
    assert auth["DefaultAuthorizer"] == "AWS_IAM" and auth["EnableIamAuthorizer"] is True
    nightly = res["CampaignStateMachine"]["Properties"]["Events"]["Nightly"]
    assert nightly["Type"] == "ScheduleV2" and doc["Parameters"]["NightlyScheduleState"]["Default"] == "DISABLED"
    for name in ("WorkerMemorySize", "WorkerTimeoutSeconds", "MaxShards", "MaxCampaignSeconds",
                 "RetryIntervalSeconds", "SecretPrefix"):
        assert name in doc["Parameters"]
    worker = res["WorkerFunction"]["Properties"]
    assert worker["MemorySize"] == {"Ref": "WorkerMemorySize"} and worker["Timeout"] == {"Ref": "WorkerTimeoutSeconds"}
    # secrets: only under the prefix, only for the functions that connect to databases
    readers = [n for n, r in res.items() if "AWSSecretsManagerGetSecretValuePolicy" in json.dumps(r)]
    assert sorted(readers) == ["PrepareFunction", "WorkerFunction"]
    arn = res["WorkerFunction"]["Properties"]["Policies"][1]["AWSSecretsManagerGetSecretValuePolicy"]["SecretArn"]
    assert arn["Fn::Sub"].endswith(":secret:${SecretPrefix}*")
    # no function gets a wildcard resource or a managed admin policy
    text = json.dumps(res)
    assert "AdministratorAccess" not in text and '"Resource": "*"' not in text
    layers = {n: r for n, r in res.items() if r["Type"] == "AWS::Serverless::LayerVersion"}
    assert layers["DbswarmLayer"]["Metadata"]["BuildMethod"] == "makefile"
    # the drivers layer is built from the runtime's wheels by tag (any Python 3 with pip builds it: Debian 12
    # has no python3.12), so sam build's python3.12 builder is not what builds it
    assert layers["DriversLayer"]["Metadata"]["BuildMethod"] == "makefile"
    makefile = (ROOT / "layers" / "drivers" / "Makefile").read_text()
    assert "build-DriversLayer:" in makefile and "--only-binary=:all:" in makefile
    assert "RUNTIME_PYTHON ?= 3.12" in makefile and "manylinux2014_x86_64" in makefile
    assert doc["Globals"]["Function"]["Runtime"] == "python3.12" == layers["DriversLayer"]["Properties"][
        "CompatibleRuntimes"][0]
    reqs = (ROOT / "layers" / "drivers" / "requirements.txt").read_text()
    for pkg in ("pymongo", "PyMySQL", "psycopg[binary]", "hdrhistogram", "pydantic", "PyYAML"):
        assert re.search(rf"^{re.escape(pkg)}[<>=]", reqs, re.M), pkg
    # the mysql binding's C driver in Lambda: a pinned release with manylinux wheels whose client
    # still has mysql_native_password (9.x does not)
    assert re.search(r"^mysql-connector-python==8\.4\.\d+$", reqs, re.M)
    assert "build-DbswarmLayer:" in (ROOT / "layers" / "dbswarm" / "Makefile").read_text()


def test_sam_translator_expands_the_template(monkeypatch):
    """The SAM transform itself (what CloudFormation runs) on the template, code URIs stubbed."""
    from samtranslator.translator.transform import transform
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    doc = copy.deepcopy(load_yaml(TEMPLATE))
    for res in doc["Resources"].values():
        props = res.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if key in props:
                props[key] = f"s3://artifacts/{key.lower()}"

    class Policies:
        def load(self):
            return {"AWSLambdaBasicExecutionRole": "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
                    "AWSLambdaVPCAccessExecutionRole":
                        "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
                    "AWSXrayWriteOnlyAccess": "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"}
    out = transform(doc, {}, Policies())
    kinds = {}
    for name, res in out["Resources"].items():
        kinds.setdefault(res["Type"], []).append(name)
    assert len(kinds["AWS::Lambda::Function"]) == 6 and len(kinds["AWS::Lambda::LayerVersion"]) == 2
    schedule = out["Resources"][kinds["AWS::Scheduler::Schedule"][0]]["Properties"]
    assert schedule["State"] == {"Ref": "NightlyScheduleState"}
    assert schedule["Target"]["Arn"] == {"Ref": "CampaignStateMachine"}
    sm = out["Resources"]["CampaignStateMachine"]["Properties"]
    assert sm["DefinitionS3Location"] and "WorkerFunctionArn" in sm["DefinitionSubstitutions"]


def _python312():
    """A CPython 3.12 (the Lambda runtime's) if this machine has one: on PATH, or pyenv's."""
    found = shutil.which("python3.12")
    candidates = [found] if found else []
    candidates += sorted(Path(os.path.expanduser("~/.pyenv/versions")).glob("3.12.*/bin/python3.12"))
    for c in candidates:
        proc = subprocess.run([str(c), "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                              capture_output=True, text=True)
        if proc.stdout.strip() == "True":   # pyenv's shim on PATH fails when 3.12 is not selected
            return str(c)
    return None


def _wheel_tags(layer: Path) -> dict[str, list[str]]:
    """Each installed distribution of a layer and the tags of the wheel it came from."""
    out = {}
    for wheel in layer.glob("*.dist-info/WHEEL"):
        name = wheel.parent.name.split("-")[0].lower().replace("_", "-")
        out[name] = [line.split(":", 1)[1].strip() for line in wheel.read_text().splitlines()
                     if line.startswith("Tag:")]
    return out


@pytest.mark.slow
def test_sam_build_makes_both_layers(tmp_path):
    """`sam build` as docs/serverless.md says, with no python3.12 on PATH (a stock Debian 12): the
    drivers layer holds the Lambda runtime's wheels (CPython 3.12, manylinux x86_64), proved by their
    tags, and imports under a 3.12 interpreter when this machine has one."""
    assert _sam(), "aws-sam-cli is not installed: scripts/install --sam (or --test) installs it"
    env = _fake_aws_env()
    # no Python 3.12 reachable by sam: only directories without a python3.12 stay on PATH, and make
    # (the makefile builds') from wherever it is
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "make").symlink_to(shutil.which("make"))
    env["PATH"] = os.pathsep.join([d for d in env["PATH"].split(os.pathsep)
                                   if "3.12" not in d and not (Path(d) / "python3.12").exists()] + [str(tools)])
    env.setdefault("PYTHON", sys.executable)   # the Makefile's pip: this test's Python (3.11 here)
    proc = subprocess.run([_sam(), "build", "--build-dir", str(tmp_path / "build"), "--cache-dir",
                           str(tmp_path / "cache"), "--template-file", str(TEMPLATE)], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=timing.timeout(900))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lib = tmp_path / "build" / "DbswarmLayer" / "python" / "dbswarm"
    drivers = tmp_path / "build" / "DriversLayer" / "python"
    assert (lib / "run" / "runtime" / "service.py").is_file() and (lib / "run" / "runtime" / "context.py").is_file()
    for pkg in ("pymongo", "pymysql", "psycopg", "psycopg_binary", "pydantic", "pydantic_core", "yaml", "hdrh",
                "mysql", "markdown_it"):
        assert (drivers / pkg).is_dir(), pkg
    # every wheel is for the runtime: pure Python, or CPython 3.12 (or the stable ABI) on manylinux x86_64
    tags = _wheel_tags(drivers)
    for dist in ("pydantic-core", "hdrhistogram", "pymongo", "psycopg-binary", "mysql-connector-python", "pyyaml"):
        assert any(re.fullmatch(r"cp312-(cp312|abi3)-(many)?linux\w*_x86_64", t) for t in tags[dist]), (dist, tags[dist])
    for dist, ts in tags.items():
        assert all(re.fullmatch(r"(py3|py2)-none-any|cp312-(cp312|abi3)-(many)?linux\w*_x86_64", t) for t in ts), \
            (dist, ts)
    # the C extensions are the 3.12 builds: the mysql binding's C driver in Lambda, hdrhistogram's encoder
    for so in ("_mysql_connector", "pyhdrh"):
        assert list(drivers.glob(f"{so}.cpython-312-x86_64-linux-gnu.so")), so
    assert list((drivers / "pydantic_core").glob("_pydantic_core.cpython-312-x86_64-linux-gnu.so"))
    python312 = _python312()
    if python312 is None:
        return  # the tags above are the proof on a machine without 3.12
    # the layers import under the Lambda runtime's Python, handlers on top
    check = ("import sys; sys.path[:0] = [%r, %r, %r]; import app, dbswarm.run.runtime.service, dbswarm.run.front.api, psycopg, "
             "pymysql, pymongo, pydantic, pydantic_core, hdrh.histogram, yaml, mysql.connector, markdown_it; "
             "assert mysql.connector.HAVE_CEXT and psycopg.pq.__impl__ == 'binary'; print('ok')"
             % (str(lib.parent), str(drivers), str(tmp_path / "build" / "WorkerFunction")))
    proc = subprocess.run([python312, "-c", check], capture_output=True, text=True, timeout=timing.timeout(120))
    assert proc.stdout.strip() == "ok", proc.stderr


def _maps(node, found):
    """Every Map state of a definition, by name, at any depth."""
    if isinstance(node, dict):
        for name, state in (node.get("States") or {}).items():
            if state.get("Type") == "Map":
                found[name] = state
        for value in node.values():
            _maps(value, found)
    elif isinstance(node, list):
        for value in node:
            _maps(value, found)
    return found


def test_inline_and_distributed_shard_loops_cannot_drift():
    """The per-shard loop (Work -> Continue? -> ShardDone | RecordFailure) is written twice: in
    the inline Map (few shards) and in the Distributed Map (many, items from S3). Both must
    call the worker with the same payload, loop on "continue" the same way and record
    failures alike; only how items arrive and the processor mode may differ."""
    maps = _maps(SamApp(TEMPLATE).state_machine().definition, {})
    inline, distributed = maps["Shards"], maps["ShardsDistributed"]
    assert inline["ItemProcessor"]["ProcessorConfig"]["Mode"] == "INLINE"
    assert distributed["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
    for key in ("StartAt", "States"):
        assert inline["ItemProcessor"][key] == distributed["ItemProcessor"][key], key
    assert inline["ItemSelector"] == distributed["ItemSelector"]
    for key in ("ResultPath", "Next"):
        assert inline.get(key) == distributed.get(key), key
    # and the test sees a drift: one changed field in one copy fails the comparison
    drifted = copy.deepcopy(distributed["ItemProcessor"]["States"])
    drifted["Work"]["Parameters"]["Payload"].pop("checkpoint.$")
    assert drifted != inline["ItemProcessor"]["States"]


def test_the_deployment_guide_names_every_parameter_and_the_raw_request():
    """docs/serverless.md: every template parameter in its list (AllowedTargets' default refusing a
    public endpoint said), a raw SigV4 request, a create-secret example, the deployer's permissions."""
    doc = (ROOT / "docs" / "serverless.md").read_text()
    for name in load_yaml(TEMPLATE)["Parameters"]:
        if not name.startswith("Nightly"):  # "the nightly schedule's expression, state and campaign key"
            assert f"`{name}`" in doc, name
    assert "refuses a public database endpoint" in doc
    assert load_yaml(TEMPLATE)["Parameters"]["AllowedTargets"]["Default"] in doc
    assert 'curl --aws-sigv4 "aws:amz:$AWS_REGION:execute-api"' in doc
    assert "aws secretsmanager create-secret --name dbswarm/" in doc
    policy = doc[doc.index("### What the deployer needs"):]
    policy = json.loads(policy[policy.index("```json") + 7:policy.index("```", policy.index("```json") + 7)])
    actions = {a for st in policy["Statement"] for a in st["Action"]}
    for needed in ("cloudformation:*", "iam:PassRole", "iam:CreateRole", "lambda:*", "states:*", "apigateway:POST",
                   "scheduler:CreateSchedule"):
        assert needed in actions, needed
