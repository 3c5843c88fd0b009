"""The CLI against a deployment: ``dbswarm submit | status | cancel | results``.

Two ways to reach it, the same answers:
  --api URL             the HTTP API (SigV4-signed requests, the caller's AWS credentials)
  --state-machine ARN   Step Functions and S3 directly (with --results s3://BUCKET)
Defaults come from DBSWARM_API, DBSWARM_STATE_MACHINE and DBSWARM_RESULTS (the stack's
outputs ApiUrl, StateMachineArn and ResultsBucketName).
"""
from __future__ import annotations

import argparse
import builtins
import json
import os
import re
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any, Optional

from dbswarm.errors import CampaignError, DbswarmError

DOWNLOAD_SKIP = ("runs/", "sqlite/")



def _api() -> Any:
    """dbswarm.run.front.api, imported when a deployment is driven through its state machine (it
    imports the library and boto3: `dbswarm --help` need not)."""
    from dbswarm.run.front import api  # noqa: PLC0415
    return api

class ApiClient:
    """Requests to the campaigns API, signed with SigV4 for the execute-api service."""

    def __init__(self, url: str, region: Optional[str] = None, session: Any = None) -> None:
        self.url = url.rstrip("/")
        m = re.search(r"\.execute-api\.([a-z0-9-]+)\.", self.url)
        self._session = session
        self.region = region or (m.group(1) if m else None) or self.session.region_name or "us-east-1"

    @property
    def session(self) -> Any:
        if self._session is None:
            import boto3  # noqa: PLC0415 (the remote commands only: seconds to import)
            self._session = boto3.Session()
        return self._session

    def request(self, method: str, path: str, body: Optional[str] = None, query: Optional[dict] = None) -> Any:
        from botocore.auth import SigV4Auth  # noqa: PLC0415 (as boto3)
        from botocore.awsrequest import AWSRequest  # noqa: PLC0415
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = body.encode() if body is not None else None
        headers = {"content-type": "application/yaml"} if data is not None else {}
        creds = self.session.get_credentials()
        if creds is None:
            raise DbswarmError("no AWS credentials to sign the API request with (the API uses IAM auth)")
        req = AWSRequest(method=method, url=url, data=data, headers=headers)
        SigV4Auth(creds.get_frozen_credentials(), "execute-api", self.region).add_auth(req)
        from urllib.error import HTTPError  # noqa: PLC0415 (http.client, email: ~0.05 CPU-s other commands skip)
        from urllib.request import Request, urlopen  # noqa: PLC0415
        http = Request(url, data=data, method=method, headers=dict(req.headers.items()))
        try:
            with urlopen(http, timeout=60) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except HTTPError as err:
            raw = err.read()
            try:
                doc = json.loads(raw)
            except ValueError:
                doc = {"error": raw.decode(errors="replace")[:500] or err.reason}
            return err.code, doc


