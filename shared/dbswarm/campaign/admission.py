"""What a deployment (or this machine) accepts: the networks a target may be in, the size of a
campaign before its matrix is expanded, request sizes and query parameters of the API, and
the client threads one shard process can run.

Deployment parameters (template.yaml) reach the functions as environment variables:
  DBSWARM_ALLOWED_TARGETS  AllowedTargets: comma-separated CIDRs and host patterns
                           (``10.0.0.0/8,*.internal.example.com``); ``*`` allows any host.
                           Unset: no restriction (local mode).
  DBSWARM_SECRET_PREFIX    SecretPrefix: the only secrets a campaign may name through the API.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import math
import os
import re
import socket
from typing import Any, Iterable, Optional
from urllib.parse import urlsplit

from dbswarm import bindings
from dbswarm.bindings.mysql import parse_mysql_url
from dbswarm.credentials.redact import redact_message
from dbswarm.errors import CampaignError, TargetNotAllowed

# ---- sizes ------------------------------------------------------------------------------------
MAX_RUNS = int(os.environ.get("DBSWARM_MAX_RUNS") or 1000)             # runs of one campaign's matrix
MAX_SHARD_CALLS = int(os.environ.get("DBSWARM_MAX_SHARD_RUNS") or 100_000)  # shards x runs of one campaign
MAX_BODY_BYTES = 256 * 1024                                               # a campaign file sent to the API
MAX_THREADS_PER_SHARD = int(os.environ.get("DBSWARM_MAX_THREADS_PER_SHARD") or 1024)
MAX_FIELD_BYTES = 65_536   # the value pool's size (families' generators cap a field there)
MAX_CALL_SECONDS = 24 * 3600
MAX_LEAD_SECONDS = 600


def matrix_size(matrix: Any) -> tuple[int, list[str]]:
    """The number of runs a matrix expands to, computed before expanding it; problems with its shape."""
    if not isinstance(matrix, dict):
        return 1, []
    n, problems = 1, []
    for axis, values in matrix.items():
        if not isinstance(values, list):
            problems.append(f"matrix.{axis}: expected a list of values")
            continue
        n *= max(len(values), 1)
    return n, problems


def repeat_factor(repeat: Any) -> int:
    """Runs per matrix cell: repeat.count, twice that when a baseline configuration is
    interleaved (B A B A). A malformed repeat counts as 1 (its validation names it)."""
    if isinstance(repeat, int) and not isinstance(repeat, bool):
        count, baseline = repeat, None
    elif isinstance(repeat, dict):
        count, baseline = repeat.get("count"), repeat.get("baseline")
    else:
        return 1
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return 1
    return count * (2 if baseline else 1)


def check_campaign_size(data: Any) -> None:
    """Refuse a campaign whose matrix or shards x runs are beyond the limits, before the matrix
    is expanded (a 10 KB file can expand to a million runs)."""
    if not isinstance(data, dict):
        return
    runs, problems = matrix_size(data.get("matrix"))
    repeats = repeat_factor(data.get("repeat"))
    if runs * repeats > MAX_RUNS:
        how = f"{runs:,} cells x {repeats:,} repeated runs = " if repeats > 1 else ""
        field = "matrix" if runs > MAX_RUNS else "repeat"
        problems.append(f"{field}: expands to {how}{runs * repeats:,} runs; at most "
                        f"{MAX_RUNS:,} per campaign (split it into several campaigns)")
    runs *= repeats
    fanout = data.get("fanout") if isinstance(data.get("fanout"), dict) else {}
    threads = _max_threads(data)
    shards = fanout.get("shards")
    if not isinstance(shards, int) or isinstance(shards, bool):
        tps = fanout.get("threads_per_shard")
        shards = math.ceil(threads / tps) if isinstance(tps, int) and tps > 0 and threads else 1
    if isinstance(shards, int) and runs <= MAX_RUNS and shards * runs > MAX_SHARD_CALLS:
        problems.append(f"fanout: {shards:,} shards x {runs:,} runs = {shards * runs:,} shard phases; at most "
                        f"{MAX_SHARD_CALLS:,} per campaign")
    if problems:
        raise CampaignError(problems)


def _max_threads(data) -> int:
    values = []
    w = data.get("workload")
    if isinstance(w, dict) and isinstance(w.get("threads"), int):
        values.append(w["threads"])
    m = data.get("matrix")
    if isinstance(m, dict):
        for v in m.get("threads") if isinstance(m.get("threads"), list) else []:
            if isinstance(v, int):
                values.append(v)
        for wl in m.get("workload") if isinstance(m.get("workload"), list) else []:
            if isinstance(wl, dict) and isinstance(wl.get("threads"), int):
                values.append(wl["threads"])
    return max(values, default=1)


def threads_per_shard_problems(runs, shard_counts: dict[str, int]) -> list[str]:
    """One shard process runs its client threads under one GIL: beyond MAX_THREADS_PER_SHARD
    they only wait for each other (100,000 threads measured 0 operations in 150 s)."""
    out = []
    for run in runs:
        n = shard_counts.get(run.run_id) or 1
        per = math.ceil(run.workload.threads / n)
        if per > MAX_THREADS_PER_SHARD:
            out.append(f"workload.threads: run {run.run_id} puts {per:,} client threads in one shard; one shard "
                       f"process runs at most {MAX_THREADS_PER_SHARD:,} (set fanout.shards or "
                       "fanout.threads_per_shard to spread them)")
    return out


# ---- numbers from a request -------------------------------------------------------------------

def positive_number(value: Any, name: str, maximum: float, *, allow_zero=False) -> Optional[float]:
    """A finite number in (0, maximum] (or [0, maximum]); None for absent. ValueError names ``name``."""
    if value is None or value == "":
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {str(value)[:40]!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero) or x > maximum:
        raise ValueError(f"{name}: expected a number {'>=' if allow_zero else '>'} 0 and <= {maximum:g}, got {value!r}")
    return x


def positive_int(value: Any, name: str, maximum: int) -> Optional[int]:
    if value is None or value == "":
        return None
    if not re.fullmatch(r"\s*[0-9]+\s*", str(value)):
        raise ValueError(f"{name}: expected a whole number from 1 to {maximum}, got {str(value)[:40]!r}")
    x = int(value)
    if x < 1 or x > maximum:
        raise ValueError(f"{name}: expected a whole number from 1 to {maximum}, got {x}")
    return x


# ---- networks a target may be in --------------------------------------------------------------
# The check reads a target's URL with the parser its driver uses (libpq's own for PostgreSQL,
# the binding's for MySQL/MariaDB, pymongo's for MongoDB), so that it sees exactly the hosts the
# driver connects to; a URL that parsers could read differently (two '@' before the path, a
# fragment, control characters) is refused rather than guessed at.

def allowed_targets() -> Optional[str]:
    return os.environ.get("DBSWARM_ALLOWED_TARGETS") or None


_NO_HOSTS = ("sqlite", "sqlite3", "file", "noop")
_PG_SCHEMES = ("postgresql", "postgres")
_MYSQL_SCHEMES = ("mysql", "mariadb", "mysql+pymysql")
_MONGO_SCHEMES = ("mongodb", "mongodb+srv")
_CONTROL = re.compile(r"[\x00-\x20\x7f\\]")
LIBPQ_DEFAULT_SOCKET = "(libpq's default: a local socket)"


def target_endpoints(target: dict) -> tuple[list[str], list[str], list[str]]:
    """(network hosts, unix socket paths, problems) of every connection a target makes: its
    URL's and those of URLs and host keys inside its options. A problem: a URL that cannot be
    read unambiguously (the check refuses it)."""
    hosts: list[str] = []
    sockets: list[str] = []
    problems: list[str] = []
    name = bindings.canonical(target["engine"]) if target.get("engine") else None
    if name is not None and (bindings.engine(name).embedded or not bindings.engine(name).is_real_database):
        return hosts, sockets, problems   # a database file (its url is a path) or no database: no network
    _endpoints_of(target.get("url"), hosts, sockets, problems, "url")
    _endpoints_in_options(target.get("options") or {}, hosts, sockets, problems, "options")
    return hosts, sockets, problems


def target_hosts(target: dict) -> list[str]:
    """Every network host a target connects to: its URL's (several for a PostgreSQL host list
    or a MongoDB seed list), a libpq keyword string's, and those of URLs inside its options.
    Unix socket paths are not hosts (``target_endpoints`` has them)."""
    return target_endpoints(target)[0]


def _add_host(value: str, hosts, sockets):
    if value.startswith("/") or value.startswith("@"):   # libpq: '@name' is an abstract socket
        sockets.append(value)
    else:
        hosts.append(value)


def _endpoints_in_options(value, hosts, sockets, problems, where):
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, str) and ("://" in v or k in ("host", "hostaddr", "unix_socket")):
                if "://" in v:
                    _endpoints_of(v, hosts, sockets, problems, f"{where}.{k}")
                elif k == "unix_socket":
                    sockets.append(v)
                else:
                    for x in v.split(","):
                        if x.strip():
                            _add_host(x.strip(), hosts, sockets)
            else:
                _endpoints_in_options(v, hosts, sockets, problems, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _endpoints_in_options(v, hosts, sockets, problems, f"{where}[{i}]")


def _ambiguity(url: str) -> Optional[str]:
    """Why parsers could read ``url``'s authority differently, or None."""
    if _CONTROL.search(url):
        return "contains a space, a control character or a backslash"
    rest = url.partition("://")[2]
    head = rest.split("/", 1)[0]          # libpq's authority ends at the first '/' only
    if head.count("@") > 1:
        return "has more than one '@' before the host (a user name's '@' is written %40)"
    at = head.find("@")
    if at >= 0 and any(0 <= head.find(c) < at for c in "?#"):
        return "has a '?' or '#' before the '@' of its user name"
    return None


