"""The client cost table of ``fanout: {threads_per_shard: auto}`` (campaign/fanout_auto.py's
CLIENT_COST): per family and engine, one client thread alone against the test server for a
few seconds, its client CPU per operation and the time per operation from call to call (both
from the run's client figures, result.json's ``client.shards.0``).

    python bench/client_cost_table.py --engines postgresql,mysql --families ycsb,sysbench --time 6
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORKLOADS = {"ycsb": {"preset": "a", "recordcount": 20000, "table": "usertable_cost_table"},
             "sysbench": {"family": "sysbench", "test": "oltp_read_only", "tables": 2, "table_size": 10000}}


def main(argv=None) -> int:
    from dbswarm.run.runtime.local import run_campaign
    from tests import servers
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="postgresql,mysql")
    ap.add_argument("--families", default="ycsb,sysbench")
    ap.add_argument("--time", type=float, default=6.0)
    ap.add_argument("--results", default="/tmp/dbswarm-client-cost")
    args = ap.parse_args(argv)
    env = servers.start()
    for engine in args.engines.split(","):
        for fam in args.families.split(","):
            w = dict(WORKLOADS[fam], threads=1)
            w.update({"maxexecutiontime": args.time, "operationcount": 0} if fam == "ycsb" else {"time": args.time})
            c = {"name": f"cost-{engine}-{fam}", "phases": ["prepare", "load", "run", "cleanup"],
                 "target": servers.target(engine, env), "workload": w, "fanout": {"shards": 1},
                 "results": {"allow_client_bound": True}}
            out = run_campaign(c, args.results, show_progress=False, log=lambda *_: None)
            res = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
            s = res["runs"][0]["phases"]["run"]["client"]["shards"]["0"]
            cycle = s["wall_s"] * 1e6 / s["ops"]
            print(json.dumps({"family": fam, "engine": engine, "ops": s["ops"],
                              "client_us_per_op": s["client_cpu_us_per_op"], "cycle_us": round(cycle, 1),
                              "thread_cpu": round(s["client_cpu_us_per_op"] / cycle, 3),
                              "mean_latency_us": s["mean_latency_us"], "runqueue_share": s.get("runqueue_share")}),
                  flush=True)
    return 0


if __name__ == "__main__":
    if __package__ is None and str(Path(__file__).resolve().parents[1]) not in sys.path:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
