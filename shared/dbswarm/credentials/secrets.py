"""Credentials: resolve secret references at the last moment, redact everywhere else.

A secret's value never enters an event, a log line or a result file: only the reference
({secret: NAME} | {env: VAR} | {file: PATH}) travels.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Optional

from dbswarm.credentials.redact import credential_env, credential_path, redact_message, redact_text, remember
from dbswarm.errors import SecretError

_cache: dict[str, str] = {}
_lock = threading.Lock()


def in_cloud() -> bool:
    """Running as a deployed function (AWS Lambda), where only {secret: NAME} may be resolved."""
    return os.environ.get("AWS_EXECUTION_ENV", "").startswith("AWS_Lambda")


def resolve(ref: Any) -> str | None:
    """The secret's value for a SecretRef (model or dict), or None when ref is None. Every
    value resolved is remembered by ``dbswarm.credentials.redact``: no document or log line written by
    this process carries it."""
    value = _resolve(ref)
    remember(value)
    return value


def _resolve(ref: Any) -> str | None:
    if ref is None:
        return None
    data = ref if isinstance(ref, dict) else ref.model_dump(exclude_none=True)
    if (data.get("env") or data.get("file")) and in_cloud():
        raise SecretError("target.password: a deployed function resolves only {secret: NAME} references "
                          "({env: VAR} and {file: PATH} are for local mode)")
    if data.get("env") and credential_env(data["env"]):
        raise SecretError(f"target.password.env: {data['env']} is a process credential, not a database "
                          "password: refused")
    if data.get("file") and credential_path(data["file"]):
        raise SecretError(f"target.password.file: {data['file']} holds the machine's or the process's "
                          "credentials: refused")
    if data.get("env"):
        name = data["env"]
        if name not in os.environ:
            raise SecretError(f"target.password: environment variable {name} is not set")
        return os.environ[name]
    if data.get("file"):
        path = os.path.expanduser(data["file"])
        try:
            with open(path) as fh:
                return fh.read().strip()
        except OSError as err:
            raise SecretError(f"target.password: cannot read secret file {path}: {err.strerror}") from None
    if data.get("secret"):
        return _secrets_manager(data["secret"])
    raise SecretError("target.password: empty secret reference")


def _secrets_manager(name: str) -> str:
    """AWS Secrets Manager, cached per container. A JSON secret's "password" key is used."""
    with _lock:
        if name in _cache:
            return _cache[name]
    import boto3  # noqa: PLC0415 (only needed in the cloud: seconds to import)
    try:
        value = boto3.client("secretsmanager").get_secret_value(SecretId=name)["SecretString"]
    except Exception as err:  # botocore errors: name the secret, never a value
        raise SecretError(f"target.password: cannot read secret {name!r}: {type(err).__name__}") from None
    try:
        parsed = json.loads(value)
        if isinstance(parsed, dict) and "password" in parsed:
            value = str(parsed["password"])
    except ValueError:
        pass
    with _lock:
        _cache[name] = value
    return value


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def redact_url(url: str | None) -> str | None:
    """A URL as it may be printed or stored (``dbswarm.credentials.redact.redact_text``)."""
    return redact_text(url) if url else url


class Redactor:
    """Replaces known secret values (as whole words) and URL / keyword credentials in an error
    message (``redact.redact_message``)."""

    def __init__(self, *secrets: Optional[str]) -> None:
        self.secrets = [s for s in secrets if s]

    def __call__(self, text: str) -> str:
        return redact_message(text, self.secrets)
