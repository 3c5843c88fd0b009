"""Binding registry: engines register by name (with aliases); a duplicate name is an error.

Engine modules are imported lazily so a missing driver only matters for the engine that
needs it (``pip install dbswarm[mongodb]`` etc.).
"""
from __future__ import annotations

import importlib

from ..errors import BindingError
from .base import CONNECTION, DUPLICATE, FATAL, RETRYABLE, Binding, Connection, ErrorClass

_REGISTRY: dict[str, type[Binding]] = {}
_ALIASES: dict[str, str] = {}

# engine name -> module that registers it
_MODULES = {
    "sqlite": "dbswarm.bindings.sqlite",
    "noop": "dbswarm.bindings.noop",
    "mysql": "dbswarm.bindings.mysql",
    "postgresql": "dbswarm.bindings.postgresql",
    "mongodb": "dbswarm.bindings.mongodb",
}


def register(name: str, *aliases: str):
    """Class decorator: ``@register("postgresql", "pg", "postgres")``."""
    def wrap(cls):
        for n in (name, *aliases):
            if n in _REGISTRY or n in _ALIASES:
                raise BindingError(f"binding name {n!r} is registered twice")
        _REGISTRY[name] = cls
        for a in aliases:
            _ALIASES[a] = name
        cls.name = name
        return cls
    return wrap


def get(name: str) -> type[Binding]:
    canonical = _ALIASES.get(name, name)
    if canonical not in _REGISTRY:
        module = _MODULES.get(canonical)
        if module is None:
            raise BindingError(f"unknown engine {name!r}; known: {', '.join(sorted(_MODULES))}")
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise BindingError(f"engine {canonical!r} needs a driver that is not installed: {err}") from None
    canonical = _ALIASES.get(name, name)
    if canonical not in _REGISTRY:
        raise BindingError(f"module {_MODULES.get(canonical)} did not register engine {canonical!r}")
    return _REGISTRY[canonical]


def names() -> list[str]:
    return sorted(_MODULES)


__all__ = ["Binding", "Connection", "ErrorClass", "RETRYABLE", "CONNECTION", "DUPLICATE", "FATAL",
           "register", "get", "names"]
