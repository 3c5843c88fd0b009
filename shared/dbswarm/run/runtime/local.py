"""Local mode: the campaign's state machine (statemachines/campaign.asl.json, as
template.yaml deploys it) executed on this machine by moto's Step Functions engine, with
every function call — plan, prepare, each shard's worker call, aggregate, compare — run
by the real handler in its own OS process (``dbswarm.run.runtime.emulator``). A shard answering
"continue" is called again with its checkpoint, in a new process, as Lambda would be.

``ProgressBoard`` shows live progress from the files shards write to
DBSWARM_PROGRESS_DIR; ``run_campaign`` is what ``dbswarm run`` calls.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Optional

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from dbswarm.campaign.admission import allowed_targets, check_local_targets
from dbswarm.campaign.spec import load_campaign, local_reference_problems, read_campaign_data
from dbswarm.credentials.redact import redact_message, redact_text
from dbswarm.documents import Plan
from dbswarm.engine.shard_state import STUCK_THREAD_GRACE_S
from dbswarm.errors import CONNECTION, RETRYABLE, DbswarmError, NotRunnableHere, step_error_text
from dbswarm.families import base as families
from dbswarm.results.phase import phases_of
from dbswarm.results.store import EXECUTION_DOC, RESULT_DOC, S3Store, Store, campaign_key, open_store, runs_prefix
from dbswarm.run.runtime import service
from dbswarm.run.runtime.emulator import LocalCloud
from dbswarm.run.runtime.interrupt import FENCE_ENV, STOP_FILE_ENV, GracefulStop, claim_campaign, fence_path
from dbswarm.run.runtime.template import REPO_ROOT

POLL_S = 0.25  # the execution and the progress files, 4 times a second: about 1 % of a CPU (0.1 s: 3 %)


class ProgressBoard:
    """Reads the shards' progress files; renders a rich progress bar with the current OPS."""

    def __init__(self, progress_dir: Any, console: Any = None, enabled: bool = True) -> None:
        self.dir = progress_dir
        self.enabled = enabled
        self.progress: Optional[Progress] = None
        self.task: Optional[TaskID] = None
        self._last = (0, time.time())
        self._ops = 0.0
        if enabled:

            board = self

            class Count(ProgressColumn):
                def render(self, task: Any) -> Any:
                    return Text(_count_text(task))

            class Errors(ProgressColumn):
                def render(self, task: Any) -> Any:
                    return Text(board.errors_text(task))
            # at 80 columns the description and the bar give way; counts, ops/s, errors and the
            # elapsed time are never cut
            keep: dict[str, Any] = {"no_wrap": True, "overflow": "ignore"}
            self.console = console or Console(stderr=True)
            self.progress = Progress(
                TextColumn("{task.description}", table_column=Column(ratio=3, no_wrap=True, overflow="ellipsis",
                                                                     min_width=8)),
                BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=4)),
                Count(table_column=Column(**keep)),
                TextColumn("[bold]{task.fields[ops]:,.0f}[/] ops/s", table_column=Column(**keep)),
                Errors(table_column=Column(**keep)),
                TimeElapsedColumn(table_column=Column(**keep)),
                console=self.console, transient=False, expand=True)

    def start_phase(self, description: Any, total: Any, prefix: Any, seconds: Any = None, shards: Any = None) -> None:
        """A phase's bar: over its operation count (``total``), or, for a time-limited phase
        (``seconds``: the phase ends when its time is up), over its time, the count beside it
        without a total. ``shards``: how many shards report (the final figures wait for all)."""
        self.prefix = prefix
        self.shards = shards
        self._last = (0, time.time())
        self._ops = 0.0
        self._seconds = float(seconds) if seconds else None
        self._began = None  # the earliest shard start reported (a time-limited bar runs from it)
        if self.progress:
            if not self.progress.live.is_started:
                self.progress.start()
            self.task = self.progress.add_task(description, total=self._seconds or total or None, ops=0.0, errors=0,
                                               classes={}, done=0, count_total=None if self._seconds else total,
                                               final=False)

    def errors_text(self, task: Any) -> str:
        """"N err" and the most frequent error class, marked when the worker retries it; the
        class is abbreviated (then the mark) so that at the console's width the counts, ops/s and
        elapsed time beside it stay uncut."""
        n = task.fields.get("errors", 0)
        base = f"{n:,} err"
        top = _top_error_class(task.fields.get("classes") or {})
        if not n or not top:
            return base
        name, retried = top
        # what the other columns need: the count, "N ops/s", the elapsed time, separators and the
        # description's and the bar's minimum widths
        others = len(_count_text(task)) + len(f"{task.fields.get('ops', 0):,.0f} ops/s") + 7 + 5 + 8 + 4
        budget = self.console.width - others - len(base) - 1
        for mark in ((" retried", " (r)") if retried else ("",)):
            room = budget - len(mark)
            if room >= len(name):
                return f"{base} {name}{mark}"
            if room >= 5:
                return f"{base} {name[:room - 1]}…{mark}"
        return base + (" (r)" if retried and budget >= 4 else "")

    def _read(self) -> list[dict]:
        docs = []
        for name in os.listdir(self.dir):
            if name.startswith(self.prefix) and name.endswith(".json"):
                try:
                    with open(os.path.join(self.dir, name)) as fh:
                        docs.append(json.load(fh))
                except (OSError, ValueError):
                    continue
        return docs

    def poll(self, docs: Any = None) -> Any:
        done = errors = 0
        classes: dict[str, int] = {}
        docs = self._read() if docs is None else docs
        for d in docs:
            done += d["done"]
            errors += d["errors"]
            for key, n in (d.get("error_classes") or {}).items():
                classes[key] = classes.get(key, 0) + n
            if d.get("started_at") is not None:
                self._began = min(self._began or d["started_at"], d["started_at"])
        now = time.time()
        last_done, last_t = self._last
        if now - last_t >= 1.0:
            self._ops = smoothed_rate(self._ops, max(0.0, (done - last_done) / (now - last_t)), now - last_t)
            self._last = (done, now)
        if self.progress and self.task is not None:
            if self._seconds:  # the bar is the phase's time, from the first shard's start
                t = self.progress.tasks[-1]
                began = self._began if self._began is not None else now - (t.elapsed or 0)
                completed = min(self._seconds, max(0.0, now - began))
            else:
                completed = done
            self.progress.update(self.task, completed=completed, done=done, ops=self._ops, errors=errors,
                                 classes=classes)
        return done, errors

    def final_figures(self, docs: Any) -> Optional[tuple[int, float]]:
        """(operations, ops/s) of the phase as result.json merges them, once every shard has
        reported its last call done: all its operations, warm-up included, over the span from
        the first shard's start to the last one's end. None before (or from older shards)."""
        finals = [d for d in docs if d.get("status") == "done" and d.get("total") is not None
                  and d.get("started_at") is not None and d.get("ended_at") is not None]
        if not finals or len(finals) != len(docs) or (self.shards and len(finals) != self.shards):
            return None
        total = sum(d["total"] for d in finals)
        span = max(d["ended_at"] for d in finals) - min(d["started_at"] for d in finals)
        return total, total / max(span, 1e-9)

    def end_phase(self) -> None:
        docs = self._read()
        done, _ = self.poll(docs)
        if self.progress and self.task is not None:
            t = self.progress.tasks[-1]
            figures = self.final_figures(docs)
            if figures:  # the result's own count and rate (result.json: operations_total, ops_per_s)
                done, ops = figures
            else:  # a finished phase shows its average rate, not the last second's (0 once it stopped)
                ops = done / t.elapsed if t.elapsed else self._ops
            if self._seconds:
                self.progress.update(self.task, completed=t.total, done=done, ops=ops, final=True)
            else:
                self.progress.update(self.task, completed=done, done=done, ops=ops, final=True,
                                     **({} if t.total else {"total": done, "count_total": done}))
            self.progress.stop_task(self.task)

    def stop(self) -> None:
        if self.progress and self.progress.live.is_started:
            self.progress.stop()


