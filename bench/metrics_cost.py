"""The client CPU per operation with live metrics export on and off (docs/metrics.md).

`dbswarm run` (run_campaign, shards in their own processes) of YCSB c on the bench's
PostgreSQL, at each thread count, alternating export off / on (a real Prometheus with its
remote-write receiver, started here), snapshots every 2 s (the worst case: a push per
snapshot); the client CPU per operation is result.json's run phase ``client_cpu_s`` over its
operations. Prints the medians and their ratio, and writes bench/results/metrics_cost-<date>.json.

    python bench/metrics_cost.py --threads 16,128 --time 10 --rounds 3
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import common as C  # noqa: E402


def _prometheus(folder: Path) -> tuple[subprocess.Popen, str]:
    (folder / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(["prometheus", f"--config.file={folder / 'prometheus.yml'}",
                             f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--web.enable-remote-write-receiver"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/-/ready", timeout=1).read()
            return proc, url + "/api/v1/write"
        except OSError:
            time.sleep(0.1)
    raise SystemExit("prometheus did not start")


def _one(env: dict, threads: int, seconds: int, remote_write: str | None, results: Path) -> dict:
    from dbswarm.run.runtime.local import run_campaign
    campaign = {"name": f"mcost-{threads}", "target": C._servers.target("postgresql", env),
                "workload": {"preset": "c", "recordcount": 20000, "operationcount": 0, "maxexecutiontime": seconds,
                             "threads": threads},
                "fanout": {"shards": 1}, "phases": ["run"], "results": {"allow_client_bound": True}}
    if remote_write:
        campaign["results"]["metrics"] = {"prometheus": {"remote_write": remote_write}}
    out = run_campaign(campaign, str(results), show_progress=False, log=lambda *_: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    run = result["runs"][0]["phases"]["run"]
    return {"ops": run["operations_total"], "client_cpu_s": run["client_cpu_s"],
            "cpu_us_per_op": round(run["client_cpu_s"] / run["operations_total"] * 1e6, 3),
            "exported": (run.get("metrics_export") or {}).get("pushes")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="16,128")
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    env = C._servers.start_servers(C.DEFAULT_SERVERS_DIR)
    os.environ["DBSWARM_PERSIST_INTERVAL_S"] = "2"
    tmp = Path(tempfile.mkdtemp(prefix="metrics-cost-"))
    # the table the runs read: loaded once
    from dbswarm.run.runtime.local import run_campaign
    run_campaign({"name": "mcost-load", "target": C._servers.target("postgresql", env),
                  "workload": {"preset": "c", "recordcount": 20000, "operationcount": 1, "threads": 4},
                  "phases": ["prepare", "load"]}, str(tmp / "load"), show_progress=False, log=lambda *_: None)
    prom, remote_write = _prometheus(tmp)
    rows = []
    try:
        for threads in [int(t) for t in args.threads.split(",")]:
            off, on = [], []
            for r in range(args.rounds):  # alternating: off, on, off, on, ...
                off.append(_one(env, threads, args.time, None, tmp / "r"))
                on.append(_one(env, threads, args.time, remote_write, tmp / "r"))
                print(f"threads {threads} round {r + 1}: off {off[-1]['cpu_us_per_op']} µs/op, "
                      f"on {on[-1]['cpu_us_per_op']} µs/op ({on[-1]['exported']} pushes)", flush=True)
            m_off = statistics.median(x["cpu_us_per_op"] for x in off)
            m_on = statistics.median(x["cpu_us_per_op"] for x in on)
            rows.append({"threads": threads, "off": off, "on": on, "median_off_us": m_off, "median_on_us": m_on,
                         "ratio_on_off": round(m_on / m_off, 3)})
            print(f"threads {threads}: median client CPU per op off {m_off} µs, on {m_on} µs, ratio "
                  f"{m_on / m_off:.3f}", flush=True)
    finally:
        prom.terminate()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = C.RESULTS / f"metrics_cost-{stamp}.json"
    path.write_text(json.dumps({"command": " ".join(sys.argv), "persist_interval_s": 2, "rows": rows,
                                "load_average": os.getloadavg()}, indent=1))
    print(f"record: {path}")


if __name__ == "__main__":
    main()
