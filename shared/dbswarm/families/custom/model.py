"""The ``custom`` family's campaign model: a workload written as data (tables, generators,
transactions of SQL statements with named parameters), and its cross-field checks, each
naming the field it is about (``problems``).

Statements are written with ``:name`` parameters; ``parse_statement`` turns them into the
sessions' ``%s`` placeholders and the order the values go to the driver in. Values are
never put into the SQL text.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Optional, Self, Union

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator, model_validator

from dbswarm.credentials.redact import SECRET_KEY, redact_doc
from dbswarm.families.base import WorkloadModel

DIALECTS = ("postgresql", "mysql", "sqlite")
IDENT = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
ISOLATION = {"read_uncommitted": "READ UNCOMMITTED", "read_committed": "READ COMMITTED",
             "repeatable_read": "REPEATABLE READ", "serializable": "SERIALIZABLE"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _names_in(v: Any) -> Any:
    """A name -> generator mapping whose values may also be written {generator: NAME} (the form
    a key that looks like a secret, e.g. a column ``password_hash``, keeps in stored documents:
    their redaction masks a string under such a key)."""
    if isinstance(v, dict):
        return {k: x["generator"] if isinstance(x, dict) and set(x) == {"generator"} else x for k, x in v.items()}
    return v


def _names_out(v: dict[str, str]) -> dict[str, Any]:
    return {k: {"generator": g} if SECRET_KEY.match(k) else g for k, g in v.items()}


# ---- generators ---------------------------------------------------------------------------

class _Range(_Strict):
    min: int = 1
    max: int

    @model_validator(mode="after")
    def _order(self) -> Self:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self


class UniformGen(_Range):
    type: Literal["uniform"]


class ZipfianGen(_Range):
    type: Literal["zipfian"]
    constant: float = Field(0.99, gt=0, lt=1, description="YCSB's zipfian constant")
    scrambled: bool = Field(True, description="popular values spread over the range (YCSB's scrambled zipfian)")


class HotspotGen(_Range):
    type: Literal["hotspot"]
    hot_fraction: float = Field(0.2, gt=0, le=1, description="share of the range that is hot")
    hot_ops: float = Field(0.8, ge=0, le=1, description="share of the draws that go to the hot part")


class LatestGen(_Strict):
    type: Literal["latest"]
    counter: str = Field(description="a unique or sequential generator whose latest values are the most popular")
    constant: float = Field(0.99, gt=0, lt=1)


class GaussianGen(_Strict):
    type: Literal["gaussian"]
    mean: float
    stddev: float = Field(gt=0)
    min: Optional[float] = None
    max: Optional[float] = None
    integer: bool = True

    @model_validator(mode="after")
    def _order(self) -> Self:
        return _bounds_in_order(self)


class ExponentialGen(_Strict):
    type: Literal["exponential"]
    mean: float = Field(gt=0)
    min: float = 0
    max: Optional[float] = None
    integer: bool = True

    @model_validator(mode="after")
    def _order(self) -> Self:
        return _bounds_in_order(self)


def _bounds_in_order(gen: Any) -> Any:
    if gen.min is not None and gen.max is not None and gen.max < gen.min:
        raise ValueError(f"max ({gen.max:g}) is below min ({gen.min:g})")
    return gen


class SequentialGen(_Range):
    type: Literal["sequential"]


class UniqueGen(_Strict):
    type: Literal["unique"]
    start: int = Field(1, description="the first value; thread t of T draws start + t, start + t + T, ...")


class ChoiceGen(_Strict):
    type: Literal["choice"]
    values: list[Union[int, float, str, None]] = Field(min_length=1)
    weights: Optional[list[Annotated[float, Field(gt=0)]]] = None

    @model_validator(mode="after")
    def _weights(self) -> Self:
        if self.weights is not None and len(self.weights) != len(self.values):
            raise ValueError(f"weights: {len(self.weights)} weights for {len(self.values)} values")
        return self


class StringGen(_Strict):
    type: Literal["string"]
    min_length: int = Field(1, ge=0, le=1_000_000)
    max_length: int = Field(16, ge=0, le=1_000_000)
    alphabet: str = Field("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_length=1)

    @model_validator(mode="after")
    def _order(self) -> Self:
        if not self.alphabet.isascii() or len(self.alphabet) > 256:
            raise ValueError("alphabet: 1 to 256 ASCII characters")
        if self.max_length < self.min_length:
            raise ValueError(f"max_length ({self.max_length}) is below min_length ({self.min_length})")
        return self


class UuidGen(_Strict):
    type: Literal["uuid"]


class TimestampGen(_Strict):
    type: Literal["timestamp"]
    min: str = Field("2020-01-01 00:00:00", description="earliest instant (ISO 8601, UTC)")
    max: str = Field("2025-12-31 23:59:59", description="latest instant (ISO 8601, UTC)")
    now: bool = Field(False, description="the clock's current time instead (not reproducible)")

    @field_validator("min", "max")
    @classmethod
    def _iso(cls, v: str) -> str:
        try:
            datetime.fromisoformat(v)
        except ValueError:
            raise ValueError(f"{v!r} is not an ISO 8601 date and time (2024-01-31 12:00:00)") from None
        return v

    @model_validator(mode="after")
    def _order(self) -> Self:
        if _utc(self.max) < _utc(self.min):
            raise ValueError(f"max ({self.max}) is before min ({self.min})")
        return self


def _utc(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


class ConstantGen(_Strict):
    type: Literal["constant"]
    value: Union[int, float, str, None]


Generator = Annotated[Union[UniformGen, ZipfianGen, HotspotGen, LatestGen, GaussianGen, ExponentialGen,
                            SequentialGen, UniqueGen, ChoiceGen, StringGen, UuidGen, TimestampGen, ConstantGen],
                      Field(discriminator="type")]
GENERATOR_TYPES = ("uniform", "zipfian", "hotspot", "latest", "gaussian", "exponential", "sequential", "unique",
                   "choice", "string", "uuid", "timestamp", "constant")
COUNTERS = ("unique", "sequential")


class ThinkTime(_Strict):
    """Seconds slept before a transaction (after the last one of the thread)."""
    distribution: Literal["constant", "uniform", "exponential"] = "constant"
    mean: float = Field(0, ge=0, le=3600, description="constant: the seconds; exponential: the mean")
    min: float = Field(0, ge=0, le=3600)
    max: float = Field(0, ge=0, le=3600)


# ---- tables -------------------------------------------------------------------------------

COLUMN_TYPE = re.compile(r"^(int|integer|bigint|smallint|text|float|double|boolean|timestamp|uuid|date"
                         r"|varchar\(\d{1,5}\)|char\(\d{1,3}\)|decimal\(\d{1,2}, ?\d{1,2}\))$", re.I)


class Column(_Strict):
    name: str = Field(pattern=IDENT)
    type: str = Field(description="int, bigint, smallint, text, varchar(n), char(n), float, double, "
                      "decimal(p,s), boolean, timestamp, date, uuid")
    key: bool = Field(False, description="part of the primary key")
    nullable: bool = True
    index: bool = Field(False, description="a secondary index on it, built after the load")

    @field_validator("type")
    @classmethod
    def _type(cls, v: str) -> str:
        if not COLUMN_TYPE.match(v.strip()):
            raise ValueError(f"{v!r} is not a portable column type (int, bigint, smallint, text, varchar(n), "
                             "char(n), float, double, decimal(p,s), boolean, timestamp, date, uuid); write the "
                             "table's DDL per dialect instead (ddl)")
        return v.strip().lower()


class Load(_Strict):
    rows: int = Field(ge=0, le=10_000_000_000, description="rows the load phase writes")
    key: str = Field(description="the column that gets the row number (1 .. rows): unique, it makes the batches "
                     "idempotent")
    columns: dict[str, str] = Field(default_factory=dict, description="column -> the generator of its values")
    batch: int = Field(500, ge=1, le=100_000, description="rows per INSERT")

    _columns_in = field_validator("columns", mode="before")(classmethod(lambda cls, v: _names_in(v)))

    @field_serializer("columns")
    def _columns_out(self, v: dict[str, str]) -> dict[str, Any]:
        return _names_out(v)


class Table(_Strict):
    existing: bool = Field(False, description="the table is there already: not created, loaded nor dropped")
    columns: Optional[list[Column]] = Field(None, min_length=1)
    ddl: Optional[dict[Literal["postgresql", "mysql", "sqlite"], str]] = Field(
        None, description="CREATE TABLE statement per dialect (instead of columns)")
    indexes: list[str] = Field(default_factory=list, description="CREATE INDEX statements run after the load")
    load: Optional[Load] = None


# ---- transactions ------------------------------------------------------------------------

DOC_OPS = ("find", "insert", "update", "delete", "aggregate")


class Statement(_Strict):
    """A SQL statement (``sql``), or a MongoDB operation (``op`` on ``collection``) whose
    documents hold parameters as strings ``":name"`` (a whole value), anywhere."""
    sql: Optional[Union[str, dict[Literal["postgresql", "mysql", "sqlite"], str]]] = Field(
        None, description="the statement, with :name parameters; or one per dialect")
    op: Optional[Literal["find", "insert", "update", "delete", "aggregate"]] = Field(
        None, description="a MongoDB operation instead of sql")
    collection: Optional[str] = None
    filter: Optional[dict[str, Any]] = Field(None, description="find, update, delete: the filter")
    projection: Optional[dict[str, Any]] = None
    sort: Optional[dict[str, Literal[1, -1]]] = None
    limit: int = Field(0, ge=0, description="find: at most this many documents (0: all)")
    document: Optional[dict[str, Any]] = Field(None, description="insert: the document")
    update: Optional[dict[str, Any]] = Field(None, description="update: the update document ($set, $inc, ...)")
    many: bool = Field(False, description="update, delete: every matching document (default: one)")
    upsert: bool = False
    pipeline: Optional[list[dict[str, Any]]] = Field(None, description="aggregate: the pipeline")
    capture: list[str] = Field(default_factory=list, description="variables set from the first row's columns, "
                               "in order (pgbench's \\gset), for the statements after it; documents: the first "
                               "document's fields of these names")
    kind: Optional[Literal["read", "write"]] = Field(None, description="default: inferred (SELECT, find, "
                                                     "aggregate: read)")

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.sql is None) == (self.op is None):
            raise ValueError("sql (a SQL statement) or op (a MongoDB operation), one of them")
        if self.op is not None:
            if not self.collection:
                raise ValueError(f"collection: required with op {self.op}")
            need = {"insert": "document", "update": "update", "aggregate": "pipeline"}.get(self.op)
            if need and getattr(self, need) is None:
                raise ValueError(f"{need}: required with op {self.op}")
        elif any(getattr(self, k) is not None for k in ("collection", "filter", "projection", "sort", "document",
                                                        "update", "pipeline")):
            raise ValueError("collection, filter, projection, sort, document, update and pipeline go with op, "
                             "not with sql")
        return self


class DocLoad(_Strict):
    documents: int = Field(ge=0, le=10_000_000_000, description="documents the load phase writes")
    key: str = Field("_id", description="the field that gets the document number (1 .. documents)")
    fields: dict[str, str] = Field(default_factory=dict, description="field -> the generator of its values")
    batch: int = Field(500, ge=1, le=100_000)

    _fields_in = field_validator("fields", mode="before")(classmethod(lambda cls, v: _names_in(v)))

    @field_serializer("fields")
    def _fields_out(self, v: dict[str, str]) -> dict[str, Any]:
        return _names_out(v)


class Collection(_Strict):
    existing: bool = Field(False, description="the collection is there already: not created, loaded nor dropped")
    indexes: list[dict[str, Literal[1, -1]]] = Field(default_factory=list, description="indexes built after the "
                                                     "load, each {field: 1 or -1, ...}")
    load: Optional[DocLoad] = None


class Transaction(_Strict):
    weight: float = Field(1, description="relative frequency (any positive number)")
    statements: list[Statement] = Field(min_length=1)
    bind: dict[str, str] = Field(default_factory=dict, description="parameter -> generator (default: the "
                                 "generator of the parameter's name)")
    kind: Optional[Literal["read", "write"]] = Field(None, description="default: write if any statement writes")
    isolation: Optional[Literal["read_uncommitted", "read_committed", "repeatable_read", "serializable"]] = None
    transaction: bool = Field(True, description="BEGIN ... COMMIT around the statements (false: each statement "
                              "commits on its own)")
    think_time: Optional[ThinkTime] = None
    max_tries: int = Field(10, ge=1, le=1000, description="attempts of a transaction that fails on a "
                           "serialization failure or deadlock (pgbench's --max-tries); retries are counted apart")

    _bind_in = field_validator("bind", mode="before")(classmethod(lambda cls, v: _names_in(v)))

    @field_serializer("bind")
    def _bind_out(self, v: dict[str, str]) -> dict[str, Any]:
        return _names_out(v)


class CustomWorkload(WorkloadModel):
    """A workload described as data: tables, generators and weighted transactions."""
    family: Literal["custom"] = "custom"
    file: Optional[str] = Field(None, exclude=True, description="a YAML file holding this workload's keys (tables, "
                                "generators, transactions, ...), relative to the current directory; keys written "
                                "beside it override the file's. Read once, when the campaign is validated: the "
                                "plan carries its content (shards need no file)")
    label: str = Field("custom", pattern=r"^[A-Za-z0-9_.-]{1,64}$", description="the workload's name in reports")
    seed: int = Field(1, ge=0, description="the loaded rows' values derive from it and the row number (the "
                      "campaign's seed drives the run phase)")
    tables: dict[str, Table] = Field(default_factory=dict)
    collections: dict[str, Collection] = Field(default_factory=dict, description="MongoDB collections (a "
                                               "document workload, instead of tables)")
    generators: dict[str, Generator] = Field(default_factory=dict)
    transactions: dict[str, Transaction] = Field(min_length=1)
    operations: int = Field(0, ge=0, description="transactions over all threads (0: until time)")
    time: float = Field(60, gt=0, description="seconds of the run phase")
    rate: Optional[float] = Field(None, gt=0, description="total transactions/s (unthrottled if absent)")

    @property
    def name(self) -> str:
        return self.label

    @property
    def documents(self) -> bool:
        """A MongoDB workload (collections, op statements) rather than a SQL one."""
        return bool(self.collections) or any(st.op for t in self.transactions.values() for st in t.statements)


# ---- statements: :name parameters -> %s -------------------------------------------------------

_TOKEN = re.compile(r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|--[^\n]*|/\*.*?\*/|::|:([A-Za-z_][A-Za-z0-9_]*)|%|\?""",
                    re.S)
