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
- ``PathCache``: jsonpath_ng's parses of the paths the interpreter evaluates, one per path and
  process (parsed paths are immutable: moto only finds and updates through them), kept in the
  same cache between processes (a parse built ply's lexer each time and the parser's tables
  once: ~0.15 s of CPU between a campaign's first states).
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
    _prune(path.parent)
    return pickle.loads(blob)  # the caller gets a copy no later load shares


KEEP_PROGRAMS = 32  # parsed definitions kept (each template change or parameter set is one)


def _prune(folder: Path) -> None:
    """The newest KEEP_PROGRAMS parsed definitions stay, the older ones go."""
    try:
        files = sorted((p for p in folder.glob("*.pickle") if not p.name.startswith("jsonpath-")),
                       key=lambda p: p.stat().st_mtime, reverse=True)
        for old in files[KEEP_PROGRAMS:]:
            old.unlink()
    except OSError:  # another process pruned meanwhile
        pass


class PathCache:
    """``parse(path)`` of one jsonpath_ng parser class: each path parsed once per process, the
    parses read from and saved (``save``) to the cache folder; the parser (its tables: 22 ms
    of CPU) built only for a path not parsed before. One parse at a time (ply keeps its
    stacks on the parser)."""

    MAX_PATHS = 4096

    def __init__(self, parser_class: Any) -> None:
        self.parser_class = parser_class
        self._parsed: Optional[dict] = None
        self._parser: Any = None
        self._new = False
        self._lock = threading.Lock()

    def _path(self) -> Path:
        import jsonpath_ng  # noqa: PLC0415 (loaded with the interpreter already)
        name = f"{self.parser_class.__module__}.{self.parser_class.__qualname__}"
        key = hashlib.sha256(f"{name}\n{jsonpath_ng.__version__}\n{sys.version_info[:2]}".encode()).hexdigest()[:32]
        return cache_dir() / f"jsonpath-{key}.pickle"

    def parse(self, path: str) -> Any:
        with self._lock:
            if self._parsed is None:
                try:
                    self._parsed = dict(pickle.loads(self._path().read_bytes()))
                except Exception:  # none yet, or not readable: parse what is asked
                    self._parsed = {}
            hit = self._parsed.get(path)
            if hit is None:
                if self._parser is None:
                    self._parser = self.parser_class()
                hit = self._parser.parse(path)
                if len(self._parsed) < self.MAX_PATHS:
                    self._parsed[path] = hit
                    self._new = True
            return hit

    def save(self) -> None:
        """Keep the paths parsed in this process (when one was new) for the next."""
        with self._lock:
            if not self._new or self._parsed is None:
                return
            try:
                blob = pickle.dumps(self._parsed, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # a path object that does not pickle (a later jsonpath_ng)
                return
            self._new = False
        _store(self._path(), blob)


def _store(path: Path, blob: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".asl-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except OSError:
        pass
