"""How big a campaign may be, checked while it is read, so that reading and validating any input
costs time linear in its size (issue 57 item 1: a 434-byte YAML "billion laughs" spun for
minutes; a 20 MB label hung the aggregate step):

- the document: at most MAX_DOCUMENT_BYTES of text (the API's body: limits.MAX_BODY_BYTES);
- its values: at most MAX_VALUES mappings, lists, keys and scalars, and MAX_DOCUMENT_BYTES of
  scalar text, with YAML aliases counted as the copies every reader makes of them (an alias
  to a collection holding it, a cycle, is refused), nested at most MAX_DEPTH levels: the YAML
  reader stops at the line that crosses a bound, before reading the rest;
- every string: a one-line field (names, labels, tables, presets, engines) at most
  MAX_LINE_CHARS characters, any other value at most MAX_TEXT_CHARS, a key at most
  MAX_KEY_CHARS; the error names the field and the bound, never the value;
- control characters: none in keys, values, names or labels (they rewrite a terminal's or a
  report's text around them).
"""
from __future__ import annotations

import re
from typing import Any, Optional

import yaml

from dbswarm.errors import CampaignError

MAX_DOCUMENT_BYTES = 1 << 20   # a campaign file: real ones are a few KB
MAX_VALUES = 20_000            # mappings, lists, keys and scalars (a 1,000-run matrix needs a few thousand)
# how deep a campaign's data may nest (a campaign needs a handful of levels; thousands made the
# YAML reader, the validation and the redaction recurse until Python gave up)
MAX_DEPTH = 64
MAX_KEY_CHARS = 256
MAX_LINE_CHARS = 256           # names, labels, tables, presets, engines: one line each
MAX_TEXT_CHARS = 65_536        # any other string (a URL, an option, a statement)
MAX_PROBLEMS = 20

# control characters (C0 but tab and newline, DEL, C1) and the bidirectional overrides: they
# rewrite a terminal's or a report's text around them
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
ONE_LINE_KEYS = ("name", "label", "table", "preset", "engine", "run_id")


def shown(text: str) -> str:
    """A key or a path as it may be printed: escaped, at most 80 characters."""
    return text[:200].encode("unicode_escape").decode("ascii")[:80]


def document_size_problem(size: int, what: str) -> Optional[str]:
    if size <= MAX_DOCUMENT_BYTES:
        return None
    return (f"(file): {what} is {size:,} bytes; a campaign file is at most {MAX_DOCUMENT_BYTES:,} "
            "(a campaign needs a few KB: split it into several campaigns)")


