"""Credentials: the one redaction every written document goes through, and the checks that
refuse a clear-text password anywhere a campaign can hold one.

- ``redact_text(text)`` / ``redact_doc(obj)``: what the store applies to every JSON and text
  document it writes (campaign.json, plan.json, shard files, result.json, result.csv,
  summary.md, report.html, execution.json), and what log lines pass through: credentials
  where a credential stands — URL userinfo passwords, ``password=`` / ``pwd=`` … query
  parameters and libpq keyword strings, values of keys that name a secret.
- ``redact_message(text)``: error texts (and a document's messages: errors, warnings, causes)
  also lose every secret value the process resolved (``remember``), as a whole word: a
  document's own words (a status "done", an engine "postgresql") are never rewritten, even
  when a password is that word (docs/failure-and-safety.md, "Credentials").
- ``clear_passwords(target)``: every place of a target (URL, options, nested options, URLs
  inside options) where a literal password is written: validation refuses them all.
- ``reference_problems(ref, api=...)``: which secret references a campaign may use:
  ``{secret: NAME}`` everywhere (under the deployment's prefix through the API);
  ``{env: VAR}`` and ``{file: PATH}`` only locally, and never a process credential
  (AWS_* and the like, /proc, ~/.aws …).
"""
from __future__ import annotations

import functools
import os
import re
import threading
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
SECRET_HINT = ("a literal password is not allowed: remove it and use target.password: {secret: NAME} "
               "(AWS Secrets Manager), or locally {env: VAR} | {file: PATH}")

# key names that hold a secret (option keys, query parameters, JSON/YAML keys)
_SECRET_WORDS = r"(?:password|passwd|passphrase|pwd|secret|token|api_?key|access_?key|private_?key|credentials?)"
# a key of [A-Za-z0-9_.-] holding a secret word: checked whole first (possessive), then searched
# lazily — every step linear in the key (a nested `*…*` backtracked quadratically)
SECRET_KEY = re.compile(rf"(?i)^(?=[A-Za-z0-9_.-]*+$)[A-Za-z0-9_.-]*?{_SECRET_WORDS}")
_SECRET_WORD = re.compile(rf"(?i){_SECRET_WORDS}")
# keys whose value is a reference or a description, never a secret
_NOT_SECRET_KEYS = {"secret", "env", "file", "password_ref", "secret_prefix"}

# Every pattern below is linear in the text it reads (issue 57 item 1: a 40 KB run of letters
# took 8 s): each starts only where a match can begin ("://", a word's first character, a quote)
# and its runs are possessive, so a failed attempt never rescans what a later one reads; the
# values after a key are found by the scanners below, left to right without overlap.
_URL_USERINFO = re.compile(r"://([^/\s:@'\"]*+):([^@\s/'\"]*+)@")
_KEY_EQ = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z0-9_]++)\s*+=\s*+")
_PAIR_KEY = re.compile(r"([\"'])([A-Za-z0-9_.-]++)\1(\s*+:\s*+)")
_BARE_VALUE = re.compile(r"[^&\s;,'\"<>)]++")
_NUMBER = re.compile(r"-?[0-9][0-9.eE+-]*+")
_QUOTED_BODY = {q: re.compile(rf"(?:[^{q}\\]|\\.)*+") for q in ("'", '"')}

_BLOB = re.compile(r"^[A-Za-z0-9+/=]+$")
# a known secret shorter than this is masked only where a secret stands (URL user info, a key
# naming a secret): "a" or "ab" as a bare word is every other word of a message
MIN_TOKEN = 3
_known: set[str] = set()
_lock = threading.Lock()


def remember(*values: object) -> None:
    """Secret values this process resolved: replaced by *** in the error texts it redacts
    (``redact_message``), as whole words."""
    with _lock:
        for v in values:
            if v is not None and len(str(v)) >= MIN_TOKEN:
                _known.add(str(v))


class _Quotes:
    """Where a quoted value ("…" or '…', backslash escapes) ends, in linear time over all the
    values of one text: an unterminated quote is scanned once, and any later quote inside the
    stretch it scanned is known to fail too (it lies on the same walk)."""

    def __init__(self, text: str):
        self.text = text
        self.stuck: dict[str, tuple[int, int]] = {}

    def end(self, start: int) -> int:
        """The index after the closing quote of the value opening at ``start``, or -1."""
        q = self.text[start]
        first, last = self.stuck.get(q, (-1, -1))
        if first <= start <= last:
            return -1
        m = _QUOTED_BODY[q].match(self.text, start + 1)
        stop = m.end() if m else start + 1
        if self.text[stop:stop + 1] == q:
            return stop + 1
        self.stuck[q] = (start, stop)
        return -1


