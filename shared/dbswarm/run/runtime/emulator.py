"""The SAM application on this machine: the state machine of template.yaml executed by
moto's Step Functions engine (an ASL interpreter), every Lambda call run by the real
handler (``functions/<name>/app.py``) in its own OS process.

How it fits together (moto 5.2.5, pinned: the Lambda hook below is a private API):

- ``mock_aws`` with ``stepfunctions.execute_state_machine`` makes moto *run* the
  definition — Map (inline and distributed, items from S3), Choice loops, Retry/Catch,
  execution history. Map iterations run in threads, so parallel shards are parallel.
- moto's Docker-free Lambda backend only echoes its input; the interpreter's Lambda client
  is ``asl_engine.LocalLambda`` instead (docs/decisions/0018), which hands the call to a new
  process (forked from a forkserver that has the library imported), waits for its answer,
  and returns it in Lambda's shape — errors as ``FunctionError: Unhandled`` with
  errorType/errorMessage, a process that dies as ``Runtime.ExitError``, one that
  outlives its function's Timeout as ``Sandbox.Timedout``.
- The functions (their specs) and the state machine are made from what template.yaml says
  (``dbswarm.run.runtime.template``): names, handlers, timeouts, environment,
  DefinitionSubstitutions.
- The processes get the caller's environment (so a local results folder or a real
  S3-compatible endpoint given with AWS_ENDPOINT_URL is used as is), or, with
  ``emulate_for_functions=True``, a ThreadedMotoServer sharing the in-process moto
  state, so that functions reach the emulated S3 bucket and Secrets Manager.
- Inside the emulation the caller's own AWS clients would be intercepted; configured
  endpoint URLs are ignored meanwhile (AWS_IGNORE_CONFIGURED_ENDPOINT_URLS) so the
  engine's calls stay in moto, and ``external_client`` makes a client that moto never
  intercepts, for the user's real store.
"""
from __future__ import annotations

import copy
import datetime
import functools
import hashlib
import importlib.util
import json
import logging
import multiprocessing as mp
import os
import select
import signal
import sys
import threading
import time
import traceback
import types
import uuid
from collections import Counter, defaultdict
from multiprocessing.connection import wait as _wait_any
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Optional
from unittest import mock

from dbswarm.credentials.redact import redact_message
from dbswarm.errors import DbswarmError
from dbswarm.run.runtime import forkserve
from dbswarm.run.runtime.asl_engine import LocalLambda, PathCache, cached_program
from dbswarm.run.runtime.interrupt import FENCE_ENV, hold_fence, in_function_process
from dbswarm.run.runtime.template import FunctionSpec, SamApp

_INHERITED = object()
CANCEL_WAIT_S = 60.0  # a cancelled campaign's shards get this long to stop at their next operation
REGION = "us-east-1"
ACCOUNT = "123456789012"
FAKE_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
GRACE_S = 2.0                      # beyond a function's Timeout before its process is killed
# Test hook, never set in production: make a function call fail on purpose. JSON:
#   {"function": "WorkerFunction", "match": {"phase": "run", "shard": 3}, "mode": "raise" | "kill",
#    "after_s": 0.5}
# "raise" raises before the handler runs; "kill" SIGKILLs the process after_s seconds into
# the call. Only calls without an "action" (not arm / record_failure) match.
FAULT_ENV = "DBSWARM_EMULATOR_FAULT"


# ==== inside a function's process ==============================================================

LOCAL_ONLY_UNSET = "DBSWARM_CLOUDWATCH_NAMESPACE"  # the workers' live metrics in a deployment (template)


class LambdaContext:
    """What AWS passes as ``context`` (the parts handlers may use, via dbswarm.run.runtime.context)."""

    def __init__(self, name: Any, arn: Any, memory: Any, timeout_s: Any, request_id: Any) -> None:
        self.function_name = name
        self.function_version = "$LATEST"
        self.invoked_function_arn = arn
        self.memory_limit_in_mb = str(memory)
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{name}"
        self.log_stream_name = f"local/{os.getpid()}"
        self._deadline = time.time() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


def _load_handler(job: dict) -> Any:
    code_dir = job["code_dir"]
    if code_dir not in sys.path:
        sys.path.insert(0, code_dir)
    spec = importlib.util.spec_from_file_location(f"dbswarm_function_{job['logical_id']}", job["module_file"])
    if spec is None or spec.loader is None:
        raise ImportError(f"{job['module_file']}: not a Python module a handler can be loaded from")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, job["function_name"])


def _fault_for(job: dict) -> Optional[dict]:
    text = job["env"].get(FAULT_ENV)
    if not text:
        return None
    fault = json.loads(text)
    event = job["event"]
    if fault.get("function", job["logical_id"]) != job["logical_id"] or event.get("action"):
        return None
    if any(event.get(k) != v for k, v in (fault.get("match") or {}).items()):
        return None
    return fault