def _endpoints_of(url, hosts, sockets, problems, where):
    if not isinstance(url, str) or not url:
        return
    scheme = url.partition("://")[0].lower() if "://" in url else None
    if scheme in _NO_HOSTS:
        return
    why = _ambiguity(url) if scheme else None
    if why:
        problems.append(f"{where}: the URL {why}; refused: it cannot be read unambiguously")
        return
    try:
        if scheme is None or scheme in _PG_SCHEMES:
            if scheme is None and "=" not in url:
                raise ValueError("not a URL nor a libpq keyword string (host=... dbname=...)")
            _libpq_endpoints(url, hosts, sockets)
        elif scheme in _MYSQL_SCHEMES:
            _mysql_endpoints(url, hosts, sockets)
        elif scheme in _MONGO_SCHEMES:
            _mongo_endpoints(url, hosts, sockets)
        else:
            _generic_endpoints(url, hosts, sockets)
    except Exception as exc:  # the driver's own parser refused it: so does the check
        problems.append(f"{where}: the URL cannot be read ({type(exc).__name__}: "
                        f"{redact_message(str(exc))[:200]}); refused")


def _libpq_endpoints(url, hosts, sockets):
    """Hosts libpq connects to, by libpq's own parser (PQconninfoParse): a host list
    (host1,host2), host= / hostaddr= in the query or keywords (hostaddr is what is connected
    to where given), empty entries and sockets; PGHOST / PGHOSTADDR where the URL has none."""
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 (an optional driver)
    params = conninfo_to_dict(url)
    for key in ("service", "servicefile"):
        if params.get(key):
            raise ValueError(f"{key}= takes hosts from a service file: give host= instead")
    host = params.get("host")
    if host is None:
        host = os.environ.get("PGHOST", "")
    hostaddr = params.get("hostaddr")
    if hostaddr is None:
        hostaddr = os.environ.get("PGHOSTADDR", "")
    names, addrs = str(host).split(","), str(hostaddr).split(",") if hostaddr else []
    if addrs and len(addrs) != len(names) and not (len(names) == 1 and not names[0]):
        raise ValueError(f"{len(names)} host names for {len(addrs)} hostaddr values")
    port = params.get("port")
    ports = [p.strip() for p in str(port if port is not None else os.environ.get("PGPORT", "")).split(",")]
    n = max(len(names), len(addrs))
    for i in range(n):
        name = names[i].strip() if i < len(names) else ""
        addr = addrs[i].strip() if i < len(addrs) else ""
        if addr:
            hosts.append(addr)          # libpq connects to hostaddr; host is only for TLS/passwords
        elif name.startswith("/") or name.startswith("@"):
            # a socket directory: libpq connects to the socket in it (DIR/.s.PGSQL.PORT), as the
            # binding's peer_addresses names it once connected: a pattern DIR/* holds both
            sockets.append(libpq_socket(name, ports[i] if len(ports) > 1 and i < len(ports) else ports[0]))
        elif name:
            _add_host(name, hosts, sockets)
        else:
            sockets.append(LIBPQ_DEFAULT_SOCKET)


