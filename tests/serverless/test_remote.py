"""dbswarm submit / status / cancel / results against a deployment: directly (Step
Functions + S3, here moto's) and through the HTTP API (SigV4-signed requests to a local
stand-in for API Gateway that hands them to the api function's code)."""
import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

import pytest

from dbswarm.cli import main
from dbswarm.results.store import S3Store
from dbswarm.run.front import api

CAMPAIGN = """name: remote
seed: 2
target: {{engine: sqlite, url: {db}}}
workload: {{preset: S2, recordcount: 1000, operationcount: 2000, threads: 2}}
fanout: {{shards: 2}}
"""


def _submitted_id(out: str) -> str:
    return out.split()[1]


def _wait(capsys, *args):
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        code = main(["status", *args])
        out = capsys.readouterr().out
        if "RUNNING" not in out.splitlines()[0]:
            return code, out
        time.sleep(0.5)
    raise AssertionError("the campaign did not finish")


def test_cli_with_state_machine_arn(cloud, tmp_path, capsys, monkeypatch):
    spec = tmp_path / "c.yaml"
    spec.write_text(CAMPAIGN.format(db=tmp_path / "a.db"))
    target = ["--state-machine", cloud.state_machine_arn, "--results", f"s3://{cloud.bucket()}"]
    assert main(["submit", str(spec), *target, "--lead-seconds", "0.5"]) == 0
    cid = _submitted_id(capsys.readouterr().out)
    code, out = _wait(capsys, cid, *target)
    assert code == 0, out
    assert f"{cid}: SUCCEEDED" in out and "run  shards 2/2 reported" in out and "result: complete" in out
    monkeypatch.chdir(tmp_path)
    assert main(["results", cid, *target]) == 0
    folder = tmp_path / "results" / cid
    result = json.loads((folder / "result.json").read_text())
    assert result["campaign_id"] == cid and result["status"] == "complete"
    assert (folder / "summary.md").is_file() and not (folder / "runs").exists()   # no shard files
    assert main(["campaigns", *target, "--json"]) == 0
    assert cid in capsys.readouterr().out
    assert main(["cancel", cid, *target]) == 0
    assert "SUCCEEDED" in capsys.readouterr().out                   # already finished: nothing to stop
    assert main(["status", "no-such-id", *target]) == 2


class _FakeApiGateway(BaseHTTPRequestHandler):
    """API Gateway in front of the api function: IAM auth (a SigV4 header is required),
    the request turned into an HTTP API 2.0 event."""
    dep = None
    seen = []

    def _serve(self):
        auth = self.headers.get("Authorization", "")
        self.seen.append(auth)
        if not auth.startswith("AWS4-HMAC-SHA256 Credential=testing/") or "/execute-api/aws4_request" not in auth \
                or not self.headers.get("X-Amz-Date"):
            self.send_response(403)
            self.end_headers()
            self.wfile.write(b'{"message": "Forbidden"}')
            return
        url = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        event = {"version": "2.0", "routeKey": "$default", "rawPath": url.path, "rawQueryString": url.query,
                 "queryStringParameters": dict(parse_qsl(url.query)) or None,
                 "requestContext": {"http": {"method": self.command, "path": url.path}},
                 "body": base64.b64encode(body).decode() if body else None, "isBase64Encoded": bool(body)}
        response = api.handle(event, self.dep)
        self.send_response(response["statusCode"])
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(response["body"].encode())

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, *args):
        pass


@pytest.fixture
def api_url(cloud):
    # pre-signed result links point at the emulated S3 endpoint, so they can be downloaded
    store = S3Store(f"s3://{cloud.bucket()}", client=cloud.external_client("s3", endpoint_url=cloud.endpoint))
    _FakeApiGateway.dep = api.Deployment(cloud.state_machine_arn, store, _sfn=cloud.client("stepfunctions"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeApiGateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_cli_through_the_signed_api(api_url, tmp_path, capsys, monkeypatch):
    spec = tmp_path / "c.yaml"
    spec.write_text(CAMPAIGN.format(db=tmp_path / "b.db"))
    assert main(["submit", str(spec), "--api", api_url, "--lead-seconds", "0.5"]) == 0
    cid = _submitted_id(capsys.readouterr().out)
    code, out = _wait(capsys, cid, "--api", api_url)
    assert code == 0 and f"{cid}: SUCCEEDED" in out
    monkeypatch.chdir(tmp_path)
    assert main(["results", cid, "--api", api_url]) == 0
    result = json.loads((tmp_path / "results" / cid / "result.json").read_text())
    assert result["status"] == "complete" and (tmp_path / "results" / cid / "report.html").stat().st_size > 0
    assert all(a.startswith("AWS4-HMAC-SHA256") for a in _FakeApiGateway.seen)

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nworkload: {preset: S42}\n")
    assert main(["submit", str(bad), "--api", api_url]) == 2
    assert "workload.preset: unknown preset 'S42'" in capsys.readouterr().err


def test_the_api_refuses_unsigned_requests(api_url, monkeypatch):
    import urllib.error
    import urllib.request
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(api_url + "/campaigns", timeout=10)
    assert err.value.code == 403
