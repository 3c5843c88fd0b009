"""Issue 20 items 1-2: no credential leaves. A password is planted through every form a
campaign could carry it: the refused forms (URL user info, query parameters, libpq keyword
strings, option keys at any depth, URLs inside options such as FerretDB's backend URL, a
literal) are refused with a message that says how to reference a secret; the accepted forms
({env}, {file} locally, {secret} through the API) are used for real against PostgreSQL and
MariaDB, and every file, log line and event of the campaign is scanned for the value."""
import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import CampaignError
from tests import servers
from tests.faults.conftest import ROOT, dbswarm_env

PLANT = "Pl4nted-S3cret-0xC0FFEE"

REFUSED = [
    ({"engine": "postgresql", "url": f"postgresql://u:{PLANT}@db.internal/app"}, "target.url"),
    ({"engine": "postgresql", "url": f"postgresql://db.internal/app?user=u&password={PLANT}"}, "target.url"),
    ({"engine": "postgresql", "url": f"postgresql://u@db.internal/app?sslmode=require&PWD={PLANT}"}, "target.url"),
    ({"engine": "postgresql", "url": f"host=db.internal dbname=app user=u password={PLANT}"}, "target.url"),
    ({"engine": "mysql", "url": f"mysql://u@db.internal/app?password={PLANT}"}, "target.url"),
    ({"engine": "mongodb", "url": f"mongodb://u:{PLANT}@db.internal/app?authSource=admin"}, "target.url"),
    ({"engine": "mongodb", "url": "mongodb://db.internal/app",
      "options": {"ferretdb_backend_url": f"postgresql://postgres:{PLANT}@pg.internal/ferretdb"}}, "target.options"),
    ({"engine": "mongodb", "url": "mongodb://db.internal/app",
      "options": {"ferretdb_backend_url": f"postgresql://pg.internal/ferretdb?password={PLANT}"}}, "target.options"),
    ({"engine": "postgresql", "url": "postgresql://db.internal/app", "options": {"pwd": PLANT}}, "target.options"),
    ({"engine": "postgresql", "url": "postgresql://db.internal/app", "options": {"ssl": {"password": PLANT}}},
     "target.options"),
    ({"engine": "postgresql", "url": "postgresql://db.internal/app", "options": {"x": [{"api_token": PLANT}]}},
     "target.options"),
    ({"engine": "postgresql", "url": "postgresql://db.internal/app",
      "options": {"dsn": f"host=h user=u password={PLANT}"}}, "target.options"),
    ({"engine": "postgresql", "url": "postgresql://db.internal/app", "password": PLANT}, "target.password"),
]


@pytest.mark.parametrize("target,field", REFUSED, ids=[f"{i}-{f}" for i, (_, f) in enumerate(REFUSED)])
def test_every_clear_text_form_is_refused(target, field):
    for campaign in ({"target": target}, {"matrix": {"target": [{"engine": "sqlite"}, target]}}):
        with pytest.raises(CampaignError) as err:
            load_campaign(campaign)
        text = str(err.value)
        assert PLANT not in text
        assert "{secret: NAME}" in text, text
        where = field if "matrix" not in campaign else field.replace("target", "matrix.target[1]", 1)
        assert any(p.startswith(where) for p in err.value.problems), (where, err.value.problems)


@pytest.mark.parametrize("ref,field", [
    ({"env": "AWS_SECRET_ACCESS_KEY"}, "target.password: "), ({"env": "AWS_SESSION_TOKEN"}, "target.password: "),
    ({"env": "MY_SESSION_TOKEN"}, "target.password: "), ({"file": "/proc/self/environ"}, "target.password: "),
    ({"file": "~/.aws/credentials"}, "target.password: "), ({"file": "/dev/stdin"}, "target.password: ")])
def test_process_credentials_are_never_a_password_even_locally(ref, field):
    with pytest.raises(CampaignError) as err:
        load_campaign({"target": {"engine": "postgresql", "url": "postgresql://h/db", "password": ref}})
    assert err.value.problems[0].startswith(field) and "refused" in err.value.problems[0], err.value.problems
    from dbswarm.credentials import secrets
    from dbswarm.errors import SecretError
    with pytest.raises(SecretError):  # and the resolver refuses them too (defence in depth)
        secrets.resolve(ref)


def _scan(label, blob: bytes, found: list):
    if PLANT.encode() in blob or base64.b64encode(PLANT.encode()) in blob:
        found.append(label)