def libpq_socket(directory: str, port: str) -> str:
    """The socket libpq connects to for a host that is a socket directory (UNIXSOCK_PATH)."""
    return f"{directory.rstrip('/')}/.s.PGSQL.{port or 5432}"


def _mysql_endpoints(url, hosts, sockets):
    """The MySQL binding's own parser (``bindings.mysql.parse_mysql_url``)."""
    if "#" in url:
        raise ValueError("a fragment ('#') has no meaning in a MySQL URL")
    kw = parse_mysql_url(url)
    if kw.get("unix_socket"):
        sockets.append(kw["unix_socket"])
        return
    host = str(kw["host"])
    if "%" in host or "," in host:
        raise ValueError(f"host {host!r}: MySQL takes one host, not percent-encoded")
    hosts.append(host)


def _mongo_endpoints(url, hosts, sockets):
    """pymongo's parser: the seed list (mongodb+srv: the hosts of its SRV record, looked up)."""
    if "#" in url:
        raise ValueError("a fragment ('#') has no meaning in a MongoDB URL")
    from pymongo import uri_parser  # noqa: PLC0415 (an optional driver)
    parsed = uri_parser.parse_uri(url)
    for host, _port in parsed["nodelist"]:
        _add_host(str(host), hosts, sockets)


def _generic_endpoints(url, hosts, sockets):
    parts = urlsplit(url)
    if parts.fragment:
        raise ValueError("a fragment ('#') has no meaning in a connection URL")
    netloc = parts.netloc.rpartition("@")[2]
    for part in netloc.split(","):
        if part.strip():
            h = _strip_port(part)
            if "%" in h:
                raise ValueError(f"host {h!r} is percent-encoded")
            _add_host(h, hosts, sockets)


