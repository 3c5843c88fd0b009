"""summary.md in a terminal: its prose through rich's Markdown, its tables drawn so that every
figure stays whole at the console's width (80 columns included).

rich's own Markdown tables squeeze every column into the width and cut what does not fit
(``QPS 10,4…``, headers ``thre…``). Here a table wider than the console is split into
stacked tables, each repeating the first column (the row's label: instance, run), with as
many of the next columns as fit; a cell wraps only between words (``158 / 3,553`` may wrap
at its spaces, ``3,553`` never breaks), and a column is never narrower than its longest word.
"""
from __future__ import annotations

import re
from typing import Any

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

COMFORT = 24      # a wrapping column (the Runs table's mix) gets about this many characters
OVERHEAD = 3      # per column: a space either side and the rule between columns
EDGES = 1         # the table's outer edge


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*\|?\s*", line.strip()))


def blocks(markdown: str) -> list[tuple[str, Any]]:
    """("text", str) and ("table", (header, rows)) blocks of a Markdown text, in order."""
    lines = markdown.splitlines()
    out: list[tuple[str, Any]] = []
    text: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            if text:
                out.append(("text", "\n".join(text)))
                text = []
            header = _cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            out.append(("table", (header, rows)))
            continue
        text.append(lines[i])
        i += 1
    if text:
        out.append(("text", "\n".join(text)))
    return out


def _plain(cell: str) -> str:
    """A cell as it is shown: Markdown's emphasis and code marks dropped."""
    return re.sub(r"\*\*|`", "", cell)


def _widths(header: list[str], rows: list[list[str]]) -> list[tuple[int, int]]:
    """(narrowest, widest) per column: its longest word, its longest cell."""
    out = []
    for j, h in enumerate(header):
        column = [_plain(r[j]) if j < len(r) else "" for r in rows]
        words = [w for c in column + [h] for w in c.split()] or [""]
        out.append((max(len(w) for w in words), max([len(c) for c in column] + [len(w) for w in h.split()])))
    return out


def _comfortable(narrowest: int, widest: int) -> int:
    return min(widest, max(narrowest, COMFORT))


def split_columns(header: list[str], rows: list[list[str]], width: int) -> list[list[int]]:
    """The column indices of each stacked part: the first column in every part, then as many
    of the others, in order, as fit in ``width`` at a comfortable width each (every column at
    least its longest word)."""
    widths = _widths(header, rows)
    if len(header) <= 1:
        return [list(range(len(header)))]
    first = _comfortable(*widths[0])
    parts: list[list[int]] = []
    current, used = [0], EDGES + first + OVERHEAD
    for j in range(1, len(header)):
        need = _comfortable(*widths[j]) + OVERHEAD
        if len(current) > 1 and used + need > width:
            parts.append(current)
            current, used = [0], EDGES + first + OVERHEAD
        current.append(j)
        used += need
    parts.append(current)
    return parts


def table_parts(header: list[str], rows: list[list[str]], width: int) -> list[Table]:
    """The rich tables a Markdown table is drawn as at ``width`` columns."""
    widths = _widths(header, rows)
    tables = []
    for part in split_columns(header, rows, width):
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=False)
        for j in part:
            narrowest, widest = widths[j]
            numeric = bool(rows) and all(re.fullmatch(r"[-–+]?[\d,.]+%?|–|-", _plain(r[j]) if j < len(r) else "")
                                         for r in rows)
            t.add_column(header[j], justify="right" if numeric else "left", min_width=narrowest,
                         max_width=max(narrowest, widest), overflow="fold", no_wrap=False)
        for r in rows:
            t.add_row(*[(_plain(r[j]) if j < len(r) else "") for j in part])
        tables.append(t)
    return tables


def print_markdown(markdown: str, console: Console) -> None:
    """summary.md on ``console``: prose as Markdown, tables as whole-figure tables."""
    for kind, content in blocks(markdown):
        if kind == "text":
            if content.strip():
                console.print(Markdown(content))
        else:
            header, rows = content
            parts = table_parts(header, rows, console.width)
            for k, t in enumerate(parts):
                if len(parts) > 1 and k:
                    console.print()
                console.print(t)
            console.print()
