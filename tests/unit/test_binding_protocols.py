"""A binding implements the protocols of the capabilities its engine declares (registration
refuses one that does not), a SQL engine declares its dialect, and a SQL family its dialects:
an engine whose dialect a family has no SQL for is a validation error naming both (it was a
KeyError in the family's SQL tables at prepare time)."""
import pytest

from dbswarm import bindings
from dbswarm.bindings import protocols
from dbswarm.bindings.base import Binding, KeyValueBinding, Multiplexed, SqlSessionBinding
from dbswarm.campaign.spec import load_campaign
from dbswarm.cli import main
from dbswarm.errors import BindingError, CampaignError, FamilyError
from dbswarm.families import base as families
from dbswarm.families import sysbench_sql
from dbswarm.families.tpcc import sql as tpcc_sql


@pytest.fixture
def scratch():
    """Engines and families declared by a test, forgotten after it."""
    engines, fams = [], []
    yield engines, fams
    for name in engines:
        e = bindings._ENGINES.pop(name, None)
        for a in (e.aliases if e else ()):
            bindings._ALIASES.pop(a, None)
        bindings._REGISTRY.pop(name, None)
    for name in fams:
        families._REGISTRY.pop(name, None)


class _Kv(KeyValueBinding):
    """Everything of the connection and of kv, doing nothing."""
    def connect(self): pass
    def create_table(self, table, fieldcount): pass
    def drop_table(self, table): pass
    def count(self, table): return 0
    def read(self, table, key, fields, rows=True): return None
    def scan(self, table, startkey, count, fields, rows=True): return []
    def update(self, table, key, values): return False
    def insert(self, table, key, values): pass
    def delete(self, table, key): return False


class _Sql(_Kv, SqlSessionBinding):
    dialect = "oracle"
    def prepare(self, sql): return sql
    def execute(self, sql, params=()): return 0
    def fetchall(self, sql, params=()): return []
    def begin(self, writes=True): pass
    def commit(self): pass
    def rollback(self): pass


def test_every_built_in_binding_implements_its_declared_protocols():
    for name in bindings.names():
        try:
            cls = bindings.get(name)  # registration checked it; checked again here, by the protocols
        except BindingError as err:
            assert "needs a driver that is not installed" in str(err)
            continue
        e = bindings.engine(name)
        assert protocols.missing(cls, protocols.Connectable) == [], name
        for cap in e.capabilities:
            assert protocols.missing(cls, protocols.PROTOCOLS[cap]) == [], (name, cap)
        if bindings.SQL in e.capabilities:
            assert e.dialect and cls.dialect == e.dialect, (name, e.dialect, cls.dialect)


def test_the_binding_base_holds_what_every_engine_implements():
    """``Binding``: the connection's life cycle and what the server says of itself, nothing of a
    capability; each capability's methods come with its base, multiplexing with ``Multiplexed``
    (an opt-in: the engines whose driver splits a call into send / finish)."""
    def public(cls):
        return {n for n in vars(cls) if not n.startswith("_")} - {"name", "capabilities", "is_real_database"}
    every = set(protocols.members(protocols.Connectable)) | set(protocols.members(protocols.ServerIntrospection))
    assert public(Binding) == every - {"name", "capabilities", "is_real_database"}
    assert public(KeyValueBinding) <= set(protocols.members(protocols.KeyValue))
    assert public(SqlSessionBinding) - {"begin_own", "end_own", "in_transaction", "statement_is_transaction"} <= set(
        protocols.members(protocols.SqlSession))
    assert not public(KeyValueBinding) & public(SqlSessionBinding)
    multiplexed = {n for n in bindings.names() if _loads(n) and issubclass(bindings.get(n), Multiplexed)}
    assert multiplexed == {"postgresql", "mysql"}, multiplexed
    assert all(isinstance(bindings.get(n).__new__(bindings.get(n)), protocols.Multiplexing) is (n in multiplexed)
               for n in bindings.names() if _loads(n) and n not in ("postgresql", "mysql"))


def _loads(name) -> bool:
    try:
        bindings.get(name)
        return True
    except BindingError:
        return False


def test_registration_refuses_a_binding_without_its_capabilitys_methods(scratch):
    engines, _ = scratch
    bindings.declare("halfkv", "nowhere", capabilities=(bindings.KV,), needs_url=False)
    engines.append("halfkv")

    class HalfKv(KeyValueBinding):
        def connect(self): pass
        def read(self, table, key, fields, rows=True): return None
        def update(self, table, key, values): return False

    with pytest.raises(BindingError) as err:
        bindings.register("halfkv")(HalfKv)
    msg = str(err.value)
    assert "binding HalfKv (engine 'halfkv') does not implement" in msg and "KeyValue" in msg
    assert "capability kv" in msg
    for method in ("create_table", "drop_table", "count", "scan", "insert", "delete"):
        assert method in msg, msg
    assert "read" not in msg.split("implement")[1].split(" of ")[0].split(", ") and "halfkv" not in bindings._REGISTRY
    # the same class, complete: registered
    bindings.register("halfkv")(type("FullKv", (_Kv,), {}))
    assert bindings.get("halfkv").__name__ == "FullKv"


