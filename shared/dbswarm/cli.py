"""The dbswarm command line: one front end over the same library the functions use."""
from __future__ import annotations

import argparse
import json
import os
import select
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

from dbswarm.errors import DbswarmError, NotRunnableHere, results_not_written

if TYPE_CHECKING:
    from rich.console import Console

    from dbswarm.campaign.spec import Campaign, Run

# Commands import what they use when they run: `dbswarm --help` and the parser need none of the
# library (pydantic models, drivers, boto3 and moto cost ~1.5 s to import; issue 60).
DEFAULT_ALPHA = 0.05   # results.compare.DEFAULT_ALPHA (a test keeps the two equal)
TPCC_CHECK_JOBS = 4    # run.tpcc_check.DEFAULT_JOBS (likewise)


def _print_summary(result_md: str, console: Optional[Console] = None) -> None:
    """summary.md in the terminal: rendered by rich (tables as tables, headings, emphasis) on
    a terminal; as Markdown, pasteable anywhere, when the output is a file or a pipe."""
    from rich.console import Console  # noqa: PLC0415

    from dbswarm.results.report.files import printable  # noqa: PLC0415
    from dbswarm.results.report.terminal import print_markdown  # noqa: PLC0415
    result_md = printable(result_md)  # a summary.md written before labels were checked
    if console is None and not sys.stdout.isatty():
        print(result_md)
        return
    print_markdown(result_md, console or Console())  # every figure whole, at 80 columns too


EXIT_CODES = {  # documented in docs/failure-and-safety.md
    "complete": 0, "invalid": 2, "partial": 3, "failed": 3, "regressed": 4, "complete_with_errors": 5,
    "incomplete": 6, "not_written": 7, "check_failed": 8, "client_bound": 9, "not_runnable_here": 10,
    "interrupted": 130}


