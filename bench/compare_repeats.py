"""`dbswarm compare`'s false alarms and detections over repeated pairs (docs/ci.md, issue 55).

Each pair is two campaigns of 5 runs of 1 s (``repeat: 5``, YCSB a, 4 threads) run side by
side, each `dbswarm run` in its own process, then `dbswarm compare` on them with its default
thresholds (``--max-regression 5%``) and with the e2e test's wider ones for the same
configuration (tests/e2e/test_compare.py, SAME_THRESHOLDS). ``same`` pairs are one configuration
twice: any exit 4 is a false alarm. ``slow`` pairs make the candidate's server slower on purpose:
the noop engine's ``service_time_ms``, the server's time per call (``--base-ms`` 5, then
``--slow-ms``): any exit other than 4 is a miss. Writes bench/results/compare_repeats-<date>.json.

    python bench/compare_repeats.py --pairs 5 --slow-ms 25
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SAME_THRESHOLDS = ["--max-regression", "50%", "--max-regression", "p99=100%", "--max-regression", "p99.9=100%"]


def _campaign(ms: float) -> dict:
    return {"name": "rep", "phases": ["run"], "repeat": 5,
            "target": {"engine": "noop", "options": {"service_time_ms": ms}},
            "workload": {"preset": "a", "recordcount": 1000, "operationcount": 0, "maxexecutiontime": 1,
                         "threads": 4},
            "fanout": {"shards": 1}}


def _pair(tmp: Path, tag: str, base_ms: float, cand_ms: float) -> tuple[Path, Path]:
    env = {**os.environ, "DBSWARM_ALLOW_CLIENT_BOUND": "1", "PYTHONPATH": str(ROOT / "shared")}
    procs = []
    for side, ms in (("base", base_ms), ("cand", cand_ms)):
        spec = tmp / f"{tag}-{side}.json"
        spec.write_text(json.dumps(_campaign(ms)))
        procs.append(subprocess.Popen([sys.executable, "-m", "dbswarm", "run", str(spec), "--results",
                                       str(tmp / tag / side), "--quiet", "--json"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT))
    folders = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"{tag}: dbswarm run exited {proc.returncode}: {err[-2000:]}")
        o = json.loads(out)
        folders.append(Path(o["store"]) / o["campaign_id"])
    return folders[0], folders[1]


def _compare(base: Path, cand: Path, extra: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "shared")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "compare", str(base), str(cand), "--format", "json",
                           *extra], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    doc = json.loads(proc.stdout)
    figures = [f for p in doc["pairs"] for f in p["figures"]]
    return {"exit": proc.returncode, "verdict": doc["verdict"], "regressions": doc["regressions"],
            "worse": [f["figure"] for f in figures if f["verdict"] == "worse"],
            "inconclusive": [f["figure"] for f in figures if f["verdict"] == "inconclusive"],
            "throughput_change": next((f["change"] for f in figures if f["figure"] == "throughput"), None),
            "read_p50_change": next((f["change"] for f in figures if f["figure"] == "READ p50"), None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--base-ms", type=float, default=5)
    ap.add_argument("--slow-ms", type=float, default=25)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="compare-repeats-"))
    rows = []
    for i in range(args.pairs):
        for kind, cand_ms in (("same", args.base_ms), ("slow", args.slow_ms)):
            base, cand = _pair(tmp, f"{kind}{i}", args.base_ms, cand_ms)
            row = {"pair": i + 1, "kind": kind, "default": _compare(base, cand, [])}
            if kind == "same":
                row["test_thresholds"] = _compare(base, cand, SAME_THRESHOLDS)
            rows.append(row)
            d = row["default"]
            print(f"{kind} {i + 1}: exit {d['exit']} worse {d['worse']} (throughput {d['throughput_change']}, "
                  f"READ p50 {d['read_p50_change']})" + (f"; test thresholds exit {row['test_thresholds']['exit']}"
                                                         if kind == "same" else ""), flush=True)
    same = [r for r in rows if r["kind"] == "same"]
    slow = [r for r in rows if r["kind"] == "slow"]
    summary = {"same_false_alarms_default": sum(r["default"]["exit"] == 4 for r in same),
               "same_false_alarms_test_thresholds": sum(r["test_thresholds"]["exit"] == 4 for r in same),
               "slow_flagged_default": sum(r["default"]["exit"] == 4 for r in slow), "pairs": args.pairs}
    print(json.dumps(summary))
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = RESULTS / f"compare_repeats-{stamp}.json"
    path.write_text(json.dumps({"command": " ".join(sys.argv), "base_ms": args.base_ms, "slow_ms": args.slow_ms,
                                "summary": summary, "rows": rows, "load_average": os.getloadavg()}, indent=1))
    print(f"record: {path}")


if __name__ == "__main__":
    main()