RATE_SECONDS = 3.0  # the live ops/s: a moving average over about this long


def smoothed_rate(previous: float, rate: float, seconds: float) -> float:
    """The live ops/s: an exponential moving average (time constant RATE_SECONDS) of the rate of
    each ~1-s poll, which jumps with the shards' progress writes (a shard's two writes in one
    poll's second, none in the next); the first measured rate as it is."""
    if previous <= 0:
        return rate
    weight = 1.0 - math.exp(-max(seconds, 0.0) / RATE_SECONDS)
    return previous + weight * (rate - previous)


def _count_text(task: Any) -> str:
    """"N/TOTAL" over a count; "N" when the phase is time-limited (its bar is its time) or has no
    count. After the phase, N is the count result.json has (warm-up included)."""
    done = task.fields.get("done", task.completed)
    total = task.fields["count_total"] if "count_total" in task.fields else task.total
    return f"{done:,.0f}" + (f"/{total:,.0f}" if total else "")


def _top_error_class(classes: dict) -> Optional[tuple[str, bool]]:
    """The most frequent error class over all operations ("OP:kind:name" keys) and whether the
    worker retries its kind (errors.py: retryable and connection errors are retried)."""
    by_class: dict[tuple[str, str], int] = {}
    for key, n in classes.items():
        _, _, rest = key.partition(":")
        kind, _, name = rest.partition(":")
        by_class[(kind, name or kind)] = by_class.get((kind, name or kind), 0) + n
    if not by_class:
        return None
    (kind, name), _ = max(by_class.items(), key=lambda kv: (kv[1], kv[0]))
    return name, kind in (RETRYABLE, CONNECTION)