def _n(count: int, noun: str) -> str:
    """"1 shard", "2 shards"."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def cmd_run(args: argparse.Namespace) -> int:
    from dbswarm.run.runtime import forkserve  # noqa: PLC0415
    # the functions' forkserver imports the library on the other CPU while this process imports
    # moto and deploys (boto3 too when the results go to S3; a campaign file's own S3 location
    # restarts it with boto3 when the emulation starts)
    forkserve.start(aws=str(args.results or "").startswith("s3://"))
    from dbswarm.results.report import junit  # noqa: PLC0415
    from dbswarm.results.store import open_store  # noqa: PLC0415
    from dbswarm.run.runtime.local import run_campaign  # noqa: PLC0415
    if args.shards is not None and args.shards < 1:
        raise DbswarmError("--shards: expected a whole number >= 1, got " + str(args.shards))
    if args.max_call_seconds is not None and not (0 < args.max_call_seconds <= 86400):
        raise DbswarmError(f"--max-call-seconds: expected a number > 0 and <= 86400, got {args.max_call_seconds:g}")
    out = run_campaign(args.campaign, args.results, shards=args.shards, max_call_seconds=args.max_call_seconds,
                       show_progress=not args.quiet, log=(lambda msg: print(msg, file=sys.stderr)),
                       quiet=args.quiet)
    status = report_outcome(out, args.json)
    junit.campaign_ci_outputs(open_store(out["store"]), out["campaign_id"], args.junit)
    return status


def report_outcome(out: dict, as_json: bool = False) -> int:
    """Print a finished (or interrupted) campaign's tables and, on stderr in every mode, why it
    is not complete; the exit status (EXIT_CODES)."""
    from dbswarm.results.store import (  # noqa: PLC0415
        REPORT_FILES,
        REPORT_HTML,
        RESULT_DOC,
        SUMMARY_DOC,
        campaign_key,
        open_store,
    )
    store = open_store(out["store"])
    cid = out["campaign_id"]
    result = None
    try:
        result = store.get_json(campaign_key(store, cid, RESULT_DOC))
    except (KeyError, ValueError, OSError):
        pass
    if as_json:
        print(json.dumps(out, indent=1))
    else:
        try:
            _print_summary(store.get_text(campaign_key(store, cid, SUMMARY_DOC)))
        except (KeyError, OSError):
            pass
        print()
        for name in REPORT_FILES:
            print(f"{name + ':':<16}{store.location(campaign_key(store, cid, name))}")
        report = store.location(campaign_key(store, cid, REPORT_HTML))
        if "://" not in report:
            print(f"open the report in a browser: file://{Path(report).resolve()}")
        else:
            print(f"to read the report, copy it here (aws s3 cp {report} .) and open it in a browser")
    status = out["status"]
    for line in _reasons(result, out):
        print(line, file=sys.stderr)
    if status == "interrupted":
        # `dbswarm cancel ID` (run.interrupt.cancel_local) stops it as a first Ctrl-C does
        how = "CANCELLED (dbswarm cancel)" if str(out.get("signal")).startswith("cancelled") else "interrupted"
        print(f"campaign {cid} {how}: what every shard measured is kept; continue it with "
              f"`dbswarm resume {cid}{' --results ' + out['store'] if out.get('store') else ''}`", file=sys.stderr)
        return 143 if out.get("signal") == "SIGTERM" else 130
    if status == "complete_with_errors":
        print(f"campaign finished with status {status}: a phase's calls failed more often than "
              "results.max_error_rate (summary.md names them)", file=sys.stderr)
        return 5
    if status == "check_failed":
        print("campaign finished with status check_failed: the database broke a consistency condition after a "
              "stage (summary.md names the conditions)", file=sys.stderr)
        return 8
    if status == "incomplete":
        print(f"campaign finished with status {status}: a phase did not do what was planned (see above)",
              file=sys.stderr)
        return 6
    if status != "complete":
        print(f"campaign finished with status {status}", file=sys.stderr)
        return 3
    bound = client_bound_phases(result)
    if bound:
        print("campaign finished complete, but the load generator was the bottleneck (client verdict bound, or "
              "contended under results.strict_client_health; docs/client-health.md): its figures are the client's "
              "ceiling or the host's contention, not the database's. To measure the "
              "database: run the load generator on another machine, or use fewer threads per shard; to accept "
              "them: results.allow_client_bound: true (or DBSWARM_ALLOW_CLIENT_BOUND=1)", file=sys.stderr)
        for line in bound:
            print(line, file=sys.stderr)
        return 9
    compare = out.get("compare") or {}
    if compare.get("verdict") == "regressed" or compare.get("fail"):
        return 4  # a regression, or an inconclusive night the campaign asked to fail (fail_inconclusive)
    return 0


def client_bound_phases(result: Optional[dict]) -> list[str]:
    """One line per phase whose client verdict fails the run (exit 9: bound and not allowed;
    contended under results.strict_client_health)."""
    from dbswarm.measure.headroom import fails_run  # noqa: PLC0415
    lines = []
    for r in (result or {}).get("runs", []):
        for name, p in r.get("phases", {}).items():
            c = p.get("client") or {}
            if fails_run(c):
                lines.append(f"  run {r['run_id']}, {name} phase: {c.get('reason', '')}")
    return lines


def _reasons(result: Optional[dict], out: dict) -> list[str]:
    from dbswarm.credentials.redact import redact_text  # noqa: PLC0415
    lines = []
    if result:
        for r in result.get("runs", []):
            for name, p in r.get("phases", {}).items():
                for problem in (p.get("problems") or []) + (p.get("error_problems") or []):
                    lines.append(f"  run {r['run_id']}, {name} phase ({p.get('status')}): {problem}")
        for m in result.get("missing_shards", []):
            lines.append(f"  run {m['run_id']}, {m['phase']} phase, shard {m['shard']} missing: {m['reason']}")
    error = (out.get("execution") or {}).get("error")
    if error and error not in ("dbswarm.Regressed", "dbswarm.Inconclusive") and out["status"] != "complete":
        lines.append(f"  the state machine ended {out['execution']['status']}: {error}")
    return [redact_text(x) for x in lines]


def cmd_resume(args: argparse.Namespace) -> int:
    from dbswarm.results.report import junit  # noqa: PLC0415
    from dbswarm.results.store import open_store  # noqa: PLC0415
    from dbswarm.run.front.resume import resume_campaign  # noqa: PLC0415
    out = resume_campaign(args.campaign_id, args.results, log=lambda msg: print(msg, file=sys.stderr))
    status = report_outcome(out, args.json)
    junit.campaign_ci_outputs(open_store(out["store"]), out["campaign_id"], args.junit)
    return status


def cmd_compare(args: argparse.Namespace) -> int:
    """dbswarm compare (docs/ci.md): the logic is dbswarm.results.compare's."""
    from dbswarm.results import compare as comparing  # noqa: PLC0415
    from dbswarm.results.report import compare_view, junit  # noqa: PLC0415
    if not 0 < args.alpha < 1:
        raise DbswarmError(f"--alpha: expected a number between 0 and 1, got {args.alpha:g}")
    if args.output and args.junit and Path(args.output).resolve() == Path(args.junit).resolve():
        raise DbswarmError(f"--junit {args.junit}: the same file as --output {args.output}: one would overwrite the "
                           "other")
    thresholds = comparing.parse_thresholds(args.max_regression)  # refused before a result is read
    doc = comparing.compare(comparing.read_side(args.baseline, args.results),
                            comparing.read_side(args.candidate, args.results),
                            thresholds, args.alpha, spectra=args.format == "html")
    text = compare_view.render(doc, args.format)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    if args.junit:
        junit.write_junit(args.junit, junit.compare_junit(doc))
    junit.append_step_summary(compare_view.markdown(doc))
    return doc["exit_status"]