def _value_end(text: str, start: int, quotes: _Quotes, bare: re.Pattern) -> int:
    if start >= len(text):
        return -1
    if text[start] in "'\"":
        return quotes.end(start)
    m = bare.match(text, start)
    return m.end() if m else -1


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _in_base64(text: str, key_start: int, key_end: int) -> bool:
    """Inside base64 (an encoded histogram: "...+x/EzPWdkY=" has "pwd" and "=") nothing is a key:
    masking there cut the JSON string the blob was in."""
    i, floor = key_start, max(0, key_end - 41)
    while i > floor and text[i - 1] in _B64:
        i -= 1
    return key_end - i > 40


def _mask_keyvalues(text: str, quotes: _Quotes) -> str:
    """``password=VALUE`` (query parameters, libpq keyword strings, key=value messages) → ``password=***``."""
    out, pos, i = [], 0, 0
    while True:
        m = _KEY_EQ.search(text, i)
        if m is None:
            break
        key, vstart = m.group(1), m.end()
        i = vstart
        if key.lower() in _NOT_SECRET_KEYS or not _SECRET_WORD.search(key):
            continue
        vend = _value_end(text, vstart, quotes, _BARE_VALUE)
        if vend < 0:
            continue
        value = text[vstart:vend]
        i = vend
        if value == MASK or value.strip("=") == "" or _in_base64(text, m.start(1), m.end(1)):
            continue  # masked already; base64 padding or a blob, not an assignment
        out += [text[pos:m.start(1)], f"{key}={MASK}"]
        pos = vend
    return "".join(out) + text[pos:] if out else text


def _mask_pairs(text: str, quotes: _Quotes) -> str:
    """``"password": "VALUE"`` (JSON, Python reprs) → ``"password": "***"``."""
    out, pos, i = [], 0, 0
    while True:
        m = _PAIR_KEY.search(text, i)
        if m is None:
            break
        key, vstart = m.group(2), m.end()
        i = vstart
        if key.lower() in _NOT_SECRET_KEYS or not _SECRET_WORD.search(key):
            continue
        vend = _value_end(text, vstart, quotes, _NUMBER)
        if vend < 0:
            continue
        i = vend
        out += [text[pos:m.start()], f"{m.group(1)}{key}{m.group(1)}{m.group(3)}\"{MASK}\""]
        pos = vend
    return "".join(out) + text[pos:] if out else text


def _mask_userinfo(m: re.Match) -> str:
    return m.group(0) if m.group(2) == MASK else f"://{m.group(1)}:{MASK}@"


@functools.lru_cache(maxsize=64)
def _tokens(values: tuple[str, ...]) -> re.Pattern:
    """Each value as a whole word: not inside a longer word where its edge is a word character
    ("done" in "abandoned" stays), nor inside an id joined by hyphens ("faults-done-2026…")."""
    parts = []
    for v in values:
        lead = r"(?<![\w-])" if re.match(r"\w", v[0]) else ""
        tail = r"(?![\w-])" if re.match(r"\w", v[-1]) else ""
        parts.append(f"{lead}{re.escape(v)}{tail}")
    return re.compile("|".join(parts))


def redact_text(text: str) -> str:
    """``text`` with every credential that stands where a credential is written replaced by ***:
    the password of a URL's user info (``scheme://user:***@``), the value after a key naming a
    secret (``password=***``, ``"token": "***"``). Linear in the text; idempotent. The text
    itself is never otherwise rewritten: what a document, a progress line or a URL says stays
    (a password that is a common word — "done", "postgres" — is no reason to rewrite the word
    elsewhere)."""
    if not text or (len(text) >= 200 and _BLOB.match(text)):  # an encoded histogram: no credential
        return text
    text = _URL_USERINFO.sub(_mask_userinfo, text)
    quotes = _Quotes(text)
    text = _mask_keyvalues(text, quotes)
    return _mask_pairs(text, _Quotes(text))


def redact_message(text: str, extra: Iterable[str] = (), keep: Iterable[str] = ()) -> str:
    """An error text (a driver's, an exception's, a function's answer): ``redact_text``, and every
    secret value this process resolved (``remember``) or ``extra`` names replaced where it occurs
    as a whole word (a driver quoting the password it was given). A value shorter than MIN_TOKEN
    characters is masked only where ``redact_text`` masks it. ``keep``: identifiers (a campaign
    id, a run id) left whole wherever they occur, even when a secret value is a word of one."""
    if not text:
        return text
    with _lock:
        values = tuple(sorted(_known | {s for s in extra if s and len(s) >= MIN_TOKEN}, key=len, reverse=True))
    if values:
        kept = [k for k in keep if k and k in text]
        for i, ident in enumerate(kept):
            text = text.replace(ident, f"\x00{i}\x00")
        text = _tokens(values).sub(MASK, text)
        for i, ident in enumerate(kept):
            text = text.replace(f"\x00{i}\x00", ident)
    return redact_text(text)