class Remote:
    """One deployment, through the API or directly; every method returns the API's document."""

    def __init__(self, api_url: Any = None, state_machine: Any = None, results: Any = None) -> None:
        api_url = api_url or (None if state_machine else os.environ.get("DBSWARM_API"))
        state_machine = state_machine or (None if api_url else os.environ.get("DBSWARM_STATE_MACHINE"))
        if not api_url and not state_machine:
            raise DbswarmError("name the deployment: --api URL or --state-machine ARN "
                               "(or set DBSWARM_API / DBSWARM_STATE_MACHINE)")
        self.client = ApiClient(api_url) if api_url else None
        self.dep = None
        if state_machine:
            results = results or os.environ.get("DBSWARM_RESULTS")
            if not results or not results.startswith("s3://"):
                raise DbswarmError("--state-machine needs the deployment's bucket: --results s3://BUCKET "
                                   "(stack output ResultsBucketName) or DBSWARM_RESULTS")
            from dbswarm.results.store import open_store  # noqa: PLC0415 (boto3: only when a deployment is used)
            self.dep = _api().Deployment(state_machine, open_store(results))

    def _call(self, method: Any, path: Any, body: Any = None, query: Any = None, local: Any = None) -> Any:
        if self.client is None:
            try:
                return local()
            except _api().NotFound as err:
                raise DbswarmError(str(err)) from None
        code, doc = self.client.request(method, path, body, query)
        if code == 400 and doc.get("problems"):
            raise CampaignError(doc["problems"])
        if code >= 400:
            raise DbswarmError(f"{method} {path}: HTTP {code}: {doc.get('error') or doc.get('message') or doc}")
        return doc

    def submit(self, text: Any, max_call_seconds: Any = None, lead_seconds: Any = None) -> Any:
        return self._call("POST", "/campaigns", text,
                          {"max_call_seconds": max_call_seconds, "lead_seconds": lead_seconds},
                          lambda: _api().submit(self.dep, text, max_call_seconds=max_call_seconds,
                                             lead_seconds=lead_seconds))

    def status(self, cid: str) -> Any:
        return self._call("GET", f"/campaigns/{cid}", local=lambda: _api().status(self.dep, cid))

    def cancel(self, cid: str) -> Any:
        return self._call("DELETE", f"/campaigns/{cid}", local=lambda: _api().cancel(self.dep, cid))

    def list(self, limit: int = 20) -> Any:
        return self._call("GET", "/campaigns", query={"limit": limit},
                          local=lambda: _api().list_campaigns(self.dep, limit))

    def download(self, cid: str, into: Path) -> "builtins.list[Path]":  # list: the method above
        """The campaign's result files (not the shard files) into ``into``."""
        into.mkdir(parents=True, exist_ok=True)
        written = []
        if self.dep is not None:
            store = self.dep.store
            prefix = store.campaign_prefix(cid)
            keys = [k for k in store.list(prefix) if not k[len(prefix):].startswith(DOWNLOAD_SKIP)]
            if not keys:
                raise DbswarmError(f"no files for campaign {cid} in {store.location(prefix)}")
            for key in keys:
                path = into / key[len(prefix):]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(store.get_bytes(key))
                written.append(path)
            return written
        doc = self.status(cid)
        files = doc.get("files") or {}
        if not files:
            raise DbswarmError(f"campaign {cid} has no result yet (status {doc.get('status')})")
        for name, item in files.items():
            if not item.get("url"):
                continue
            from urllib.request import urlopen  # noqa: PLC0415
            with urlopen(item["url"], timeout=120) as resp:
                (into / name).write_bytes(resp.read())
            written.append(into / name)
        return written


# ---- commands -------------------------------------------------------------------------------

def _remote(args: argparse.Namespace) -> Remote:
    return Remote(args.api, args.state_machine, args.results)


def cmd_submit(args: argparse.Namespace) -> Any:
    text = Path(args.campaign).read_text() if args.campaign != "-" else sys.stdin.read()
    remote = _remote(args)
    out = remote.submit(text, args.max_call_seconds, args.lead_seconds)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"submitted {out['id']} ({out.get('runs', '?')} run(s)); results: {out.get('results')}")
        if out.get("note"):
            print(f"note: {out['note']}")
    if args.wait:
        return _wait(remote, out["id"], args)
    return 0


def _wait(remote: Any, cid: str, args: argparse.Namespace) -> Any:
    last = None
    while True:
        doc = remote.status(cid)
        line = _progress_line(doc)
        if line != last and not args.json:
            print(line, file=sys.stderr)
            last = line
        if doc["status"] != "RUNNING":
            return _print_status(doc, args)
        time.sleep(args.poll)


def _progress_line(doc: dict) -> Any:
    parts = []
    for run in (doc.get("progress") or {}).get("runs", []):
        for phase, p in run["phases"].items():
            if p["reported"] or p["failed"]:
                parts.append(f"{run['run_id']}/{phase} {p['reported']}/{p['shards']}"
                             + (f" ({p['failed']} failed)" if p["failed"] else ""))
    return f"{doc['id']}: {doc['status']}" + (f" · {', '.join(parts[-3:])}" if parts else "")


def cmd_status(args: argparse.Namespace) -> Any:
    return _print_status(_remote(args).status(args.id), args)