READ_VERBS = ("select", "with", "show", "values", "table", "explain")
_WRITE_WORD = re.compile(r"\b(insert|update|delete|merge|replace|upsert|create|drop|alter|truncate|call)\b", re.I)


class StatementError(ValueError):
    pass


def parse_statement(sql: str) -> tuple[str, tuple[str, ...]]:
    """``:name`` parameters -> ``%s`` (outside quotes and comments; ``::`` casts kept), and the
    parameters' names in order. A literal ``%`` or ``?`` is refused: the sessions' placeholder
    forms use them (pass a LIKE pattern as a parameter)."""
    out, names, pos = [], [], 0
    for m in _TOKEN.finditer(sql):
        tok = m.group(0)
        if tok in ("%", "?"):
            raise StatementError(f"a literal {tok!r} outside quotes: the drivers' placeholders use it; pass the "
                                 "value as a parameter")
        if m.group(1) is None:
            continue
        out.append(sql[pos:m.start()])
        out.append("%s")
        names.append(m.group(1))
        pos = m.end()
    out.append(sql[pos:])
    text = "".join(out)
    if "%" in text.replace("%s", ""):
        raise StatementError("a literal '%' inside quotes: the drivers' placeholders use it; pass the pattern "
                             "as a parameter")
    return text, tuple(names)


