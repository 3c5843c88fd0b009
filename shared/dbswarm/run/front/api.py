"""The campaigns API: what ``functions/api`` serves and ``dbswarm submit/status/cancel/
results --state-machine`` calls directly.

  POST   /campaigns        campaign file (YAML or JSON) -> 202 {id, links}; 400 with the
                           validator's field-precise problems. Query: max_call_seconds, lead_seconds.
  GET    /campaigns        recent campaigns (executions of the state machine)
  GET    /campaigns/{id}   status, progress per run and phase (from the shard files present),
                           result links when done
  DELETE /campaigns/{id}   stop the execution

A campaign's id is its execution's name. The submitted file is stored beside its
results (campaigns/<id>/submitted.yaml) and the execution plans it from there; it holds
secret references only (the validator rejects literal passwords).

Events: API Gateway HTTP API (payload format 2.0), REST API / FunctionGraph APIG (1.0
shape: httpMethod, resource/path, pathParameters).
"""
from __future__ import annotations

import base64
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Optional

from dbswarm.campaign.admission import check_targets
from dbswarm.campaign.cost import check_max_cost, estimate
from dbswarm.campaign.limits import (
    MAX_BODY_BYTES,
    MAX_CALL_SECONDS,
    MAX_LEAD_SECONDS,
    positive_int,
    positive_number,
    threads_per_shard_problems,
)
from dbswarm.campaign.plan import check_shard_limit, plan_run
from dbswarm.campaign.spec import check_deployed_references, load_campaign, read_campaign_data, workload_file_refs
from dbswarm.credentials.redact import redact_message
from dbswarm.documents import Plan
from dbswarm.errors import CampaignError, DbswarmError
from dbswarm.results.store import (
    CAMPAIGN_DOC,
    CANCELLED_DOC,
    PLAN_DOC,
    REPORT_HTML,
    RESULT_CSV,
    RESULT_DOC,
    SHARD_FILE,
    SUBMITTED_DOC,
    SUMMARY_DOC,
    TIMESERIES_CSV,
    S3Store,
    Store,
    campaign_key,
    open_store,
    runs_prefix,
)
from dbswarm.run.runtime.service import new_campaign_id, release_locks

LIST_LIMIT = 50
URL_EXPIRES_S = 3600
RESULT_FILES = (RESULT_DOC, SUMMARY_DOC, REPORT_HTML, RESULT_CSV, TIMESERIES_CSV, CAMPAIGN_DOC, PLAN_DOC,
                SUBMITTED_DOC)


class NotFound(DbswarmError):
    pass


