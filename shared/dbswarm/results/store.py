"""Where results live: a local folder or any S3-compatible object store (S3, OBS, MinIO).

Keys are relative to the store; a campaign's files are under ``campaign_prefix(id)``:
``<id>/`` in a local folder (./results/<id>/...), ``campaigns/<id>/`` in a bucket
(SPEC section 5). Baselines are under ``baselines/`` in both.
"""
from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlsplit

from dbswarm.credentials import secrets
from dbswarm.credentials.redact import redact_doc, redact_message, redact_text
from dbswarm.documents import Plan
from dbswarm.errors import ResultsNotWritten

_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


class Store:
    url: str
    local_root: Path | None = None

    def campaign_prefix(self, campaign_id: str) -> str:
        raise NotImplementedError

    def key(self, campaign_id: str, *parts: str) -> str:
        return self.campaign_prefix(campaign_id) + "/".join(parts)

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        raise NotImplementedError

    def get_bytes(self, key: str) -> bytes:
        """Raises KeyError when absent."""
        raise NotImplementedError

    def list(self, prefix: str) -> list[str]:
        raise NotImplementedError

    # every JSON and text document goes through the one redaction (dbswarm.credentials.redact)
    def put_json(self, key: str, obj: Any) -> None:
        self.put_bytes(key, json.dumps(redact_doc(obj), indent=1, sort_keys=False).encode(), "application/json")

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key))

    def put_text(self, key: str, text: str, content_type: str = "text/plain; charset=utf-8") -> None:
        self.put_bytes(key, redact_text(text).encode(), content_type)

    def get_text(self, key: str) -> str:
        return self.get_bytes(key).decode()

    def location(self, key: str) -> str:
        """A user-facing address of a key (path or s3:// URL)."""
        raise NotImplementedError


class LocalStore(Store):
    local_root: Path

    def __init__(self, root: str | Path) -> None:
        self.local_root = Path(root).expanduser().resolve()
        self.url = str(self.local_root)

    def campaign_prefix(self, campaign_id: str) -> str:
        return f"{campaign_id}/"

    def _path(self, key: str) -> Path:
        p = (self.local_root / key).resolve()
        if self.local_root not in p.parents and p != self.local_root:
            raise ValueError(f"key escapes the results folder: {key}")
        return p

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        p = self._path(key)
        tmp = None
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            # write-then-rename: a reader never sees half a file, a killed writer leaves none,
            # and a full disk leaves the previous version of the file as it was
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, p)
            tmp = None
        except OSError as exc:
            if exc.errno not in _NO_SPACE:
                raise
            raise ResultsNotWritten(not_written_message(self.location(key), exc)) from None
        finally:
            if tmp is not None:  # no debris: the partial temporary file goes
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise KeyError(key) from None

    def list(self, prefix: str) -> list[str]:
        base = self._path(prefix) if prefix else self.local_root
        root = base if base.is_dir() else base.parent
        if not root.exists():
            return []
        out = []
        for p in root.rglob("*"):
            if p.is_file() and not p.name.startswith(".tmp-"):
                key = p.relative_to(self.local_root).as_posix()
                if key.startswith(prefix):
                    out.append(key)
        return sorted(out)

    def location(self, key: str) -> str:
        return str(self._path(key))


