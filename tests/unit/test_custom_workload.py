"""The custom family's workload model and generators (issue 54): malformed workloads refused
with their field path (no traceback), statements' :name parameters turned into placeholders
(never values in the SQL text), and generators deterministic from (seed, thread, draw)."""
import copy
import json
import random
import uuid

import pytest

from dbswarm.campaign.spec import load_campaign
from dbswarm.errors import CampaignError
from dbswarm.families import base as families
from dbswarm.families.custom import model as M
from dbswarm.families.custom.generators import Draws
from dbswarm.families.stream import RandomStream

GOOD = {
    "family": "custom", "label": "orders", "operations": 100,
    "tables": {"accounts": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                        {"name": "balance", "type": "int"}],
                            "load": {"rows": 100, "key": "id", "columns": {"balance": "amount"}}}},
    "generators": {"aid": {"type": "uniform", "min": 1, "max": 100},
                   "amount": {"type": "uniform", "min": -5000, "max": 5000}},
    "transactions": {"pay": {"weight": 2, "statements": [
        {"sql": "SELECT balance FROM accounts WHERE id = :aid", "capture": ["bal"]},
        {"sql": "UPDATE accounts SET balance = :bal + :amount WHERE id = :aid"}]}},
}


def _with(path: str, value):
    """GOOD with the value at a dotted path replaced (a list index as a number)."""
    w = copy.deepcopy(GOOD)
    keys = path.split(".")
    node = w
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    if value is _DELETE:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return w


_DELETE = object()
STMTS = "transactions.pay.statements"