def test_registration_refuses_a_sql_binding_without_the_session_or_its_dialect(scratch):
    engines, _ = scratch
    bindings.declare("halfsql", "nowhere", capabilities=(bindings.KV, bindings.SQL), needs_url=False,
                     dialect="oracle")
    engines.append("halfsql")
    with pytest.raises(BindingError) as err:
        bindings.register("halfsql")(type("KvOnly", (_Kv, SqlSessionBinding), {"dialect": "oracle"}))
    assert "prepare, execute, fetchall, begin, commit, rollback of the sql protocol (SqlSession" in str(err.value)
    with pytest.raises(BindingError) as err:
        bindings.register("halfsql")(type("OtherDialect", (_Sql,), {"dialect": "mysql"}))
    assert "its dialect 'mysql' is not the declared 'oracle'" in str(err.value)
    with pytest.raises(BindingError, match="a sql engine declares its dialect"):
        bindings.declare("nodialect", "nowhere", capabilities=(bindings.SQL,))
    with pytest.raises(BindingError, match="dialect 'oracle' without the sql capability"):
        bindings.declare("kvdialect", "nowhere", capabilities=(bindings.KV,), dialect="oracle")


def test_an_engine_whose_dialect_a_family_lacks_is_a_validation_error(scratch, tmp_path, capsys):
    engines, _ = scratch
    bindings.declare("oracle", "nowhere", capabilities=(bindings.KV, bindings.SQL), needs_url=False,
                     dialect="oracle")
    engines.append("oracle")
    bindings.register("oracle")(_Sql)
    for family in ("sysbench", "tpcc"):
        with pytest.raises(CampaignError) as err:
            load_campaign(f"name: d\ntarget: {{engine: oracle}}\nworkload: {{family: {family}}}\n")
        dialects = ", ".join(families.get(family).dialects)
        assert err.value.problems == [f"target.engine: family {family} has no SQL for engine oracle (its dialect "
                                      f"'oracle'; the family's dialects: {dialects})"]
    # YCSB needs kv only: the same engine is valid for it
    assert len(load_campaign("name: d\ntarget: {engine: oracle}\nworkload: {recordcount: 10}\n")[1]) == 1
    spec = tmp_path / "c.yaml"
    spec.write_text("name: d\ntarget: {engine: oracle}\nworkload: {family: tpcc}\n")
    assert main(["validate", str(spec)]) == 2
    assert "family tpcc has no SQL for engine oracle" in capsys.readouterr().err


def test_a_family_without_an_engines_dialect_refuses_it_by_name(scratch):
    """A SQL family written for two dialects only, on SQLite (a built-in engine it lacks)."""
    _, fams = scratch

    class PgMyWorkload(families.WorkloadModel):
        family: str = "pgmy"

    class PgMy(families.Family):
        name, model, requires, dialects = "pgmy", PgMyWorkload, "sql", ("postgresql", "mysql")

    families.register(PgMy())
    fams.append("pgmy")
    with pytest.raises(CampaignError) as err:
        load_campaign("name: d\ntarget: {engine: sqlite}\nworkload: {family: pgmy}\n")
    assert err.value.problems == ["target.engine: family pgmy has no SQL for engine sqlite (its dialect 'sqlite'; "
                                  "the family's dialects: postgresql, mysql)"]
    runs = load_campaign("name: d\ntarget: {engine: postgresql, url: 'postgresql://u@h/db'}\n"
                         "workload: {family: pgmy}\n")[1]
    assert [r.target.engine for r in runs] == ["postgresql"]


def test_a_sql_family_must_declare_its_dialects(scratch):
    class NoDialectWorkload(families.WorkloadModel):
        family: str = "nodialect"

    class NoDialect(families.Family):
        name, model, requires = "nodialect", NoDialectWorkload, "sql"

    with pytest.raises(FamilyError, match="family 'nodialect' requires sql: it needs dialects"):
        families.register(NoDialect())
    assert "nodialect" not in families._REGISTRY


# the tables looked up with .get (a dialect without a row has nothing to do there)
OPTIONAL = {"index_exists", "INDEX_EXISTS", "ANALYZE"}


def test_the_declared_dialects_are_the_rows_of_every_sql_table():
    fam = families.get("sysbench")
    assert fam.dialects == ("sqlite", "mysql", "postgresql")
    for kind, sql in sysbench_sql.SQL.items():
        if isinstance(sql, dict) and kind not in OPTIONAL:
            assert set(sql) == set(fam.dialects), kind
    fam = families.get("tpcc")
    assert set(fam.dialects) == {"sqlite", "mysql", "postgresql"}
    for name in ("TYPES", "CREATE_INDEX"):
        assert set(getattr(tpcc_sql, name)) == set(fam.dialects), name
    for name in OPTIONAL:
        assert set(getattr(tpcc_sql, name, {})) <= set(fam.dialects), name
