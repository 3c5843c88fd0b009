"""The endpoints of a target: every network host and unix socket its connections reach, read
from its URL (and the URLs and host keys inside its options) by the parser its driver uses.
What a deployment admits of them is ``dbswarm.campaign.admission``'s.
"""
from __future__ import annotations

import os
import re
from typing import Any, Optional
from urllib.parse import urlsplit

from dbswarm.bindings import canonical, engine
from dbswarm.bindings.mysql import parse_mysql_url
from dbswarm.credentials.redact import redact_message

# The check reads a target's URL with the parser its driver uses (libpq's own for PostgreSQL,
# the binding's for MySQL/MariaDB, pymongo's for MongoDB), so that it sees exactly the hosts the
# driver connects to; a URL that parsers could read differently (two '@' before the path, a
# fragment, control characters) is refused rather than guessed at.

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
    name = canonical(target["engine"]) if target.get("engine") else None
    if name is not None and (engine(name).embedded or not engine(name).is_real_database):
        return hosts, sockets, problems   # a database file (its url is a path) or no database: no network
    _endpoints_of(target.get("url"), hosts, sockets, problems, "url")
    _endpoints_in_options(target.get("options") or {}, hosts, sockets, problems, "options")
    return hosts, sockets, problems


def target_hosts(target: dict) -> list[str]:
    """Every network host a target connects to: its URL's (several for a PostgreSQL host list
    or a MongoDB seed list), a libpq keyword string's, and those of URLs inside its options.
    Unix socket paths are not hosts (``target_endpoints`` has them)."""
    return target_endpoints(target)[0]


def _add_host(value: str, hosts: list[str], sockets: list[str]) -> None:
    if value.startswith("/") or value.startswith("@"):   # libpq: '@name' is an abstract socket
        sockets.append(value)
    else:
        hosts.append(value)


def _endpoints_in_options(value: Any, hosts: list[str], sockets: list[str], problems: list[str],
                          where: str) -> None:
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


def _endpoints_of(url: Any, hosts: list[str], sockets: list[str], problems: list[str], where: str) -> None:
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


def _libpq_endpoints(url: str, hosts: list[str], sockets: list[str]) -> None:
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


def _mysql_endpoints(url: str, hosts: list[str], sockets: list[str]) -> None:
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


def _mongo_endpoints(url: str, hosts: list[str], sockets: list[str]) -> None:
    """pymongo's parser: the seed list (mongodb+srv: the hosts of its SRV record, looked up)."""
    if "#" in url:
        raise ValueError("a fragment ('#') has no meaning in a MongoDB URL")
    from pymongo import uri_parser  # noqa: PLC0415 (an optional driver)
    parsed = uri_parser.parse_uri(url)
    for host, _port in parsed["nodelist"]:
        _add_host(str(host), hosts, sockets)


def _generic_endpoints(url: str, hosts: list[str], sockets: list[str]) -> None:
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

