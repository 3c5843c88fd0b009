"""The custom family on MongoDB (FerretDB 1.24 in the tests; issue 54 item 4): collections
created, loaded, indexed; find (projection, sort, limit), insert, update, delete and aggregate
with generated values in their documents; per-operation figures; 1 shard and 2 shards with a
fixed operation count leave the same documents (the run's update is a $set: FerretDB 1.24
loses concurrent $inc of one document whatever the client — 4 pymongo clients x 150 $inc of one
document kept 264 of 600 —, so a sum would depend on the interleaving); a generated string that
looks like a query operator stays a string value."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

CUSTOMERS = 300
OPERATIONS = 160
SNEAKY = '{"$ne": null}'

WORKLOAD = {
    "family": "custom", "label": "docs", "threads": 4, "operations": OPERATIONS, "time": 600,
    "collections": {
        "cwd_customers": {"indexes": [{"country": 1}],
                          "load": {"documents": CUSTOMERS, "batch": 100,
                                   "fields": {"name": "name", "country": "country", "balance": "opening"}}},
        "cwd_orders": {},
    },
    "generators": {
        "cust": {"type": "zipfian", "min": 1, "max": CUSTOMERS},
        "name": {"type": "string", "min_length": 5, "max_length": 20},
        "country": {"type": "choice", "values": ["US", "DE", SNEAKY]},
        "opening": {"type": "uniform", "min": 0, "max": 1000},
        "oid": {"type": "unique"},
        "amount": {"type": "uniform", "min": 1, "max": 50},
    },
    "transactions": {
        "buy": {"weight": 3, "statements": [
            {"op": "find", "collection": "cwd_customers", "filter": {"_id": ":cust"},
             "projection": {"balance": 1}, "capture": ["balance"]},
            {"op": "insert", "collection": "cwd_orders",
             "document": {"_id": ":oid", "customer": ":cust", "amount": ":amount", "seen": ":balance"}},
            {"op": "update", "collection": "cwd_customers", "filter": {"_id": ":cust"},
             "update": {"$set": {"touched": True}}}]},
        "report": {"weight": 1, "bind": {"where": "country"}, "statements": [
            {"op": "aggregate", "collection": "cwd_customers",
             "pipeline": [{"$match": {"country": ":where"}}, {"$group": {"_id": None, "n": {"$sum": 1}}}]},
            {"op": "find", "collection": "cwd_customers", "filter": {"country": ":where"}, "sort": {"balance": -1},
             "limit": 5}]},
        "forget": {"weight": 1, "statements": [
            {"op": "delete", "collection": "cwd_orders", "filter": {"customer": ":cust", "amount": ":amount"}}]},
    },
}


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _docs(env: dict, name: str) -> list[dict]:
    client = servers.mongo_admin(env)
    try:
        return list(client.get_default_database()[name].find({}))
    finally:
        client.close()


def _checksum(docs: list[dict]) -> str:
    return hashlib.sha256(repr(sorted(repr(sorted(d.items())) for d in docs)).encode()).hexdigest()


def test_a_document_workload_runs_and_any_shard_layout_leaves_the_same_documents(env, tmp_path):
    seen = {}
    for shards in (1, 2):
        campaign = {"name": f"custom-docs-{shards}", "seed": 4, "target": servers.target("mongodb", env),
                    "workload": WORKLOAD, "fanout": {"shards": shards}, "phases": ["prepare", "load", "run"]}
        out = run_campaign(campaign, str(tmp_path / str(shards)), show_progress=False, lead_seconds=0.5,
                           log=lambda *a: None)
        result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
        assert result["status"] == "complete", result["status"]
        run = result["runs"][0]
        assert run["phases"]["load"]["operations"]["INSERT"]["count"] == CUSTOMERS
        phase = run["phases"]["run"]
        assert phase["errors_total"] == 0, phase["errors"]
        counts = {op: s["count"] for op, s in phase["operations"].items()}
        assert sum(counts.values()) == OPERATIONS and set(counts) == {"buy", "report", "forget"}, counts
        for name, t in phase["custom"]["transactions"].items():
            assert [s["count"] for s in t["statements"]] == [counts[name]] * len(t["statements"]), t
        assert phase["read_latency"]["calls"] == counts["report"]
        assert phase["write_latency"]["calls"] == counts["buy"] + counts["forget"]
        customers, orders = _docs(env, "cwd_customers"), _docs(env, "cwd_orders")
        assert len(customers) == CUSTOMERS
        # the operator-looking string was stored, and matched, as a plain string
        assert any(c["country"] == SNEAKY for c in customers)
        assert counts["buy"] - counts["forget"] <= len(orders) <= counts["buy"]
        seen[shards] = (counts, _checksum(customers), _checksum(orders))
    assert seen[1] == seen[2]


def test_operations_go_on_after_a_reconnect(env, tmp_path):
    """A reconnect replaces the binding's database object: the client's operations use the new one
    (the old one's client is closed)."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.engine.calls import Measured
    from dbswarm.families import base as families
    from dbswarm.families.base import ThreadContext
    from dbswarm.families.stream import RandomStream
    from dbswarm.measure.recorder import Recorder
    t = servers.target("mongodb", env)
    b = bindings.get("mongodb")(Connection(engine="mongodb", url=t["url"], password=None, options=t["options"],
                                           display="ferretdb"))
    b.connect()
    try:
        fam = families.get("custom")
        w = fam.workload({**WORKLOAD, "transactions": {"buy": WORKLOAD["transactions"]["buy"]}})
        fam.prepare(b, w, "before_load")
        client = fam.run_client(w, ThreadContext(m=Measured(b, Recorder()), rng=RandomStream(1), thread=0, threads=1))
        for _ in range(2):
            _, fn, args = client.next_operation()
            fn(*args)
            b.reconnect()
        assert len(_docs(env, "cwd_orders")) == 2
    finally:
        b.close()
