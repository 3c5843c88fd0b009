"""The indexed path's commands: ``coordinate``, ``worker``, ``step`` and ``kubernetes``
(docs/kubernetes.md). The library is ``dbswarm.run.runtime.indexed`` and ``dbswarm.run.front.kubernetes``."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from dbswarm.errors import DbswarmError


def _log(msg: str) -> None:
    print(f"dbswarm: {msg}", file=sys.stderr, flush=True)


def cmd_coordinate(args: argparse.Namespace) -> int:
    from dbswarm.run.runtime import indexed  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    if args.phase_timeout <= 0:
        raise DbswarmError(f"--phase-timeout: expected seconds > 0, got {args.phase_timeout:g}")
    if args.workers is not None and args.workers < 1:
        raise DbswarmError(f"--workers: expected a whole number >= 1, got {args.workers}")
    out = indexed.coordinate(args.campaign, args.results, args.campaign_id, log=_log,
                             phase_timeout_s=args.phase_timeout, lead_seconds=args.lead_seconds, workers=args.workers)
    return int(args.report_outcome(out, args.json))


def cmd_worker(args: argparse.Namespace) -> int:
    import signal  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)

    from dbswarm.run.runtime import indexed, interrupt  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    index = indexed.shard_index(args.shard)
    # SIGTERM (a pod evicted, a job cancelled): the shard stops between operations and writes what it
    # measured; started again, the index continues from that file
    signal.signal(signal.SIGTERM, interrupt.request_stop)
    try:
        ran = indexed.work(args.results, args.campaign_id, index, log=_log)
    except indexed.WorkerStopped as stopped:
        _log(str(stopped))
        return 130
    _log(f"worker {index}: the campaign ended; {ran} phase(s) run")
    return 0


def _steps() -> dict[str, Callable[[dict], Any]]:
    from dbswarm.run.runtime import service  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    return {"plan": service.plan_campaign, "prepare": service.prepare_run, "arm": service.arm,
            "window": service.window, "shard": service.run_shard, "record-failure": service.record_shard_failure,
            "check": service.check_call, "next": service.next_step, "aggregate": service.aggregate_campaign,
            "compare": service.compare_campaign}


STEP_NAMES = ("plan", "prepare", "arm", "window", "shard", "record-failure", "check", "next", "aggregate", "compare")


def cmd_step(args: argparse.Namespace) -> int:
    raw = sys.stdin.read() if args.event == "-" else args.event
    try:
        event = json.loads(raw)
    except ValueError as exc:
        raise DbswarmError(f"EVENT: expected a JSON object (the state machine step's input), {exc}") from None
    if not isinstance(event, dict):
        raise DbswarmError(f"EVENT: expected a JSON object, got {type(event).__name__}")
    answer = _steps()[args.name](event)
    print(json.dumps(answer, indent=1, default=str))
    return 0


KUBERNETES_ACTIONS = ("follow", "delete")


def cmd_kubernetes(args: argparse.Namespace) -> int:
    if args.poll <= 0:
        raise DbswarmError(f"--poll: expected seconds > 0, got {args.poll:g}")
    if args.campaign in KUBERNETES_ACTIONS:
        return _kubernetes_action(args)
    if args.id:
        raise DbswarmError(f"dbswarm kubernetes {args.campaign} {args.id}: one campaign file, or `follow ID` / "
                           "`delete ID`")
    from dbswarm.campaign.spec import load_campaign  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    from dbswarm.run.front import kubernetes  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    from dbswarm.run.runtime.service import new_campaign_id  # noqa: PLC0415 (the CLI's start-up: imported when the command runs)
    if not args.results:
        raise DbswarmError("--results: give the s3://bucket/prefix the pods share")
    cid = args.campaign_id or new_campaign_id(load_campaign(args.campaign)[0].name)
    manifests = kubernetes.render(args.campaign, args.results, cid, args.image, namespace=args.namespace,
                                  db_secret=args.db_secret, aws_secret=args.aws_secret, s3_endpoint=args.s3_endpoint,
                                  region=args.region, phase_timeout_s=args.phase_timeout, workers=args.workers)
    text = kubernetes.render_yaml(manifests)
    if args.output and args.output != "-":
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        if not args.apply:
            _log(f"campaign {cid}: {len(manifests)} manifests written to {args.output}; `kubectl apply -f "
                 f"{args.output}` (or --apply), then `dbswarm kubernetes follow {cid} --results {args.results} "
                 f"--namespace {args.namespace}`")
    elif not args.apply:
        sys.stdout.write(text)
    if not args.apply:
        if args.follow:
            raise DbswarmError("--follow: follows what --apply submits (or `dbswarm kubernetes follow ID`)")
        return 0
    from dbswarm.run.front import kubernetes_api  # noqa: PLC0415 (the optional Kubernetes client: when submitting)
    cluster = kubernetes_api.connect(args.namespace, args.kubeconfig, args.context)
    kubernetes_api.apply(cluster, manifests, _log)
    _log(f"campaign {cid} submitted to {cluster.host}, namespace {args.namespace}"
         + ("" if args.follow else f"; follow it: `dbswarm kubernetes follow {cid} --results {args.results} "
            f"--namespace {args.namespace}`"))
    if not args.follow:
        return 0
    return kubernetes_api.follow(cluster, cid, args.results, args.report_outcome_text, _log, poll_s=args.poll)


def _kubernetes_action(args: argparse.Namespace) -> int:
    """`dbswarm kubernetes follow ID` and `dbswarm kubernetes delete ID`."""
    if not args.id:
        raise DbswarmError(f"dbswarm kubernetes {args.campaign}: name the campaign id (ID)")
    from dbswarm.run.front import kubernetes_api  # noqa: PLC0415 (the optional Kubernetes client: when asked for)
    if args.campaign == "delete":
        cluster = kubernetes_api.connect(args.namespace, args.kubeconfig, args.context)
        kubernetes_api.delete(cluster, args.id, _log)
        _log(f"campaign {args.id}: its results stay in the results store")
        return 0
    if not args.results:
        raise DbswarmError("--results: follow reads the campaign's progress and result from its s3://bucket/prefix")
    cluster = kubernetes_api.connect(args.namespace, args.kubeconfig, args.context)
    return kubernetes_api.follow(cluster, args.id, args.results, args.report_outcome_text, _log, poll_s=args.poll)


def add_indexed_commands(sub: Any, report_outcome: Callable[[dict, bool], int]) -> None:
    """The commands, on the CLI's subparsers; ``report_outcome``: the CLI's printer of a finished
    campaign (its tables and exit status), as ``dbswarm run`` prints one."""
    def shared(p: argparse.ArgumentParser) -> None:
        p.add_argument("--results", required=True, help="the shared results store: s3://bucket/prefix (any "
                       "S3-compatible endpoint: AWS_ENDPOINT_URL_S3) or a folder every process sees")
        p.add_argument("--campaign-id", required=True, help="the campaign's id, the same for the coordinator and "
                       "every worker")

    c = sub.add_parser("coordinate", help="the indexed path's coordinator: plan, prepare, release each phase to the "
                       "indexed workers and wait for them, after-stages, aggregate, compare")
    c.add_argument("campaign", help="campaign file (YAML or JSON)")
    shared(c)
    c.add_argument("--workers", type=int, help="the array's size: a run's shard count when its fanout names none")
    c.add_argument("--phase-timeout", type=float, default=3600.0,
                   help="seconds after a phase's start to wait for its shards (default 3600); then missing")
    c.add_argument("--lead-seconds", type=float, default=5.0, help="start barrier lead per phase (default 5)")
    c.add_argument("--json", action="store_true", help="print the aggregate step's JSON instead of tables")
    c.set_defaults(fn=cmd_coordinate, report_outcome=report_outcome)

    w = sub.add_parser("worker", help="an indexed worker: shard i of every phase the coordinator releases "
                       "(i: --shard, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX, CLOUD_RUN_TASK_INDEX or "
                       "DBSWARM_SHARD_INDEX)")
    shared(w)
    w.add_argument("--shard", type=int, help="the index (default: the array system's variable)")
    w.set_defaults(fn=cmd_worker)

    s = sub.add_parser("step", help="one state machine step with its JSON input, printing its JSON output")
    s.add_argument("name", choices=STEP_NAMES)
    s.add_argument("event", help="the step's input as JSON, or - for stdin")
    s.set_defaults(fn=cmd_step)

    k = sub.add_parser("kubernetes", help="render Kubernetes manifests for a campaign (a coordinator Job and an "
                       "Indexed Job of workers), submit them (--apply), follow the campaign (--follow, or `follow ID`) "
                       "and clean up (`delete ID`) (docs/kubernetes.md)")
    k.add_argument("campaign", metavar="CAMPAIGN|follow|delete", help="campaign file (YAML or JSON), or the word "
                   "follow or delete followed by a campaign id")
    k.add_argument("id", nargs="?", metavar="ID", help="with follow or delete: the campaign id")
    k.add_argument("--results", help="s3://bucket/prefix the pods share (to render; follow reads it too)")
    k.add_argument("--image", default="dbswarm:latest", help="the container image (Dockerfile at the repository's "
                   "root)")
    k.add_argument("--campaign-id", help="default: the campaign's name and the time")
    k.add_argument("--namespace", default="default")
    k.add_argument("--workers", type=int, default=4, help="shards of a run whose fanout names none (default 4)")
    k.add_argument("--db-secret", help="the Secret holding the database password under the name of the "
                   "campaign's {env: NAME}")
    k.add_argument("--aws-secret", help="the Secret holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (default: "
                   "the pods' service account)")
    k.add_argument("--s3-endpoint", help="an S3-compatible endpoint URL for the pods (MinIO, Ceph, GCS "
                   "interoperability); here: DBSWARM_S3_ENDPOINT or AWS_ENDPOINT_URL_S3")
    k.add_argument("--region", default="us-east-1")
    k.add_argument("--phase-timeout", type=float, default=3600.0)
    k.add_argument("-o", "--output", help="file to write (default: stdout, or none with --apply)")
    k.add_argument("--apply", action="store_true", help="create the objects through the Kubernetes API (the "
                   "optional extra: pip install 'dbswarm[kubernetes]')")
    k.add_argument("--follow", action="store_true", help="with --apply: follow the Jobs and the campaign's progress "
                   "until the coordinator ends; exit with the campaign's status (Ctrl-C stops following only)")
    k.add_argument("--kubeconfig", help="default: KUBECONFIG, ~/.kube/config, or in a pod its service account")
    k.add_argument("--context", help="the kubeconfig's context (default: its current one)")
    k.add_argument("--poll", type=float, default=5.0, help="seconds between two looks when following (default 5)")
    k.set_defaults(fn=cmd_kubernetes, report_outcome_text=lambda out: report_outcome(out, False))