def _apply_fault(fault: Any) -> None:
    if fault.get("mode") == "kill":
        t = threading.Timer(float(fault.get("after_s", 0)), lambda: os.kill(os.getpid(), signal.SIGKILL))
        t.daemon = True
        t.start()
    else:
        raise RuntimeError(f"fault injected by {FAULT_ENV} (test hook)")


def _watch_runner(conn: Any, answered: threading.Event) -> None:
    """End this function process at once when its runner is gone. PR_SET_PDEATHSIG follows the
    parent, which is the forkserver, and the forkserver lives as long as any function process
    does (each holds its 'alive' pipe): a killed runner left its shards loading the database.
    The answer pipe's reading end is the runner's alone; its writing end here reports POLLERR
    once that closed. What the shard persisted stays (``dbswarm resume`` continues it)."""
    fd = conn.fileno()

    def watch() -> None:
        poller = select.poll()
        poller.register(fd, select.POLLERR | select.POLLHUP)
        while not answered.is_set():
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            if events and not answered.is_set():
                os.kill(os.getpid(), signal.SIGKILL)
            return
    threading.Thread(target=watch, name="dbswarm-runner-watch", daemon=True).start()


def _function_main(job: dict, conn: Any) -> None:
    """A function call: the real handler with the function's environment and a context."""
    in_function_process()  # SIGINT is the runner's; SIGTERM stops the shard; dies with its parent
    answered = threading.Event()
    _watch_runner(conn, answered)  # ... and with its runner
    if job["env"].get(FENCE_ENV):
        hold_fence(job["env"][FENCE_ENV])  # a resume waits while this process can still write
    try:
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        handler = _load_handler(job)
        context = LambdaContext(job["name"], job["arn"], job["memory"], job["timeout"], job["request_id"])
        fault = _fault_for(job)
        if fault:
            _apply_fault(fault)
        result = handler(job["event"], context)
        answer: tuple[str, Any] = ("ok", json.dumps(result))
    except BaseException as exc:  # everything goes back in Lambda's error shape
        # redacted here, where the secrets this process resolved are known (the runner and the
        # execution history never learn them)
        answer = ("error", {"errorMessage": redact_message(str(exc)), "errorType": type(exc).__name__,
                            "requestId": job["request_id"],
                            "stackTrace": traceback.format_tb(exc.__traceback__)[-5:]})
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        answered.set()  # the runner closes its end once it has read the answer
        conn.send(answer)
    finally:
        conn.close()


def _warm_boto() -> None:
    """In the forkserver: read botocore's data files once, so that a function process forked
    from it creates its clients in milliseconds instead of ~0.25 s of CPU. Nothing that
    depends on the environment is resolved here (credentials, region and endpoints are read
    in the function's process, when it creates a client)."""
    import boto3
    loader = boto3._get_default_session()._session.get_component("data_loader")
    for service in ("s3", "secretsmanager", "stepfunctions"):
        for kind in ("service-2", "endpoint-rule-set-1", "paginators-1"):
            try:
                loader.load_service_model(service, kind)
            except Exception:
                pass
    for name in ("endpoints", "partitions", "sdk-default-configuration", "_retry"):
        try:
            loader.load_data(name)
        except Exception:
            pass


if os.environ.get(forkserve.WARM_ENV):  # set while the forkserver starts ("boto3": warm it)
    # the forkserver is every function process's parent, and they die with it: a SIGTERM or
    # SIGINT to the whole process group (a service manager, a container, CI) must leave it to
    # the shards, which stop at their next operation and write (the runner's close ends it)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.environ[forkserve.WARM_ENV] == "boto3":
        _warm_boto()


_SESSION = None


def _emulation_session() -> Any:
    """The boto3 session of the emulation's own clients, one per process: mock_aws starts every
    emulation with a new default session, whose clients would read botocore's models of IAM, S3,
    Lambda and Step Functions again at every local campaign of a process after its first (a
    test session's). Created after moto is imported, so its clients carry moto's interception;
    they are given the fake keys and the region, and read the environment (configured endpoints
    ignored while the emulation runs) when they are created, as before."""
    global _SESSION
    if _SESSION is None:
        import boto3
        _SESSION = boto3.session.Session()
    return _SESSION