def infer_kind(sql: str) -> str:
    """read when the statement's first word is a query's (SELECT, WITH ...) and no word of it
    writes (quotes and comments left out) and it locks no rows (FOR UPDATE): else write."""
    bare = _TOKEN.sub(lambda m: " " if m.group(0)[0] in "'\"`-/" else m.group(0), sql).strip().lower()
    first = bare.split(None, 1)[0] if bare else ""
    if first.lstrip("(") not in READ_VERBS or _WRITE_WORD.search(bare) or re.search(r"\bfor\s+(update|share)\b",
                                                                                       bare):
        return "write"
    return "read"


def doc_params(value: Any) -> tuple[str, ...]:
    """The ``":name"`` parameters of a MongoDB operation's documents, in order."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop(0)
        if isinstance(v, str) and re.match(r"^:[A-Za-z_][A-Za-z0-9_]*$", v):
            out.append(v[1:])
        elif isinstance(v, dict):
            stack[:0] = list(v.values())
        elif isinstance(v, list):
            stack[:0] = list(v)
    return tuple(out)


def statement_params(st: Statement) -> tuple[str, ...]:
    """A statement's parameters in order (SQL: its first text's)."""
    if st.op is not None:
        return doc_params([st.filter, st.document, st.update, st.pipeline])
    return parse_statement(next(iter(statement_texts(st).values())))[1]


def statement_text(st: Statement) -> str:
    """One line describing the statement (reports, the dry run)."""
    if st.op is None:
        return " ".join(next(iter(statement_texts(st).values())).split())
    body = ", ".join(f"{k}={getattr(st, k)}" for k in ("filter", "projection", "sort", "document", "update",
                                                       "pipeline") if getattr(st, k) is not None)
    return f"{st.collection}.{st.op}({body})" + (f".limit({st.limit})" if st.limit else "")


def statement_texts(st: Statement) -> dict[str, str]:
    """dialect -> SQL of a statement (one text: every dialect's; per dialect: those it has)."""
    if st.sql is None:
        return {}
    return {str(d): s for d, s in st.sql.items()} if isinstance(st.sql, dict) else {d: st.sql for d in DIALECTS}


def statement_kind(st: Statement) -> str:
    if st.op is not None:
        return st.kind or ("read" if st.op in ("find", "aggregate") else "write")
    return st.kind or ("write" if any(infer_kind(s) == "write" for s in statement_texts(st).values()) else "read")


def transaction_kind(t: Transaction) -> str:
    return t.kind or ("write" if any(statement_kind(s) == "write" for s in t.statements) else "read")


# ---- cross-field checks -----------------------------------------------------------------------

def missing_dialect(w: CustomWorkload, dialect: str) -> list[str]:
    """The fields that have no SQL for this dialect (a table's ddl, a statement's sql given per
    dialect), as paths under ``workload``."""
    out = [f"workload.tables.{t}.ddl" for t, table in w.tables.items()
           if not table.existing and table.ddl is not None and dialect not in table.ddl]
    out += [f"workload.transactions.{n}.statements[{i}].sql" for n, tx in w.transactions.items()
            for i, st in enumerate(tx.statements) if st.sql is not None and dialect not in statement_texts(st)]
    return out


def masked(w: CustomWorkload) -> list[tuple[tuple[Any, ...], str]]:
    """The workload's texts that the redaction of stored documents (plan.json, result.json)
    would change — ``token = :t`` in a statement reads as a credential there —, so that the
    shards, which read the workload from the plan, would run something else: refused, with
    what to write instead."""
    dump = w.model_dump(mode="json", exclude_none=True)
    out: list[tuple[tuple[Any, ...], str]] = []

    def walk(a: Any, b: Any, loc: tuple[Any, ...]) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in a:
                walk(a[k], b.get(k), loc + (k,))
        elif isinstance(a, list) and isinstance(b, list):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, loc + (i,))
        elif a != b:
            out.append((loc, "reads as a credential (a name like password, token, secret or api_key followed by "
                        "'=' or ':'), which dbswarm masks in the documents it stores, the plan the shards read "
                        "included: quote the identifier (\"token\" = :t, `token` = :t) or write the parameter "
                        "first (:t = token)"))
    walk(dump, redact_doc(dump), ())
    return out