MALFORMED = [
    # (workload, the field path the problem must start with)
    (_with("generators.aid", {"type": "gauss", "mean": 1}), "workload.generators.aid"),
    (_with("generators.aid", {"type": "uniform", "min": 10, "max": 1}), "workload.generators.aid"),
    (_with("generators.aid", {"type": "zipfian", "min": 1, "max": 10, "constant": 1.5}),
     "workload.generators.aid.zipfian.constant"),
    (_with("generators.aid", {"type": "uniform", "min": 1, "max": 10, "bogus": 1}), "workload.generators.aid"),
    (_with("generators.nm", {"type": "string", "min_length": 9, "max_length": 3}), "workload.generators.nm"),
    (_with("generators.nm", {"type": "choice", "values": [1, 2], "weights": [1]}), "workload.generators.nm"),
    (_with("generators.nm", {"type": "choice", "values": [1, 2], "weights": [1, 0]}), "workload.generators.nm"),
    (_with("generators.nm", {"type": "latest", "counter": "nope"}), "workload.generators.nm.counter"),
    (_with("generators.nm", {"type": "latest", "counter": "aid"}), "workload.generators.nm.counter"),
    (_with("generators.nm", {"type": "timestamp", "min": "yesterday"}), "workload.generators.nm"),
    (_with("transactions.pay.weight", 0), "workload.transactions.pay.weight"),
    (_with("transactions.pay.weight", -3), "workload.transactions.pay.weight"),
    (_with("transactions.pay.statements", []), "workload.transactions.pay.statements"),
    (_with("transactions", {}), "workload.transactions"),
    (_with(f"{STMTS}.1.sql", "UPDATE accounts SET balance = :nothing WHERE id = :aid"),
     f"workload.{STMTS}[1].sql: parameter :nothing: no generator binds it"),
    (_with(f"{STMTS}.0.sql", "SELECT :bal"), f"workload.{STMTS}[0].sql: parameter :bal is captured by statement 0"),
    (_with("transactions.pay.bind", {"aid": "missing"}), "workload.transactions.pay.bind.aid: unknown generator"),
    (_with("transactions.pay.bind", {"zzz": "aid"}), "workload.transactions.pay.bind.zzz"),
    (_with(f"{STMTS}.1.sql", "UPDATE accounts SET note = 'x%' WHERE id = :aid"), f"workload.{STMTS}[1].sql"),
    (_with(f"{STMTS}.1.sql", "SELECT * FROM accounts WHERE id = ?"), f"workload.{STMTS}[1].sql"),
    (_with(f"{STMTS}.1.sql", "   "), f"workload.{STMTS}[1].sql"),
    (_with(f"{STMTS}.0.capture", ["aid"]), f"workload.{STMTS}[0].capture"),
    (_with(f"{STMTS}.1.capture", ["x"]), f"workload.{STMTS}[1].capture"),
    (_with(f"{STMTS}.1.kind", "delete"), f"workload.{STMTS}[1].kind"),
    (_with("transactions.pay.isolation", "snapshot"), "workload.transactions.pay.isolation"),
    (_with("transactions.pay.think_time", {"distribution": "normal"}),
     "workload.transactions.pay.think_time.distribution"),
    (_with("tables.accounts.load.columns.balance", "nope"), "workload.tables.accounts.load.columns.balance"),
    (_with("tables.accounts.load.key", "no_such"), "workload.tables.accounts.load.key"),
    (_with("tables.accounts.columns.1.type", "money"), "workload.tables.accounts.columns[1].type"),
    (_with("tables.accounts.columns.1.name", "drop table"), "workload.tables.accounts.columns[1].name"),
    (_with("tables.accounts.columns.0.key", False), "workload.tables.accounts.columns"),
    (_with("tables.accounts.columns", _DELETE), "workload.tables.accounts"),
    (_with("tables.accounts.existing", True), "workload.tables.accounts.columns"),
    (_with("tables.accounts.load.rows", -1), "workload.tables.accounts.load.rows"),
    (_with("tables.x; drop", {"existing": True}), "workload.tables.x; drop"),
    (_with("operations", -1), "workload.operations"),
    (_with("tables.accounts.ddl", {"oracle": "CREATE TABLE accounts (id int)"}), "workload.tables.accounts.ddl"),
    # text the stored plan's redaction would mask (the shards would run something else)
    (_with(f"{STMTS}.1.sql", "UPDATE accounts SET token = :amount WHERE id = :aid"),
     f"workload.{STMTS}[1].sql: reads as a credential"),
    (_with("generators.amount", {"type": "constant", "value": "password=hunter22"}),
     "workload.generators.amount.value: reads as a credential"),
    # MongoDB operations
    (_with(f"{STMTS}.1", {"op": "find"}), f"workload.{STMTS}[1]: collection: required"),
    (_with(f"{STMTS}.1", {"op": "find", "collection": "c", "sql": "SELECT 1"}), f"workload.{STMTS}[1]"),
    (_with(f"{STMTS}.1", {"op": "insert", "collection": "accounts"}), f"workload.{STMTS}[1]"),
    (_with(f"{STMTS}.1", {"op": "upsert", "collection": "accounts"}), f"workload.{STMTS}[1].op"),
    (_with(f"{STMTS}.1", {"sql": "SELECT 1", "filter": {"a": 1}}), f"workload.{STMTS}[1]"),
    (_with(f"{STMTS}.1", {"op": "find", "collection": "nope", "filter": {"_id": ":aid"}}),
     f"workload.{STMTS}[1].collection: no collection 'nope'"),
    (_with(f"{STMTS}.1", {"op": "delete", "collection": "accounts", "filter": {"_id": ":who"}}),
     f"workload.{STMTS}[1]: parameter :who: no generator binds it"),
    (_with("generators.amount", {"type": "constant", "value": {"$ne": None}}), "workload.generators.amount"),
]


@pytest.mark.parametrize("workload, field", MALFORMED, ids=[f"{i}-{f}" for i, (_, f) in enumerate(MALFORMED)])
def test_a_malformed_workload_is_refused_naming_its_field(workload, field):
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": {"engine": "sqlite"}, "workload": workload})
    problems = err.value.problems
    assert any(p.startswith(field) for p in problems), problems
    assert not any("Traceback" in p or "object at 0x" in p for p in problems), problems


def test_the_good_workload_is_valid_and_its_kinds_inferred():
    _, runs = load_campaign({"name": "c", "target": {"engine": "sqlite"}, "workload": GOOD})
    fam = families.get("custom")
    w = runs[0].workload
    assert fam.write_operations(w) == ("INSERT", "pay") and fam.read_operations(w) == ()
    read_only = _with(STMTS, [{"sql": "SELECT balance FROM accounts WHERE id = :aid"}])
    assert fam.read_operations(fam.workload(read_only)) == ("pay",)