def _import_interpreter() -> None:
    """Import moto's ASL interpreter without the package ``moto.batch``.

    The interpreter imports ``moto.batch.utils`` (for its Batch task integration, which no
    dbswarm state machine uses); the package's ``__init__`` imports Batch's models and with
    them all of ``moto.ec2``, whose region tables load botocore's EC2 model three times:
    about 1 s of the 3 s between ``dbswarm run`` and the first operation. A bare package
    module stands in for ``moto.batch`` while the interpreter is imported, so only
    ``moto.batch.utils`` is loaded; both are forgotten afterwards, so a later ``import
    moto.batch`` (e.g. a test's own ``mock_aws`` reaching Batch) runs the real package.
    moto is pinned (5.2.5); tests/unit/test_asl_local.py checks the shortcut still applies."""
    if "moto.stepfunctions.parser.models" in sys.modules or "moto.batch" in sys.modules:
        import moto.stepfunctions.parser.models  # noqa: F401
        return
    spec = importlib.util.find_spec("moto.batch")
    if spec is None:
        raise ModuleNotFoundError("moto.batch: moto is not installed as dbswarm pins it (5.2.5)")
    stand_in = types.ModuleType("moto.batch")
    stand_in.__path__ = list(spec.submodule_search_locations or [])
    sys.modules["moto.batch"] = stand_in
    try:
        import moto.stepfunctions.parser.models  # noqa: F401
    finally:
        # forget what was imported under the stand-in: a later import gets the real package
        for name in [n for n in sys.modules if n == "moto.batch" or n.startswith("moto.batch.")]:
            del sys.modules[name]


# ==== the processes ============================================================================

class FunctionProcesses:
    """One OS process per call; a call that dies or outlives its timeout becomes an error."""

    def __init__(self, preload: Any = None, aws: bool = True) -> None:
        """``aws``: the functions will reach AWS or the emulation's (an S3 store, moto's server):
        the forkserver preloads boto3 and botocore's models for them all (``forkserve``)."""
        self.ctx = mp.get_context("forkserver")
        forkserve.start(aws, preload)
        self.active: dict[int, BaseProcess] = {}
        self.jobs: dict[int, dict] = {}
        self.lock = threading.Lock()
        self.closed = False

    def call(self, job: dict, timeout_s: float) -> Any:
        """("ok", json text) or ("error", {"errorType", "errorMessage", ...})."""
        parent, child = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_function_main, args=(job, child), daemon=True,
                                name=f"dbswarm-{job['logical_id']}")
        with self.lock:
            if self.closed:
                return "error", _error("Runtime.Cancelled", "the local emulation is shutting down", job)
            proc.start()
            pid = proc.pid
            assert pid is not None  # a started process has one
            self.active[pid] = proc
            self.jobs[pid] = job
        child.close()
        try:
            msg = None
            deadline = time.monotonic() + timeout_s + GRACE_S
            while msg is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    proc.kill()
                    proc.join(5)
                    return "error", _error("Sandbox.Timedout", f"Task timed out after {timeout_s:.2f} seconds", job)
                ready = _wait_any([parent, proc.sentinel], timeout=min(left, 1.0))
                if parent in ready or (proc.sentinel in ready and parent.poll()):
                    try:
                        msg = parent.recv()
                    except EOFError:
                        break
                elif proc.sentinel in ready:
                    break
            proc.join(5)
            if msg is None:
                code = proc.exitcode
                how = f"signal: {signal.Signals(-code).name}" if code and code < 0 else f"exit status {code}"
                return "error", _error("Runtime.ExitError",
                                       f"RequestId: {job['request_id']} Error: Runtime exited with error: {how}", job)
            return msg
        finally:
            with self.lock:
                self.active.pop(pid, None)
                self.jobs.pop(pid, None)
            parent.close()

    def running(self) -> int:
        with self.lock:
            return sum(p.is_alive() for p in self.active.values())

    def of_campaign(self, campaign_id: str) -> list[BaseProcess]:
        """The calls under way of one campaign (its events name it)."""
        with self.lock:
            return [p for pid, p in self.active.items()
                    if p.is_alive() and (self.jobs.get(pid) or {}).get("event", {}).get("campaign_id") == campaign_id]

    def stop_campaign(self, campaign_id: str) -> int:
        """SIGTERM to a campaign's calls: each shard stops at its next operation and writes what
        it measured (``interrupt.in_function_process``)."""
        procs = self.of_campaign(campaign_id)
        for p in procs:
            if p.pid is None:  # not started (of_campaign lists started ones)
                continue
            try:
                os.kill(p.pid, signal.SIGTERM)
            except OSError:
                pass
        return len(procs)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            procs = list(self.active.values())
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(5)


def _error(kind: Any, message: Any, job: dict) -> Any:
    return {"errorType": kind, "errorMessage": message, "requestId": job["request_id"]}


# ==== moto's Lambda backend, patched ===========================================================

_registry: dict[str, tuple["LocalCloud", FunctionSpec]] = {}
_registry_lock = threading.Lock()
_patcher: Optional[list[Any]] = None


def _resolve(function_name: str, body: bytes) -> Optional[tuple[Optional[str], Optional[dict]]]:
    """The interpreter's Lambda call (``asl_engine.LocalLambda``): the function's answer, or None
    when no emulation has deployed it."""
    entry = _registry.get(function_name)
    if entry is None:
        return None
    cloud, spec = entry
    return cloud.run_function(spec, body)


