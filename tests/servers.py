"""The real database servers the contract and engine tests run against, and the one
harness around ``scripts/test-servers`` (the benchmarks in bench/ use it too, through
bench/common.py, with their own DIR).

``start()`` runs ``scripts/test-servers start DIR`` (idempotent: it installs what is
missing, starts what is not running, and only rewrites DIR/env when all runs) and
reads DIR/env. A server that cannot be started fails the test with the script's own
reason: nothing is skipped. ``start_servers(DIR)`` is the same without pytest: it raises
``ServersError`` with that reason.

DIR: $DBSWARM_TEST_SERVERS_DIR, else the DIR of an env file already sourced
($DBSWARM_TEST_DIR, as scripts/test does), else /tmp/dbswarm-test-servers.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-servers"
SERVER_ENGINES = ("postgresql", "mysql", "mongodb")
ENGINES = ("sqlite",) + SERVER_ENGINES
# Variants: the same engine through another client (test id -> (engine, target options)).
# The contract suite runs every test of the engine for each of its variants too.
# "mysql": the default driver (mysqlclient); the others: the portable fallback and the Lambda layer's C driver
VARIANTS = {"mysql-pymysql": ("mysql", {"driver": "pymysql"}), "mysql-connector": ("mysql", {"driver": "connector"}),
            "mysql-text": ("mysql", {"prepare": False})}  # mysqlclient without server-side prepared statements


def with_variants(*engines: str) -> tuple:
    """The engines, each followed by its variants' ids: ("mysql",) -> ("mysql", "mysql-pymysql")."""
    return tuple(x for e in engines for x in (e, *(v for v, (base, _) in VARIANTS.items() if base == e)))


def variant(name: str) -> tuple[str, dict]:
    """(engine, extra target options) of an engine name or a variant id."""
    return VARIANTS.get(name, (name, {}))

_lock = threading.Lock()
_env: dict | None = None


def servers_dir() -> str:
    return (os.environ.get("DBSWARM_TEST_SERVERS_DIR") or os.environ.get("DBSWARM_TEST_DIR")
            or "/tmp/dbswarm-test-servers")


def own_set_dir(kind: str) -> str:
    """The folder of a test module's own server set (``faults``: the servers the fault tests
    stop; ``alt``: the optional statistics sources inverted, ALT_OPTIONS): $DBSWARM_FAULT_SERVERS_DIR or
    $DBSWARM_ALT_SERVERS_DIR when set, else derived from ``servers_dir()`` (DIR-faults, DIR-alt),
    as scripts/test derives them: two suites with a DIR each share none of them."""
    given = os.environ.get({"faults": "DBSWARM_FAULT_SERVERS_DIR", "alt": "DBSWARM_ALT_SERVERS_DIR"}[kind])
    return given or f"{servers_dir().rstrip('/')}-{kind}"


class ServersError(RuntimeError):
    """A server could not be started: the message is scripts/test-servers' own reason."""