# template parameters for local executions: any target host (this machine's user chose it),
# unless DBSWARM_ALLOWED_TARGETS is set here (local_parameters)
LOCAL_PARAMETERS = {"RetryIntervalSeconds": 1, "AllowedTargets": "*"}


def local_parameters(runs: Any = None) -> dict:
    """The template parameters of a local execution. DBSWARM_ALLOWED_TARGETS set here is enforced
    as a deployment's AllowedTargets is: ``runs``' targets checked now (refused before anything
    starts, no connection made), and every function's connection checked on its socket."""
    allowed = check_local_targets(runs) if runs is not None else allowed_targets()
    return {**LOCAL_PARAMETERS, "AllowedTargets": allowed} if allowed else dict(LOCAL_PARAMETERS)


def template_path() -> Path:
    """template.yaml of this checkout (local mode runs what it deploys), or $DBSWARM_TEMPLATE."""
    path = Path(os.environ.get("DBSWARM_TEMPLATE") or REPO_ROOT / "template.yaml")
    if not path.is_file():
        raise DbswarmError(f"local mode executes the SAM application's state machine, but {path} is missing: "
                           "install dbswarm from its repository (pip install -e .) or set DBSWARM_TEMPLATE")
    return path


def run_campaign(source: Any, results: Optional[str] = None, *, shards: Optional[int] = None,
                 max_call_seconds: Optional[float] = None, show_progress: bool = True,
                 lead_seconds: float = 0.5, console: Any = None, log: Any = print, quiet: bool = False) -> dict:
    """Plan, run and aggregate a campaign locally by executing the campaign state machine;
    returns the aggregate step's answer plus "store", "compare" (when compared) and
    "execution" (the state machine execution's status; its trace is execution.json)."""
    data = read_campaign_data(source)
    if shards:
        data = dict(data, fanout={**(data.get("fanout") or {}), "shards": shards, "threads_per_shard": None})
        data["fanout"] = {k: v for k, v in data["fanout"].items() if v is not None}
    campaign, runs = load_campaign(data)  # a bad file is reported before anything starts
    parameters = local_parameters(runs)  # DBSWARM_ALLOWED_TARGETS, when set: never ignored
    problems = local_reference_problems(campaign)  # an unset {env: VAR} too, not 25 s later in a shard
    if problems:
        raise NotRunnableHere(problems)  # a valid file that cannot run here as it is (exit 10)
    cid = service.new_campaign_id(campaign.name[:56])  # the execution's name (at most 80 characters)
    request = {"campaign": data, "results": results, "lead_seconds": lead_seconds}
    if max_call_seconds:
        request["max_call_seconds"] = max_call_seconds
    # shards report progress (and their pid) in small files; a caller may choose the folder
    given_dir = os.environ.get("DBSWARM_PROGRESS_DIR")
    progress_dir = given_dir or tempfile.mkdtemp(prefix="dbswarm-progress-")
    board = ProgressBoard(progress_dir, console, enabled=show_progress)
    watch = _Watch(cid, log, board)
    watch.quiet = quiet
    stop_file = os.path.join(progress_dir, f"STOP-{cid}")
    interrupted = None
    release = claim_campaign(cid)  # a resume of this campaign waits until this runner and its shards end
    try:
        with GracefulStop(stop_file, cid) as stopper, \
                LocalCloud(template_path(), parameters,
                           extra_env={"DBSWARM_PROGRESS_DIR": progress_dir, FENCE_ENV: fence_path(cid), STOP_FILE_ENV: stop_file},
                           on_call=watch.on_call, after_call=watch.after_call, validate_definition=False,
                           buckets_on_demand=True,
                           functions_use_aws=_reaches_aws(results or campaign.results.location)) as cloud:
            watch.cloud = cloud

            def tick() -> None:
                watch.tick()
                if stopper.requested:
                    raise _Stopping
            arn = cloud.start(request, name=cid)
            try:
                desc = cloud.wait(arn, tick=tick, poll_s=POLL_S)
            except _Stopping:
                interrupted = stopper.requested
                desc = _stop_gracefully(cloud, arn, watch, interrupted)
            except KeyboardInterrupt:
                cloud.stop(arn, "interrupted")
                raise
            watch.tick()
            watch.end_phase()
            history = cloud.history(arn)
            trace = cloud.trace(arn, history)
            if interrupted:
                return watch.interrupted(cloud, trace, interrupted)
    finally:
        release()
        board.stop()
        for message in watch.after_bars:
            log(redact_text(message))
        if not given_dir:
            shutil.rmtree(progress_dir, ignore_errors=True)
        else:
            try:
                os.unlink(stop_file)
            except OSError:
                pass
    return watch.outcome(desc, trace, history)


