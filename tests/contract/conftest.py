"""Fixtures of the binding contract suite: one connected binding per engine, on the real
servers scripts/test-servers starts (SQLite: a file in tmp_path)."""
from __future__ import annotations

import uuid

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.secrets import resolve
from tests import servers


@pytest.fixture(scope="session")
def server_env():
    return servers.start()


@pytest.fixture(scope="session")
def targets(server_env):
    """engine -> campaign target dict (engine, url, password: {file: ...}, options)."""
    return {e: servers.target(e, server_env) for e in servers.SERVER_ENGINES}


class Factory:
    """Makes connected bindings of one engine; closes them at the end of the test."""

    def __init__(self, engine, target, tmp_path):
        self.engine = engine
        self.target = self.original_target = target
        self.tmp_path = tmp_path
        self.made = []
        self.table = f"ct_{uuid.uuid4().hex[:10]}"
        self.sb_no = 900 + uuid.uuid4().int % 9000   # sbtest<N> of this test

    @property
    def password(self):
        return resolve(self.target.get("password")) if self.target else None

    def connection(self, **options):
        if self.engine == "sqlite":
            return Connection("sqlite", str(self.tmp_path / "contract.db"), None, options)
        t = self.target
        return Connection(self.engine, t["url"], self.password, {**t.get("options", {}), **options})

    def __call__(self, connect=True, **options):
        b = bindings.get(self.engine)(self.connection(**options))
        if connect:
            b.connect()
        self.made.append(b)
        return b

    def close(self):
        for b in self.made:
            try:
                b.close()
            except Exception:
                pass


@pytest.fixture(params=servers.ENGINES)
def engine(request):
    return request.param


@pytest.fixture
def make(engine, request, tmp_path):
    target = None
    if engine != "sqlite":
        target = request.getfixturevalue("targets")[engine]
    f = Factory(engine, target, tmp_path)
    yield f
    # drop what the test created, with a fresh connection
    f.target = f.original_target
    try:
        b = f()
        b.ycsb_drop(f.table)
        if engine != "mongodb":
            b.sb_drop(f.sb_no)
    except Exception:
        pass
    f.close()