def test_engines_without_sql_are_refused_naming_the_sql_fields():
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": {"engine": "mongodb", "url": "mongodb://h/db"}, "workload": GOOD})
    assert err.value.problems == [
        "workload.tables.accounts: a SQL table: target.engine mongodb has no SQL (write collections)",
        *(f"workload.{STMTS}[{i}].sql: a SQL statement: target.engine mongodb has no SQL (write it as a MongoDB "
          "operation: op, collection, filter, ...)" for i in (0, 1))], err.value.problems


# ---- statements ---------------------------------------------------------------------------------

@pytest.mark.parametrize("sql, text, names", [
    ("SELECT * FROM t WHERE a = :a AND b = :b_2", "SELECT * FROM t WHERE a = %s AND b = %s", ("a", "b_2")),
    ("SELECT ':not_a_param', x::int FROM t WHERE y = :y", "SELECT ':not_a_param', x::int FROM t WHERE y = %s", ("y",)),
    ("UPDATE t SET v = :v -- :c\nWHERE k = :k", "UPDATE t SET v = %s -- :c\nWHERE k = %s", ("v", "k")),
    ('SELECT "a:b" FROM t /* :x */ WHERE k = :k', 'SELECT "a:b" FROM t /* :x */ WHERE k = %s', ("k",)),
    ("SELECT :a, :a", "SELECT %s, %s", ("a", "a")),
])
def test_parameters_become_placeholders(sql, text, names):
    assert M.parse_statement(sql) == (text, names)


@pytest.mark.parametrize("sql, kind", [
    ("SELECT 1", "read"), ("  select a from t", "read"), ("WITH x AS (SELECT 1) SELECT * FROM x", "read"),
    ("SELECT * FROM t WHERE id = 1 FOR UPDATE", "write"), ("INSERT INTO t VALUES (1)", "write"),
    ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "write"), ("SELECT 'update'", "read"),
    ("UPDATE t SET a = 1", "write"), ("(SELECT 1)", "read"),
])
def test_kind_is_inferred(sql, kind):
    assert M.infer_kind(sql) == kind


# ---- generators -----------------------------------------------------------------------------------

ALL = {
    "u": {"type": "uniform", "min": 1, "max": 10},
    "z": {"type": "zipfian", "min": 1, "max": 1000},
    "zp": {"type": "zipfian", "min": 1, "max": 1000, "scrambled": False},
    "h": {"type": "hotspot", "min": 1, "max": 100, "hot_fraction": 0.1, "hot_ops": 0.9},
    "q": {"type": "unique", "start": 1001},
    "s": {"type": "sequential", "min": 1, "max": 5},
    "l": {"type": "latest", "counter": "q"},
    "g": {"type": "gaussian", "mean": 50, "stddev": 5, "min": 0, "max": 100},
    "e": {"type": "exponential", "mean": 3},
    "c": {"type": "choice", "values": ["x", "y", None], "weights": [1, 2, 3]},
    "str": {"type": "string", "min_length": 3, "max_length": 8, "alphabet": "ab"},
    "id": {"type": "uuid"},
    "ts": {"type": "timestamp", "min": "2024-01-01 00:00:00", "max": "2024-01-02 00:00:00"},
    "k": {"type": "constant", "value": "'; DROP TABLE t; --"},
}


def _specs() -> dict:
    w = M.CustomWorkload.model_validate({"transactions": {"t": {"statements": [{"sql": "SELECT 1"}]}},
                                         "generators": ALL})
    return w.generators


def _draw(seed: int, thread: int, threads: int, n: int) -> list[dict]:
    d = Draws(_specs(), RandomStream(seed), thread, threads)
    return [{k: f() for k, f in d.fns.items()} for _ in range(n)]


def test_generators_are_deterministic_per_seed_and_thread():
    a, b = _draw(5, 1, 4, 200), _draw(5, 1, 4, 200)
    assert a == b
    assert a != _draw(6, 1, 4, 200) and a != _draw(5, 2, 4, 200)


