"""The result store's keys are named in one place (results/store.py, issue 59 item 3): the
functions there produce the layout SPEC section 5 and docs describe, and no module of the library
builds a key by hand."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from dbswarm.results import store as st

LIBRARY = Path(__file__).resolve().parents[2] / "shared" / "dbswarm"


def _keys(s: st.Store) -> dict[str, str]:
    c, r = "c1", "r0"
    return {
        "campaign": st.campaign_key(s, c, st.CAMPAIGN_DOC),
        "plan": st.campaign_key(s, c, st.PLAN_DOC),
        "cost": st.campaign_key(s, c, st.COST_ESTIMATE_DOC),
        "search": st.campaign_key(s, c, st.SEARCH_DOC),
        "adaptive": st.campaign_key(s, c, st.ADAPTIVE_DOC),
        "execution": st.campaign_key(s, c, st.EXECUTION_DOC),
        "submitted": st.campaign_key(s, c, st.SUBMITTED_DOC),
        "cancelled": st.campaign_key(s, c, st.CANCELLED_DOC),
        "end": st.campaign_key(s, c, st.END_DOC),
        "reports": ",".join(st.campaign_key(s, c, n) for n in st.REPORT_FILES),
        "runs": st.runs_prefix(s, c),
        "refused": st.run_key(s, c, r, st.REFUSED_DOC),
        "shards": st.run_key(s, c, r, st.SHARDS_DOC),
        "prepare": st.prepare_key(s, c, r, "after_load"),
        "check": st.check_range_key(s, c, r, "after_run", 3),
        "phase": st.phase_prefix(s, c, r, "run"),
        "shard": st.shard_key(s, c, r, "load", 2),
        "failure": st.failure_key(s, c, r, "run", 2),
        "window": st.window_key(s, c, r, "run", "start"),
        "release": st.release_key(s, c, r, "run"),
    }


LAYOUT = {  # today's layout, below the campaign's prefix (<id>/ in a folder, campaigns/<id>/ in a bucket)
    "campaign": "campaign.json", "plan": "plan.json", "cost": "cost-estimate.json", "search": "search.json",
    "adaptive": "adaptive.json", "execution": "execution.json", "submitted": "submitted.yaml",
    "cancelled": "cancelled.json", "end": "end.json",
    "reports": "result.json,result.csv,timeseries.csv,summary.md,report.html",
    "runs": "runs/", "refused": "runs/r0/lock-refused.json", "shards": "runs/r0/shards.json",
    "prepare": "runs/r0/prepare-after_load.json", "check": "runs/r0/check-after_run-3.json",
    "phase": "runs/r0/run/", "shard": "runs/r0/load/shard-2.json", "failure": "runs/r0/run/shard-2.failed.json",
    "window": "runs/r0/run/window-start.json", "release": "runs/r0/run/release.json",
}


@pytest.mark.parametrize("store, prefix", [(st.LocalStore("/tmp/unused-results"), "c1/"),
                                           (st.S3Store("s3://bucket/some/prefix"), "campaigns/c1/")])
def test_the_key_functions_give_todays_layout(store, prefix):
    expected = {name: ",".join(prefix + part for part in value.split(",")) for name, value in LAYOUT.items()}
    assert _keys(store) == expected
    assert store.campaign_prefix("c1") == prefix


def test_keys_outside_a_campaign_and_an_s3_reference():
    assert st.baseline_key("nightly") == "baselines/nightly.json"
    assert st.history_prefix("nightly") == "history/nightly/"
    assert st.s3_result_ref("s3://b/p/campaigns/c1") == ("s3://b/p", "campaigns/c1/result.json")
    assert st.s3_result_ref("s3://b/campaigns/c1/") == ("s3://b", "campaigns/c1/result.json")
    assert st.s3_result_ref("s3://b/campaigns/c1/result.json") == ("s3://b", "campaigns/c1/result.json")


def test_the_shard_file_pattern_reads_what_shard_key_and_failure_key_write():
    s = st.LocalStore("/tmp/unused-results")
    prefix = s.campaign_prefix("c1")
    done = st.SHARD_FILE.search(st.shard_key(s, "c1", "r-0", "load", 12)[len(prefix):])
    failed = st.SHARD_FILE.search(st.failure_key(s, "c1", "r-0", "run", 3)[len(prefix):])
    assert done and (done["run"], done["phase"], done["shard"], done["failed"]) == ("r-0", "load", "12", None)
    assert failed and (failed["run"], failed["phase"], failed["shard"], failed["failed"]) == ("r-0", "run", "3",
                                                                                              ".failed")
    assert st.SHARD_FILE.search(st.window_key(s, "c1", "r-0", "run", "end")[len(prefix):]) is None


# A key built by hand: Store.key called with its parts, a store read or write given a string
# literal, or the bucket's campaign folder spelled out.
HAND_BUILT = [
    re.compile(r"store\.key\("),
    re.compile(r"\.(get|put)_(json|text|bytes)\(\s*f?[\"']"),
    re.compile(r"[\"']campaigns/"),
]
# files another change converts; each entry must still match (a stale entry fails the test)
NOT_YET: dict[str, str] = {}


def _hand_built() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(LIBRARY.rglob("*.py")):
        rel = path.relative_to(LIBRARY).as_posix()
        if rel == "results/store.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if any(p.search(code) for p in HAND_BUILT):
                found.setdefault(rel, []).append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_module_builds_a_store_key_by_hand():
    found = _hand_built()
    stale = [f for f in NOT_YET if f not in found]
    assert not stale, f"no longer builds keys by hand: remove from NOT_YET: {stale}"
    lines = [line for rel, hits in found.items() if rel not in NOT_YET for line in hits]
    assert not lines, "keys built by hand (name them in results/store.py):\n" + "\n".join(lines)
