"""`dbswarm compare`'s outputs from its document (``dbswarm.results.compare``): a terminal
text whose every line fits 80 columns, Markdown (GitHub's step summary, a pull request), and
a self-contained HTML page with each run and phase's two latency spectra overlaid (drawn by
report.html's uPlot and ``static/report.js``)."""
from __future__ import annotations

import json
import textwrap
from typing import Optional

import markdown_it

from dbswarm.results.report.html import CSS, _e, _slug, _static

WIDTH = 80
COLUMNS = (("figure", 18, "<"), ("baseline", 9, ">"), ("candidate", 9, ">"), ("change", 7, ">"),
           ("confidence", 17, "<"), ("verdict", 14, "<"))
PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563", "#ca8a04"]


def value_text(metric: str, v: Optional[float]) -> str:
    """A figure's value, short: 1,806/s, 850 µs, 2.08 ms, 1.25 s, 0.10 %."""
    if v is None:
        return "–"
    if metric == "throughput":
        return f"{v:,.0f}/s" if v >= 100 else f"{v:,.3g}/s"
    if metric == "errors":
        return f"{v:.2%}"
    if v < 1000:
        return f"{v:,.0f} µs"
    if v < 1_000_000:
        return f"{v / 1000:,.3g} ms" if v < 100_000 else f"{v / 1000:,.0f} ms"
    return f"{v / 1e6:,.3g} s"


def change_text(d: dict) -> str:
    if d.get("change") is None:
        return "–"
    if d.get("change_unit") == "points":
        return f"{d['change'] * 100:+.2f}pt"
    return f"{d['change']:+.1%}"


def confidence_text(d: dict) -> str:
    """The change's confidence in a few characters: the p-value (Holm) each way and the
    bootstrap interval; "fixed threshold" without a test."""
    m = d.get("method")
    if m in ("statistical", "prediction"):
        p = d["p_better_adjusted"] if d.get("verdict") == "better" else d["p_worse_adjusted"]
        ci = d.get("ci")
        tail = f" {_pct(ci[0])}…{_pct(ci[1])}%" if ci else " pred."
        return f"p {p:.2g}{tail}"
    if m == "threshold":
        return "fixed threshold"
    return ""


def _pct(v: float) -> str:
    r = round(v * 100)
    return f"{r:+d}" if r else "0"


def _row(cells: list[str]) -> str:
    out = []
    for (_, width, align), text in zip(COLUMNS, cells):
        text = text if len(text) <= width else text[:width - 1] + "…"
        out.append(f"{text:{align}{width}}")
    return " ".join(out).rstrip()


def _pair_title(p: dict) -> str:
    n_b, n_c = len(p["baseline_runs"]), len(p["candidate_runs"])
    return f"run {p['run']} · {p['phase']} phase · {n_b} vs {n_c} run(s): {p['verdict']}"


def _head(doc: dict) -> list[str]:
    def names(side: list[dict]) -> str:
        return ", ".join(s["campaign_id"] or s["location"] for s in side)
    thr = doc["thresholds"]
    extra = ", ".join(f"{k} {v:.0%}" for k, v in thr.items() if k != "default")
    return [f"baseline:  {names(doc['baseline'])}", f"candidate: {names(doc['candidate'])}",
            f"verdict: {doc['verdict']} (exit {doc['exit_status']}); max regression {thr['default']:.0%}"
            + (f" ({extra})" if extra else "") + f", alpha {doc['alpha']:g}"]