def test_generators_draw_in_their_ranges():
    rows = _draw(5, 0, 1, 3000)
    assert {r["u"] for r in rows} == set(range(1, 11))
    assert all(1 <= r["z"] <= 1000 and 1 <= r["zp"] <= 1000 and 1 <= r["h"] <= 100 for r in rows)
    assert sum(r["h"] <= 10 for r in rows) > 0.8 * len(rows)  # 90 % of draws to the hot 10 %
    assert sum(r["zp"] == 1 for r in rows) > 0.05 * len(rows)  # zipfian: the first item is the most popular
    assert [r["s"] for r in rows[:7]] == [1, 2, 3, 4, 5, 1, 2]
    assert [r["q"] for r in rows[:3]] == [1001, 1002, 1003]
    assert all(1 <= r["l"] <= r["q"] for r in rows)
    assert all(0 <= r["g"] <= 100 and isinstance(r["g"], int) for r in rows)
    assert 2 < sum(r["e"] for r in rows) / len(rows) < 4
    counts = {v: sum(r["c"] == v for r in rows) for v in ("x", "y", None)}
    assert counts["x"] < counts["y"] < counts[None]
    assert all(3 <= len(r["str"]) <= 8 and set(r["str"]) <= {"a", "b"} for r in rows)
    assert all(uuid.UUID(r["id"]).version == 4 for r in rows) and len({r["id"] for r in rows}) == len(rows)
    assert all("2024-01-01 00:00:00" <= r["ts"] <= "2024-01-02 00:00:00" for r in rows)
    assert {r["k"] for r in rows} == {"'; DROP TABLE t; --"}


def test_unique_counters_never_collide_across_threads_and_resume_where_they_stopped():
    threads = 7
    seen = []
    for t in range(threads):
        d = Draws(_specs(), RandomStream(1), t, threads)
        first = [d.fns["q"]() for _ in range(50)]
        resumed = Draws(_specs(), RandomStream(1), t, threads, saved=d.state())
        seen += first + [resumed.fns["q"]() for _ in range(50)]
    assert len(seen) == len(set(seen)) == 700 and min(seen) == 1001 and max(seen) == 1000 + 700


def test_latest_follows_its_counter_from_its_first_value():
    """The counter below 3 (no zipfian over fewer than 3 items: YCSB's divides by zero), then
    the counter's newest values the most drawn."""
    specs = M.CustomWorkload.model_validate({
        "transactions": {"t": {"statements": [{"sql": "SELECT 1"}]}},
        "generators": {"q": {"type": "unique", "start": 1}, "l": {"type": "latest", "counter": "q"}}}).generators
    d = Draws(specs, RandomStream(3), 0, 1)
    assert [d.fns["l"]() for _ in range(3)] == [1, 1, 1]
    drawn = []
    for _ in range(2000):
        top = d.fns["q"]()
        drawn.append((top, d.fns["l"]()))
    assert all(1 <= v <= top for top, v in drawn)
    # zipfian 0.99 over ~1,000 items: the newest about 1 / zeta(n) = 13 % of draws, half within the newest 10 %
    late = drawn[1000:]
    assert sum(v == top for top, v in late) > 0.08 * len(late)
    assert sum(v > 0.9 * top for top, v in late) > 0.5 * len(late)


def test_a_load_row_draws_the_same_values_whoever_draws_it():
    def row_values(row: int, before: int) -> dict:
        r = random.Random()
        d = Draws(_specs(), r, load=True)
        for other in range(before):  # another thread's rows drawn first
            r.seed(other)
            [f() for f in d.fns.values()]
        r.seed(row)
        d.row = row
        return {k: f() for k, f in d.fns.items()}
    assert row_values(42, 0) == row_values(42, 5)
    assert "l" not in row_values(1, 0)  # latest follows the run's inserts: not a load's generator


# ---- the dry run ------------------------------------------------------------------------------------

