"""What the families' report tables are made of (``Family.report_tables``; summary.md and
report.html use them too): the number format, the phase a run measured, and the vendors'
published figures beside a measurement (``dbswarm.families.published``)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from dbswarm.families.published import fields_text, matches, reference_engine, rows_of


def fmt(v: Optional[float], digits: int = 0) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and digits:
        return f"{v:,.{digits}f}"
    return f"{round(v):,}"


def measured_phase(run: dict) -> tuple[Optional[str], Optional[dict]]:
    """The phase that measures the workload: run, or load when only the load ran (S1)."""
    ph = run["phases"]
    for name in ("run", "load"):
        if ph.get(name, {}).get("status") in ("complete", "partial"):
            return name, ph[name]
    return None, None


def _not_compared(family: str, runs: Iterable[dict]) -> list[str]:
    """Runs labelled like a published instance class but compared with nothing: why (a noop run
    is never set beside a database's figures)."""
    classes = {r["instance_class"] for r in rows_of(family)}
    out = []
    for r in runs:
        if r["target"].get("label") in classes:
            engine, why = reference_engine(r, family)
            if engine is None:
                out.append(f"Not compared: run {r['run_id']} ({r['target']['label']}): {why}.")
    return list(dict.fromkeys(out))


def published_table(rows: dict[tuple, dict[str, dict]], cols: list[str]) -> str:
    """Vendor figures for the same engine and instance class beside the measurement (SPEC 2.4):
    ``rows`` maps (instance label, threads, ...) to {workload name: run}, ``cols`` the workload
    names; per published configuration, the fields it was matched on (``published.matches``)."""
    lines: list[str] = []
    for key, by_wl in rows.items():
        some = next(iter(by_wl.values()))
        published = matches("ycsb", some, cols)
        if not published:
            continue
        if not lines:
            lines = ["### Published figures for the same instance class (OPS)", "",
                     "| source | " + " | ".join(cols) + " | compared on |", "|---|" + "---|" * (len(cols) + 1)]
        measured = []
        for c in cols:
            _, p = measured_phase(by_wl[c]) if c in by_wl else (None, None)
            measured.append(fmt(p["throughput"]) if p else "")
        lines.append(f"| **measured: {key[0]}, {key[1]}** | " + " | ".join(measured) + " | |")
        for g in sorted(published, key=lambda g: (g["engine"], g["version"], g["tier"], g["topology"],
                                                  g["data_volume"])):
            cells = [fmt(g["figures"][c]) if c in g["figures"] else "" for c in cols]
            lines.append(f"| {g['engine']} {g['version']}, {g['tier']}, {g['topology']}, {g['data_volume']} volume | "
                         + " | ".join(cells) + f" | {fields_text(g['fields'])} |")
    runs = [r for by_wl in rows.values() for r in by_wl.values()]
    notes = _not_compared("ycsb", runs)
    if notes:
        lines += ["", *notes]
    return ("\n".join(lines) + "\n") if lines else ""


def published_family_table(family: str, runs: list[dict], title: str, columns: list[tuple[str, str, Callable[[dict], Any]]]) -> str:
    """A sysbench or TPC-C run beside the published rows of its engine and instance class:
    ``columns`` are (heading, published metric or "", the run's figure: a function of the run's
    family summary); each published row says which fields it was matched on."""
    lines: list[str] = []
    for r in runs:
        published = matches(family, r)
        if not published:
            continue
        if not lines:
            lines = [f"### Published figures for the same instance class ({title})", "",
                     "| source | " + " | ".join(h for h, _, _ in columns) + " | compared on |",
                     "|---|" + "---|" * (len(columns) + 1)]
        s = (r["phases"].get("run") or {}).get(family) or {}
        measured = [fmt(get(s)) if s and get(s) is not None else "–" for _, _, get in columns]
        lines.append(f"| **measured: {r['target']['label']}, {r['threads']} threads ({r['run_id']})** | "
                     + " | ".join(measured) + " | |")
        for g in published:
            cells = [fmt(g["figures"][m]) if m and m in g["figures"] else "–" for _, m, _ in columns]
            topology = f", {g['topology']}" if g["topology"] else ""
            lines.append(f"| {g['engine']} {g['version']}, {g['tier']}{topology} ({g['source']}) | "
                         + " | ".join(cells) + f" | {fields_text(g['fields'])} |")
    notes = _not_compared(family, runs)
    if notes:
        lines += ["", *notes]
    return ("\n".join(lines) + "\n") if lines else ""


def max_connections(phase: dict) -> str:
    """The server's max_connections as it reported it at the phase (``Binding.server_settings``)."""
    server = (phase.get("binding_settings") or {}).get("server") or {}
    value = server.get("max_connections") if isinstance(server, dict) else None
    return f"{int(value):,}" if value not in (None, "") and str(value).isdigit() else "–"


def server_iops(phase: dict) -> tuple[Optional[float], Optional[str]]:
    """(I/O requests a second from the server's own counters over the window, or None and why)."""
    srv = phase.get("server") or {}
    counters, seconds = srv.get("counters") or {}, srv.get("window_s")
    io = ("innodb_data_reads", "innodb_data_writes", "innodb_log_writes")
    if all(k in counters for k in io) and seconds:
        return sum(counters[k] for k in io) / seconds, None
    if not srv:
        return None, "the server's counters were not read over this phase"
    if "xact_commit" in counters:  # pg_stat_database's
        return None, ("PostgreSQL before 16 keeps no count of I/O operations (pg_stat_io is 16's); "
                      "read the device's from the host")
    return None, "this engine's counters hold no I/O operations"
