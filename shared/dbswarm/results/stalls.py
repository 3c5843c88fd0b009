"""Client threads that stopped making progress (issue 57, item 2): a server frozen mid-run
(SIGSTOP, a lock never released) leaves every call blocked and no error raised. The worker
records each stall (``engine.shard_state.STALL_S``: no call of a thread completed for that long without an
error; a thread abandoned at the give-up is one still under way) in its segment's ``stalls``;
here they are named (which shard and thread, from when, for how long), and their seconds are
kept out of the phase's headline, which is over the seconds in which every thread ran."""
from __future__ import annotations

import math
import time
from typing import Iterable, Optional

MAX_LISTED = 50  # stalls kept per shard in result.json (the count and the seconds cover them all)


def shard_stalls(segments: Iterable[dict]) -> list[dict]:
    """Every stall recorded in a shard's segments (worker ``_stalls``), oldest first."""
    out = [dict(s) for seg in segments for s in (seg.get("stalls") or [])
           if isinstance(s, dict) and isinstance(s.get("from"), (int, float)) and isinstance(s.get("to"), (int, float))]
    return sorted(out, key=lambda s: (s["from"], s.get("thread", 0)))


def stalled_seconds(per_shard: dict[int, list[dict]]) -> set[int]:
    """The whole wall-clock seconds a stall of any thread overlaps (out of the steady window)."""
    return {sec for stalls in per_shard.values() for s in stalls
            for sec in range(math.floor(s["from"]), math.ceil(s["to"]))}


def stalled_span(per_shard: dict[int, list[dict]], start: float, end: float) -> float:
    """Seconds of [start, end] in which at least one thread was stalled (their union)."""
    spans = sorted((max(start, s["from"]), min(end, s["to"])) for stalls in per_shard.values() for s in stalls)
    total, reach = 0.0, start
    for lo, hi in spans:
        lo = max(lo, reach)
        if hi > lo:
            total += hi - lo
            reach = hi
    return total


def unstalled_rate(per_shard: dict[int, list[dict]], tl_start: Optional[int], totals: list, start: float, end: float,
                   total_ops: int, duration: float) -> float:
    """Operations per second over the phase less its stalled seconds (the headline when no
    steady window exists): the whole seconds a stall overlaps taken out, their operations (the
    threads that went on) and their time both, so that neither a stalled thread's idle seconds
    nor the others' work in them moves the figure."""
    out_ops, out_s = 0, 0.0
    for sec in stalled_seconds(per_shard):
        overlap = min(end, sec + 1) - max(start, sec)
        if overlap <= 0:
            continue
        out_s += overlap
        if tl_start is not None and 0 <= sec - tl_start < len(totals):
            out_ops += totals[sec - tl_start]
    return max(total_ops - out_ops, 0) / max(duration - out_s, 1e-9)


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 10)}"


def _threads(nums: list[int]) -> str:
    nums = sorted(set(nums))
    return ("thread " if len(nums) == 1 else "threads ") + ", ".join(map(str, nums))


def problem(per_shard: dict[int, list[dict]], phase_start: float) -> str:
    """The phase's problem line naming its stalls: per shard, the threads, from when (UTC and
    seconds into the phase), for how long, and those abandoned inside their call."""
    parts = []
    for shard, stalls in sorted(per_shard.items()):
        first = min(s["from"] for s in stalls)
        longest = max(s["seconds"] for s in stalls)
        abandoned = sorted({s["thread"] for s in stalls if s.get("abandoned")})
        text = (f"shard {shard} {_threads([s['thread'] for s in stalls])} from {_clock(first)} UTC "
                f"({first - phase_start:.1f} s into the phase), up to {longest:.1f} s")
        if abandoned:
            text += f" ({_threads(abandoned)} still inside a call at the give-up: abandoned)"
        parts.append(text)
    n = sum(len({s["thread"] for s in stalls}) for stalls in per_shard.values())
    stall_s = min((s["stall_s"] for stalls in per_shard.values() for s in stalls if s.get("stall_s")), default=None)
    during = f"{stall_s:g} s or more" if stall_s else "long"
    return (f"{n} client thread(s) stalled: no call completed for {during} without an error (the "
            "server stopped answering): " + "; ".join(parts)
            + "; the throughput leaves the stalled seconds out")


def section(per_shard: dict[int, list[dict]], start: float, end: float) -> dict:
    """result.json's ``stalls`` of a phase: threads stalled, the seconds at least one was (within the
    phase), and per shard its stalls (thread, from, to, seconds, abandoned)."""
    return {"threads": sum(len({s["thread"] for s in stalls}) for stalls in per_shard.values()),
            "seconds": round(stalled_span(per_shard, start, end), 3),
            "per_shard": {str(i): stalls[:MAX_LISTED] for i, stalls in sorted(per_shard.items())}}


def caveat(stalled_s: float, steady_seconds: int, steady: bool, ops_per_s: float) -> str:
    """Why the headline is not the whole phase's: what it is over, and the whole phase's figure
    (its stalled seconds included) said beside it, never mixed in silently."""
    where = (f"the throughput is over the {steady_seconds} s of the steady window in which no client thread was "
             "stalled; " if steady else "")
    return (f"client threads stalled for {stalled_s:.1f} s of the phase: {where}ops_per_s ({ops_per_s:,.2f}), "
            "each operation's and the family's rates divide by the whole phase, the stalled seconds included")