def _reaches_aws(location: Any) -> bool:
    """Whether a local campaign's functions use boto3: a results store in S3 (a folder's do
    not; a secret reference or CloudWatch metrics import it in the process that needs it)."""
    return str(location or "").startswith("s3://")


class _Stopping(Exception):
    """The first Ctrl-C / SIGTERM arrived (raised from the wait loop's tick)."""


def _stop_gracefully(cloud: LocalCloud, arn: Any, watch: Any, signame: str) -> dict:
    """Shards stop at their next operation and write; no new call starts; then the execution
    is stopped. A second signal (KeyboardInterrupt) aborts."""
    watch.log(f"campaign {watch.cid}: {signame}: stopping every shard at its next operation "
              "(interrupt again to abort)")
    cloud.refusing = True
    deadline = time.monotonic() + STUCK_THREAD_GRACE_S + 20
    while cloud.processes.running() and time.monotonic() < deadline:
        watch.tick()
        time.sleep(POLL_S)
    try:
        cloud.sfn.stop_execution(executionArn=arn, error="dbswarm.Interrupted", cause=f"{signame} (graceful stop)")
    except Exception:
        pass
    return cloud.describe(arn)


class _Watch:
    """What the state machine's function calls tell the local runner: the plan (for the
    progress totals), the phase the shards are in, failed shards, and the answers of
    aggregate and compare. Calls arrive on the engine's threads; the board and the log
    are driven from the main thread (``tick``)."""

    def __init__(self, cid: str, log: Any, board: Any) -> None:
        self.cid, self.log, self.board = cid, log, board
        self.cloud: Optional[LocalCloud] = None
        self.lock = threading.Lock()
        self.plan: Optional[dict] = None
        self.full_plan: Optional[Plan] = None
        self.current: Optional[tuple[Any, Any]] = None  # (run_id, phase) of the latest worker call
        self.shown: Optional[tuple[Any, Any]] = None    # (run_id, phase) on the board
        self.messages: list[str] = []
        self.after_bars: list[str] = []  # said once the progress bars are done (a check's outcome)
        self.quiet = False         # set by run_campaign (--quiet)
        self.outputs: dict = {}

    # -- engine threads ------------------------------------------------------------------
    def on_call(self, function: Any, event: dict) -> None:
        if function != "WorkerFunction":
            return
        with self.lock:
            if event.get("action") == "record_failure":
                self.messages.append(f"  shard {event['shard']} of {event['run_id']}/{event['phase']} failed: "
                                     f"{service.redact_error(event, step_error_text(event.get('error')))}")
            else:
                self.current = (event["run_id"], event["phase"])

    def after_call(self, function: Any, event: dict, result: Any, error: Any) -> Any:
        if error is None and function == "PlanFunction":
            result = self._planned(result, step=event.get("action") == "next_step")
        if error is None and event.get("action") == "check_merge" and result and result.get("ranges"):
            with self.lock:  # a check can take minutes with nothing on the board: say how it ended
                # (below the bars, not above them: said as the bars end, in the order of the runs)
                (self.after_bars if self.board.progress is not None else self.messages).append(f"  {event['run_id']} {event['stage']} consistency check "
                                     f"({result['ranges']} range{'' if result['ranges'] == 1 else 's'} in parallel): "
                                     + ("passed" if result["passed"] else "did not run everywhere (see the result)"
                                        if result.get("error") else
                                        f"FAILED ({result.get('failures_total', 0)} failures)"))
        if error is None:
            with self.lock:
                self.outputs[function] = result
        return result

    def _planned(self, plan: Any, step: bool = False) -> Any:
        """The plan step's answer (or a search's next step: its one new run)."""
        store = self.user_store(plan["store"])
        full = service.load_plan(store, plan["campaign_id"], plan["runs"][0]["run_id"] if plan["runs"] else None)
        mirrored = False
        cloud = self.cloud
        assert cloud is not None  # set as the emulated cloud starts, before any call
        for run in plan["runs"]:
            if run.get("items_key"):
                # a Distributed Map reads its items from S3: the emulated bucket gets a copy
                cloud.client("s3").put_object(Bucket=cloud.deployed_bucket(), Key=run["items_key"],
                                                   Body=store.get_bytes(run["items_key"]))
                mirrored = True
        if mirrored:
            plan = dict(plan, bucket=cloud.bucket(), items_prefix="")
        with self.lock:
            self.plan, self.full_plan = plan, full
            if step:
                if plan["runs"] and not getattr(self, "quiet", False):
                    self.messages.append(f"search: next step {plan['runs'][0]['run_id']}")
            elif not getattr(self, "quiet", False):
                self.messages.append(f"campaign {plan['campaign_id']}: {len(plan['runs'])} run(s)"
                                     + (" (a search: one step at a time)" if plan.get("search") else "")
                                     + f"; results in {plan['store']}")
        return plan

    def user_store(self, url: Any) -> Any:
        """The results store, reached past the emulation (a folder, or S3 at the user's endpoint)."""
        if url.startswith("s3://") and self.cloud is not None:
            return S3Store(url, client=self.cloud.external_client("s3"))
        return open_store(url)

    # -- main thread -----------------------------------------------------------------------
    def tick(self) -> None:
        with self.lock:
            messages, self.messages = self.messages, []
            current, full = self.current, self.full_plan
        if current is not None and current != self.shown and full is not None:
            self.end_phase()
            run = full.run(current[0])
            n = run.shard_count
            # the run phase's client model where it is not a thread per connection (auto's choice)
            model = ", multiplexed" if current[1] == "run" and run.client_model == "multiplexed" else ""
            self.board.start_phase(f"{current[0]} {current[1]} ({n} shard{'' if n == 1 else 's'}{model})",
                                   _phase_total(run, current[1]), f"{current[0]}.{current[1]}.",
                                   seconds=_phase_seconds(run, current[1]), shards=n)
            self.shown = current
        for m in messages:
            self._say(m)
        if self.shown:
            self.board.poll()

    def end_phase(self) -> None:
        if self.shown:
            self.board.end_phase()
        with self.lock:
            messages, self.messages = self.messages, []
        for m in messages:
            self._say(m)

    def _say(self, message: Any) -> None:
        message = redact_text(message)
        if self.board.progress is not None and self.board.progress.live.is_started:
            self.board.progress.console.print(message, markup=False, highlight=False)
        else:
            self.log(message)

    # -- the end -----------------------------------------------------------------------------
    def interrupted(self, cloud: LocalCloud, trace: Any, signame: str) -> dict:
        """After a graceful stop: aggregate what the shards wrote, status interrupted."""
        if self.plan is None:
            raise DbswarmError(f"campaign {self.cid}: interrupted ({signame}) before it was planned: nothing was "
                               "written")
        store = open_store(self.plan["store"])
        store.put_json(campaign_key(store, self.cid, EXECUTION_DOC), trace)
        agg = cloud.invoke("AggregateFunction", {"store": self.plan["store"], "campaign_id": self.cid,
                                                 "interrupted": signame})
        return dict(agg, store=self.plan["store"], signal=signame,
                    execution={"arn": trace["execution"]["arn"], "status": trace["execution"]["status"],
                               "error": "dbswarm.Interrupted", "trace_key": campaign_key(store, self.cid, EXECUTION_DOC)})

    def outcome(self, desc: Any, trace: Any, history: Any) -> dict:
        status, error = desc["status"], desc.get("error")
        cause = step_error_text(desc.get("cause"))
        if self.plan is None:
            # the plan step refused the campaign: its own one-line message, as local validation's
            raise DbswarmError(_unwrapped(error, cause) or f"campaign {self.cid}: the state machine ended {status} "
                               "before planning")
        store = open_store(self.plan["store"])
        store.put_json(campaign_key(store, self.cid, EXECUTION_DOC), trace)
        agg = self.outputs.get("AggregateFunction")
        if agg is None:
            # ended without its aggregate step (which releases the campaign lock): release it here,
            # or the next campaign on these tables waits for it to go stale (600 s)
            try:
                service.release_locks({"store": self.plan["store"], "campaign_id": self.cid})
            except Exception:
                pass
            message = f"campaign {self.cid}: the state machine ended {status}: {_unwrapped(error, cause) or error}"
            runs = runs_prefix(store, self.cid)
            try:
                measured = any(k.endswith(".json") and "/shard-" in k for k in store.list(runs))
            except Exception:
                measured = False
            if measured:  # only when a shard wrote something: nothing ran, nothing to point at
                message += f"; what the shards measured is in {store.location(runs)}"
            raise DbswarmError(message)
        out = dict(agg, store=self.plan["store"],
                   execution={"arn": trace["execution"]["arn"], "status": status, "error": error,
                              "trace_key": campaign_key(store, self.cid, EXECUTION_DOC)})
        if "CompareFunction" in self.outputs:
            out["compare"] = self.outputs["CompareFunction"]
        if error == "dbswarm.RunFailed":
            # a phase that did not do what was planned (a load cut short, then the next step
            # failed on the same dead target) stays incomplete: result.json says so, the exit is 6
            if not (out.get("status") == "incomplete" and _a_phase_incomplete(store, self.cid)):
                out["status"] = "failed"   # (phases "not run" alone: the campaign failed, exit 3)
            self.log(redact_message(f"campaign {self.cid}: a run stopped early: {_run_error(history)}"))
        elif status != "SUCCEEDED" and error not in ("dbswarm.Regressed", "dbswarm.Inconclusive"):
            out["status"] = "failed"
            self.log(redact_message(f"campaign {self.cid}: the state machine ended {status} ({error}: {cause})"))
        return out


