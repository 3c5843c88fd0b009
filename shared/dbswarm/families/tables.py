"""What the families' report tables are made of (``Family.report_tables``; summary.md and
report.html use them too): the number format, the phase a run measured, and the vendors'
published figures beside a measurement (``dbswarm.families.published``)."""
from __future__ import annotations

from dbswarm.families.published import published_for


def fmt(v, digits=0):
    if v is None:
        return "–"
    if isinstance(v, float) and digits:
        return f"{v:,.{digits}f}"
    return f"{round(v):,}"


def measured_phase(run):
    """The phase that measures the workload: run, or load when only the load ran (S1)."""
    ph = run["phases"]
    for name in ("run", "load"):
        if ph.get(name, {}).get("status") in ("complete", "partial"):
            return name, ph[name]
    return None, None


def published_table(rows, cols) -> str:
    """Vendor figures for the same instance class beside the measurement (SPEC 2.4): ``rows``
    maps (instance label, threads, ...) to {workload name: run}, ``cols`` the workload names."""
    lines = []
    for key, by_wl in rows.items():
        some = next(iter(by_wl.values()))
        filters = (some["target"].get("options") or {}).get("reference") or {}
        published = published_for(key[0], cols, filters)
        if not published:
            continue
        if not lines:
            lines = ["### Published figures for the same instance class (OPS)", "",
                     "| source | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
        measured = []
        for c in cols:
            _, p = measured_phase(by_wl[c]) if c in by_wl else (None, None)
            measured.append(fmt(p["throughput"]) if p else "")
        lines.append(f"| **measured: {key[0]}, {key[1]}** | " + " | ".join(measured) + " |")
        for (engine, version, tier, topology, volume), figures in sorted(published.items()):
            cells = [fmt(figures[c]) if c in figures else "" for c in cols]
            lines.append(f"| {engine} {version}, {tier}, {topology}, {volume} volume | " + " | ".join(cells) + " |")
    return ("\n".join(lines) + "\n") if lines else ""
