"""What a recorder per connection costs a long run: copied at each snapshot (the threads
model before), handed over at each snapshot (``Recorder.detach``, the threads model now), and
one recorder for every connection (the multiplexer, engine.mux): memory, a snapshot's CPU, the
end's merge.

A recorder keeps, per operation and per interval of the run, the interval's latency buckets
(a sparse dict while recording). With a recorder per connection each connection's interval
holds a few operations, so the shard keeps a small dict per connection and interval that one
recorder would hold as one; a snapshot (every 15 s while a shard runs) deep-copied every
recorder, the whole run so far, and the end merges them. Handed over, each recorder holds only
what it recorded since the last snapshot, and the parts are added up into one (its
per-interval histograms as dense tables, copied in C). This feeds ``Recorder.ok`` the
operations of a simulated run (``--seconds`` of ``--rate`` operations a second spread evenly
over ``--connections`` connections, latencies around ``--latency-ms`` as 512 connections on
one server CPU have them), in a fresh process per layout, and measures: the process's peak
resident memory, the CPU of the last snapshot (the copies, or the hand-over and its adding up;
then the merge of what the snapshot writes) and of the end's ``Recorder.merged``.

    python bench/mux_recorder.py --seconds 900 --rate 12000 --connections 16,128,512

No database: the recorder alone, deterministic inputs (a seeded generator).
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from bench import common as C  # noqa: E402

LAYOUTS = {"copied": "a recorder per connection, copied at each snapshot (threads before)",
           "handed": "a recorder per connection, handed over at each snapshot (threads now)",
           "one-copied": "one recorder, copied at each snapshot (the multiplexer before)",
           "one-handed": "one recorder, handed over at each snapshot (the multiplexer now)"}


def simulate(connections: int, layout: str, seconds: int, rate: int, latency_ms: float, every: int) -> dict:
    """One layout, in this process: the recorders fed, then measured. ``handed``: every
    ``every`` simulated seconds each recorder hands its part over (``Recorder.detach``) and
    the parts are added up (``Recorder.accumulate``), as a running shard's snapshots do."""
    import random

    from dbswarm.measure.recorder import Recorder
    rng = random.Random(7)
    shared = layout.startswith("one")
    handed = layout.endswith("handed")
    recs = [Recorder(1)] if shared else [Recorder(1) for _ in range(connections)]
    per_conn = rate // connections
    lat_ns = latency_ms * 1e6
    accumulated = None
    handovers_s = 0.0  # every snapshot's hand-over and adding up before the last
    t_feed = time.process_time()
    for s in range(seconds):
        for c in range(connections):
            rec = recs[0] if shared else recs[c]
            base = rec.base + s * 1_000_000_000
            for k in range(per_conn):
                t1 = base + (k * 1_000_000_000) // per_conn + c
                rec.ok("READ", t1 - int(rng.lognormvariate(0, 0.5) * lat_ns), t1)
        if handed and (s + 1) % every == 0 and s + 1 < seconds:
            t0 = time.process_time()
            accumulated = Recorder.accumulate(accumulated, [r.detach() for r in recs])
            handovers_s += time.process_time() - t0
    feed_s = time.process_time() - t_feed - handovers_s
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.process_time()
    if handed:  # the last snapshot: every part handed over, added, the total merged
        accumulated = Recorder.accumulate(accumulated, [r.detach() for r in recs])
        copies = [accumulated]
    else:
        copies = [r.snapshot_copy() for r in recs]
    snap_s = time.process_time() - t0
    t0 = time.process_time()
    Recorder.merged(copies)
    snap_merge_s = time.process_time() - t0
    del copies
    t0 = time.process_time()
    m = Recorder.merged([*recs, accumulated] if accumulated is not None else recs)
    end_merge_s = time.process_time() - t0
    return {"connections": connections, "layout": LAYOUTS[layout], "operations": m.total_ops,
            "feed_cpu_s": round(feed_s, 2), "max_rss_mb": round(rss_mb, 1),
            "handovers_before_cpu_s": round(handovers_s, 2) if handed else None,
            "snapshot_copy_cpu_s": round(snap_s, 3), "snapshot_merge_cpu_s": round(snap_merge_s, 3),
            "end_merge_cpu_s": round(end_merge_s, 3)}


def markdown(data) -> str:
    a = data["args"]
    L = ["## A recorder per connection, copied or handed over, against one for every connection (issue 36)", "",
         C.header(data), "",
         f"A simulated run of {a['seconds']} s at {a['rate']:,} operations a second spread over the connections, "
         f"latencies around {a['latency_ms']} ms (lognormal), 1-s intervals, fed to `Recorder.ok` in a fresh "
         "process per layout; CPU seconds of the last snapshot (every recorder's `snapshot_copy`, or every "
         f"recorder's part handed over every {a['every']} s and added up; then the merge of what it writes) "
         "and of the end's merge, the process's peak resident memory, and (handed over) the CPU of every "
         "snapshot's hand-over before the last, all together.", "",
         "| connections | layout | peak RSS MB | snapshot: copies / hand-over CPU s | snapshot: merge CPU s "
         "| end merge CPU s | earlier hand-overs, CPU s in all |",
         "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in data["rows"]:
        earlier = r.get("handovers_before_cpu_s")
        L.append(f"| {r['connections']} | {r['layout']} | {r['max_rss_mb']} | {r['snapshot_copy_cpu_s']} | "
                 f"{r['snapshot_merge_cpu_s']} | {r['end_merge_cpu_s']} | {'' if earlier is None else earlier} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=int, default=600)
    p.add_argument("--rate", type=int, default=12_000)
    p.add_argument("--connections", default="16,128,512")
    p.add_argument("--latency-ms", type=float, default=40.0)
    p.add_argument("--every", type=int, default=15, help="seconds between snapshots (handed over)")
    p.add_argument("--layouts", default=",".join(LAYOUTS))
    p.add_argument("--no-md", action="store_true")
    p.add_argument("--one", help=argparse.SUPPRESS)  # "connections,layout": run one layout here, print JSON
    a = p.parse_args(argv)
    if a.one:
        n, layout = a.one.split(",")
        print(json.dumps(simulate(int(n), layout, a.seconds, a.rate, a.latency_ms, a.every)))
        return
    data = C.base_record("mux_recorder", a)
    rows = []
    for n in C.csv_list(a.connections, int):
        for layout in C.csv_list(a.layouts, str):
            if layout not in LAYOUTS:
                p.error(f"--layouts: {layout!r} is none of {', '.join(LAYOUTS)}")
            out = subprocess.run([sys.executable, __file__, "--one", f"{n},{layout}", "--seconds", str(a.seconds),
                                  "--rate", str(a.rate), "--latency-ms", str(a.latency_ms), "--every", str(a.every)],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            C.log(json.dumps(rows[-1]))
    data["rows"] = rows
    C.finish("mux_recorder", data, markdown, write_md=not a.no_md)
    print(markdown(data))


if __name__ == "__main__":
    main()