def _scan_tree(folder: Path, found: list):
    n = 0
    for path in folder.rglob("*"):
        if path.is_file():
            n += 1
            _scan(str(path), path.read_bytes(), found)
    return n


# python -c: `dbswarm ARGS` (argv[2:]) saving every execution history the local runner reads to argv[1]
_RUN_KEEPING_HISTORY = """
import json, sys
from dbswarm.run.runtime import emulator as asl_local
from dbswarm.cli import main
read = asl_local.LocalCloud.history
def history(self, arn):
    events = read(self, arn)
    with open(sys.argv[1], "w") as fh:
        json.dump(events, fh, default=str)
    return events
asl_local.LocalCloud.history = history
sys.exit(main(sys.argv[2:]))
"""

# refused forms whose refusal quotes what it refuses (an engine name, a URL of another engine)
ECHOING = [
    {"engine": f"postgresql://u:{PLANT}@db.internal/app"},
    {"engine": "mysql", "url": f"db.internal/app?password={PLANT}"},
    {"engine": "postgresql", "url": f"postgresql://u:{PLANT}@db.internal/app"},
]


@pytest.mark.parametrize("target", ECHOING, ids=["engine-is-a-url", "url-of-no-engine", "url-user-info"])
def test_refused_form_is_not_echoed_by_the_cli(tmp_path, target):
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({"name": "faults-refused", "target": target}))
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(tmp_path / "r")],
                          env=dbswarm_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "target." in proc.stderr and "invalid campaign" in proc.stderr, proc.stderr
    assert PLANT not in proc.stderr + proc.stdout, proc.stderr
    assert not (tmp_path / "r").exists()   # nothing written