def read_text(path: Any) -> str:
    """A campaign file's text, refused unread when it is larger than MAX_DOCUMENT_BYTES."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_DOCUMENT_BYTES + 1)
        problem = document_size_problem(len(data), str(path))
        if problem:
            fh.seek(0, 2)
            raise CampaignError([document_size_problem(fh.tell(), str(path)) or problem])
    return data.decode("utf-8")


class BoundedComposer:
    """A mixin of a yaml Loader: composing a document counts its values as they are read (an
    alias counted as a copy of what it names) and its depth, and stops with the line of the
    node that crosses MAX_VALUES, MAX_DOCUMENT_BYTES of text or MAX_DEPTH. PyYAML's composer
    (pure Python) reads events lazily: nothing past that line is parsed."""

    _values = 0
    _chars = 0
    _depth = 0

    def compose_document(self) -> Any:
        self._values, self._chars, self._depth = 0, 0, 0
        self._open: set[int] = set()       # ids of the collections being composed (a node's children add it)
        self._sizes: dict[int, tuple[int, int]] = {}   # id(node) -> (values, chars) of composed nodes
        return super().compose_document()  # type: ignore[misc]

    def compose_node(self, parent: Any, index: int) -> Any:
        event = self.peek_event()  # type: ignore[attr-defined]
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)  # type: ignore[misc]
            if id(node) in self._open or node is parent:
                raise CampaignError([f"(file): line {line}: the alias *{event.anchor} names a collection that "
                                     "holds it (a cycle): a campaign is a tree"])
            values, chars = self._size(node)
            self._count(values, chars, line, event.anchor)
            return node
        if self._depth >= MAX_DEPTH:
            raise CampaignError([f"(file): line {line}: nested more than {MAX_DEPTH} levels deep (a campaign "
                                 "needs a handful)"])
        self._count(1, len(event.value) if isinstance(event, yaml.ScalarEvent) else 0, line, "")
        self._depth += 1
        if parent is not None:
            self._open.add(id(parent))
        try:
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1
            if parent is not None:
                self._open.discard(id(parent))

    def _count(self, values: int, chars: int, line: int, alias: Optional[str]) -> None:
        self._values += values
        self._chars += chars
        if self._values > MAX_VALUES:
            what = (f"the alias *{alias} (a copy of {_amount(values, MAX_VALUES)} values) makes the campaign more than {MAX_VALUES:,} "
                    "values (mappings, lists, keys and scalars; an alias counts as a copy)" if alias else
                    f"the campaign holds more than {MAX_VALUES:,} values (mappings, lists, keys and scalars)")
            raise CampaignError([f"(file): line {line}: {what}; a campaign needs far fewer: split it into several "
                                 "campaigns"])
        if self._chars > MAX_DOCUMENT_BYTES:
            what = (f"the alias *{alias} (a copy of {_amount(chars, MAX_DOCUMENT_BYTES)} characters) makes the campaign's text more than "
                    f"{MAX_DOCUMENT_BYTES:,} characters once copied" if alias else
                    f"the campaign's text is more than {MAX_DOCUMENT_BYTES:,} characters")
            raise CampaignError([f"(file): line {line}: {what}; a campaign file is at most "
                                 f"{MAX_DOCUMENT_BYTES:,}"])

    def _size(self, node: Any) -> tuple[int, int]:
        """Values and scalar characters of a composed node, its aliases copied; linear in the
        distinct nodes (each one's size is kept)."""
        sizes = self._sizes
        stack = [(node, False)]
        while stack:
            n, done = stack.pop()
            if id(n) in sizes:
                continue
            if isinstance(n, yaml.ScalarNode):
                sizes[id(n)] = (1, len(n.value))
                continue
            children = [c for pair in n.value for c in pair] if isinstance(n, yaml.MappingNode) else list(n.value)
            if done:
                values, chars = 1, 0
                for c in children:
                    v, ch = sizes[id(c)]
                    values, chars = values + v, chars + ch
                sizes[id(n)] = (min(values, MAX_VALUES + 1), min(chars, MAX_DOCUMENT_BYTES + 1))
                continue
            stack.append((n, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
        return sizes[id(node)]


def _amount(n: int, bound: int) -> str:
    return f"more than {bound:,}" if n > bound else f"{n:,}"


def _string_problem(value: str, where: str, key: str) -> Optional[str]:
    one_line = key in ONE_LINE_KEYS
    limit = MAX_LINE_CHARS if one_line else MAX_TEXT_CHARS
    if len(value) > limit:
        return (f"{shown(where)}: {len(value):,} characters; at most {limit:,}"
                f"{' (a one-line name)' if one_line else ''}")
    bad = _CONTROL.search(value)
    if bad is None and one_line:
        bad = re.search("[\t\n\r]", value)
    if bad is not None:
        return (f"{shown(where)}: contains a control character (U+{ord(bad.group()):04X}); names, labels and "
                "values must be printable text")
    return None


def shape_problems(data: Any) -> list[str]:
    """A campaign's data nested deeper than MAX_DEPTH, holding more than MAX_VALUES values (shared
    references counted as copies: the walk stops there), a string or a key longer than its bound,
    or a key or a string holding a control character (names and labels: a tab or a line break
    too). The values are never echoed."""
    problems: list[str] = []
    # (value, its path as (parent, part), the nearest key above it, depth)
    stack: list[tuple[Any, Any, str, int]] = [(data, None, "", 1)]
    seen = 0
    while stack:
        value, link, field, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            return problems[:MAX_PROBLEMS] + [f"(top level): more than {MAX_VALUES:,} values (mappings, lists, keys "
                                              "and scalars); a campaign needs far fewer: split it into several "
                                              "campaigns"]
        if depth > MAX_DEPTH:
            return [f"{shown(_path(link)) or '(top level)'}: nested more than {MAX_DEPTH} levels deep (a campaign "
                    "needs a handful)"]
        if isinstance(value, dict):
            for k, v in value.items():
                key = str(k)
                if len(key) > MAX_KEY_CHARS:
                    problems.append(f"{shown(_path((link, key[:40] + '…')))}: a key of {len(key):,} characters; "
                                    f"at most {MAX_KEY_CHARS:,}")
                    continue
                if _CONTROL.search(key) or "\n" in key or "\t" in key:
                    problems.append(f"{shown(_path((link, key)))}: a key with a control character")
                stack.append((v, (link, key), key, depth + 1))
        elif isinstance(value, list):
            stack.extend((v, (link, i), field, depth + 1) for i, v in enumerate(value))
        elif isinstance(value, str):
            problem = _string_problem(value, _path(link), field)
            if problem:
                problems.append(problem)
        if len(problems) >= MAX_PROBLEMS:
            break
    return sorted(problems)


def _path(link: Any) -> str:
    """"a.b[2].c" of a path kept as nested (parent, part) pairs: built only for a problem."""
    parts = []
    while link is not None:
        link, part = link
        parts.append(part)
    out = ""
    for part in reversed(parts):
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + part)
    return out