def _strip_port(part: str) -> str:
    part = part.strip()
    if part.startswith("["):
        return part[1:].split("]", 1)[0]
    if part.count(":") == 1:
        return part.split(":", 1)[0]
    return part


def _rules(allowed: str):
    rules = [r.strip() for r in allowed.split(",") if r.strip()]
    nets, patterns = [], []
    for r in rules:
        try:
            nets.append(ipaddress.ip_network(r, strict=False))
        except ValueError:
            patterns.append(r.lower())
    return "*" in rules, nets, patterns


def host_allowed(host: str, allowed: str, resolve=socket.getaddrinfo) -> bool:
    anything, nets, patterns = _rules(allowed)
    if anything:
        return True
    try:
        addrs = [ipaddress.ip_address(host.split("%")[0] if ":" in host else host)]
    except ValueError:
        if any(fnmatch.fnmatchcase(host.lower(), p) for p in patterns):
            return True
        try:
            addrs = {ipaddress.ip_address(a[4][0].split("%")[0]) for a in resolve(host, None)}
        except (OSError, UnicodeError, ValueError):
            return False
    return bool(addrs) and all(any(a in n for n in nets) for a in addrs)


def socket_allowed(path: str, allowed: str) -> bool:
    """A unix socket is in no network: it passes under ``*`` or a pattern that names its path
    or its directory (``/var/run/postgresql/*`` or ``/var/run/postgresql``: PostgreSQL's socket
    ``/var/run/postgresql/.s.PGSQL.5432``, named by its directory in a URL)."""
    anything, _nets, patterns = _rules(allowed)
    directory = path.rsplit("/", 1)[0] if "/" in path.lstrip("/@") else None
    return anything or any(p.startswith("/") and (fnmatch.fnmatchcase(path, p) or (
        directory is not None and fnmatch.fnmatchcase(directory, p.rstrip("/") or "/"))) for p in patterns)


