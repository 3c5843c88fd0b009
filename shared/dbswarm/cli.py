"""The dbswarm command line: one front end over the same library the functions use."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import DbswarmError


def _print_summary(result_md: str):
    # Markdown tables as they are: the white-paper shape, readable and pasteable anywhere
    print(result_md)


def cmd_run(args):
    from .local import run_campaign
    from .store import open_store
    out = run_campaign(args.campaign, args.results, shards=args.shards, max_call_seconds=args.max_call_seconds,
                       show_progress=not args.quiet, log=(lambda *_: None) if args.quiet else
                       (lambda msg: print(msg, file=sys.stderr)))
    store = open_store(out["store"])
    cid = out["campaign_id"]
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        _print_summary(store.get_text(store.key(cid, "summary.md")))
        print(f"\nresult: {store.location(store.key(cid, 'result.json'))}")
        print(f"report: {store.location(store.key(cid, 'report.html'))}")
    if out["status"] == "complete_with_errors":
        print(f"campaign finished with status {out['status']}: a phase's calls failed more often than "
              "results.max_error_rate (summary.md names them)", file=sys.stderr)
        return 5
    if out["status"] == "check_failed":
        print("campaign finished with status check_failed: the database broke a consistency condition after a "
              "stage (summary.md names the conditions)", file=sys.stderr)
        return 6
    if out["status"] != "complete":
        print(f"campaign finished with status {out['status']}", file=sys.stderr)
        return 3
    if out.get("compare", {}).get("verdict") == "regressed":
        return 4
    return 0


def cmd_validate(args):
    from .plan import plan_run
    from .spec import load_campaign
    campaign, runs = load_campaign(args.campaign)
    print(f"{args.campaign}: valid, {len(runs)} run(s)")
    for run in runs:
        shards = plan_run(campaign, run)
        w = run.workload
        print(f"  {run.run_id}: {run.target.display} · {w.family} {w.name} · {w.threads} threads "
              f"in {len(shards)} shards · phases {', '.join(campaign.phases)}")
    return 0


def cmd_presets(args):
    from . import families
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


def cmd_show(args):
    from .report import summary_markdown
    if args.result.startswith("s3://"):
        from .store import open_store
        bucket_url, _, key = args.result.partition("/campaigns/")
        store = open_store(bucket_url)
        result = store.get_json("campaigns/" + key.rstrip("/") + ("" if key.endswith(".json") else "/result.json"))
    else:
        result = json.loads(_find_result(args.result).read_text())
    if args.json:
        print(json.dumps({k: v for k, v in result.items()}, indent=1))
    else:
        _print_summary(summary_markdown(result))
    return 0


def cmd_schema(args):
    if args.result:
        from .documents import result_json_schema
        print(json.dumps(result_json_schema(), indent=2))
    else:
        from .spec import json_schema
        print(json.dumps(json_schema(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
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
    r.set_defaults(fn=cmd_run)
    v = sub.add_parser("validate", help="validate a campaign file and show its runs and shards")
    v.add_argument("campaign")
    v.set_defaults(fn=cmd_validate)
    pr = sub.add_parser("presets", help="list every workload family's presets")
    pr.set_defaults(fn=cmd_presets)
    s = sub.add_parser("show", help="print a result's tables")
    s.add_argument("result", help="result.json, a campaign folder, a campaign id, or an s3:// URL")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_show)
    sc = sub.add_parser("schema", help="print the campaign file's JSON Schema (--result: result.json's)")
    sc.add_argument("--result", action="store_true", help="the JSON Schema of result.json instead")
    sc.set_defaults(fn=cmd_schema)
    try:
        from .remote import add_remote_commands  # submit / status / cancel / results
        add_remote_commands(sub)
    except ImportError:
        pass
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except DbswarmError as err:
        print(f"dbswarm: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dbswarm: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