def test_the_dry_run_draws_what_the_client_sends(tmp_path):
    """``validate --sample``'s lines hold the values the run's client thread sends, in order
    (think times drawn where the client draws them), from a client on a real SQLite session."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.engine.calls import Measured
    from dbswarm.families.base import ThreadContext
    from dbswarm.measure.recorder import Recorder
    data = copy.deepcopy(GOOD)
    data["transactions"]["look"] = {"weight": 1, "think_time": {"distribution": "uniform", "min": 0, "max": 0.001},
                                    "statements": [{"sql": "SELECT balance FROM accounts WHERE id = :aid"}]}
    fam = families.get("custom")
    w = fam.workload(data)
    sample = fam.sample(w, 12, RandomStream(9), 1, 3)
    b = bindings.get("sqlite")(Connection(engine="sqlite", url=str(tmp_path / "x.db"), password=None, options={},
                                          display="sqlite"))
    b.connect()
    try:
        client = fam.run_client(w, ThreadContext(m=Measured(b, Recorder()), rng=RandomStream(9), thread=1, threads=3))
        heads = [line for line in sample if line.startswith("#")]
        assert len(heads) == 12 and {h.split()[1] for h in heads} == {"pay", "look"}
        for k, head in enumerate(heads):
            op, _, (_, call) = client.next_operation()
            assert head.split()[1] == op.name
            block = sample[sample.index(head) + 1:sample.index(heads[k + 1]) if k + 1 < len(heads) else None]
            assert all(f"{p}={v!r}" in " ".join(block) for p, v in call.values.items()), (block, call.values)
    finally:
        b.close()


def test_validate_sample_prints_without_connecting(tmp_path, capsys, monkeypatch):
    from dbswarm.cli import main
    monkeypatch.setenv("NOPE", "unused")  # an address nothing answers at: validate never connects
    spec = tmp_path / "c.yaml"
    spec.write_text(json.dumps({"name": "c", "target": {"engine": "postgresql", "url": "postgresql://u@10.255.255.1/x",
                                                        "password": {"env": "NOPE"}}, "workload": GOOD}))
    assert main(["validate", str(spec), "--sample", "3"]) == 0
    out = capsys.readouterr().out
    assert "#1 pay (write)" in out and "#3 pay" in out and "bal=<captured by statement 0>" in out


# ---- the workload in a file of its own ---------------------------------------------------------------

def test_a_workload_file_is_read_once_and_travels_in_the_plan(tmp_path, monkeypatch):
    from dbswarm.campaign.plan import make_plan
    monkeypatch.chdir(tmp_path)
    body = {k: v for k, v in GOOD.items() if k != "family"}
    (tmp_path / "orders.yaml").write_text(json.dumps(body))
    campaign, runs = load_campaign({"name": "c", "target": {"engine": "sqlite"},
                                    "workload": {"family": "custom", "file": "orders.yaml", "threads": 3},
                                    "matrix": {"label": ["a", "b"]}})
    assert [r.workload.label for r in runs] == ["a", "b"] and runs[0].workload.threads == 3
    plan = make_plan(campaign, runs, "cid", sqlite_url=str(tmp_path / "x.db"))
    w = plan.runs[0].workload
    assert "file" not in w and w["transactions"]["pay"]["weight"] == 2  # the content, not the name
    (tmp_path / "orders.yaml").unlink()  # shards need no file
    assert families.get("custom").workload(w).transactions["pay"].statements[1].sql == GOOD[
        "transactions"]["pay"]["statements"][1]["sql"]


@pytest.mark.parametrize("content, message", [
    (None, "No such file"), ("a: [1\n", "not YAML"), ("- 1\n", "expected a mapping"),
    ("x" * (2 << 20), "a workload file is at most"),
])
def test_a_bad_workload_file_is_refused_naming_workload_file(tmp_path, monkeypatch, content, message):
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / "w.yaml").write_text(content)
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": {"engine": "sqlite"}, "workload": {"family": "custom", "file": "w.yaml"}})
    assert any(p.startswith("workload.file: w.yaml: ") and message in p for p in err.value.problems), err.value.problems


def test_secret_looking_names_survive_the_stored_plan():
    """A column or a parameter named like a credential (password_hash, api_token) keeps its
    generator through the redaction of stored documents (the plan the shards read)."""
    from dbswarm.credentials.redact import redact_doc
    data = copy.deepcopy(GOOD)
    data["tables"]["accounts"]["columns"].append({"name": "password_hash", "type": "text"})
    data["tables"]["accounts"]["load"]["columns"]["password_hash"] = "amount"
    data["transactions"]["pay"]["bind"] = {"api_token": {"generator": "amount"}}
    data["transactions"]["pay"]["statements"].append({"sql": 'UPDATE accounts SET "password_hash" = :api_token'})
    fam = families.get("custom")
    w = fam.workload(data)
    stored = redact_doc(w.model_dump(mode="json"))
    again = fam.workload(stored)
    assert again.tables["accounts"].load.columns["password_hash"] == "amount"
    assert again.transactions["pay"].bind == {"api_token": "amount"}
    assert again == w


DOCS = {
    "family": "custom", "operations": 10,
    "collections": {"accounts": {"indexes": [{"country": 1}], "load": {"documents": 10, "fields": {"n": "aid"}}}},
    "generators": {"aid": {"type": "uniform", "min": 1, "max": 10}},
    "transactions": {"get": {"statements": [
        {"op": "find", "collection": "accounts", "filter": {"_id": ":aid"}, "capture": ["n"]},
        {"op": "update", "collection": "accounts", "filter": {"_id": ":aid"}, "update": {"$set": {"m": ":n"}}}]}},
}


@pytest.mark.parametrize("change, field", [
    ({"tables": GOOD["tables"]}, "workload.tables: a document workload"),
    ({"transactions": {"get": {"isolation": "serializable", **DOCS["transactions"]["get"]}}},
     "workload.transactions.get: a document workload"),
    ({"transactions": {"get": {"statements": [DOCS["transactions"]["get"]["statements"][1],
                                              DOCS["transactions"]["get"]["statements"][0]]}}},
     "workload.transactions.get.statements[0]: parameter :n is captured by statement 1"),
    ({"transactions": {"get": {"statements": [{"op": "insert", "collection": "accounts", "document": {"a": 1},
                                               "capture": ["a"]}]}}},
     "workload.transactions.get.statements[0].capture"),
    ({"collections": {"accounts": {"existing": True, "indexes": [{"a": 1}]}}}, "workload.collections.accounts"),
])
def test_a_malformed_document_workload_is_refused_naming_its_field(change, field):
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": {"engine": "mongodb", "url": "mongodb://h/db"},
                       "workload": {**DOCS, **change}})
    assert any(p.startswith(field) for p in err.value.problems), err.value.problems


@pytest.mark.parametrize("target", [{"engine": "sqlite"}, {"engine": "postgresql", "url": "postgresql://u@h/db"},
                                    {"engine": "mysql", "url": "mysql://u@h/db"}])
def test_a_document_workload_at_a_sql_engine_is_refused_naming_its_fields(target):
    load_campaign({"name": "c", "target": {"engine": "mongodb", "url": "mongodb://h/db"}, "workload": DOCS})
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": target, "workload": DOCS})
    problems = err.value.problems
    engine = target["engine"]
    assert problems[0].startswith(f"workload.collections.accounts: a MongoDB collection: target.engine {engine} is "
                                  "a SQL engine"), problems
    assert [p.split(":")[0] for p in problems[1:]] == [f"workload.transactions.get.statements[{i}].op" for i in (0, 1)]
    assert all(f"a MongoDB operation: target.engine {engine} is a SQL engine" in p for p in problems[1:])


def test_a_matrix_over_workload_files_names_the_mismatch_at_its_axis(tmp_path, monkeypatch):
    """A matrix over workload files, one of them a document workload, at a SQL engine: the
    problem names the matrix's entry and the field."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sql.json").write_text(json.dumps({k: v for k, v in GOOD.items() if k != "family"}))
    (tmp_path / "docs.json").write_text(json.dumps({k: v for k, v in DOCS.items() if k != "family"}))
    with pytest.raises(CampaignError) as err:
        load_campaign({"name": "c", "target": {"engine": "sqlite"}, "workload": {"family": "custom"},
                       "matrix": {"file": ["sql.json", "docs.json"]}})
    assert any(p.startswith("matrix.file[1] (docs.json): workload.transactions.get.statements[0].op: a MongoDB "
                            "operation: target.engine sqlite") for p in err.value.problems), err.value.problems
    assert not any("sql.json" in p for p in err.value.problems)