@pytest.mark.parametrize("target", ECHOING, ids=["engine-is-a-url", "url-of-no-engine", "url-user-info"])
def test_refused_form_is_not_echoed_by_the_api(tmp_path, target):
    from dbswarm.results.store import LocalStore
    from dbswarm.run.front import api
    dep = api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                         LocalStore(tmp_path / "r"), secret_prefix="dbswarm/", allowed_targets="10.0.0.0/8")
    out = api.handle({"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                      "body": json.dumps({"name": "faults-refused", "target": target})}, dep)
    assert out["statusCode"] == 400, out
    doc = json.loads(out["body"])
    assert any(p.startswith("target.") for p in doc["problems"]), doc
    assert PLANT not in out["body"], out["body"]
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*"))


@pytest.fixture(scope="module")
def env():
    return servers.start()


def test_local_campaign_writes_no_secret_anywhere(tmp_path, env):
    """{env} for PostgreSQL, {file} for MariaDB: a full local campaign through the state machine;
    every file of the results folder, the progress files, and the CLI's stdout and stderr are
    scanned for the password (and its base64 form)."""
    global PLANT
    real = servers.password(env)
    pw_file = tmp_path / "mysql.pw"
    pw_file.write_text(real + "\n")
    os.chmod(pw_file, 0o600)
    campaign = {
        "name": "faults-secrets", "seed": 3,
        "workload": {"preset": "a", "table": "faults_secrets", "recordcount": 400, "operationcount": 1500,
                     "threads": 2},
        "fanout": {"shards": 2},
        "matrix": {"target": [
            dict(servers.target("postgresql", env), password={"env": "FAULTS_PG_PASSWORD"}, label="pg"),
            dict(servers.target("mysql", env), password={"file": str(pw_file)}, label="maria")]},
        "phases": ["prepare", "load", "run", "cleanup"],
    }
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps(campaign))
    progress = tmp_path / "progress"
    progress.mkdir()
    # `dbswarm run` as the CLI runs it, with the state machine's raw execution history (every
    # event's input and output, before any redaction) saved beside, outside the results folder
    events_file = tmp_path / "history.json"
    proc = subprocess.run([sys.executable, "-c", _RUN_KEEPING_HISTORY, str(events_file), "run", str(spec),
                           "--results", str(tmp_path / "r"), "--json"],
                          env=dbswarm_env(FAULTS_PG_PASSWORD=real, DBSWARM_PROGRESS_DIR=progress),
                          capture_output=True, timeout=240)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    events = json.loads(events_file.read_text())
    assert len(events) > 20 and any("TaskSucceeded" in e["type"] for e in events)
    found = []
    old, PLANT = PLANT, real
    try:
        _scan("stdout", proc.stdout, found)
        _scan("stderr", proc.stderr, found)
        _scan("execution history", events_file.read_bytes(), found)
        files = _scan_tree(tmp_path / "r", found) + _scan_tree(progress, found)
    finally:
        PLANT = old
    assert files >= 20
    assert found == []
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    assert result["status"] == "complete"
    assert result["campaign"]["matrix"]["target"][0]["password"] == {"env": "FAULTS_PG_PASSWORD"}


def test_api_path_writes_no_secret_anywhere(tmp_path, env, capfd, monkeypatch):
    """The moto-backed deployment: the API refuses env/file references, secrets outside the
    prefix, process credentials and hosts outside AllowedTargets; a campaign naming a Secrets
    Manager secret runs for real, and every object of the bucket, every event of the execution
    history and every line the functions logged are scanned for the password."""
    from dbswarm.results.store import S3Store
    from dbswarm.run.front import api
    from dbswarm.run.runtime.emulator import LocalCloud
    real = servers.password(env)
    for key in [k for k in os.environ if k.startswith("AWS_ENDPOINT_URL") or k in ("AWS_PROFILE",
                                                                                   "AWS_SESSION_TOKEN")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with LocalCloud(ROOT / "template.yaml", {"RetryIntervalSeconds": 1, "AllowedTargets": "127.0.0.0/8"},
                    emulate_for_functions=True) as cloud:
        fn = cloud.functions["ApiFunction"].environment
        dep = api.Deployment(cloud.state_machine_arn, S3Store(fn["DBSWARM_RESULTS"], client=cloud.client("s3")),
                             secret_prefix=fn["DBSWARM_SECRET_PREFIX"], allowed_targets=fn["DBSWARM_ALLOWED_TARGETS"],
                             _sfn=cloud.client("stepfunctions"))
        cloud.client("secretsmanager").create_secret(Name="dbswarm/faults-pg",
                                                     SecretString=json.dumps({"password": real}))
        pg = servers.target("postgresql", env)

        def post(target, **query):
            body = json.dumps({"name": "faults-api", "target": target,
                               "workload": {"preset": "b", "table": "faults_api", "recordcount": 300,
                                            "operationcount": 1000, "threads": 2},
                               "fanout": {"shards": 2}, "phases": ["prepare", "load", "run", "cleanup"]})
            event = {"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                     "body": body, "queryStringParameters": query or None}
            out = api.handle(event, dep)
            return out["statusCode"], json.loads(out["body"])

        refused = [
            (dict(pg, password={"env": "AWS_SECRET_ACCESS_KEY"}), "target.password"),
            (dict(pg, password={"env": "AWS_SESSION_TOKEN"}), "target.password"),
            (dict(pg, password={"env": "PGPASSWORD"}), "target.password"),
            (dict(pg, password={"file": "/proc/self/environ"}), "target.password"),
            (dict(pg, password={"file": env["DBSWARM_TEST_PASSWORD_FILE"]}), "target.password"),
            (dict(pg, password={"secret": "prod/root"}), "target.password.secret"),
            (dict(pg, password={"secret": "arn:aws:secretsmanager:us-east-1:1:secret:other-x"}),
             "target.password.secret"),
            (dict(pg, url="postgresql://dbswarm@8.8.8.8:5432/dbswarm", password={"secret": "dbswarm/faults-pg"}),
             "target.url"),
        ]
        for target, field in refused:
            code, doc = post(target)
            assert code == 400 and any(p.startswith(field) for p in doc["problems"]), (target, doc)
        code, doc = post(dict(pg, password={"secret": "dbswarm/faults-pg"}))
        assert code == 202, doc
        desc = cloud.wait(doc["execution_arn"], timeout_s=240)
        assert desc["status"] == "SUCCEEDED", desc
        found = []
        old_plant = PLANT
        try:
            globals()["PLANT"] = real
            s3 = cloud.client("s3")
            bucket = cloud.bucket()
            keys = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                    for o in page.get("Contents", [])]
            assert len(keys) >= 10
            for key in keys:
                _scan(f"s3://{bucket}/{key}", s3.get_object(Bucket=bucket, Key=key)["Body"].read(), found)
            history = cloud.history(doc["execution_arn"])
            assert len(history) > 20
            _scan("execution history", json.dumps(history, default=str).encode(), found)
            out, err = capfd.readouterr()
            _scan("function output", (out + err).encode(), found)
        finally:
            globals()["PLANT"] = old_plant
        assert found == []
        result = json.loads(s3.get_object(Bucket=bucket, Key=f"campaigns/{doc['id']}/result.json")["Body"].read())
        assert result["status"] == "complete"


# ---- issue 33 item 5: redaction at every boundary a message crosses ---------------------------------

def test_an_error_raised_in_a_function_process_reaches_the_runner_redacted(tmp_path):
    """A function's process resolved the password (and so knows it); an error text carrying it
    (a driver echoing its connection string) is redacted there, before it crosses to the runner,
    whose execution history, execution.json and stderr never learn the secret."""
    from dbswarm.run.runtime.emulator import FunctionProcesses
    handler = tmp_path / "app.py"
    handler.write_text(
        "from dbswarm.credentials import secrets\n"
        "def handler(event, context):\n"
        "    password = secrets.resolve({'env': 'FAULTS_FN_PASSWORD'})\n"
        "    raise RuntimeError(f'cannot connect to host=db user=u password={password} (and again: {password})')\n")
    job = {"code_dir": str(tmp_path), "module_file": str(handler), "function_name": "handler",
           "logical_id": "WorkerFunction", "name": "dbswarm-worker", "arn": "arn:aws:lambda:x", "memory": 128,
           "timeout": 30, "request_id": "r-1", "cwd": str(tmp_path), "event": {},
           "env": dict(dbswarm_env(FAULTS_FN_PASSWORD=PLANT))}
    procs = FunctionProcesses()
    try:
        kind, answer = procs.call(job, 60)
    finally:
        procs.close()
    assert kind == "error", answer
    assert answer["errorType"] == "RuntimeError" and "cannot connect to host=db" in answer["errorMessage"]
    assert PLANT not in json.dumps(answer), answer


YAML_WITH_A_PASSWORD = ("name: faults-yaml\n"
                        "target:\n"
                        "  engine: postgresql\n"
                        "  url: postgresql://u@10.0.0.5/db\n"
                        f"  password: {PLANT}: {{secret: dbswarm/x}}\n"
                        f"  label: [{PLANT}\n")


def test_a_yaml_syntax_error_never_echoes_the_line(tmp_path):
    """A syntax error on a line holding a password: `dbswarm validate` and the API say where
    (line, column) and what, never the line itself."""
    spec = tmp_path / "c.yaml"
    spec.write_text(YAML_WITH_A_PASSWORD)
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "validate", str(spec)], env=dbswarm_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "not valid YAML/JSON" in proc.stderr and "line 5" in proc.stderr, proc.stderr
    assert PLANT not in proc.stderr + proc.stdout, proc.stderr
    from dbswarm.results.store import LocalStore
    from dbswarm.run.front import api
    dep = api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                         LocalStore(tmp_path / "r"), secret_prefix="dbswarm/", allowed_targets="10.0.0.0/8")
    out = api.handle({"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                      "body": YAML_WITH_A_PASSWORD}, dep)
    assert out["statusCode"] == 400, out
    assert "not valid YAML/JSON" in out["body"] and PLANT not in out["body"], out["body"]


def test_redaction_never_rewrites_the_campaign_id(tmp_path):
    """A password that happens to occur in the generated campaign id (here: this year's digits)
    is masked where it is the password, but the id stays whole in every file: a shard file
    names the same campaign as the result, the folder and the plan."""
    import time
    year = time.strftime("%Y", time.gmtime())
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({
        "name": "faults-ident", "seed": 1,
        "target": {"engine": "noop", "password": {"env": "FAULTS_ID_PASSWORD"}},
        "workload": {"preset": "c", "table": "faults_ident", "recordcount": 100, "operationcount": 200,
                     "threads": 1},
        "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}))
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(tmp_path / "r"),
                           "--quiet"], env=dbswarm_env(FAULTS_ID_PASSWORD=year), capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stderr
    folder = next((tmp_path / "r").iterdir())
    cid = folder.name
    assert year in cid
    assert json.loads((folder / "result.json").read_text())["campaign_id"] == cid
    shard_files = list(folder.rglob("shard-*.json"))
    assert len(shard_files) >= 2, shard_files
    for path in shard_files:
        doc = json.loads(path.read_text())
        assert doc["campaign_id"] == cid, (path, doc["campaign_id"])
        assert cid in path.read_text()


def test_the_planted_password_scan_finds_every_encoding(tmp_path):
    """The scan the fault suite ends with (tests/faults/conftest.py): a planted password in any
    of its encodings, in a campaign folder's file or a process's output, is found."""
    import shutil

    from tests.faults.conftest import _encodings, scan_for_planted
    folder = tmp_path / "faults-scan-x"
    folder.mkdir()
    (folder / "result.json").write_text("{}")
    encodings = _encodings(PLANT)
    for i, blob in enumerate(encodings.values()):
        (folder / f"out-{i}.bin").write_bytes(b"before " + blob + b" after")
    try:
        files, outputs, findings = scan_for_planted(tmp_path, [("`dbswarm run` stderr", b"x " + PLANT.encode())])
        assert files == len(encodings) + 1 and outputs == 1
        for i, enc in enumerate(encodings):
            assert any(f.startswith(str(folder / f"out-{i}.bin")) and f"({enc})" in f for f in findings), enc
        assert any(f.startswith("`dbswarm run` stderr") for f in findings)
    finally:
        shutil.rmtree(folder)   # the session's own scan reads this folder too


# ---- issue 57 item 3: passwords that are common words never rewrite a document ----------------------
# With password `done` every shard file said "status": "***" and the campaign failed; with `postgres`
# the engine became "***ql". A resolved password is masked where a secret stands (URL user info, a
# key naming a secret) and, as a whole word, in error texts; never in a document's own words.
WORDS = {"done": "postgresql", "complete": "postgresql", "postgres": "postgresql", "a": "postgresql",
         "mysql": "mysql"}


@pytest.fixture
def word_users(env):
    """A login per password of WORDS on the test servers (the role's name holds no password word),
    dropped afterwards (a superuser with the password `a` is no thing to leave behind)."""
    yield _word_users(env)
    for i, engine in enumerate(WORDS.values()):
        user = f"faults_word{i}"
        if engine == "postgresql":
            with servers.pg_admin(env) as conn:
                conn.execute("DROP TABLE IF EXISTS faults_words")
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,)).fetchone():
                    conn.execute(f"REASSIGN OWNED BY {user} TO CURRENT_USER")  # the campaign lock's table
                    conn.execute(f"DROP OWNED BY {user}")
                    conn.execute(f"DROP ROLE {user}")
        else:
            conn = servers.mysql_admin(env)
            try:
                with conn.cursor() as cur:
                    cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
            finally:
                conn.close()


def _word_users(env) -> list[dict]:
    targets = []
    for i, (word, engine) in enumerate(WORDS.items()):
        user = f"faults_word{i}"
        if engine == "postgresql":
            with servers.pg_admin(env) as conn:
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (user,)).fetchone()
                # a superuser: the campaign lock's table and the runs' tables are another role's
                conn.execute(f"{'ALTER' if exists else 'CREATE'} ROLE {user} LOGIN SUPERUSER PASSWORD '{word}'")
                conn.execute("DROP TABLE IF EXISTS faults_words")
            url = env["DBSWARM_TEST_PG_URL"].replace("://dbswarm@", f"://{user}@")
        else:
            conn = servers.mysql_admin(env)
            try:
                with conn.cursor() as cur:
                    cur.execute(f"CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{word}'")
                    cur.execute(f"ALTER USER '{user}'@'%' IDENTIFIED BY '{word}'")
                    cur.execute(f"GRANT ALL ON dbswarm.* TO '{user}'@'%'")
                    cur.execute("DROP TABLE IF EXISTS faults_words")
            finally:
                conn.close()
            url = env["DBSWARM_TEST_MYSQL_URL"].replace("://dbswarm@", f"://{user}@")
        targets.append({"engine": engine, "url": url, "password": {"env": f"FAULTS_WORD{i}"},
                        "label": f"{'PostgreSQL 15' if engine == 'postgresql' else 'MariaDB 10.11'} #{i}"})
    return targets


