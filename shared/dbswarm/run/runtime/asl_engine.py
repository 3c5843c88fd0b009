"""What local mode gives moto's ASL interpreter besides moto (docs/decisions/0018): the Lambda
API its ``lambda:invoke`` Tasks call, and the parsed state machine, kept between processes.

- ``LocalLambda``: the interpreter's Lambda client. moto's Docker-free Lambda only echoed its
  input (the emulation replaced its ``invoke``), and reaching it cost a botocore round trip,
  the Lambda service model on both sides, an IAM role, six zipped functions and ``moto.awslambda``
  with ``moto.dynamodb`` (~1.5 s of a local campaign's start). This answers ``invoke`` as
  botocore answered it from moto: ``StatusCode``, ``Payload`` (a stream), ``FunctionError`` on an
  error, the 6 MB response limit, ``ResourceNotFoundException`` for a function not deployed.
- ``cached_program``: moto's ``AmazonStateLanguageParser.parse`` of the definition (ANTLR in pure
  Python: 0.4-0.8 s of CPU for campaign.asl.json at every execution) stored once per definition
  and moto version in the user's cache, and loaded (a fresh copy, as a parse makes) next time.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Optional

PAYLOAD_LIMIT = 6_000_000  # bytes: moto's (and Lambda's) synchronous response limit
CACHE_ENV = "DBSWARM_CACHE"  # the cache folder (default ~/.cache/dbswarm), as bench/common reads it

# (function name or ARN) -> (payload JSON, None) or (None, Lambda's error document), or None
# when no such function is deployed
Resolver = Callable[[str, bytes], Optional[tuple[Optional[str], Optional[dict]]]]


class LocalLambda:
    """The Lambda client moto's interpreter gets (``boto_client_for(service="lambda")``)."""

    def __init__(self, resolve: Resolver, region: str) -> None:
        self._resolve = resolve
        self.region = region

    def invoke(self, FunctionName: str, Payload: Any = b"", **_: Any) -> dict:  # noqa: N803 (boto3's names)
        body = Payload.encode() if isinstance(Payload, str) else (Payload or b"")
        answer = self._resolve(FunctionName, body)
        if answer is None:
            raise _client_error("ResourceNotFoundException", f"Function not found: {FunctionName}", 404)
        payload, error = answer
        out: dict = {"StatusCode": 200}
        data = (payload or "").encode() if error is None else json.dumps(error).encode()
        if error is not None:
            out["FunctionError"] = "Unhandled"
        if sys.getsizeof(data) > PAYLOAD_LIMIT:
            out["FunctionError"] = "Unhandled"
            data = json.dumps({"errorMessage": "Response payload size exceeded maximum allowed payload size "
                               "(6291556 bytes).", "errorType": "Function.ResponseSizeTooLarge"}).encode()
        out["Payload"] = io.BytesIO(data)
        return out


def _client_error(code: str, message: str, status: int) -> Exception:
    from botocore.exceptions import ClientError  # noqa: PLC0415 (botocore: when an error is raised)
    return ClientError({"Error": {"Code": code, "Message": message},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "Invoke")


# ---- the parsed definition ----------------------------------------------------------------------

_memo: dict[str, bytes] = {}
_memo_lock = threading.Lock()


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "dbswarm") / "asl"


def _key(definition: str) -> str:
    import moto  # noqa: PLC0415 (loaded with the interpreter already)
    text = f"{moto.__version__}\n{sys.version_info[:2]}\n{definition}"
    return hashlib.sha256(text.encode()).hexdigest()


def cached_program(parse: Callable[[str], Any], definition: str) -> Any:
    """``parse(definition)`` (moto's ``(program, tree)``), from this process's memo or the cache
    file when the same definition was parsed before by the same moto, else parsed and stored.
    A cache file that does not load is parsed again and replaced; one that cannot be written
    is not kept (the parse stands)."""
    key = _key(definition)
    blob = _memo.get(key)
    path = cache_dir() / f"{key}.pickle"
    if blob is None:
        try:
            blob = path.read_bytes()
        except OSError:
            blob = None
    if blob is not None:
        try:
            parsed = pickle.loads(blob)
            with _memo_lock:
                _memo[key] = blob
            return parsed
        except Exception:  # written by an other build, cut short: parse again
            pass
    parsed = parse(definition)
    try:
        blob = pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a part that does not pickle (a later moto): no cache, the parse stands
        return parsed
    with _memo_lock:
        _memo[key] = blob
    _store(path, blob)
    return pickle.loads(blob)  # the caller gets a copy no later load shares


def _store(path: Path, blob: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".asl-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except OSError:
        pass
