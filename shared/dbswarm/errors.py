"""Exceptions shared by every part of dbswarm, and the kinds of database errors."""
from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Iterable


class DbswarmError(Exception):
    """Base class: an error dbswarm reports to the user as it is (no traceback needed)."""


class CampaignError(DbswarmError):
    """A campaign file is invalid. ``problems`` holds one "field.path: what is wrong" per line."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("invalid campaign:\n" + "\n".join(f"  - {p}" for p in self.problems))


class NotRunnableHere(CampaignError):
    """A valid campaign that cannot run on this machine as it is: an unset ``{env: VAR}``, an
    unreadable ``{file: PATH}`` (dbswarm validate and run exit 10, not 2: the file is right)."""

    def __init__(self, problems: Iterable[str]) -> None:
        super().__init__(problems)
        self.args = ("valid campaign, but it cannot run here as it is (set the variable, make the file "
                     "readable):\n" + "\n".join(f"  - {p}" for p in self.problems),)


def did_you_mean(key: object, valid: Iterable[object]) -> str:
    """"; did you mean `threads`?" for the valid name nearest to an unknown ``key`` (difflib,
    ignoring case), or "" when none is near."""
    names = {str(v).lower(): str(v) for v in sorted(set(valid), key=str)}
    near = difflib.get_close_matches(str(key).lower(), sorted(names), n=1, cutoff=0.6)
    return f"; did you mean `{names[near[0]]}`?" if near else ""


def step_error_text(err: object) -> str:
    """A Step Functions error ({"Error", "Cause"}, or a cause string holding Lambda's error JSON
    with errorType and errorMessage; its stack trace left out) as "Type: message"."""
    if isinstance(err, dict):
        name, cause = err.get("Error", ""), step_error_text(err.get("Cause"))
        return cause if cause.startswith(name) else f"{name}: {cause}"
    if isinstance(err, str):
        try:
            doc = json.loads(err)
        except ValueError:
            return err.strip()
        if isinstance(doc, dict) and "errorType" in doc:
            return f"{doc['errorType']}: {doc.get('errorMessage', '')}"
    return "" if err is None else str(err)


class ResultsNotWritten(DbswarmError):
    """The results store refused a write (disk full, quota, read-only): exit 7. Files written
    before stay as they were (every write is a temporary file renamed into place)."""


def results_not_written(err: object) -> "str | None":
    """The one-line message of a ``ResultsNotWritten`` raised here or in a function's process
    (where it arrives as error text: "... ResultsNotWritten: results not written: ..."); None
    when ``err`` is another error."""
    if isinstance(err, ResultsNotWritten):
        return str(err)
    text = str(err)
    mark = text.find("results not written: ")
    # the error text of a function's process names the type; the runner's one-line form
    # (local._unwrapped) has the type stripped and starts with the message itself
    if mark < 0 or ("ResultsNotWritten" not in text and not text.startswith("results not written: ")):
        return None
    line = text[mark:].splitlines()[0]
    end = line.find("dbswarm resume <campaign-id>`")
    return line[:end + len("dbswarm resume <campaign-id>`")] if end >= 0 else line


class TargetNotAllowed(DbswarmError):
    """A connection reached an address outside the deployment's AllowedTargets (checked on the
    connected socket, after the plan-time check of the URL): the connection is closed, nothing runs."""


class SecretError(DbswarmError):
    """A secret reference cannot be resolved (the message never contains the secret)."""


class BindingError(DbswarmError):
    """A binding name is unknown, registered twice, or its driver is missing."""


class FamilyError(DbswarmError):
    """A workload family name is unknown, registered twice, or its plugin cannot be imported."""


# ---- error kinds: what the worker does with a failed database call ------------------------
# Bindings say which kind each driver exception is (``Binding.classify``); the one retry and
# reconnect policy (``engine.calls.Measured``) acts on the kind, for every engine alike.
RETRYABLE = "retryable"    # deadlock, lock wait timeout, serialization failure: retry the event
CONNECTION = "connection"  # the connection is gone: reconnect, count, go on
DUPLICATE = "duplicate"    # duplicate key on insert (a resumed load): counted, not fatal
FATAL = "fatal"            # anything else (undefined table, permission denied): counted, ends the thread; the phase is incomplete


@dataclass(frozen=True)
class ErrorClass:
    kind: str   # one of the four kinds above
    name: str   # short, stable, e.g. "deadlock", "lock_wait_timeout", "connection_lost"
