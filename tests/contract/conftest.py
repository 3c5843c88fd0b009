"""Fixtures of the binding contract suite: one connected binding per engine, on the real
servers scripts/test-servers starts (SQLite: a file in tmp_path)."""
from __future__ import annotations

import uuid

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.credentials.secrets import resolve
from dbswarm.families.sysbench import SysbenchTables
from tests import servers


@pytest.fixture(scope="session")
def server_env():
    return servers.start()


@pytest.fixture(scope="session")
def targets(server_env):
    """engine -> campaign target dict (engine, url, password: {file: ...}, options)."""
    return {e: servers.target(e, server_env) for e in servers.SERVER_ENGINES}


class Factory:
    """Makes connected bindings of one engine; closes them at the end of the test.
    ``engine`` is the engine name (the tests branch on it); ``variant`` is the test
    parameter: the engine name, or a variant id such as "mysql-pymysql" (the same
    engine through another driver, chosen by the target's options)."""

    def __init__(self, engine, target, tmp_path, variant=None):
        self.engine = engine
        self.variant = variant or engine
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


@pytest.fixture(params=servers.with_variants(*servers.ENGINES))
def engine(request):
    """An engine name or a variant id (servers.VARIANTS): the test id."""
    return request.param


@pytest.fixture
def make(engine, request, tmp_path):
    variant = engine
    engine, options = servers.variant(variant)
    target = None
    if engine != "sqlite":
        target = request.getfixturevalue("targets")[engine]
        if options:
            target = dict(target, options={**target.get("options", {}), **options})
    f = Factory(engine, target, tmp_path, variant)
    yield f
    # drop what the test created, with a fresh connection
    f.target = f.original_target
    try:
        b = f()
        b.drop_table(f.table)
        if engine != "mongodb":
            SysbenchTables(b).drop(f.sb_no)
    except Exception:
        pass
    f.close()