@functools.cache
def _reusing_parser(parser_class: Any) -> PathCache:
    """jsonpath_ng's ``parse(path)`` (``.parse`` of this) with one parser of ``parser_class`` for
    the process, built on first use, and each path parsed once, in this process or an earlier
    one (``asl_engine.PathCache``). Building the parser is the cost (22 ms of CPU against
    0.07 ms for a parse with a built one), then ply's lexer at every parse (3 ms). One per
    class and process: every campaign of a process (a test session's) shares it."""
    return PathCache(parser_class)


def _engine_client_users() -> list:
    """The modules of moto's ASL interpreter that imported its ``boto_client_for``."""
    from moto.stepfunctions.parser.asl.utils import boto_client
    original = boto_client.boto_client_for
    return [m for name, m in list(sys.modules.items())
            if name.startswith("moto.stepfunctions.parser.") and getattr(m, "boto_client_for", None) is original]


@functools.lru_cache(maxsize=64)
def _engine_client_of(region: str, service: str, intercepting: bool) -> Any:
    from botocore.config import Config
    from moto.settings import moto_server_port
    from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSeconds
    kwargs = {} if intercepting else {"endpoint_url": f"http://localhost:{moto_server_port()}"}
    return _emulation_session().client(
        service, region_name=region, aws_access_key_id="ak", aws_secret_access_key="sk",
        config=Config(parameter_validation=False, retries={"max_attempts": 0, "total_max_attempts": 1},
                      connect_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
                      read_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS), **kwargs)


def _engine_client(region: str, service: str, state_credentials: Any = None) -> Any:
    """moto's ``boto_client_for`` (the interpreter's client for a Task's service), made once per
    region and service instead of at every Task: each new client cost a model lookup and
    endpoint resolution, under the GIL beside the shards. Same settings as moto's (fake keys, no
    retries, its timeouts; moto's server when calls are not intercepted); botocore clients are
    safe to share between the interpreter's threads. Lambda is ``asl_engine.LocalLambda``: the
    functions run in their processes, not behind moto's Lambda API (docs/decisions/0018)."""
    if service == "lambda":
        return _local_lambda(region)
    from moto.core.models import botocore_stubber
    return _engine_client_of(region, service, bool(botocore_stubber.enabled))


@functools.lru_cache(maxsize=8)
def _local_lambda(region: str) -> LocalLambda:
    return LocalLambda(_resolve, region)


def _parse_program(definition: str) -> Any:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
    return AmazonStateLanguageParser.parse(definition)[0]


def _evaluation_entrypoint(worker: Any) -> Any:
    """moto's ``ExecutionWorker._get_evaluation_entrypoint``: the parsed definition, parsed once
    per definition and moto version (``asl_engine.cached_program``), a fresh copy per execution."""
    return cached_program(_parse_program, worker._evaluation_details.state_machine_details.definition)


_ended = threading.Condition()  # notified as each execution's program ends (LocalCloud.wait)
_ended_count = 0


def _notifying(execution_logic: Callable[[Any], None]) -> Callable[[Any], None]:
    """moto's ``ExecutionWorker._execution_logic`` (an execution's thread), then a notice to the
    waiters: the runner learns of the end at once instead of at its next poll (0.25 s)."""
    def run(worker: Any) -> None:
        global _ended_count
        try:
            execution_logic(worker)
        finally:
            with _ended:
                _ended_count += 1
                _ended.notify_all()
    return run


def _ended_since(seen: int) -> bool:
    return _ended_count != seen


def _register(cloud: Any, functions: Any) -> None:
    global _patcher

    from moto.stepfunctions.parser.asl.component.common.path import result_path
    from moto.stepfunctions.parser.asl.utils import json_path
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
    with _registry_lock:
        for spec in functions.values():
            _registry[spec.name] = _registry[spec.arn] = (cloud, spec)
        if _patcher is None:
            # moto's engine parses every JSONPath at every evaluation, through jsonpath_ng's
            # parse(), which builds a new parser (its LALR tables) each time: ~20 ms of CPU
            # under the GIL per path, seconds per campaign
            from jsonpath_ng.ext.parser import ExtendedJsonPathParser
            from jsonpath_ng.parser import JsonPathParser
            _patcher = [mock.patch.object(json_path, "parse", _reusing_parser(ExtendedJsonPathParser).parse),
                        mock.patch.object(result_path, "parse", _reusing_parser(JsonPathParser).parse),
                        # and the whole definition at every execution (0.4-0.8 s of CPU)
                        mock.patch.object(ExecutionWorker, "_get_evaluation_entrypoint", _evaluation_entrypoint),
                        mock.patch.object(ExecutionWorker, "_execution_logic",
                                          _notifying(ExecutionWorker._execution_logic)),
                        # and it makes a new boto3 client for every Task it runs (a Lambda
                        # invoke, an S3 read): one per service, from the emulation's session
                        *[mock.patch.object(module, "boto_client_for", _engine_client)
                          for module in _engine_client_users()]]
            for p in _patcher:
                p.start()


