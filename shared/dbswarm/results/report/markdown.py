"""Markdown-safe text: what summary.md writes of any string a result holds (issue 57 item 5: a
label kept raw `<script>`, `<img onerror>` and `[x](javascript:)`, which Markdown renderers on code
hosts render, and a `|` in a label broke its tables).

``escaped(result)`` is a copy of a result whose every string (and key) is safe to write anywhere in
Markdown text or a table cell: ``&``, ``<`` and ``>`` as entities (no HTML, no autolink),
backslash, backtick, ``|``, ``[`` and ``]`` escaped with a backslash (no code span, no cell
break, no link), a line break as a space (no new row, list item or heading). Plain words,
identifiers and numbers (statuses, engine names, ids) are unchanged, so the summary's logic reads
the copy as it read the result."""
from __future__ import annotations

import re
from typing import Any

_SPECIAL = re.compile(r"[\\`|\[\]<>&\r\n]")
_REPLACE = {"\\": "\\\\", "`": "\\`", "|": "\\|", "[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;",
            "&": "&amp;", "\r": " ", "\n": " "}


def text(value: str) -> str:
    """``value`` as literal Markdown text (inline or in a table cell)."""
    return _SPECIAL.sub(lambda m: _REPLACE[m.group()], value) if _SPECIAL.search(value) else value


def escaped(obj: Any) -> Any:
    """A copy of a JSON-like document with every string and key passed through ``text``."""
    if isinstance(obj, dict):
        return {(text(k) if isinstance(k, str) else k): escaped(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [escaped(v) for v in obj]
    if isinstance(obj, str):
        return text(obj)
    return obj
