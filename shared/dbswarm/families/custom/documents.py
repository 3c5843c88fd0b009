"""The ``custom`` family on MongoDB: collections created, loaded and indexed, and operations
(find with projection, sort and limit; insert; update; delete; aggregate) whose documents take
parameters as whole string values ``":name"``, replaced by the drawn (or captured) value —
a value is a BSON value of the document, never parsed as a query.

Each operation runs on its own (no multi-document transaction: FerretDB has none); a
transaction groups them for the mix, the latency and the captures.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Optional

from dbswarm.errors import DUPLICATE, FamilyError
from dbswarm.families.custom import model as M
from dbswarm.families.custom.generators import Draws


def mongo_db(binding: Any) -> Any:
    """The binding's pymongo database; a binding without one (an SQL engine) is refused."""
    db = getattr(binding, "db", None)
    if db is None or not hasattr(db, "list_collection_names"):
        raise FamilyError("a custom document workload (collections, op statements) runs on MongoDB: target.engine "
                          "mongodb")
    return db


def compile_template(value: Any) -> Callable[[dict], Any]:
    """A function of the parameters' values building ``value`` with every ``":name"`` string
    replaced by its value (the parts without parameters built once)."""
    if isinstance(value, str) and value.startswith(":") and M.doc_params(value):
        name = value[1:]
        return lambda values: values[name]
    if isinstance(value, dict):
        parts = [(k, compile_template(v)) for k, v in value.items()]
        return lambda values: {k: f(values) for k, f in parts}
    if isinstance(value, list):
        items = [compile_template(v) for v in value]
        return lambda values: [f(values) for f in items]
    return lambda values: value


class DocStatement:
    """One operation of a transaction on one session: ``run(db, values)`` -> the first document
    it returned (find, aggregate) or None."""

    def __init__(self, st: M.Statement):
        self.st = st
        self.op = st.op
        self.filter = compile_template(st.filter or {})
        self.document = compile_template(st.document or {})
        self.update = compile_template(st.update or {})
        self.pipeline = compile_template(st.pipeline or [])

    def run(self, db: Any, values: dict) -> Optional[dict]:
        st, coll = self.st, db[self.st.collection]
        if self.op == "find":
            cursor = coll.find(self.filter(values), st.projection)
            if st.sort:
                cursor = cursor.sort(list(st.sort.items()))
            if st.limit:
                cursor = cursor.limit(st.limit)
            docs = list(cursor)
            return docs[0] if docs else None
        if self.op == "aggregate":
            docs = list(coll.aggregate(self.pipeline(values)))
            return docs[0] if docs else None
        if self.op == "insert":
            coll.insert_one(self.document(values))
        elif self.op == "update":
            (coll.update_many if st.many else coll.update_one)(self.filter(values), self.update(values),
                                                               upsert=st.upsert)
        else:
            (coll.delete_many if st.many else coll.delete_one)(self.filter(values))
        return None


def loaded_collections(w: M.CustomWorkload) -> list[tuple[int, str, M.Collection, int]]:
    """(collection number, name, collection, first global document) of every collection the
    load writes, in order (their documents one range, as the tables' rows)."""
    out, offset = [], 0
    for i, (name, c) in enumerate(w.collections.items()):
        if c.load is not None and not c.existing and c.load.documents:
            out.append((i, name, c, offset))
            offset += c.load.documents
    return out


class DocLoader:
    """A load thread's batches: documents numbered 1..N per collection, each drawn from its own
    stream (the workload's seed, the collection, the number), inserted unordered, the ones
    already there skipped (idempotent, resumable)."""

    def __init__(self, w: M.CustomWorkload, binding: Any):
        self.w, self.b, self.db = w, binding, mongo_db(binding)
        self.rng = random.Random()
        self.draws = Draws(w.generators, self.rng, load=True)
        self.colls = [(i, name, c, off) for i, name, c, off in loaded_collections(w)]

    def batch(self, nxt: int, end: int) -> tuple:
        i, name, c, off = next(x for x in self.colls if nxt < x[3] + x[2].load.documents)  # type: ignore[union-attr]
        ld = c.load
        assert ld is not None
        hi = min(end, nxt + ld.batch, off + ld.documents)
        first = nxt - off + 1
        docs = []
        fns = [(f, self.draws.fns[g]) for f, g in ld.fields.items()]
        for n in range(first, first + hi - nxt):
            self.rng.seed((self.w.seed * 1_000_003 + 1000 + i) * (1 << 40) + n)
            self.draws.row = n
            docs.append({ld.key: n, **{f: fn() for f, fn in fns}})
        return hi, len(docs), self.insert, (name, docs)

    def insert(self, name: str, docs: list[dict]) -> None:
        try:
            self.db[name].insert_many(docs, ordered=False)
        except Exception as exc:
            if self.b.classify(exc).kind != DUPLICATE:
                raise  # the others of the batch were written (unordered): a resumed batch is idempotent


def prepare(binding: Any, w: M.CustomWorkload, stage: str) -> None:
    db = mongo_db(binding)
    for name, c in w.collections.items():
        if c.existing:
            continue
        if stage in ("before_load", "cleanup"):
            db.drop_collection(name)
        if stage == "before_load":
            db.create_collection(name)
        elif stage == "after_load":
            for index in c.indexes:
                db[name].create_index(list(index.items()))