def cmd_baseline_accept(args: argparse.Namespace) -> int:
    """dbswarm baseline accept NAME: the flagged night's level is the new normal
    (docs/peak-search-and-verdicts.md, "A flagged night")."""
    from dbswarm.results.store import open_store  # noqa: PLC0415
    from dbswarm.results.verdict.regression import accept_level  # noqa: PLC0415
    out = accept_level(open_store(args.results), args.name, args.campaign, args.note or "")
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"accepted the level of {out['campaign_id']} ({', '.join(out['flags']) or 'no flag'}) as the "
              f"reference of {out['name']} from the next night on")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from dbswarm.campaign.admission import check_local_targets  # noqa: PLC0415
    from dbswarm.campaign.cost import check_max_cost, estimate, summary  # noqa: PLC0415
    from dbswarm.campaign.plan import plan_run  # noqa: PLC0415
    from dbswarm.campaign.spec import auto_fanout, load_campaign, local_reference_problems  # noqa: PLC0415
    campaign, runs = load_campaign(args.campaign)
    check_local_targets(runs)  # DBSWARM_ALLOWED_TARGETS set here: `run` would refuse a target outside it
    problems = local_reference_problems(campaign)  # resolved, never printed: `run` would refuse them too
    if problems:  # the file is valid: a different answer (exit 10) from an invalid one (exit 2)
        raise NotRunnableHere(problems)
    # the shards listed below (this machine's CPUs unless the fanout says otherwise), as `dbswarm run`
    # plans them: the estimate is the one its result.json's Cloud usage table shows
    cost = estimate(campaign, runs, cpu_count=None)
    check_max_cost(cost, campaign.max_cost)  # refused before anything says "valid"
    notes = [] if args.sample or args.offline else _check_statements(campaign, runs)
    print(f"{args.campaign}: valid, {_n(len(runs), 'run')}")
    for run in runs:
        shards = plan_run(campaign, run)
        w = run.workload
        print(f"  {run.run_id}: {run.target.display} · {w.family} {w.name} · {_n(w.threads, 'thread')} "
              f"in {_n(len(shards), 'shard')} · phases {', '.join(campaign.phases)}")
        if campaign.fanout.threads_per_shard == "auto" and not campaign.fanout.shards:
            print(f"    threads_per_shard auto: {auto_fanout(campaign, run, w.threads)['note']}")
    print(f"in the cloud (one shard per {cost['lambda']['worker_memory_mb']} MB function): {summary(cost)}")
    lam = cost["lambda"]
    print(f"  of which the workers: {lam['worker_calls']:,} calls, {lam['worker_seconds']:,} s, "
          f"{lam['worker_seconds'] * lam['worker_memory_mb'] / 1024:,.1f} GB-s (the result's Cloud usage table); "
          f"the other {lam['requests'] - lam['worker_calls']:,} requests: the plan, prepare, aggregate and compare steps")
    for a in cost["assumptions"]:
        print(f"  assumed: {a}")
    for note in notes:
        print(f"  statements: {note}")
    if args.sample:
        _print_samples(campaign, runs, args.sample)
    return 0