def terminal_text(doc: dict) -> str:
    """Every line at most 80 columns: the header, a table per run and phase, then why each
    figure that is not unchanged got its verdict."""
    lines = []
    for line in _head(doc):
        lines += textwrap.wrap(line, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    for p in doc["pairs"]:
        lines += ["", *textwrap.wrap(_pair_title(p), WIDTH)]
        if not p["comparable"]:
            for why in p["not_comparable"]:
                lines += textwrap.wrap("not comparable: " + why, WIDTH, subsequent_indent="  ")
            continue
        lines += textwrap.wrap(p.get("method_note", ""), WIDTH, break_on_hyphens=False)
        lines.append(_row([c[0] for c in COLUMNS]))
        for d in p["figures"]:
            lines.append(_row([d["figure"], value_text(d["metric"], d.get("baseline")),
                               value_text(d["metric"], d.get("candidate")), change_text(d), confidence_text(d),
                               d["verdict"]]))
        for d in p["figures"]:
            if d["verdict"] in ("inconclusive", "not comparable") and d.get("why"):
                lines += textwrap.wrap(f"{d['figure']} {d['verdict']}: {d['why']}", WIDTH,
                                       initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    if doc["regressions"] or doc["not_comparable"]:
        lines.append("")
    for r in doc["regressions"]:
        lines += textwrap.wrap("REGRESSION " + r, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    for r in doc["not_comparable"]:
        lines += textwrap.wrap(r, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|")


def markdown(doc: dict) -> str:
    lines = ["## dbswarm compare: " + doc["verdict"], ""]
    lines += [f"- {_md(x)}" for x in _head(doc)]
    for p in doc["pairs"]:
        lines += ["", f"### {_md(_pair_title(p))}", ""]
        if not p["comparable"]:
            lines += [f"- not comparable: {_md(w)}" for w in p["not_comparable"]]
            continue
        lines += [_md(p.get("method_note", "")), ""]
        lines += ["| Figure | Baseline | Candidate | Change | Confidence | Verdict | Why |",
                  "|---|--:|--:|--:|---|---|---|"]
        for d in p["figures"]:
            lines.append(f"| {_md(d['figure'])} | {value_text(d['metric'], d.get('baseline'))} | "
                         f"{value_text(d['metric'], d.get('candidate'))} | {change_text(d)} | "
                         f"{_md(confidence_text(d))} | **{d['verdict']}** | {_md(d.get('why', ''))} |")
    if doc["regressions"]:
        lines += ["", "**Regressions**", ""] + [f"- {_md(r)}" for r in doc["regressions"]]
    if doc["not_comparable"]:
        lines += ["", "**Not comparable**", ""] + [f"- {_md(r)}" for r in doc["not_comparable"]]
    return "\n".join(lines) + "\n"


def spectrum_chart(p: dict) -> Optional[dict]:
    """One chart per run and phase: each operation's spectrum, the baseline dashed and the
    candidate solid in the operation's colour."""
    spec = p.get("spectra") or {}
    if not spec:
        return None
    series = []
    for i, (op, sides) in enumerate(spec["operations"].items()):
        color = PALETTE[i % len(PALETTE)]
        for label, dash in (("baseline", [6, 4]), ("candidate", None)):
            if label in sides:
                s = {"label": f"{op} {label}", "values": sides[label], "color": color}
                if dash:
                    s["dash"] = dash
                series.append(s)
    return {"id": _slug("compare", p["run"], p["phase"], "spec"),
            "title": f"run {p['run']} · {p['phase']}: latency percentile spectrum, baseline dashed, candidate solid",
            "x": spec["x"], "xlabel": "percentile", "xlog": True, "xpercent": True, "ylabel": "latency, µs (log)",
            "ylog": True, "yunit": " µs", "series": series}


def html_page(doc: dict) -> str:
    charts, sections = [], []
    render = markdown_it.MarkdownIt("commonmark", {"html": False}).enable("table").render
    md = markdown(doc).split("\n### ")
    sections.append(render(md[0]))
    for p, block in zip(doc["pairs"], md[1:]):
        sections.append(render("### " + block))
        chart = spectrum_chart(p)
        if chart:
            charts.append(chart)
            sections.append(f"<div class='chart' id='{chart['id']}'></div>")
    data = json.dumps(charts, separators=(",", ":")).replace("</", "<\\/")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>dbswarm compare · {_e(doc['verdict'])}</title>"
            f"<style>{_static('uPlot.min.css')}</style><style>{CSS}</style></head><body>"
            + "\n".join(sections) + "<pre id='dbswarm-render-status'></pre>"
            + f"<script type='application/json' id='dbswarm-charts'>{data}</script>"
            + "<!-- uPlot 1.6.32, MIT License, Copyright (c) 2022 Leon Sorokin -->"
            + f"<script>{_static('uPlot.iife.min.js')}</script><script>{_static('report.js')}</script>"
            + "</body></html>")


def render(doc: dict, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(doc, indent=1) + "\n"
    if fmt == "markdown":
        return markdown(doc)
    if fmt == "html":
        return html_page(doc)
    return terminal_text(doc)
