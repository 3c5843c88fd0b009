"""The one line a result says first about its load generator's health when nothing in it fails
the run: phases judged bound and accepted (an embedded database, the noop engine,
results.allow_client_bound, DBSWARM_ALLOW_CLIENT_BOUND) and phases near the limit are a note,
not an alarm; each phase's reason stays in the Client health section (docs/client-health.md).
A bound phase that is not accepted is the alarm summary.md and report.html open with."""
from __future__ import annotations

from dbswarm.results.phase import phases_of

ACCEPT = "results.allow_client_bound: true (or DBSWARM_ALLOW_CLIENT_BOUND=1)"
MEASURE_DB = "run the load generator on another machine than the database, or use fewer threads per shard"
SHORT_REMEDY = "the load generator on another machine, or fewer threads per shard"


def client_phases(result: dict) -> tuple[list, list, list, int]:
    """(bound and not accepted, bound and accepted, near), each [(run_id, phase, client)], and
    how many phases have a client verdict at all."""
    bound: list[tuple] = []
    accepted: list[tuple] = []
    near: list[tuple] = []
    judged = 0
    for r in result["runs"]:
        for name, p in phases_of(r):
            c = p.client
            if c.get("verdict") in (None, "unmeasured"):
                continue
            judged += 1
            if c["verdict"] == "bound" or (c["verdict"] == "contended" and c.get("strict")):
                (accepted if c.get("allowed") else bound).append((r["run_id"], name, c))
            elif c["verdict"] == "near":
                near.append((r["run_id"], name, c))
    return bound, accepted, near, judged


def contended_phases(result: dict) -> list[tuple]:
    """Phases whose shards waited for CPUs other processes held (client verdict contended) and
    that fail nothing (no results.strict_client_health): [(run_id, phase, client)]."""
    return [(r["run_id"], name, p.client) for r in result["runs"] for name, p in phases_of(r)
            if p.client.get("verdict") == "contended" and not p.client.get("strict")]


def _why_accepted(by: str) -> str:
    if by.startswith("default: an embedded database"):
        return "accepted: an embedded database runs in the load generator"
    if by.startswith("default: the noop engine"):
        return "accepted: the noop engine measures the load generator itself"
    return f"accepted by {by}"


def client_note(result: dict) -> str:
    """The note (plain text, one sentence short enough for a few lines at 80 columns: the first
    table stays on a terminal's first screen), or "" when no phase was bound and accepted, near
    or contended. Each phase's reason is under Client health."""
    _, accepted, near, judged = client_phases(result)
    contended = contended_phases(result)
    if not (accepted or near or contended):
        return ""
    parts = []
    if contended:
        parts.append("the host was contended in {} (kept out of peaks and baselines)")
        counts = [len(contended)]
    else:
        counts = []
    if accepted:
        by = sorted({c.get("allowed_by") or "default" for _, _, c in accepted})
        parts.append(f"the load generator {'was ' if not contended else ''}the bottleneck in {{}} "
                     f"({'; '.join(_why_accepted(b) for b in by)})")
        counts.append(len(accepted))
    if near:
        parts.append(("" if accepted else f"the load generator {'was ' if not contended else ''}")
                     + "near its limit in {}")
        counts.append(len(near))
    # the first count says of how many phases; the others are of the same
    filled = [part.format(f"{n} of {judged} phases" if k == 0 else n) for k, (part, n) in enumerate(zip(parts, counts))]
    said = "Note: " + ", ".join(filled[:-1]) + (" and " if len(filled) > 1 else "") + filled[-1]
    own_choice = any(not (c.get("allowed_by") or "").startswith("default") for _, _, c in accepted)
    if contended or near or own_choice:
        said += "; to measure the database alone, run the load generator on another machine"
    return said + " (docs/client-health.md)."
