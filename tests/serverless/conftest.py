"""Fixtures for the serverless application's tests: fake AWS credentials, and the SAM
application "deployed" into moto with its state machine executing (dbswarm.run.runtime.emulator)."""
import base64
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAST = {"RetryIntervalSeconds": 1}   # the template's smallest retry interval


@pytest.fixture(scope="module")
def aws_env():
    """Fake credentials and a region; no endpoint or profile of the machine leaks in."""
    saved = dict(os.environ)
    for key in list(os.environ):
        if key.startswith("AWS_ENDPOINT_URL") or key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "DBSWARM_S3_ENDPOINT",
                                                         "DBSWARM_PROGRESS_DIR"):
            del os.environ[key]
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"})
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def cloud(aws_env):
    """template.yaml in moto; functions reach the emulated S3 / Secrets Manager."""
    from dbswarm.run.runtime.emulator import LocalCloud
    with LocalCloud(ROOT / "template.yaml", FAST, emulate_for_functions=True) as c:
        yield c


def use_api_environment(cloud, monkeypatch):
    """The Api function's environment from this deployment, for calling its handler in-process."""
    for key, value in cloud.functions["ApiFunction"].environment.items():
        monkeypatch.setenv(key, value)
    return cloud


@pytest.fixture
def api_env(cloud, monkeypatch):
    """The api function's environment from the template, for calling its handler in-process."""
    return use_api_environment(cloud, monkeypatch)


def api_event(method, path, body=None, query=None):
    """An API Gateway HTTP API event as `sam local generate-event apigateway http-api-proxy` makes it."""
    event = json.loads((ROOT / "events" / "api-post.json").read_text())
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["queryStringParameters"] = query
    event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in (query or {}).items())
    event["body"] = base64.b64encode(body.encode()).decode() if body is not None else None
    event["isBase64Encoded"] = body is not None
    return event


def call_api(method, path, body=None, query=None):
    import importlib.util
    spec = importlib.util.spec_from_file_location("api_app", ROOT / "functions" / "api" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    response = module.handler(api_event(method, path, body, query), None)
    return response["statusCode"], json.loads(response["body"])


def s3_json(cloud, key):
    body = cloud.client("s3").get_object(Bucket=cloud.bucket(), Key=key)["Body"].read()
    return json.loads(body)


def shard_docs(cloud, cid, run_id, phase):
    s3 = cloud.client("s3")
    prefix = f"campaigns/{cid}/runs/{run_id}/{phase}/"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=cloud.bucket(), Prefix=prefix).get("Contents", [])]
    return {int(k.rsplit("shard-", 1)[1].split(".")[0]): s3_json(cloud, k)
            for k in keys if "/shard-" in k and k.endswith(".json") and not k.endswith(".failed.json")}


def entered(cloud, arn):
    return cloud.trace(arn)["states_entered"]