def _check_statements(campaign: Campaign, runs: list[Run]) -> list[str]:
    """Each run's statements prepared on one connection to a reachable target (the custom
    family's; the tables it creates made as temporary ones first): refused (exit 2) when the
    server rejects one, naming it; notes otherwise (checked, or why not)."""
    import tempfile  # noqa: PLC0415

    from dbswarm.campaign.plan import make_plan  # noqa: PLC0415
    from dbswarm.errors import CampaignError  # noqa: PLC0415
    from dbswarm.families import base as families  # noqa: PLC0415
    from dbswarm.run.runtime.statements import check_runs  # noqa: PLC0415
    if not any(families.get(r.workload.family).checks_statements(r.workload) for r in runs):
        return []
    plan = make_plan(campaign, runs, "validate", sqlite_url=os.path.join(tempfile.gettempdir(), "dbswarm-validate-none"))
    problems, notes = check_runs(plan.runs, temporary=True)
    if problems:
        raise CampaignError(problems)
    return notes


def _print_samples(campaign: Campaign, runs: list[Run], n: int) -> None:
    """``validate --sample N``: the first N operations of each run's first client thread, drawn
    as the run phase draws them (its seed, thread 0), without connecting."""
    from dbswarm.campaign.plan import _seed_index, derive_seed  # noqa: PLC0415
    from dbswarm.families import base as families  # noqa: PLC0415
    from dbswarm.families.stream import RandomStream  # noqa: PLC0415
    for run in runs:
        w = run.workload
        seed = derive_seed(derive_seed(campaign.seed, _seed_index(run)), "run", 0)  # the run phase's thread 0
        lines = families.get(w.family).sample(w, n, RandomStream(seed), 0, w.threads)
        print(f"\n{run.run_id}: the first {_n(n, 'operation')} of client thread 0"
              + ("" if lines else f": the {w.family} family has no dry run"))
        for line in lines:
            print(f"  {line}")


def cmd_check(args: argparse.Namespace) -> int:
    from dbswarm.run.front import tpcc_check  # noqa: PLC0415
    if args.jobs is not None and args.jobs < 1:
        raise DbswarmError(f"--jobs: expected a whole number >= 1, got {args.jobs}")
    results = tpcc_check.check_campaign(args.campaign, args.after_load, args.jobs, tpcc_check.stderr_progress)
    return tpcc_check.print_results(results, args.json)


def cmd_presets(args: argparse.Namespace) -> int:
    from dbswarm.families import base as families  # noqa: PLC0415
    blocks = ["\n".join(f.presets_text()) for f in families.all_families() if f.presets_text()]
    print("\n\n".join(blocks))
    return 0


def _find_result(ref: str) -> Path:
    p = Path(ref)
    candidates = [p, p / "result.json", Path("results") / ref / "result.json"]
    for c in candidates:
        if c.is_file():
            return c
    raise DbswarmError(f"no result found at {ref} (a result.json, a campaign folder or a campaign id "
                       "under ./results)")


def cmd_show(args: argparse.Namespace) -> int:
    from dbswarm.results.report.files import summary_markdown  # noqa: PLC0415
    from dbswarm.results.store import open_store, s3_result_ref  # noqa: PLC0415
    if args.result.startswith("s3://"):
        bucket_url, key = s3_result_ref(args.result)
        result = open_store(bucket_url).get_json(key)
    else:
        result = json.loads(_find_result(args.result).read_text())
    if args.json:
        print(json.dumps({k: v for k, v in result.items()}, indent=1))
    else:
        _print_summary(summary_markdown(result))
    return 0