def _unregister(cloud: Any) -> None:
    global _patcher
    with _registry_lock:
        for key in [k for k, (c, _) in _registry.items() if c is cloud]:
            del _registry[key]
        if not _registry and _patcher is not None:
            for p in reversed(_patcher):
                p.stop()
            _patcher = None
            from jsonpath_ng.ext.parser import ExtendedJsonPathParser
            from jsonpath_ng.parser import JsonPathParser
            for parser_class in (ExtendedJsonPathParser, JsonPathParser):
                _reusing_parser(parser_class).save()


# ==== the emulated deployment ==================================================================

def _sfn_backend_class() -> Any:
    """moto's Step Functions backend class, whose methods the emulation replaces while it runs
    (the definition's validation, stop_execution): Any, since its types say they are methods."""
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend
    return StepFunctionsParserBackend


class LocalCloud:
    """template.yaml deployed into moto, with the state machine executing for real.

    with LocalCloud() as cloud:
        arn = cloud.start({"campaign": {...}}, name="demo-1")
        cloud.wait(arn)
        cloud.trace(arn)
    """

    def __init__(self, template: Any = None, parameters: Optional[dict] = None, *, emulate_for_functions: bool = False,
                 extra_env: Optional[dict] = None, on_call: Optional[Callable] = None,
                 after_call: Optional[Callable] = None, stack_name: str = "dbswarm",
                 validate_definition: bool = True, buckets_on_demand: bool = False,
                 functions_use_aws: bool = True) -> None:
        # validate_definition=False: moto's create_state_machine does not parse the definition
        # (its execution parses it again: the first parse is a second of start-up, and the
        # template's definition is validated by the tests, through this same create call)
        self.validate_definition = validate_definition
        # buckets_on_demand: the template's buckets are created by deployed_bucket(), when an
        # execution needs one (a Distributed Map's items), not as the emulation starts (the
        # local runner's results are a folder or the user's store: S3 in moto costs ~0.2 s)
        self.buckets_on_demand = buckets_on_demand
        # functions_use_aws=False: no function will import boto3 (FunctionProcesses' aws)
        self.functions_use_aws = functions_use_aws or emulate_for_functions
        self._buckets_made = False
        self._buckets_lock = threading.Lock()
        self._saved_validate: Any = None
        self.app = SamApp(template, parameters, stack_name=stack_name, region=REGION, account=ACCOUNT)
        self.functions = self.app.functions()
        self.machine = self.app.state_machine()
        self.emulate_for_functions = emulate_for_functions
        self.extra_env = dict(extra_env or {})
        self.on_call, self.after_call = on_call, after_call
        self.endpoint: Optional[str] = None
        self.calls: Counter[str] = Counter()
        self.call_seconds: dict[str, float] = defaultdict(float)
        self.running: Counter[str] = Counter()   # calls under way, per function
        self.peak: Counter[str] = Counter()      # the most calls of a function under way at once (a Map's parallelism)
        self._stats_lock = threading.Lock()
        self._mock: Any = None        # moto's mock_aws
        self._server: Any = None      # moto's ThreadedMotoServer (functions reaching the emulation)
        self._processes: Optional[FunctionProcesses] = None
        self._saved_env: dict = {}
        self._saved_log_level: Optional[int] = None
        self.base_env: dict = {}
        self.refusing = False   # a graceful stop: the engine's calls fail fast, direct invokes run
        self.cancelled: dict[str, threading.Thread] = {}  # campaign id -> its cancel's aggregation
        self._closing = False
        self._saved_stop: Any = None

    # -- lifecycle --------------------------------------------------------------------------
    def __enter__(self) -> "LocalCloud":
        from moto import mock_aws
        _import_interpreter()
        if _registry:
            raise DbswarmError("another LocalCloud is active in this process (one emulation at a time)")
        self.base_env = dict(os.environ)
        self._mock = mock_aws(config={
            "stepfunctions": {"execute_state_machine": True},
            "lambda": {"use_docker": False},
            # keep the user's credentials: their results store may be a real endpoint
            "core": {"mock_credentials": False, "passthrough": {"urls": [], "services": []},
                     "reset_boto3_session": True, "service_whitelist": None}})
        self._mock.start()
        # the engine and our clients must reach moto, not an endpoint configured for the user's store
        self._set_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
        # moto logs every caught Task error and IsPresent miss; the execution history has them
        engine_log = logging.getLogger("moto.stepfunctions.parser")
        self._saved_log_level = engine_log.level
        engine_log.setLevel(logging.CRITICAL)
        if not self.validate_definition:
            _Backend = _sfn_backend_class()
            self._saved_validate = _Backend.__dict__["_validate_definition"]
            _Backend._validate_definition = staticmethod(lambda definition: None)
        _Stopper = _sfn_backend_class()
        # (defined on its base class in moto 5.2.5: restored by removing the override)
        self._saved_stop = _Stopper.__dict__.get("stop_execution", _INHERITED)
        saved, cloud = _Stopper.stop_execution, self

        def stop_execution(backend: Any, execution_arn: Any) -> Any:
            out = saved(backend, execution_arn)
            cloud._stopped(execution_arn)
            return out
        _Stopper.stop_execution = stop_execution
        try:
            self._processes = FunctionProcesses(aws=self.functions_use_aws)
            if self.emulate_for_functions:
                self._start_server()
            self._deploy()
            _register(self, self.functions)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._closing = True
        for thread in list(self.cancelled.values()):
            thread.join(CANCEL_WAIT_S + 10)
        if self._processes:
            self._processes.close()   # from now on calls fail fast (Runtime.Cancelled)
        self._drain()
        if self._saved_stop is not None:
            _Stopper = _sfn_backend_class()
            if self._saved_stop is _INHERITED:
                del _Stopper.stop_execution
            else:
                _Stopper.stop_execution = self._saved_stop
            self._saved_stop = None
        _unregister(self)
        if self._server is not None:
            self._server.stop()
            self._server = None
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        if self._saved_validate is not None:
            _Backend = _sfn_backend_class()
            _Backend._validate_definition = self._saved_validate
            self._saved_validate = None
        if self._saved_log_level is not None:
            logging.getLogger("moto.stepfunctions.parser").setLevel(self._saved_log_level)
            self._saved_log_level = None
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env = {}

    def _drain(self, timeout_s: float = 20.0) -> None:
        """Stop the executions still running and wait for the engine to finish them: its
        threads must not outlive the emulation (they would call real AWS endpoints)."""
        sfn = getattr(self, "sfn", None)
        if sfn is None or self._mock is None:
            return
        try:
            running = [e["executionArn"] for e in sfn.list_executions(
                stateMachineArn=self.machine.arn, statusFilter="RUNNING", maxResults=1000)["executions"]]
            for arn in running:
                sfn.stop_execution(executionArn=arn, error="dbswarm.Cancelled", cause="the local emulation closed")
            deadline = time.monotonic() + timeout_s
            while running and time.monotonic() < deadline:
                time.sleep(0.1)
                running = [a for a in running if sfn.describe_execution(executionArn=a)["status"] == "RUNNING"]
        except Exception:  # closing must not fail
            pass

    def _stopped(self, arn: str) -> None:
        """An execution stopped by someone else than this emulation (the API's DELETE, `dbswarm
        cancel`): its shards stop at their next operation and write what they measured (moto
        alone let them run to their end), and what was measured is aggregated, as a deployment's
        shards' files stay (api.status then says CANCELLED)."""
        if self._closing or self.refusing:
            return  # the runner's own stop (an interrupt, the emulation closing): it handles its end
        cid = arn.rsplit(":", 1)[-1]
        if cid in self.cancelled:
            return
        thread = threading.Thread(target=self._cancel, args=(arn, cid), name=f"dbswarm-cancel-{cid}", daemon=True)
        self.cancelled[cid] = thread
        thread.start()

    def _cancel(self, arn: str, cid: str) -> None:
        try:
            request = json.loads(self.sfn.describe_execution(executionArn=arn).get("input") or "{}")
            if not request.get("store"):
                return  # started by the local runner (which stops its executions itself)
            processes = self.processes
            processes.stop_campaign(cid)
            deadline = time.monotonic() + CANCEL_WAIT_S
            while processes.of_campaign(cid) and time.monotonic() < deadline:
                time.sleep(0.1)
            processes.stop_campaign(cid)  # a call that started meanwhile
            while processes.of_campaign(cid) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.invoke("AggregateFunction", {"store": request["store"], "campaign_id": cid,
                                              "interrupted": "cancelled"})
        except Exception as err:  # no plan yet (nothing measured), the emulation closing
            logging.getLogger(__name__).info("campaign %s cancelled; not aggregated: %s", cid, err)

    def _set_env(self, key: Any, value: Any) -> None:
        self._saved_env.setdefault(key, os.environ.get(key))
        os.environ[key] = value

    def _start_server(self) -> None:
        from moto.server import ThreadedMotoServer
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        server: Any = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server = server
        server.start()
        host, port = server._server.server_address  # private, moto pinned at 5.2.5
        self.endpoint = f"http://{host}:{port}"

    @property
    def processes(self) -> FunctionProcesses:
        """The functions' processes (made as the emulation starts)."""
        if self._processes is None:
            raise DbswarmError("the local emulation has not started (use LocalCloud as a context manager)")
        return self._processes

    # -- clients ------------------------------------------------------------------------------
    def client(self, service: str) -> Any:
        """A client of the emulated service (intercepted by moto)."""
        return _emulation_session().client(service, region_name=REGION,
                                           **{k.lower(): v for k, v in FAKE_KEYS.items()})

    def external_client(self, service: str, endpoint_url: Optional[str] = None) -> Any:
        """A client moto never intercepts, with the caller's own credentials and endpoint
        (what a results store outside the emulation needs)."""
        import boto3
        from moto.core.models import botocore_stubber
        env = self.base_env
        if endpoint_url is None and service == "s3":
            endpoint_url = env.get("DBSWARM_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL_S3")
        endpoint_url = endpoint_url or env.get("AWS_ENDPOINT_URL")
        kwargs = {}
        if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
            kwargs = {"aws_access_key_id": env["AWS_ACCESS_KEY_ID"],
                      "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"],
                      "aws_session_token": env.get("AWS_SESSION_TOKEN")}
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        c = boto3.client(service, endpoint_url=endpoint_url, region_name=region, **kwargs)
        c.meta.events.unregister("before-send", botocore_stubber)
        return c

    # -- deployment ---------------------------------------------------------------------------
    def bucket(self, logical_id: str = "ResultsBucket") -> str:
        return self.app.physical_name(logical_id)

    def deployed_bucket(self, logical_id: str = "ResultsBucket") -> str:
        """``bucket()``, the template's buckets created in moto first if they are not yet."""
        with self._buckets_lock:
            if not self._buckets_made:
                s3 = self.client("s3")
                for lid, res in self.app.resources.items():
                    if res["Type"] == "AWS::S3::Bucket":
                        s3.create_bucket(Bucket=self.app.physical_name(lid))
                self._buckets_made = True
        return self.bucket(logical_id)

    def _deploy(self) -> None:
        """The buckets (unless on demand) and the state machine into moto. The functions are
        not: the interpreter's Lambda calls go to their processes (``asl_engine.LocalLambda``),
        and a state machine's role is only its ARN to moto."""
        role = f"arn:aws:iam::{ACCOUNT}:role/{self.app.stack_name}-local"
        if not self.buckets_on_demand:
            self.deployed_bucket()
        sfn = self.client("stepfunctions")
        arn = sfn.create_state_machine(name=self.machine.name, definition=self.machine.definition_text,
                                       roleArn=role, type="STANDARD")["stateMachineArn"]
        if arn != self.machine.arn:
            raise DbswarmError(f"emulated state machine ARN {arn} differs from the template's {self.machine.arn}")
        self.sfn = sfn

    @property
    def state_machine_arn(self) -> str:
        return self.machine.arn

    def function_environment(self, function: Any) -> dict:
        """The environment a function's process gets (function: logical id or FunctionSpec)."""
        spec = function if isinstance(function, FunctionSpec) else self.functions[function]
        env = dict(self.base_env)
        env.update(spec.environment)
        if LOCAL_ONLY_UNSET not in self.base_env:  # no CloudWatch to watch locally: the deployment's default is not ours
            env.pop(LOCAL_ONLY_UNSET, None)
        env.update({"AWS_LAMBDA_FUNCTION_NAME": spec.name, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
                    "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_EXECUTION_ENV": "dbswarm-local"})
        if self.endpoint:
            for key in [k for k in env if k.startswith("AWS_ENDPOINT_URL") or k in (
                    "DBSWARM_S3_ENDPOINT", "AWS_PROFILE", "AWS_SESSION_TOKEN")]:
                del env[key]
            env.update(FAKE_KEYS)
            env.update({"AWS_ENDPOINT_URL": self.endpoint, "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION})
        else:
            env.setdefault("AWS_REGION", env.get("AWS_DEFAULT_REGION", REGION))
            env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
        env.update(self.extra_env)
        return env

    # -- calls ------------------------------------------------------------------------------
    def run_function(self, spec: FunctionSpec, body: Any, direct: bool = False) -> tuple[Optional[str], Optional[dict]]:
        """One invocation (called on the engine's thread): (payload JSON, None) or (None, error)."""
        if isinstance(body, bytes):
            body = body.decode()
        event = json.loads(body) if body else {}
        if self.refusing and not direct:
            return None, _error("Runtime.Cancelled", "the campaign is stopping (interrupted)", {"request_id": ""})
        if not direct and event.get("campaign_id") in self.cancelled:
            return None, _error("Runtime.Cancelled", "the campaign was cancelled", {"request_id": ""})
        if self.on_call:
            self.on_call(spec.logical_id, event)
        job = {"logical_id": spec.logical_id, "name": spec.name, "arn": spec.arn, "memory": spec.memory,
               "timeout": spec.timeout, "code_dir": str(spec.code_dir), "module_file": str(spec.module_file),
               "function_name": spec.function_name, "event": event, "cwd": os.getcwd(),
               "env": self.function_environment(spec), "request_id": str(uuid.uuid4())}
        t0 = time.monotonic()
        with self._stats_lock:
            self.running[spec.logical_id] += 1
            self.peak[spec.logical_id] = max(self.peak[spec.logical_id], self.running[spec.logical_id])
        try:
            status, value = self.processes.call(job, spec.timeout)
        finally:
            with self._stats_lock:
                self.running[spec.logical_id] -= 1
        with self._stats_lock:
            self.calls[spec.logical_id] += 1
            self.call_seconds[spec.logical_id] += time.monotonic() - t0
        result = json.loads(value) if status == "ok" else None
        error = value if status != "ok" else None
        if self.after_call:
            result = self.after_call(spec.logical_id, event, result, error)
        return (json.dumps(result), None) if error is None else (None, error)

    def invoke(self, logical_id: str, event: dict) -> Any:
        """Call one function directly (as `sam remote invoke` would); raises on its error."""
        payload, error = self.run_function(self.functions[logical_id], json.dumps(event), direct=True)
        if error:
            raise DbswarmError(f"{logical_id} failed: {error['errorType']}: {error['errorMessage']}")
        assert payload is not None  # run_function answers a payload or an error
        return json.loads(payload)

    # -- executions ---------------------------------------------------------------------------
    def start(self, execution_input: dict, name: str) -> str:
        """Start an execution (always named: moto 5.2.5 mishandles unnamed ones)."""
        return self.sfn.start_execution(stateMachineArn=self.machine.arn, name=name,
                                        input=json.dumps(execution_input))["executionArn"]

    def describe(self, arn: str) -> dict:
        return self.sfn.describe_execution(executionArn=arn)

    def wait(self, arn: str, tick: Optional[Callable] = None, poll_s: float = 0.1,
             timeout_s: Optional[float] = None) -> dict:
        t0 = time.monotonic()
        while True:
            with _ended:
                seen = _ended_count
            desc = self.describe(arn)
            if desc["status"] != "RUNNING":
                return desc
            if timeout_s is not None and time.monotonic() - t0 > timeout_s:
                raise TimeoutError(f"execution {arn} still running after {timeout_s} s")
            if tick:
                tick()
            with _ended:  # poll_s, or less when an execution ends meanwhile
                _ended.wait_for(functools.partial(_ended_since, seen), timeout=poll_s)

    def stop(self, arn: str, cause: str = "stopped locally") -> None:
        try:
            self.sfn.stop_execution(executionArn=arn, error="dbswarm.Cancelled", cause=cause)
        finally:
            self.processes.close()

    def history(self, arn: str) -> list[dict]:
        """An execution's whole history, as ``get_execution_history`` answers it, read from moto's
        backend: through the API, moto's serialiser took ~0.2 s of CPU per read of a campaign's
        history (the events are equal; timestamps parsed as botocore parses them)."""
        from botocore.utils import parse_timestamp
        from moto.stepfunctions.parser.models import stepfunctions_parser_backends
        events = stepfunctions_parser_backends[ACCOUNT][REGION].get_execution_history(arn)["events"]
        return [dict(copy.deepcopy(e), timestamp=e["timestamp"] if isinstance(e["timestamp"], datetime.datetime)
                     else parse_timestamp(e["timestamp"])) for e in events]

    def trace(self, arn: str, events: Optional[list[dict]] = None) -> dict:
        """What proves the state machine ran: the execution and a summary of its history
        (``events``: that history when the caller has read it already; moto's serialisation
        of a history is ~0.2 s of CPU)."""
        import moto
        desc = self.describe(arn)
        events = self.history(arn) if events is None else events
        entered, kinds, failures = _history_summary(events)
        return {
            "kind": "dbswarm-execution-trace", "schema_version": 1,
            "engine": f"moto {moto.__version__} Step Functions (ASL interpreter, execute_state_machine)",
            "state_machine": {"name": self.machine.name, "arn": self.machine.arn,
                              "definition": os.path.relpath(self.machine.definition_path, self.app.root),
                              "definition_sha256": hashlib.sha256(self.machine.definition_text.encode()).hexdigest(),
                              "template": os.path.relpath(self.app.path, self.app.root)},
            "execution": {"arn": arn, "name": desc.get("name"), "status": desc["status"],
                          "started": _iso(desc.get("startDate")), "stopped": _iso(desc.get("stopDate")),
                          "error": desc.get("error"), "cause": desc.get("cause")},
            "history_events": len(events),
            "event_types": dict(sorted(kinds.items())),
            "states_entered": dict(sorted(entered.items())),
            "function_calls": dict(sorted(self.calls.items())),
            "function_seconds": {k: round(v, 3) for k, v in sorted(self.call_seconds.items())},
            "function_peak_concurrency": dict(sorted(self.peak.items())),
            "failures": failures[:50],
        }


def _history_summary(events: list[dict]) -> tuple[Counter, Counter, list[dict]]:
    """The states entered (a count per name), the event types (a count per type) and the
    failures (type, error, cause) of an execution's history."""
    entered = Counter(e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e)
    kinds = Counter(e["type"] for e in events)
    failures = [{"type": e["type"], **{k: v for k, v in d.items() if k in ("error", "cause")}}
                for e in events for key, d in e.items()
                if key.endswith("FailedEventDetails") and isinstance(d, dict)]
    return entered, kinds, failures


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