@dataclass
class Deployment:
    """Where campaigns go: the campaign state machine and the results store."""
    state_machine_arn: str
    store: Store
    max_shards: int = 0
    _sfn: object = None
    secret_prefix: Optional[str] = None     # SecretPrefix: the secrets a campaign may name
    allowed_targets: Optional[str] = None   # AllowedTargets: CIDRs and host patterns a target may be in

    @classmethod
    def from_env(cls) -> "Deployment":
        arn = os.environ.get("DBSWARM_STATE_MACHINE_ARN")
        results = os.environ.get("DBSWARM_RESULTS")
        if not arn or not results:
            raise DbswarmError("the API needs DBSWARM_STATE_MACHINE_ARN and DBSWARM_RESULTS (set by template.yaml)")
        return cls(arn, open_store(results), int(os.environ.get("DBSWARM_MAX_SHARDS") or 0),
                   secret_prefix=os.environ.get("DBSWARM_SECRET_PREFIX") or None,
                   allowed_targets=os.environ.get("DBSWARM_ALLOWED_TARGETS") or None)

    @property
    def sfn(self) -> Any:
        if self._sfn is None:
            import boto3  # noqa: PLC0415 (in the cloud only: seconds to import)
            self._sfn = boto3.client("stepfunctions", region_name=self.state_machine_arn.split(":")[3])
        return self._sfn

    def execution_arn(self, campaign_id: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", campaign_id or ""):
            raise NotFound(f"no campaign {campaign_id!r}")
        return self.state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":" + campaign_id


# ---- the operations -------------------------------------------------------------------------

def submit(dep: Deployment, text: str, *, max_call_seconds: Optional[float] = None,
           lead_seconds: Optional[float] = None) -> dict:
    """Validate, store the file, start the execution named by the campaign id."""
    if not text or not text.strip():
        raise CampaignError(["(body): send the campaign file (YAML or JSON) as the request body"])
    if len(text.encode()) > MAX_BODY_BYTES:
        raise CampaignError([f"(body): {len(text.encode()):,} bytes; a campaign file may have at most "
                             f"{MAX_BODY_BYTES:,}"])
    data = read_campaign_data(text if "\n" in text or text.lstrip().startswith("{") else text + "\n")
    files = workload_file_refs(data)   # refused unread: this machine's files are no caller's to read
    if files:
        raise CampaignError([f"{f}: a deployment reads no file of its own machine: give the workload's keys in "
                             "the campaign itself (the file's content under workload)" for f in files])
    campaign, runs = load_campaign(data)
    check_deployed_references(campaign, dep.secret_prefix)
    shard_counts = {run.run_id: len(plan_run(campaign, run, cpu_count=1)) for run in runs}
    check_shard_limit(shard_counts, dep.max_shards)
    problems = threads_per_shard_problems(runs, shard_counts)
    if problems:
        raise CampaignError(problems)
    check_targets(runs, dep.allowed_targets)
    cost = estimate(campaign, runs)
    check_max_cost(cost, campaign.max_cost)  # 400 before anything is stored or started
    cid = new_campaign_id(campaign.name[:56])
    key = campaign_key(dep.store, cid, SUBMITTED_DOC)
    text = text if text.endswith("\n") else text + "\n"  # read back as text, never as a path
    dep.store.put_text(key, text, "application/yaml")
    request: dict[str, Any] = {"campaign_key": key, "store": dep.store.url, "results": dep.store.url}
    if max_call_seconds:
        request["max_call_seconds"] = float(max_call_seconds)
    if lead_seconds:
        request["lead_seconds"] = float(lead_seconds)
    arn = dep.sfn.start_execution(stateMachineArn=dep.state_machine_arn, name=cid,
                                  input=json.dumps(request))["executionArn"]
    if campaign.results.location not in ("./results", dep.store.url):
        note = f"results go to this deployment's store {dep.store.url}, not {campaign.results.location}"
    else:
        note = None
    out = {"id": cid, "status": "RUNNING", "execution_arn": arn, "runs": len(runs),
           "results": dep.store.location(dep.store.campaign_prefix(cid)), "links": _links(dep, cid),
           "cost_estimate": cost}
    if note:
        out["note"] = note
    return out


def status(dep: Deployment, campaign_id: str) -> dict:
    desc = _describe(dep, campaign_id)
    out = {"id": campaign_id, "status": desc["status"], "started": _iso(desc.get("startDate")),
           "stopped": _iso(desc.get("stopDate")), "progress": progress(dep.store, campaign_id),
           "links": _links(dep, campaign_id)}
    if desc["status"] == "SUCCEEDED":
        result = (json.loads(desc.get("output") or "{}").get("result") or {})
        out["result"] = {"status": result.get("status"), "missing_shards": result.get("missing_shards"),
                         "verdict": (result.get("compare") or {}).get("verdict")}
    cancelled = _cancelled(dep.store, campaign_id) if desc["status"] in ("ABORTED", "FAILED") else None
    if cancelled:
        # stopped by a DELETE: AWS says ABORTED, the local emulation FAILED (States.Runtime, an
        # internal message of its engine); either way the campaign was cancelled, and what its
        # shards measured is kept (the emulation aggregates it into result.json)
        out["status"] = "CANCELLED"
        out["cancelled"] = cancelled
        try:
            result = dep.store.get_json(campaign_key(dep.store, campaign_id, RESULT_DOC))
            out["result"] = {"status": result.get("status"), "missing_shards": result.get("missing_shards"),
                             "verdict": None}
        except KeyError:
            out["note"] = "shard files written so far stay in the results store"
    elif desc["status"] == "FAILED":
        out["error"] = {"error": desc.get("error"), "cause": desc.get("cause")}
        if desc.get("error") == "dbswarm.Regressed":
            out["result"] = {"status": "regressed", "verdict": "regressed"}
        elif desc.get("error") == "dbswarm.Inconclusive":  # results.verdict.fail_inconclusive
            out["result"] = {"status": "complete", "verdict": "inconclusive"}
        elif desc.get("error") == "dbswarm.RunFailed":   # aggregated what it had, then failed
            out["result"] = {"status": "failed", "verdict": None}
    if "result" in out:
        out["files"] = result_files(dep.store, campaign_id)
    return out


def list_campaigns(dep: Deployment, limit: int = LIST_LIMIT, token: Optional[str] = None,
                   status_filter: Optional[str] = None) -> dict:
    kw = {"stateMachineArn": dep.state_machine_arn, "maxResults": max(1, min(int(limit), 1000))}
    if token:
        kw["nextToken"] = token
    if status_filter:
        kw["statusFilter"] = status_filter.upper()
    page = dep.sfn.list_executions(**kw)
    items = [{"id": e["name"], "status": e["status"], "started": _iso(e.get("startDate")),
              "stopped": _iso(e.get("stopDate")), "links": {"self": f"/campaigns/{e['name']}"}}
             for e in page["executions"]]
    out = {"campaigns": items}
    if page.get("nextToken"):
        out["next"] = page["nextToken"]
    return out


def cancel(dep: Deployment, campaign_id: str) -> dict:
    desc = _describe(dep, campaign_id)
    if desc["status"] == "RUNNING":
        dep.store.put_json(campaign_key(dep.store, campaign_id, CANCELLED_DOC),
                           {"at": time.time(), "by": f"DELETE /campaigns/{campaign_id}"})
        dep.sfn.stop_execution(executionArn=desc["executionArn"], error="dbswarm.Cancelled",
                               cause="cancelled through the dbswarm API")
        # a stopped execution never reaches its aggregate step, which releases the campaign lock:
        # release it here, or the next campaign on these tables waits for it to go stale (600 s)
        try:
            release_locks({"store": dep.store.url, "campaign_id": campaign_id})
        except Exception:  # no plan yet, a target gone: the lock goes stale on its own
            pass
        return {"id": campaign_id, "status": "CANCELLED",
                "note": "the shards stop at their next operation; what they measured stays in the results store"}
    return {"id": campaign_id, "status": _describe(dep, campaign_id)["status"],
            "note": "not running: nothing to cancel"}


def _cancelled(store: Store, campaign_id: str) -> Optional[dict]:
    try:
        return store.get_json(campaign_key(store, campaign_id, CANCELLED_DOC))
    except (KeyError, ValueError):
        return None


def progress(store: Store, campaign_id: str) -> dict:
    """Per run and phase: shards expected (from plan.json), reported (a shard file exists:
    it has finished at least one call) and failed."""
    prefix = store.campaign_prefix(campaign_id)
    try:
        plan = Plan.of(store.get_json(campaign_key(store, campaign_id, PLAN_DOC)))
    except KeyError:
        return {"planned": False, "runs": []}
    seen: dict = {}
    for key in store.list(runs_prefix(store, campaign_id)):
        m = SHARD_FILE.search(key[len(prefix):])
        if m:
            slot = seen.setdefault((m["run"], m["phase"]), {"reported": set(), "failed": set()})
            slot["failed" if m["failed"] else "reported"].add(int(m["shard"]))
    runs = []
    for run in plan.runs:
        phases = {}
        for phase in (p for p in plan.phases if p in ("load", "run")):
            slot = seen.get((run.run_id, phase), {"reported": set(), "failed": set()})
            phases[phase] = {"shards": run.shard_count, "reported": len(slot["reported"]),
                             "failed": len(slot["failed"])}
        runs.append({"run_id": run.run_id, "phases": phases})
    return {"planned": True, "runs": runs}


def result_files(store: Store, campaign_id: str) -> dict:
    """name -> {"location", "url"?}: a pre-signed GET URL (an hour) when the store is S3."""
    present = set(store.list(store.campaign_prefix(campaign_id)))
    out = {}
    for name in RESULT_FILES:
        key = campaign_key(store, campaign_id, name)
        if key not in present:
            continue
        item = {"location": store.location(key)}
        if isinstance(store, S3Store):
            item["url"] = store.client.generate_presigned_url(
                "get_object", Params={"Bucket": store.bucket, "Key": store.prefix + key}, ExpiresIn=URL_EXPIRES_S)
        out[name] = item
    return out


def _describe(dep: Any, campaign_id: str) -> Any:
    arn = dep.execution_arn(campaign_id)
    try:
        return dep.sfn.describe_execution(executionArn=arn)
    except Exception as err:
        code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
        if code in ("ExecutionDoesNotExist", "InvalidArn"):
            raise NotFound(f"no campaign {campaign_id!r}") from None
        raise


def _links(dep: Any, cid: str) -> Any:
    return {"self": f"/campaigns/{cid}", "result": dep.store.location(campaign_key(dep.store, cid, RESULT_DOC)),
            "report": dep.store.location(campaign_key(dep.store, cid, REPORT_HTML))}


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


# ---- HTTP ---------------------------------------------------------------------------------

def handle(event: dict, dep: Optional[Deployment] = None) -> dict:
    """One API Gateway / APIG request -> its response."""
    method, route, campaign_id = _route(event)
    query = event.get("queryStringParameters") or {}
    try:
        dep = dep or Deployment.from_env()
        if route == "/campaigns" and method == "POST":
            mcs = positive_number(query.get("max_call_seconds"), "query parameter max_call_seconds", MAX_CALL_SECONDS)
            lead = positive_number(query.get("lead_seconds"), "query parameter lead_seconds", MAX_LEAD_SECONDS)
            return _response(202, submit(dep, _body(event), max_call_seconds=mcs, lead_seconds=lead))
        if route == "/campaigns" and method == "GET":
            limit = positive_int(query.get("limit"), "query parameter limit", 1000) or LIST_LIMIT
            status_filter = query.get("status")
            if status_filter and status_filter.upper() not in EXECUTION_STATUSES:
                raise ValueError(f"query parameter status: expected one of {', '.join(EXECUTION_STATUSES)}, "
                                 f"got {status_filter[:40]!r}")
            try:
                return _response(200, list_campaigns(dep, limit, query.get("next"), status_filter))
            except Exception as err:
                if query.get("next") and "token" in f"{type(err).__name__} {err}".lower():
                    raise ValueError("query parameter next: not a page token this API returned") from None
                raise
        if route == "/campaigns/{id}" and method == "GET":
            return _response(200, status(dep, campaign_id))
        if route == "/campaigns/{id}" and method == "DELETE":
            return _response(202, cancel(dep, campaign_id))
        return _response(404, {"error": f"no route {method} {event.get('rawPath') or event.get('path')}"})
    # a refusal may quote what it refuses (an unknown engine, a URL of another engine): the
    # answer goes through the one redaction, so a password in the request is never echoed
    except CampaignError as err:
        return _response(400, {"error": "invalid campaign", "problems": [redact_message(p) for p in err.problems]})
    except NotFound as err:
        return _response(404, {"error": redact_message(str(err))})
    except (DbswarmError, ValueError) as err:
        return _response(400, {"error": redact_message(str(err))})


def _route(event: dict) -> Any:
    """(method, "/campaigns" | "/campaigns/{id}" | None, id) for HTTP API 2.0 and 1.0/APIG events."""
    method = ((event.get("requestContext") or {}).get("http") or {}).get("method") or event.get("httpMethod") or ""
    path = event.get("rawPath") or event.get("path") or ""
    m = re.search(r"/campaigns(?:/([^/]+))?/?$", path)
    if not m:
        return method.upper(), None, None
    if not m.group(1):
        return method.upper(), "/campaigns", None
    return method.upper(), "/campaigns/{id}", (event.get("pathParameters") or {}).get("id") or m.group(1)


EXECUTION_STATUSES = ("RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


def _body(event: dict) -> str:
    body = event.get("body") or ""
    if len(body) > MAX_BODY_BYTES * 4 // 3 + 4:
        raise CampaignError([f"(body): more than {MAX_BODY_BYTES:,} bytes; a campaign file may have at most "
                             f"{MAX_BODY_BYTES:,}"])
    if event.get("isBase64Encoded"):
        try:
            body = base64.b64decode(body).decode()
        except (ValueError, UnicodeDecodeError):
            raise CampaignError(["(body): not valid base64-encoded UTF-8 text"]) from None
    return body


def _response(code: Any, doc: dict) -> Any:
    return {"statusCode": code, "headers": {"content-type": "application/json"}, "isBase64Encoded": False,
            "body": json.dumps(doc, indent=1, default=str)}