def _plugins_present() -> bool:
    """A plugin (DBSWARM_PLUGINS, or a ``dbswarm.plugins`` entry point) may add a family or an
    engine: the published schema files would not know it."""
    if os.environ.get("DBSWARM_PLUGINS", "").strip():
        return True
    from importlib.metadata import entry_points  # noqa: PLC0415

    from dbswarm.plugins import ENTRY_POINT_GROUP  # noqa: PLC0415
    return bool(list(entry_points(group=ENTRY_POINT_GROUP)))


def cmd_schema(args: argparse.Namespace) -> int:
    # the package's published files (tests keep them equal to the models): no model to import
    name = "result.schema.json" if args.result else "campaign.schema.json"
    if not args.models and not _plugins_present():
        print(json.dumps(json.loads((Path(__file__).parent / "schema" / name).read_text()), indent=2))
        return 0
    from dbswarm.campaign.spec import json_schema  # noqa: PLC0415
    from dbswarm.documents import result_json_schema  # noqa: PLC0415
    print(json.dumps(result_json_schema() if args.result else json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from dbswarm.run.front.indexed_cli import add_indexed_commands  # noqa: PLC0415
    from dbswarm.run.front.remote import add_remote_commands  # noqa: PLC0415
    p = argparse.ArgumentParser(prog="dbswarm", description="Distributed database load campaigns "
                                "(the workload families' methodologies), locally or on AWS Lambda.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a campaign on this machine (shards in parallel processes)")
    r.add_argument("campaign", help="campaign file (YAML or JSON)")
    r.add_argument("--results", help="results folder or s3://bucket/prefix (default: the campaign's, ./results)")
    r.add_argument("--shards", type=int, help="number of shard processes (default: the campaign's fanout, "
                   "else one per CPU this process may use)")
    r.add_argument("--max-call-seconds", type=float,
                   help="end each shard call after this long and continue it in a new process "
                        "(as Lambda's time limit would)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", action="store_true", help="print the aggregate step's JSON instead of tables")
    r.add_argument("--junit", metavar="FILE", help="write a JUnit XML report: a test case per run and phase (docs/ci.md)")
    r.set_defaults(fn=cmd_run)
    rs = sub.add_parser("resume", help="finish an interrupted campaign: run its missing phases and shards, merge")
    rs.add_argument("campaign_id")
    rs.add_argument("--results", help="the results folder or s3://bucket/prefix it was written to (default ./results)")
    rs.add_argument("--json", action="store_true")
    rs.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (docs/ci.md)")
    rs.set_defaults(fn=cmd_resume)
    cp = sub.add_parser("compare", help="compare two sets of results figure by figure (exit 4: a regression, "
                        "12: not comparable)")
    cp.add_argument("baseline", help="result.json, campaign folder, campaign id or s3:// URL; several, "
                    "comma-separated (A,B,C), are repeated runs of one configuration")
    cp.add_argument("candidate", help="the same, for the candidate side")
    cp.add_argument("--max-regression", action="append", default=[], metavar="[METRIC=]SHARE",
                    help="the worsening that fails: 5%% (default), or per metric: p99=10%%, READ:p99.9=30%%, "
                    "throughput=3%%, errors=0.5%% (points); repeatable")
    cp.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help=f"the tests' significance ({DEFAULT_ALPHA})")
    cp.add_argument("--format", choices=("terminal", "markdown", "json", "html"), default="terminal")
    cp.add_argument("--output", "-o", metavar="FILE", help="write the output there instead of stdout")
    cp.add_argument("--results", default="results", help="where campaign ids are looked up (default ./results)")
    cp.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (docs/ci.md)")
    cp.set_defaults(fn=cmd_compare)
    bl = sub.add_parser("baseline", help="the nightly reference: `baseline accept NAME` takes a flagged "
                        "night's level as the new normal")
    bls = bl.add_subparsers(dest="baseline_command", required=True)
    ba = bls.add_parser("accept", help="the flagged night's level (newest, or --campaign) re-enters the reference")
    ba.add_argument("name", help="the campaign's name (its history is history/<name>/)")
    ba.add_argument("--campaign", metavar="ID", help="the flagged campaign to accept (default: the newest flagged)")
    ba.add_argument("--note", help="why (kept in the history document)")
    ba.add_argument("--results", default="results", help="results folder or s3://bucket/prefix (default ./results)")
    ba.add_argument("--json", action="store_true")
    ba.set_defaults(fn=cmd_baseline_accept)
    v = sub.add_parser("validate", help="validate a campaign file and show its runs and shards")
    v.add_argument("campaign")
    v.add_argument("--sample", type=int, default=0, metavar="N",
                   help="print the first N operations of each run's first client thread with their values "
                        "(a dry run: nothing connects; custom workloads)")
    v.add_argument("--offline", action="store_true",
                   help="do not connect to the target (custom workloads: their statements are not prepared "
                        "on the server to check them)")
    v.set_defaults(fn=cmd_validate)
    ck = sub.add_parser("check", help="TPC-C's consistency conditions (clause 3.3.2) on the target of every "
                        "TPC-C run of a campaign, on the database as it is now (exit 1 when one fails)")
    ck.add_argument("campaign")
    ck.add_argument("--after-load", action="store_true", help="also 3.3.2.11 (holds only before any run)")
    ck.add_argument("--jobs", type=int, default=None, metavar="N",
                    help=f"warehouse ranges checked at once, each on its own connection (default: "
                         f"min({TPCC_CHECK_JOBS}, warehouses))")
    ck.add_argument("--json", action="store_true")
    ck.set_defaults(fn=cmd_check)
    pr = sub.add_parser("presets", help="list every workload family's presets")
    pr.set_defaults(fn=cmd_presets)
    s = sub.add_parser("show", help="print a result's tables")
    s.add_argument("result", help="result.json, a campaign folder, a campaign id, or an s3:// URL")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_show)
    sc = sub.add_parser("schema", help="print the campaign file's JSON Schema (--result: result.json's)")
    sc.add_argument("--result", action="store_true", help="the JSON Schema of result.json instead")
    sc.add_argument("--models", action="store_true", help="built from the models, not the published file "
                    "(to regenerate it: dbswarm schema --models > shared/dbswarm/schema/campaign.schema.json)")
    sc.set_defaults(fn=cmd_schema)
    add_remote_commands(sub)  # submit / status / cancel / results
    add_indexed_commands(sub, report_outcome)  # coordinate / worker / step / kubernetes (the indexed path)
    return p


SIGPIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a process whose reader went away


def _stdout_closed() -> bool:
    """stdout is a pipe whose reader has gone (`dbswarm schema | head -1`)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        status = _main(argv)
        sys.stdout.flush()   # here, where a closed pipe is caught, not at the interpreter's exit
        return status
    except BrokenPipeError:
        if not _stdout_closed():
            raise  # a broken pipe of something else (a subprocess, a socket): not ours to hide
        _quiet_stdout()  # the reader (head, less) has what it wanted: no traceback
        return SIGPIPE_EXIT


def _main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except DbswarmError as err:
        from dbswarm.credentials.redact import redact_message  # noqa: PLC0415
        from dbswarm.engine.lock import CampaignLocked  # noqa: PLC0415
        full = results_not_written(err)
        if full:  # disk full (or quota, read-only) under the results folder: one line, exit 7
            print(redact_message(f"dbswarm: {full}"), file=sys.stderr)
            return EXIT_CODES["not_written"]
        print(redact_message(f"dbswarm: {err}"), file=sys.stderr)
        if isinstance(err, NotRunnableHere):
            return EXIT_CODES["not_runnable_here"]
        return EXIT_CODES["failed"] if isinstance(err, CampaignLocked) else 2
    except KeyboardInterrupt:
        print("dbswarm: aborted (a second interrupt): shard files written so far are kept; "
              "`dbswarm resume <campaign-id>` continues the campaign", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