def problems(w: CustomWorkload) -> list[tuple[tuple[Any, ...], str]]:  # noqa: C901 (one pass over the document)
    """Every cross-field problem as (location, message): an unknown generator, a parameter no
    generator binds, a capture used before it is set, a weight that is not positive, ..."""
    out: list[tuple[tuple[Any, ...], str]] = []
    gens = w.generators
    names = sorted(gens)

    def unknown(name: str) -> str:
        return f"unknown generator {name!r}" + (f" (generators: {', '.join(names)})" if names else
                                                " (the workload has no generators)")
    for g, spec in gens.items():
        if not re.match(IDENT, g):
            out.append((("generators", g), "a generator's name is letters, digits and _"))
        if isinstance(spec, LatestGen):
            target = gens.get(spec.counter)
            if target is None:
                out.append((("generators", g, "counter"), unknown(spec.counter)))
            elif target.type not in COUNTERS:
                out.append((("generators", g, "counter"), f"{spec.counter!r} is a {target.type} generator; latest "
                            "follows a unique or sequential one"))
    for t, table in w.tables.items():
        loc: tuple[Any, ...] = ("tables", t)
        if not re.match(IDENT, t):
            out.append((loc, "a table's name is letters, digits and _ (up to 63)"))
        if table.existing:
            for key in ("columns", "ddl", "load"):
                if getattr(table, key):
                    out.append((loc + (key,), "an existing table is not created nor loaded: no " + key))
            if table.indexes:
                out.append((loc + ("indexes",), "an existing table is not created nor loaded: no indexes"))
            continue
        if (table.columns is None) == (table.ddl is None):
            out.append((loc, "columns (portable) or ddl (per dialect), one of them"))
        cols = [c.name for c in table.columns or []]
        if len(set(cols)) != len(cols):
            out.append((loc + ("columns",), "a column is named twice"))
        if table.columns is not None and not any(c.key for c in table.columns):
            out.append((loc + ("columns",), "no key column (key: true): the load's batches need a unique key"))
        ld = table.load
        if ld is not None:
            if table.columns is not None and ld.key not in cols:
                out.append((loc + ("load", "key"), f"no column {ld.key!r} in the table"))
            for col, g in ld.columns.items():
                if table.columns is not None and col not in cols:
                    out.append((loc + ("load", "columns", col), f"no column {col!r} in the table"))
                if not re.match(IDENT, col):
                    out.append((loc + ("load", "columns", col), "a column's name is letters, digits and _"))
                if g not in gens:
                    out.append((loc + ("load", "columns", col), unknown(g)))
                elif gens[g].type == "latest":
                    out.append((loc + ("load", "columns", col), "a load's column cannot draw from latest"))
                elif (too_long := _too_long(gens[g], g, table, col)) is not None:
                    out.append((loc + ("load", "columns", col), too_long))
            if ld.key in ld.columns:
                out.append((loc + ("load", "columns", ld.key), "the key column gets the row number: no generator"))
    if w.documents and w.tables:
        out.append((("tables",), "a document workload (collections, op statements) has collections, not tables"))
    for c, coll in w.collections.items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_.-]{0,100}$", c):
            out.append((("collections", c), "a collection's name is letters, digits, _ . -"))
        if coll.existing and (coll.load or coll.indexes):
            out.append((("collections", c), "an existing collection is not created nor loaded: no load, no indexes"))
        for f, g in (coll.load.fields.items() if coll.load else ()):
            if g not in gens:
                out.append((("collections", c, "load", "fields", f), unknown(g)))
    for name, tx in w.transactions.items():
        loc = ("transactions", name)
        if not re.match(IDENT, name):
            out.append((loc, "a transaction's name is letters, digits and _"))
        if not tx.weight > 0:
            out.append((loc + ("weight",), f"{tx.weight:g}: a weight is a positive number"))
        for p, g in tx.bind.items():
            if g not in gens:
                out.append((loc + ("bind", p), unknown(g)))
        captured: dict[str, int] = {}
        later = {v: i for i, s in enumerate(tx.statements) for v in s.capture}
        used: set[str] = set()
        for i, st in enumerate(tx.statements):
            sloc = loc + ("statements", i)
            if st.op is not None:
                if st.collection not in w.collections:
                    out.append((sloc + ("collection",), f"no collection {st.collection!r} in collections"))
                for p in doc_params([st.filter, st.document, st.update, st.pipeline]):
                    used.add(p)
                    if not (p in captured or p in tx.bind or p in gens):
                        out.append((sloc, f"parameter :{p}: no generator binds it (no generator {p!r}, no bind, "
                                    "no capture before it)" if p not in later else f"parameter :{p} is captured by "
                                    f"statement {later[p]}, after this one: a capture is used before it is set"))
            for dialect, text in statement_texts(st).items():
                where = sloc + (("sql", dialect) if isinstance(st.sql, dict) else ("sql",))
                if not text.strip():
                    out.append((where, "an empty statement"))
                    continue
                try:
                    _, params = parse_statement(text)
                except StatementError as e:
                    out.append((where, str(e)))
                    continue
                for p in params:
                    used.add(p)
                    if p in captured or p in tx.bind or p in gens:
                        continue
                    if p in later:
                        out.append((where, f"parameter :{p} is captured by statement {later[p]}, after this one: "
                                    "a capture is used before it is set"))
                    else:
                        out.append((where, f"parameter :{p}: no generator binds it (no generator {p!r}, no bind, "
                                    "no capture before it)"))
            if isinstance(st.sql, dict) and not st.sql:
                out.append((sloc + ("sql",), "no text: one text, or one per dialect"))
            for v in st.capture:
                if not re.match(IDENT, v):
                    out.append((sloc + ("capture",), f"{v!r}: a variable's name is letters, digits and _"))
                elif v in gens or v in tx.bind:
                    out.append((sloc + ("capture",), f"{v!r} is a generator's name too: which one a parameter "
                                "means would be unclear"))
                captured.setdefault(v, i)
            if st.capture and st.op is not None and st.op not in ("find", "aggregate"):
                out.append((sloc + ("capture",), "a capture needs an operation that returns documents (find, "
                            "aggregate)"))
            elif st.capture and st.op is None and statement_kind(st) == "write" and st.kind is None and not any(
                    "returning" in s.lower() for s in statement_texts(st).values()):
                out.append((sloc + ("capture",), "a capture needs a statement that returns rows (SELECT, "
                            "... RETURNING)"))
        for p in tx.bind:
            if p not in used:
                out.append((loc + ("bind", p), f"no statement of the transaction has a parameter :{p}"))
        if w.documents and (tx.isolation or any(st.op is None for st in tx.statements)):
            out.append((loc, "a document workload's transactions are MongoDB operations (op), each on its own: no "
                        "sql, no isolation"))
        if tx.think_time and tx.think_time.distribution == "uniform" and tx.think_time.max < tx.think_time.min:
            out.append((loc + ("think_time", "max"), "below min"))
    return out