def _a_phase_incomplete(store: Store, cid: str) -> bool:
    """result.json has a phase that ran and did not do what was planned (status incomplete)."""
    try:
        result = store.get_json(campaign_key(store, cid, RESULT_DOC))
    except (KeyError, ValueError, OSError):
        return False
    return any(p.status == "incomplete" for r in result.get("runs", []) for _, p in phases_of(r))


def _unwrapped(error: Any, cause: str) -> str:
    """A function's error as the user's message: "ValueError: ValueError: results: ..." (the
    state's error name, then Lambda's errorType and errorMessage) becomes "results: ..."."""
    text = (cause or "").strip()
    for name in (error, *(n.rsplit(".", 1)[-1] for n in (error or "",))):
        while name and text.startswith(f"{name}:"):
            text = text[len(name) + 1:].strip()
    while True:  # errorType prefixes left in the cause ("ValueError: ", "dbswarm.CampaignError: ")
        m = _ERROR_TYPE.match(text)
        if not m:
            return text
        text = text[m.end():].strip()


_ERROR_TYPE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception): ")


def _run_error(history: Any) -> str:
    for e in history:
        d = e.get("stateEnteredEventDetails") or {}
        if d.get("name") == "Aggregate":
            return step_error_text(json.loads(d.get("input") or "{}").get("run_error"))
    return "(no detail in the execution history)"


def _phase_total(run: Any, phase: str) -> Any:
    if phase == "load":
        return sum(s.load_count for s in run.shards)
    return run.operation_total or None


def _phase_seconds(run: Any, phase: str) -> Optional[float]:
    """The run phase's time limit (the family's: YCSB maxexecutiontime, sysbench time, TPC-C
    rampup + time), when it has one: its bar shows time, not a count it may never reach."""
    if phase != "run":
        return None
    try:
        family = families.get(run.family)
        return family.limits(family.workload(run.workload)).time or None
    except Exception:  # a plugin family whose workload does not rebuild: a count bar, as before
        return None
