"""The networks a target may be in: what a deployment admits of the hosts and sockets a target
reaches (``dbswarm.bindings.endpoints`` reads them from its URL), before the campaign is planned
and again once each binding is connected. The sizes a deployment accepts are
``dbswarm.campaign.limits``'s.

Deployment parameters (template.yaml) reach the functions as environment variables:
  DBSWARM_ALLOWED_TARGETS  AllowedTargets: comma-separated CIDRs and host patterns
                           (``10.0.0.0/8,*.internal.example.com``); ``*`` allows any host.
                           Unset: no restriction (local mode).
  DBSWARM_SECRET_PREFIX    SecretPrefix: the only secrets a campaign may name through the API.
"""
from __future__ import annotations

import fnmatch
import ipaddress
import os
import socket
from typing import Any, Callable, Iterable, Optional

from dbswarm.bindings.endpoints import target_endpoints
from dbswarm.errors import CampaignError, TargetNotAllowed


def allowed_targets() -> Optional[str]:
    return os.environ.get("DBSWARM_ALLOWED_TARGETS") or None


def _rules(allowed: str) -> tuple[bool, list[Any], list[str]]:
    rules = [r.strip() for r in allowed.split(",") if r.strip()]
    nets, patterns = [], []
    for r in rules:
        try:
            nets.append(ipaddress.ip_network(r, strict=False))
        except ValueError:
            patterns.append(r.lower())
    return "*" in rules, nets, patterns


def host_allowed(host: str, allowed: str, resolve: Callable[..., Any] = socket.getaddrinfo) -> bool:
    anything, nets, patterns = _rules(allowed)
    if anything:
        return True
    try:
        addrs = {ipaddress.ip_address(host.split("%")[0] if ":" in host else host)}
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


def check_connected(binding: Any, allowed: Optional[str] = None) -> None:
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
    bad: Optional[str]
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


LOCAL_ALLOWED_SOURCE = "DBSWARM_ALLOWED_TARGETS, set in this environment"


def check_local_targets(runs: Iterable[Any]) -> Optional[str]:
    """Local mode's allow-list: DBSWARM_ALLOWED_TARGETS, when set, enforced as a deployment's
    AllowedTargets is (``runs``' targets refused now, no connection made); the list, or None."""
    allowed = allowed_targets()
    if allowed:
        check_targets(runs, allowed, LOCAL_ALLOWED_SOURCE)
    return allowed


def check_targets(runs: Iterable[Any], allowed: Optional[str] = None, source: str = ALLOWED_SOURCE) -> None:
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