def _leaks(text: str) -> list[str]:
    """A password of WORDS where a secret stands: URL user info, a key naming a secret."""
    found = []
    for word in WORDS:
        w = re.escape(word)
        for pattern in (rf"://[^\s/@'\"]*:{w}@", rf"(?i)(password|passwd|pwd|secret)\w*\s*=\s*['\"]?{w}(?![\w-])",
                        rf"(?i)[\"'](password|passwd|pwd|secret)\w*[\"']\s*:\s*[\"']{w}[\"']"):
            found += [m.group(0) for m in re.finditer(pattern, text)]
    return found


def test_common_word_passwords_corrupt_no_document_and_leak_nowhere(tmp_path, word_users):
    """A whole campaign on PostgreSQL and MariaDB, each run logging in with a password that is a
    status word, an engine name or a single letter, under a campaign name holding two of them:
    it completes; shard files say "status": "done", engines and labels are whole, every file names
    the campaign's own id; and no file, output or execution event holds a password where a
    secret stands (URL user info, `password=`, a JSON key naming a secret)."""
    targets = word_users
    spec = tmp_path / "c.json"
    spec.write_text(json.dumps({
        "name": "faults-done-postgres", "seed": 4,
        "workload": {"preset": "a", "table": "faults_words", "recordcount": 200, "operationcount": 600,
                     "threads": 2},
        "fanout": {"shards": 2}, "matrix": {"target": targets},
        "phases": ["prepare", "load", "run", "cleanup"]}))
    events_file = tmp_path / "history.json"
    words = {f"FAULTS_WORD{i}": word for i, word in enumerate(WORDS)}
    proc = subprocess.run([sys.executable, "-c", _RUN_KEEPING_HISTORY, str(events_file), "run", str(spec),
                           "--results", str(tmp_path / "r"), "--json"],
                          env=dbswarm_env(**words), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    folder = next((tmp_path / "r").iterdir())
    cid = folder.name
    assert cid.startswith("faults-done-postgres-"), cid
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "complete" and result["campaign_id"] == cid
    assert [r["target"]["engine"] for r in result["runs"]] == list(WORDS.values())
    assert [r["target"]["label"] for r in result["runs"]] == [t["label"] for t in targets]
    assert all(p["status"] == "complete" for r in result["runs"] for p in r["phases"].values()), \
        [(r["run_id"], n, p["status"]) for r in result["runs"] for n, p in r["phases"].items()]
    shards = list(folder.rglob("shard-*.json"))
    assert len(shards) >= 2 * 2 * len(WORDS), shards
    for path in shards:
        doc = json.loads(path.read_text())
        assert doc["status"] == "done" and doc["campaign_id"] == cid, (path, doc["status"], doc["campaign_id"])
        assert doc["binding"]["engine"] in ("postgresql", "mysql"), (path, doc["binding"])
    assert "Status: **complete**" in (folder / "summary.md").read_text()
    files = [p for p in folder.rglob("*") if p.is_file()]
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        if path.suffix == ".json":
            json.loads(text)  # never cut by a redaction
        assert "***" not in text or path.name in ("campaign.json", "plan.json"), (path, text[:2000])
        assert _leaks(text) == [], (path, _leaks(text))
    for what, text in (("stdout", proc.stdout), ("stderr", proc.stderr),
                       ("execution history", events_file.read_text())):
        assert _leaks(text) == [], (what, _leaks(text))


@pytest.mark.parametrize("word", list(WORDS))
def test_an_error_quoting_a_common_word_password_is_redacted_where_it_stands(tmp_path, word):
    """The error path of a function's process with a password that is a common word: the password
    is masked in its URL, after `password=` and (3 characters or more) where the error quotes it
    as a word; the error's other words stay, the password inside other words too."""
    from dbswarm.run.runtime.emulator import FunctionProcesses
    handler = tmp_path / "app.py"
    handler.write_text(
        "from dbswarm.credentials import secrets\n"
        "def handler(event, context):\n"
        "    pw = secrets.resolve({'env': 'FAULTS_FN_PASSWORD'})\n"
        "    raise RuntimeError(f'run 000 of faults-{pw}-x not done: cannot connect to postgresql://u:{pw}@db/app '\n"
        "                       f'(host=db user=u password={pw}); the server said: \"{pw}\" is wrong')\n")
    job = {"code_dir": str(tmp_path), "module_file": str(handler), "function_name": "handler",
           "logical_id": "WorkerFunction", "name": "dbswarm-worker", "arn": "arn:aws:lambda:x", "memory": 128,
           "timeout": 30, "request_id": "r-1", "cwd": str(tmp_path), "event": {},
           "env": dict(dbswarm_env(FAULTS_FN_PASSWORD=word))}
    procs = FunctionProcesses()
    try:
        kind, answer = procs.call(job, 60)
    finally:
        procs.close()
    assert kind == "error", answer
    message = answer["errorMessage"]
    assert "cannot connect to postgresql://u:***@db/app (host=db user=u password=***)" in message, message
    assert _leaks(message) == [], message
    said = 'the server said: "***" is wrong' if len(word) >= 3 else f'the server said: "{word}" is wrong'
    assert said in message, message
    assert f"run 000 of faults-{word}-x not " in message, message  # an id is not a word of its own