# keys whose values identify a campaign's parts: never rewritten by redaction (a secret value
# that happens to occur in a generated id made shard files name another campaign)
IDENTIFIER_KEYS = frozenset({"campaign_id", "run_id"})
# keys whose string values are encoded measurements (measure.recorder: HdrHistogram blobs,
# interval tables' "counts"; result.json's "histograms" per operation): base64 the process
# made from numbers, never a credential. Left whole when strictly base64, because any
# masking inside one breaks its padding and the next reader (a continued shard, the
# aggregator) fails on it: a short interval table "...ADpwDMw==" lost its padding to the
# key=value rule ("Incorrect padding" in a sliced campaign, CI 2026-11-27).
ENCODED_KEYS = frozenset({"histogram", "intended_histogram", "counts"})
ENCODED_MAPS = frozenset({"histograms"})
_STRICT_B64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


def _encoded(value: Any) -> bool:
    return isinstance(value, str) and bool(_STRICT_B64.match(value))
_IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")


def _identifiers(obj: Any) -> list[str]:
    found: set[str] = set()
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for k, v in value.items():
                if k in IDENTIFIER_KEYS and isinstance(v, str) and _IDENTIFIER.match(v):
                    found.add(v)
                elif isinstance(v, (dict, list, tuple)):
                    stack.append(v)
        elif isinstance(value, (list, tuple)):
            stack.extend(v for v in value if isinstance(v, (dict, list, tuple)))
    return sorted(found, key=len, reverse=True)


# keys whose string values are messages: error texts (a driver's, a function's), warnings,
# problems, causes and reasons — where a resolved secret can be quoted, and so the only strings
# of a document ``redact_message`` reads. Every other string of a document (ids, statuses,
# engine names, labels, keys) is never rewritten but where a credential stands (redact_text).
_MESSAGE_KEY = re.compile(r"(?i)(error|message|cause|warning|problem|reason|detail|traceback|stderr|stdout)s?$")
# a message value that is one word (an error's name: "States.TaskFailed") is a code, not a text
_CODE = re.compile(r"[A-Za-z0-9_.:-]*+")


def redact_doc(obj: Any, extra: Iterable[str] = ()) -> Any:
    """A JSON-like document with every credential replaced: values of keys that name a secret
    (unless they are references: ``password: {secret: NAME}`` stays), credentials standing in
    any string (``redact_text``), and, in messages only (``_MESSAGE_KEY``: errors, warnings,
    causes), the secret values this process resolved (``redact_message``); its identifiers
    (``IDENTIFIER_KEYS``' values) stay whole, there and wherever they occur."""
    return _redact_doc(obj, tuple(extra), tuple(_identifiers(obj)), False)


def _redact_doc(obj: Any, extra: tuple, keep: tuple, message: bool) -> Any:
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str) and k.lower() not in _NOT_SECRET_KEYS and SECRET_KEY.match(k) \
                    and isinstance(v, (str, int, float)) and not isinstance(v, bool) and v not in ("", None):
                out[k] = MASK
            elif k in IDENTIFIER_KEYS and isinstance(v, str) and v in keep:
                out[k] = v
            elif k in ENCODED_KEYS and _encoded(v):
                out[k] = v
            elif k in ENCODED_MAPS and isinstance(v, dict) and all(_encoded(b) for b in v.values()):
                out[k] = dict(v)
            else:
                out[k] = _redact_doc(v, extra, keep, message or (isinstance(k, str) and bool(_MESSAGE_KEY.search(k))))
        return out
    if isinstance(obj, (list, tuple)):
        return [_redact_doc(v, extra, keep, message) for v in obj]
    if isinstance(obj, str):
        if message and not _CODE.fullmatch(obj):
            return redact_message(obj, extra, keep)
        return redact_text(obj)
    return obj


# ---- validation: where a literal password can be written ------------------------------------

def url_password_problems(url: str) -> list[str]:
    """A URL or libpq keyword string's clear-text passwords, described (never quoted)."""
    out: list = []
    if not isinstance(url, str) or not url:
        return out
    if "://" in url:
        try:
            parts = urlsplit(url)
            has_password = parts.password is not None
        except ValueError:
            has_password = bool(_URL_USERINFO.search(url))
            parts = None
        if has_password or _URL_USERINFO.search(url):
            out.append("the URL contains a password (in its user info)")
        query = parts.query if parts is not None else url.partition("?")[2]
        for key, _ in parse_qsl(query, keep_blank_values=True):
            if SECRET_KEY.match(key) and key.lower() not in _NOT_SECRET_KEYS:
                out.append(f"the URL contains a password (query parameter {key!r})")
    elif "=" in url:  # a libpq keyword string: host=... user=... password=...
        for m in re.finditer(r"(?:^|\s)([A-Za-z_]+)\s*=", url):
            if SECRET_KEY.match(m.group(1)) and m.group(1).lower() not in _NOT_SECRET_KEYS:
                out.append(f"the URL contains a password (connection keyword {m.group(1)!r})")
    return out


