"""What a client's own state costs as the connections of one process grow: N YCSB clients on
the noop binding (no socket, no server), driven round-robin in one thread as the shard's
multiplexer drives its connections (engine.mux: each client's next operation, the call, the
record into one shared recorder through the client's operation loop), timed by the thread's
CPU clock.

Between two operations of one client the thread touches every other client's state, so at
512 clients each operation finds its client's objects (its random stream's block, its key
chooser, its functions, its loop's lanes) out of the CPU's caches: what grows here from 16 to
512 is the interpreter's share of issue 36's growth, apart from the sockets, the kernel and the
server. Also reported: the CPU of building one client (a shard builds one per thread before
its start barrier).

    python bench/noop_round_robin.py --clients 16,128,512 --presets a,b,c --rounds 5
    python bench/noop_round_robin.py --tree /path/to/a/worktree --no-md   # another revision's dbswarm

Rounds alternate the client counts (16, 128, 512, 16, …) in one process; the figure is the
median of the rounds, min–max beside it. Pin it (``taskset -c 1``) on a quiet host.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common as C  # noqa: E402


def _import_tree(tree: str) -> None:
    sys.path.insert(0, str(Path(tree).resolve() / "shared"))


def build(preset: str, n: int, recordcount: int) -> tuple[list, float]:
    """n clients of one run (threads 0..n-1 of n), their operation loops recording into one
    recorder; and the CPU seconds the building took, per client."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.engine.calls import Measured
    from dbswarm.engine.loop import OperationLoop
    from dbswarm.families import base as families
    from dbswarm.families.base import ThreadContext
    from dbswarm.families.stream import RandomStream
    from dbswarm.measure.recorder import Recorder

    fam = families.get("ycsb")
    w = fam.workload({"preset": preset, "recordcount": recordcount, "operationcount": 0,
                      "maxexecutiontime": 60, "threads": n})
    rec = Recorder(1)
    out = []
    c0 = time.thread_time()
    for i in range(n):
        b = bindings.get("noop")(Connection(engine="noop", url="noop://", password=None, options={},
                                            display="noop"))
        b.connect()
        m = Measured(b, rec)
        client = fam.run_client(w, ThreadContext(m=m, rng=RandomStream(1000 + i), thread=i, threads=n))
        out.append((client.next_operation, OperationLoop(client, m).record))
    return out, (time.thread_time() - c0) / n


def drive(clients: list, ops: int) -> float:
    """``ops`` operations round-robin over the clients: CPU µs per operation."""
    perf = time.perf_counter_ns
    n, i = len(clients), 0
    c0 = time.thread_time()
    for _ in range(ops):
        next_operation, record = clients[i]
        op, fn, args = next_operation()
        t0 = perf()
        result = fn(*args)
        record(op, t0, perf(), result)
        i += 1
        if i == n:
            i = 0
    return (time.thread_time() - c0) / ops * 1e6


def measure(preset: str, counts: list[int], a) -> dict:
    sets, setup_ms = {}, {}
    for n in counts:
        sets[n], per_client = build(preset, n, a.recordcount)
        setup_ms[n] = round(per_client * 1e3, 3)
    for clients in sets.values():
        drive(clients, a.ops // 5)
    rounds: dict[int, list[float]] = {n: [] for n in counts}
    for r in range(a.rounds):
        for n in (counts if r % 2 == 0 else list(reversed(counts))):
            rounds[n].append(round(drive(sets[n], a.ops), 3))
    med = {n: round(statistics.median(v), 3) for n, v in rounds.items()}
    base = med[counts[0]]
    C.log(f"ycsb {preset}: " + ", ".join(f"{n} clients {med[n]} µs" for n in counts)
          + "; set-up per client " + ", ".join(f"{v} ms" for v in setup_ms.values()))
    return {"preset": preset, "us_per_op": med, "vs_first": {n: round(med[n] / base, 3) for n in counts},
            "rounds": rounds, "setup_ms_per_client": setup_ms}


def markdown(data: dict) -> str:
    counts = data["args"]["clients"]
    L = ["## Noop round-robin over a process's clients", "", C.header(data), "",
         "N YCSB clients on the noop binding driven round-robin in one thread, as the multiplexer drives "
         "its connections, one recorder (client CPU µs per operation, thread CPU clock; median of the rounds, "
         "min–max; in brackets ÷ the first count). Set-up: the CPU of building one client.", "",
         "| preset | " + " | ".join(f"{n} clients" for n in counts) + " | set-up per client, ms (" + " / ".join(str(n) for n in counts) + " clients) |",
         "| --- | " + " | ".join("---:" for _ in counts) + " | ---: |"]
    for r in data["presets"]:
        cells = []
        for n in counts:
            v = r["rounds"][n]
            cells.append(f"{r['us_per_op'][n]:g} ({min(v):g}–{max(v):g}) [{r['vs_first'][n]:g}]")
        setup = " / ".join(f"{v:g}" for v in r["setup_ms_per_client"].values())  # the first: the process's pool too
        L.append(f"| {r['preset']} | " + " | ".join(cells) + f" | {setup} |")
    return "\n".join(L)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=lambda s: C.csv_list(s, int), default=[16, 128, 512])
    p.add_argument("--presets", type=C.csv_list, default=["a", "b", "c"])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--ops", type=int, default=100_000, help="operations per round and client count")
    p.add_argument("--recordcount", type=int, default=20_000)
    p.add_argument("--tree", help="import dbswarm from this checkout's shared/ (another revision)")
    p.add_argument("--no-md", action="store_true")
    a = p.parse_args(argv)
    _import_tree(a.tree or str(C.ROOT))
    import dbswarm
    data = C.base_record("noop_round_robin", a)
    data["dbswarm"] = str(Path(dbswarm.__file__).parent)
    data["presets"] = [measure(preset, a.clients, a) for preset in a.presets]
    C.finish("noop_round_robin", data, markdown, write_md=not a.no_md)


if __name__ == "__main__":
    main()
