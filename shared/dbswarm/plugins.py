"""Plugins: modules outside dbswarm that register workload families or engines.

A plugin is an importable module whose import registers what it brings
(``families.register(...)``, ``bindings.declare(...)`` + ``@bindings.register``). dbswarm
imports, once per process, every module named in the environment variable
``DBSWARM_PLUGINS`` (comma-separated) and every ``dbswarm.plugins`` entry point of the
installed packages. Child processes (local shards, Lambda functions) inherit the
variable, so a plugin is known wherever a campaign's steps run.
"""
from __future__ import annotations

import importlib
import os
import threading

from dbswarm.errors import DbswarmError

ENV = "DBSWARM_PLUGINS"
ENTRY_POINT_GROUP = "dbswarm.plugins"
_loaded = False
_lock = threading.RLock()


def load_plugins() -> None:
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _loaded = True  # set first: a plugin's own imports may ask the registries again
        names = [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError as err:
                raise DbswarmError(f"{ENV}: plugin module {name!r} cannot be imported: {err}") from None
        try:
            from importlib.metadata import entry_points
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                ep.load()
        except Exception as err:  # a broken third-party package must say which
            raise DbswarmError(f"entry point group {ENTRY_POINT_GROUP}: {err}") from None