class S3Store(Store):
    """s3://bucket/prefix; endpoint from AWS_ENDPOINT_URL / DBSWARM_S3_ENDPOINT (OBS, MinIO)."""

    def __init__(self, url: str, client: Any = None) -> None:
        parts = urlsplit(url)
        self.bucket = parts.netloc
        self.prefix = parts.path.strip("/")
        self.prefix = self.prefix + "/" if self.prefix else ""
        self.url = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3  # noqa: PLC0415 (an S3 store only: seconds to import)
            endpoint = os.environ.get("DBSWARM_S3_ENDPOINT") or os.environ.get("AWS_ENDPOINT_URL_S3") \
                or os.environ.get("AWS_ENDPOINT_URL")
            self._client = boto3.client("s3", endpoint_url=endpoint or None)
        return self._client

    def campaign_prefix(self, campaign_id: str) -> str:
        return f"campaigns/{campaign_id}/"

    def put_bytes(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=data, ContentType=content_type)

    def get_bytes(self, key: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"].read()
        except self.client.exceptions.NoSuchKey:
            raise KeyError(key) from None

    def list(self, prefix: str) -> list[str]:
        out = []
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix):
            out += [o["Key"][len(self.prefix):] for o in page.get("Contents", [])]
        return sorted(out)

    def location(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{key}"


def not_written_message(where: str, exc: OSError) -> str:
    reasons: dict[Optional[int], Optional[str]] = {
        errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
        errno.EFBIG: "file too large", errno.EROFS: "read-only file system"}
    reason = reasons.get(exc.errno, exc.strerror)
    return (f"results not written: {reason} ({where}); the files written before are unchanged: "
            "free space (or give --results elsewhere), then `dbswarm resume <campaign-id>`")


def open_store(url: str | None) -> Store:
    url = url or "./results"
    if url.startswith("s3://"):
        return S3Store(url)
    if "://" in url and not url.startswith("file://"):
        raise ValueError(f"results: unsupported location {url!r} (a folder or s3://bucket/prefix)")
    return LocalStore(url.removeprefix("file://"))


# ---- the store's keys: where each document of a campaign lives, named in one place ------------
# A campaign's documents are under ``store.campaign_prefix(id)``; a run's under ``runs/<run-id>/``,
# a phase's shard files under ``runs/<run-id>/<phase>/``. Baselines and the verdict's history
# are outside any campaign.

CAMPAIGN_DOC = "campaign.json"            # the campaign as submitted, secrets redacted
PLAN_DOC = "plan.json"                    # campaign.plan's Plan
COST_ESTIMATE_DOC = "cost-estimate.json"  # the plan step's estimate
SEARCH_DOC = "search.json"                # a peak search's steps (campaign/search.py)
ADAPTIVE_DOC = "adaptive.json"            # fanout.adaptive's cells (campaign/adaptive.py)
RESULT_DOC = "result.json"
RESULT_CSV = "result.csv"
TIMESERIES_CSV = "timeseries.csv"
SUMMARY_DOC = "summary.md"
REPORT_HTML = "report.html"
REPORT_FILES = (RESULT_DOC, RESULT_CSV, TIMESERIES_CSV, SUMMARY_DOC, REPORT_HTML)  # results/report/files.py
EXECUTION_DOC = "execution.json"          # local mode: the emulated state machine's trace (run/runtime/local.py)
SUBMITTED_DOC = "submitted.yaml"          # the API: the campaign file as posted (run/front/api.py)
CANCELLED_DOC = "cancelled.json"          # the API: written by a DELETE before it stops the execution
END_DOC = "end.json"                      # the indexed path: the coordinator ended (run/runtime/indexed.py)
REFUSED_DOC = "lock-refused.json"         # why a run did not run (run.service.lock_run, room_check)
SHARDS_DOC = "shards.json"                # a run's shard items when its Map reads them from S3
RELEASE_DOC = "release.json"              # the indexed path: a phase's start instant, for its workers


def campaign_key(store: Store, campaign_id: str, name: str) -> str:
    """A campaign-wide document (``CAMPAIGN_DOC``, ``PLAN_DOC``, ``RESULT_DOC``, ...)."""
    return store.key(campaign_id, name)


def run_key(store: Store, campaign_id: str, run_id: str, name: str) -> str:
    """A run's own document (``REFUSED_DOC``, ``prepare_key``'s, ``shards.json``)."""
    return store.key(campaign_id, "runs", run_id, name)


def prepare_key(store: Store, campaign_id: str, run_id: str, stage: str) -> str:
    """What a run's prepare step did at ``stage`` (before_load, after_load, after_run)."""
    return run_key(store, campaign_id, run_id, f"prepare-{stage}.json")


# a shard file (``shard_key``) or its failure (``failure_key``) of a load or run phase, as a key
# under the campaign's prefix names it
SHARD_FILE = re.compile(r"runs/(?P<run>[^/]+)/(?P<phase>load|run)/shard-(?P<shard>\d+)(?P<failed>\.failed)?\.json$")


def runs_prefix(store: Store, campaign_id: str) -> str:
    """The folder of a campaign's runs (a prefix to list): every run's documents and shard files."""
    return store.key(campaign_id, "runs") + "/"


def check_range_key(store: Store, campaign_id: str, run_id: str, stage: str, index: int) -> str:
    """A range of a run's consistency check at ``stage``: its progress and failures (engine/checks.py)."""
    return run_key(store, campaign_id, run_id, f"check-{stage}-{index}.json")


def phase_prefix(store: Store, campaign_id: str, run_id: str, phase: str) -> str:
    """The folder of a run's phase: its shard files and its window's edges (a prefix to list)."""
    return store.key(campaign_id, "runs", run_id, phase) + "/"


def shard_key(store: Store, campaign_id: str, run_id: str, phase: str, shard: int) -> str:
    """A shard's cumulative result of a phase (documents.ShardResult)."""
    return store.key(campaign_id, "runs", run_id, phase, f"shard-{shard}.json")


def failure_key(store: Store, campaign_id: str, run_id: str, phase: str, shard: int) -> str:
    """Why a shard failed for good (run.service.record_shard_failure): its error and when."""
    return store.key(campaign_id, "runs", run_id, phase, f"shard-{shard}.failed.json")


def window_key(store: Store, campaign_id: str, run_id: str, phase: str, edge: str) -> str:
    """An edge (start, end) of a phase's measured window: the server's counters read there."""
    return store.key(campaign_id, "runs", run_id, phase, f"window-{edge}.json")


def release_key(store: Store, campaign_id: str, run_id: str, phase: str) -> str:
    """The indexed path: the instant a phase's workers start (``RELEASE_DOC``)."""
    return store.key(campaign_id, "runs", run_id, phase, RELEASE_DOC)


def s3_result_ref(url: str) -> tuple[str, str]:
    """``s3://bucket[/prefix]/campaigns/<id>`` (or a document under it): the store's URL and the
    key of the campaign's result.json (or of the document named)."""
    store_url, _, key = url.partition("/campaigns/")
    return store_url, "campaigns/" + key.rstrip("/") + ("" if key.endswith(".json") else "/" + RESULT_DOC)


def baseline_key(name: str) -> str:
    """A stored baseline (``dbswarm compare --save-baseline``)."""
    return f"baselines/{name}.json"


def history_prefix(name: str) -> str:
    """The verdict's history of a campaign name: one document per compared campaign."""
    return f"history/{name}/"


# ---- a campaign's plan, as every step reads it ------------------------------------------------

_plan_cache: dict = {}
_plan_lock = threading.Lock()


def load_plan(store: Store, campaign_id: str, run_id: Optional[str] = None) -> Plan:
    """plan.json, cached per process; read again when it lacks ``run_id`` (a search plans its
    runs one step at a time: a warm function may hold an older plan)."""
    key = (store.url, campaign_id)
    with _plan_lock:
        cached = _plan_cache.get(key)
        if cached is not None and (run_id is None or any(r.run_id == run_id for r in cached.runs)):
            return cached
    plan = Plan.of(store.get_json(campaign_key(store, campaign_id, PLAN_DOC)))
    with _plan_lock:
        _plan_cache[key] = plan
    return plan


def cache_plan(store: Store, campaign_id: str, plan: Plan) -> None:
    """The plan a step just wrote (a search's next run) is the one this process reads next."""
    with _plan_lock:
        _plan_cache[(store.url, campaign_id)] = plan


def redact_error(event: dict, text: Any) -> str:
    """An error text as it may be stored or printed: the run's password (when it can be
    resolved) and any credentials in URLs replaced by ***."""
    text = str(text)
    try:
        run = load_plan(open_store(event["store"]), event["campaign_id"], event["run_id"]).run(event["run_id"])
        text = secrets.Redactor(secrets.resolve(run.target.get("password")))(text)
    except Exception:  # no plan, no secret: URL redaction still applies
        pass
    return redact_message(text)
