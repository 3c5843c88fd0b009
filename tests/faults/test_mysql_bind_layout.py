"""Issue 33 ("Also"): MYSQL_BIND's layout was assumed for every libmariadb 3.x. Prepared
statements on mysqlclient's connection now need a Connector/C version whose layout is known, and
a probe on the first connection (a row that exists only for the parameters set) that checks the
layout with the library actually loaded; otherwise statements run as text, and the binding says why.
On the real MariaDB."""
import ctypes

import pytest

from tests import servers


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _connect(env):
    from types import SimpleNamespace

    from dbswarm.engine import worker
    b = worker.make_binding(SimpleNamespace(target=servers.target("mysql", env)), servers.password(env))
    b.connect()
    return b


@pytest.fixture
def fresh(monkeypatch):
    from dbswarm.bindings import mysql_stmt
    monkeypatch.setattr(mysql_stmt, "_api", None)
    monkeypatch.setattr(mysql_stmt, "_unavailable", None)
    monkeypatch.setattr(mysql_stmt, "_layout", None)
    return mysql_stmt


def test_the_loaded_library_checks_out(env, fresh):
    b = _connect(env)
    try:
        assert fresh._layout == "", fresh._layout
        assert "server-side" in str(b.describe().get("prepared_statements", "")), b.describe()
        assert b.fetchcount("SELECT 1 FROM DUAL WHERE %s = %s", (5, 5)) == 1
    finally:
        b.close()


def test_a_layout_that_does_not_match_runs_as_text(env, fresh, monkeypatch):
    class Shifted(ctypes.Structure):   # the fields of another layout: buffer_type where flags are
        _fields_ = [(name, kind) for name, kind in fresh.Bind._fields_ if name != "pack_length"] + \
            [("pack_length", ctypes.c_uint)]
    monkeypatch.setattr(fresh, "Bind", Shifted)
    b = _connect(env)
    try:
        assert fresh._layout.startswith("libmariadb") and "did not check out" in fresh._layout \
            or "probe failed" in fresh._layout, fresh._layout
        prepared = str(b.describe().get("prepared_statements", ""))
        assert "server-side" not in prepared or "MYSQL_BIND" in prepared, b.describe()
        assert b.fetchcount("SELECT 1 FROM DUAL WHERE %s = %s", (5, 5)) == 1   # as text, correct
    finally:
        b.close()


def test_an_unknown_connector_version_runs_as_text(env, fresh, monkeypatch):
    monkeypatch.setattr(fresh, "KNOWN_VERSIONS", ("9.9.",))
    b = _connect(env)
    try:
        assert "MYSQL_BIND's layout is known for Connector/C 9.9. only" in fresh._unavailable, fresh._unavailable
        assert b.fetchcount("SELECT 1 FROM DUAL WHERE %s = %s", (5, 5)) == 1
    finally:
        b.close()