def _too_long(gen: Any, name: str, table: Any, col: str) -> Optional[str]:
    """A string generator whose longest value is wider than the char(n) / varchar(n) column
    it loads (every such row would be refused by the server, or cut), naming both."""
    column = next((c for c in table.columns or [] if c.name == col), None)
    if column is None or not isinstance(gen, StringGen):
        return None
    width = re.match(r"^(?:var)?char\((\d+)\)$", column.type)
    if width is None or gen.max_length <= int(width.group(1)):
        return None
    return (f"generator {name!r} makes strings of up to {gen.max_length} characters (generators.{name}.max_length), "
            f"wider than column {col} ({column.type}): lower max_length or widen the column")


MAX_ENGINE_PROBLEMS = 5  # fields named per workload aimed at the wrong kind of engine (the rest counted)


def engine_problems(w: CustomWorkload, engine: str, sql: bool) -> list[tuple[tuple[Any, ...], str]]:
    """A document workload (collections, op statements) aimed at a SQL engine, or SQL statements
    aimed at one without SQL (MongoDB): each field that says so, as (location, why)."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if w.documents and sql:
        why = (f"a MongoDB operation: target.engine {engine} is a SQL engine (a document workload runs on "
               "engine mongodb; on a SQL engine write the statement as sql)")
        out += [(("collections", c), f"a MongoDB collection: target.engine {engine} is a SQL engine (a document "
                 "workload runs on engine mongodb; on a SQL engine write tables)") for c in w.collections]
        out += [(("transactions", n, "statements", i, "op"), why) for n, tx in w.transactions.items()
                for i, st in enumerate(tx.statements) if st.op is not None]
    elif not w.documents and not sql:
        why = (f"a SQL statement: target.engine {engine} has no SQL (write it as a MongoDB operation: op, "
               "collection, filter, ...)")
        out += [(("tables", t), f"a SQL table: target.engine {engine} has no SQL (write collections)")
                for t in w.tables]
        out += [(("transactions", n, "statements", i, "sql"), why) for n, tx in w.transactions.items()
                for i, st in enumerate(tx.statements) if st.sql is not None]
    if len(out) > MAX_ENGINE_PROBLEMS:
        out = out[:MAX_ENGINE_PROBLEMS] + [(out[MAX_ENGINE_PROBLEMS][0], f"and {len(out) - MAX_ENGINE_PROBLEMS} "
                                            "more fields of the same kind")]
    return out