def option_password_problems(options: Any, path: str = "") -> list[str]:
    """Option keys naming a secret that hold a literal, at any depth, and URLs with a password:
    "option 'ssl.password': ..." (the path inside target.options)."""
    out = []
    if isinstance(options, dict):
        for k, v in options.items():
            p = f"{path}.{k}" if path else str(k)
            if isinstance(k, str) and SECRET_KEY.match(k) and k.lower() not in _NOT_SECRET_KEYS \
                    and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                out.append(f"option {p!r}: {SECRET_HINT}")
            else:
                out += option_password_problems(v, p)
    elif isinstance(options, list):
        for i, v in enumerate(options):
            out += option_password_problems(v, f"{path}[{i}]")
    elif isinstance(options, str):
        out += [f"option {path!r}: {why}; {SECRET_HINT}" for why in url_password_problems(options)
                if "://" in options or re.search(r"(?:^|\s)[A-Za-z_]+\s*=", options)]
    return out


# ---- secret references: which are allowed where ---------------------------------------------

# environment variables that are the process's own credentials, never a target's password
_CREDENTIAL_ENV = re.compile(r"(?i)^(AWS_|AMAZON_|AZURE_|ARM_|GOOGLE_|GCLOUD_|GCP_|CLOUDSDK_|HUAWEICLOUD_|HW_|OBS_|"
                             r"ALIBABA_CLOUD_|ALICLOUD_|DBSWARM_S3_|GITHUB_TOKEN|ACTIONS_)|"
                             r"(ACCESS_KEY|SESSION_TOKEN|SECRET_KEY|SECURITY_TOKEN)")
# files that are the process's or the machine's credentials, or not files at all
_CREDENTIAL_PATHS = re.compile(r"(^/(proc|sys|dev|run/secrets/kubernetes\.io|var/run/secrets)(/|$))|"
                               r"(/\.(aws|ssh|gnupg|docker|kube|azure)(/|$))|(/\.config/gcloud(/|$))|"
                               r"(^/etc/(shadow|gshadow|sudoers|ssh)(/|$))")


def reference_problems(ref: Any, where: str, *, api: bool = False, secret_prefix: str | None = None) -> list[str]:
    """What is wrong with a password reference (a dict {secret|env|file: ...}) at ``where``.
    ``api``: the campaign arrived through the API: only {secret: NAME} under ``secret_prefix``."""
    if not isinstance(ref, dict):
        return []
    out = []

    def api_only(kind: str, form: str) -> str:
        return (f"{where}.{kind}: campaigns sent to the API may only reference {{secret: NAME}} "
                f"(a Secrets Manager secret{' under ' + repr(secret_prefix) if secret_prefix else ''}); "
                f"{form} is for local mode")
    if ref.get("env") is not None:
        name = str(ref["env"])
        if api:
            out.append(api_only("env", "{env: VAR}"))
        elif _CREDENTIAL_ENV.search(name):
            out.append(f"{where}.env: {name} is a process credential, not a database password: refused "
                       "(put the password in its own variable, e.g. DBSWARM_PG_PASSWORD)")
    if ref.get("file") is not None:
        path = str(ref["file"])
        if api:
            out.append(api_only("file", "{file: PATH}"))
        elif credential_path(path):
            out.append(f"{where}.file: {path} holds the machine's or the process's credentials, not a database "
                       "password: refused")
    if ref.get("secret") is not None and secret_prefix:
        name = str(ref["secret"])
        bare = name.split(":secret:", 1)[1] if ":secret:" in name else name
        if not bare.startswith(secret_prefix) or ".." in bare:
            out.append(f"{where}.secret: {name!r} is not under this deployment's secret prefix "
                       f"{secret_prefix!r} (template parameter SecretPrefix)")
    return out


def credential_path(path: str) -> bool:
    """A file that is a credential of the machine or the process (also through a symlink)."""
    expanded = os.path.expanduser(path)
    candidates = {expanded, os.path.abspath(expanded)}
    try:
        candidates.add(os.path.realpath(expanded))
    except OSError:
        pass
    return any(_CREDENTIAL_PATHS.search(p) for p in candidates)


def credential_env(name: str) -> bool:
    return bool(_CREDENTIAL_ENV.search(name))