ALLOWED_SOURCE = "template parameter AllowedTargets"


def target_network_problems(targets: Iterable[tuple[str, dict]], allowed: Optional[str] = None,
                            source: str = ALLOWED_SOURCE) -> list[str]:
    """(where, target dict) pairs checked against the deployment's AllowedTargets (``source``:
    where the list came from, as the messages name it)."""
    allowed = allowed if allowed is not None else allowed_targets()
    if not allowed or _rules(allowed)[0]:   # unset or "*": any target (local mode)
        return []
    out = []
    for where, target in targets:
        hosts, sockets, problems = target_endpoints(target)
        out += [f"{where}.{p}" for p in problems]
        for host in hosts:
            if not host_allowed(host, allowed):
                out.append(f"{where}.url: host {host!r} is not in the networks this deployment may reach "
                           f"({source}: {allowed})")
        for path in sockets:
            if not socket_allowed(path, allowed):
                out.append(f"{where}.url: unix socket {path!r} is not in the networks this deployment may reach "
                           f"({source}: {allowed}; a socket passes under a pattern "
                           "naming its path, e.g. /var/run/postgresql/*)")
    return sorted(set(out), key=out.index)


def check_connected(binding, allowed: Optional[str] = None) -> None:
    """After a binding connected, before any workload: the addresses it is actually connected
    to (``Binding.peer_addresses``: the socket's peer) must be in AllowedTargets too — a name
    that resolved differently at plan time, a replica set member the server named. Raises
    TargetNotAllowed (the connection closed) naming the address."""
    allowed = allowed if allowed is not None else allowed_targets()
    if not allowed:
        return
    try:
        peers = binding.peer_addresses()
    except Exception as exc:
        peers, why = None, f"{type(exc).__name__}"
    else:
        why = "the driver does not say"
    if peers is None:
        bad = f"the address connected to could not be read ({why})"
    else:
        bad = next((f"address {p!r}" for p in peers
                    if not (socket_allowed(p, allowed) if p.startswith("/") or p.startswith("@")
                            else host_allowed(p, allowed))), None)
    if bad:
        try:
            binding.close()
        except Exception:
            pass
        raise TargetNotAllowed(f"target: connected to {bad}, which is not in the networks this deployment "
                               f"may reach (template parameter AllowedTargets: {allowed}); nothing was run")


def check_targets(runs, allowed: Optional[str] = None, source: str = ALLOWED_SOURCE) -> None:
    seen, pairs = set(), []
    for run in runs:
        t = run.target.model_dump(mode="json", exclude_none=True)
        key = repr(sorted(t.items()))
        if key not in seen:
            seen.add(key)
            pairs.append(("target", t))
    problems = target_network_problems(pairs, allowed, source)
    if problems:
        raise CampaignError(problems)