def _print_status(doc: dict, args: argparse.Namespace) -> Any:
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(_progress_line(doc))
        for run in (doc.get("progress") or {}).get("runs", []):
            for phase, p in run["phases"].items():
                print(f"  {run['run_id']:<30} {phase:<4} shards {p['reported']}/{p['shards']} reported"
                      + (f", {p['failed']} failed" if p["failed"] else ""))
        if doc.get("result"):
            r = doc["result"]
            print(f"result: {r.get('status')}" + (f", verdict {r['verdict']}" if r.get("verdict") else ""))
            if "result.json" in (doc.get("files") or {}):
                print(f"  {doc['files']['result.json']['location']}")
        if doc.get("error"):
            print(f"error: {doc['error'].get('error')}: {(doc['error'].get('cause') or '')[:300]}")
    status = doc["status"]
    if status in ("RUNNING", "SUCCEEDED"):
        result_status = (doc.get("result") or {}).get("status")
        return (0 if result_status in (None, "complete") else 5 if result_status == "complete_with_errors"
                else 8 if result_status == "check_failed" else 3)
    return 4 if (doc.get("result") or {}).get("verdict") == "regressed" else 3


def cmd_cancel(args: argparse.Namespace) -> Any:
    if not (args.api or args.state_machine or os.environ.get("DBSWARM_API")
            or os.environ.get("DBSWARM_STATE_MACHINE")):
        # no deployment named: a campaign `dbswarm run` is running on this machine
        from dbswarm.run.runtime.interrupt import cancel_local  # noqa: PLC0415
        pid = cancel_local(args.id)
        doc = {"id": args.id, "status": "CANCELLED", "runner_pid": pid,
               "note": "its shards stop at their next operation; what they measured is aggregated"}
        print(json.dumps(doc, indent=1) if args.json else f"{doc['id']}: {doc['status']} ({doc['note']})")
        return 0
    doc = _remote(args).cancel(args.id)
    print(json.dumps(doc, indent=1) if args.json else f"{doc['id']}: {doc['status']}")
    return 0


def cmd_results(args: argparse.Namespace) -> Any:
    into = Path(args.out) / args.id
    written = _remote(args).download(args.id, into)
    for p in written:
        print(p)
    return 0


def cmd_list(args: argparse.Namespace) -> Any:
    doc = _remote(args).list(args.limit)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        for c in doc["campaigns"]:
            print(f"{c['id']:<60} {c['status']:<10} {c.get('started') or ''}")
    return 0


def add_remote_commands(sub: Any) -> None:
    def target(p: Any) -> None:
        p.add_argument("--api", help="the campaigns API URL (stack output ApiUrl; or DBSWARM_API)")
        p.add_argument("--state-machine", help="the campaign state machine ARN (stack output StateMachineArn; "
                       "or DBSWARM_STATE_MACHINE)")
        p.add_argument("--results", help="with --state-machine: s3://BUCKET of the deployment (or DBSWARM_RESULTS)")
        p.add_argument("--json", action="store_true", help="print the API's JSON")

    s = sub.add_parser("submit", help="start a campaign on a deployment (API or state machine)")
    s.add_argument("campaign", help="campaign file (YAML or JSON), - for stdin")
    target(s)
    s.add_argument("--max-call-seconds", type=float, help="end each worker call after this long (continue test)")
    s.add_argument("--lead-seconds", type=float, help="start barrier lead time per phase")
    s.add_argument("--wait", action="store_true", help="follow the campaign until it ends")
    s.add_argument("--poll", type=float, default=5.0, help="seconds between status checks with --wait")
    s.set_defaults(fn=cmd_submit)

    st = sub.add_parser("status", help="a deployed campaign's status and progress")
    st.add_argument("id")
    target(st)
    st.set_defaults(fn=cmd_status)

    c = sub.add_parser("cancel", help="stop a campaign: deployed (--api / --state-machine), or one `dbswarm run` "
                       "is running on this machine")
    c.add_argument("id")
    target(c)
    c.set_defaults(fn=cmd_cancel)

    r = sub.add_parser("results", help="download a deployed campaign's result files into ./results/ID/")
    r.add_argument("id")
    target(r)
    r.add_argument("--out", default="results", help="folder to download into (default ./results)")
    r.set_defaults(fn=cmd_results)

    ls = sub.add_parser("campaigns", help="recent campaigns of a deployment")
    target(ls)
    ls.add_argument("--limit", type=int, default=20)
    ls.set_defaults(fn=cmd_list)