def run_script(command: str, directory: str | None = None, timeout=900,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """scripts/test-servers COMMAND DIR (DIR: ``servers_dir()`` unless given); ``env``: more
    environment variables for the script."""
    return subprocess.run([str(SCRIPT), command, directory or servers_dir()], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def read_env(path: str) -> dict:
    env = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line.startswith("export ") and "=" in line:
            key, _, value = line[len("export "):].partition("=")
            env[key] = value
    return env


def start_servers(directory: str | None = None, timeout=900, options: dict | None = None) -> dict:
    """``scripts/test-servers start DIR`` (idempotent) and DIR/env as a dict; ServersError
    with the script's reason when a server cannot be started or the env file lacks a URL.
    ``options``: the script's variables for the DIR's first start (DBSWARM_TEST_MYSQL_OPTIONS ...)."""
    directory = directory or servers_dir()
    if not SCRIPT.exists():
        raise ServersError(f"{SCRIPT} is missing: the test servers cannot be started")
    proc = run_script("start", directory, timeout=timeout, env=options)
    if proc.returncode != 0:
        raise ServersError(f"scripts/test-servers start {directory} failed (exit {proc.returncode}):\n"
                           + "\n".join(proc.stderr.splitlines()[-30:]))
    env_path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else os.path.join(directory, "env")
    env = read_env(env_path)
    missing = [k for k in ("DBSWARM_TEST_PG_URL", "DBSWARM_TEST_MYSQL_URL", "DBSWARM_TEST_MONGO_URL",
                           "DBSWARM_TEST_PASSWORD_FILE") if not env.get(k)]
    if missing:
        raise ServersError(f"{env_path} lacks {', '.join(missing)}")
    return env


def stop_servers(directory: str | None = None, timeout=300) -> subprocess.CompletedProcess:
    """``scripts/test-servers stop DIR``."""
    return run_script("stop", directory, timeout=timeout)


def start() -> dict:
    """Start (or find running) PostgreSQL, MariaDB and FerretDB; their DIR/env as a dict."""
    global _env
    with _lock:
        if _env is not None:
            return _env
        try:
            env = start_servers()
        except ServersError as exc:
            reason = str(exc)
        else:
            _env = env
            return env
    import pytest  # only here: the benchmarks use this module without pytest
    pytest.fail(reason)


# The other set: every optional statistics source of the shared set inverted, for the tests of
# what a result says with and without each (the shared set's servers are what every other test
# measures against, and stay as they are): MariaDB with performance_schema on (off in the shared
# set, MariaDB's default), PostgreSQL without pg_stat_statements in shared_preload_libraries (the
# extension is still created in database dbswarm: present, not loaded). Its DIR:
# $DBSWARM_ALT_SERVERS_DIR (left running: scripts/test stops it), else DIR-alt (stopped at the end
# of the session: tests/conftest.py's alt_servers).
ALT_OPTIONS = {"DBSWARM_TEST_MYSQL_OPTIONS": "--performance-schema=ON", "DBSWARM_TEST_PG_PRELOAD": "none"}


def alt_servers_dir() -> str:
    return own_set_dir("alt")


def start_alternate() -> dict:
    """The other set (ALT_OPTIONS) started or found running; its DIR/env as a dict."""
    return start_servers(alt_servers_dir(), options=ALT_OPTIONS)


def password(env: dict) -> str:
    return Path(env["DBSWARM_TEST_PASSWORD_FILE"]).read_text().strip()


def ferretdb_backend_url(env: dict) -> str:
    """FerretDB's PostgreSQL backend over the unix socket (postgres is trusted there)."""
    return (f"postgresql://postgres@/ferretdb?host={env['DBSWARM_TEST_PG_SOCKET_DIR']}"
            f"&port={env['DBSWARM_TEST_PG_PORT']}")


def target(engine: str, env: dict, **options) -> dict:
    """A campaign ``target`` for one engine: URL without password, password by file."""
    if engine == "postgresql":
        url = env["DBSWARM_TEST_PG_URL"]
    elif engine == "mysql":
        url = env["DBSWARM_TEST_MYSQL_URL"]
    elif engine == "mongodb":
        url = env["DBSWARM_TEST_MONGO_URL"]
        options = {"ferretdb_backend_url": ferretdb_backend_url(env), **options}
    else:
        raise ValueError(engine)
    t = {"engine": engine, "url": url, "password": {"file": env["DBSWARM_TEST_PASSWORD_FILE"]},
         "label": {"postgresql": "PostgreSQL 15", "mysql": "MariaDB 10.11", "mongodb": "FerretDB 1.24"}[engine]}
    if options:
        t["options"] = options
    return t


def restart(server: str) -> float:
    """scripts/test-servers restart-pg | restart-mysql | restart-ferretdb; seconds it took."""
    t0 = time.time()
    proc = run_script(f"restart-{server}", timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"scripts/test-servers restart-{server} failed:\n{proc.stderr[-3000:]}")
    return time.time() - t0


# ---- admin connections (checks from outside the binding under test) -------------------------

def pg_admin(env: dict):
    import psycopg
    return psycopg.connect(env["DBSWARM_TEST_PG_URL"], password=password(env), autocommit=True)


def mysql_admin(env: dict):
    import pymysql

    from dbswarm.bindings.mysql import parse_mysql_url
    return pymysql.connect(password=password(env), autocommit=True, **parse_mysql_url(env["DBSWARM_TEST_MYSQL_URL"]))


def mongo_admin(env: dict):
    import pymongo
    return pymongo.MongoClient(env["DBSWARM_TEST_MONGO_URL"], serverSelectionTimeoutMS=10_000)
