"""MongoDB and wire-compatible servers (pymongo): YCSB's document model.

A record is one document ``{_id: key, field0: ..., fieldN: ...}`` in a collection named
after ``workload.table`` (``usertable``); the only index is ``_id``'s, as in the
published runs. read = ``find_one`` with a projection, update = ``update_one`` with
``$set``, insert = ``insert_one``, load = ``insert_many(ordered=False)`` of one
``workload.batchsize`` batch (existing keys are skipped: a resumed load is idempotent),
scan = ``find(_id >= start).sort(_id).limit(n)``, delete = ``delete_one``.
The ``kv`` capability only: SQL families (sysbench) are refused by campaign validation.

URL: ``mongodb://USER@HOST:PORT/DB?authSource=admin&w=1&journal=false&readPreference=...``
(or ``mongodb+srv://``). The database is the URL's path (default ``ycsb``, YCSB's); the
password is ``target.password``, given to pymongo as its own argument and used only when
the URL names a user.

Write concern and read preference, recorded by ``describe()`` in every result:
``{w: 1, j: false}`` (the published "weak consistency" setting) unless the URL's ``w`` /
``journal`` / ``wtimeoutMS`` say otherwise; ``target.options.write_concern``
(``{w: ..., j: ..., wtimeout: ms}``) overrides both. Read preference: the URL's
``readPreference``, overridden by ``target.options.read_preference``; default primary.

Options (``target.options``):
- ``write_concern``, ``read_preference``: see above.
- ``sharded_cluster: true`` + ``initial_chunks: N`` (default 200): before the load,
  ``enableSharding`` on the database and ``shardCollection`` on hashed ``_id`` with
  ``numInitialChunks: N`` (SPEC 2.1). A server without these commands (a replica set,
  a standalone mongod, FerretDB) is tolerated: the prepare step's
  ``binding_settings.cluster_preparation`` says what was done and what the server
  answered. Any other error fails the prepare step.
- ``server_selection_timeout_ms`` (default 10000), ``connect_timeout_ms``.
- ``ferretdb_backend_url``: for FerretDB 1.x on its PostgreSQL backend only. FerretDB
  1.24 does not use an index for ``_id`` lookups (every point read or update scans the
  collection); with this option ``create_table`` connects to the backend database
  (psycopg; credentials from libpq's own sources: the URL's user, PGPASSWORD or
  ~/.pgpass, never the campaign) and creates the expression index FerretDB's queries
  can use, ``GIN ((_jsonb->'_id') jsonb_path_ops)`` on the collection's table, and sets
  ``plan_cache_mode = force_custom_plan`` on that database (it reaches FerretDB's new
  backend sessions only: set it before FerretDB starts, as scripts/test-servers does).
  Same index, same name as ``scripts/ferretdb-index``. Recorded in ``cluster_preparation.ferretdb_index``.
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional, cast
from urllib.parse import parse_qsl, urlsplit

import pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo import MongoClient
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    DuplicateKeyError,
    InvalidOperation,
    NetworkTimeout,
    OperationFailure,
    ProtocolError,
    ServerSelectionTimeoutError,
)

from dbswarm.bindings import register
from dbswarm.bindings.base import Connection, KeyValueBinding
from dbswarm.bindings.sql import KEY
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass

DEFAULT_WRITE_CONCERN = {"w": 1, "j": False}
DEFAULT_DATABASE = "ycsb"
DEFAULT_INITIAL_CHUNKS = 200
_DUPLICATE_CODES = {11000, 11001, 12582}
_RETRYABLE_CODES = {112: "write_conflict", 24: "lock_timeout", 251: "no_such_transaction"}
_CONNECTION_CODES = {91: "shutdown_in_progress", 11600: "interrupted_at_shutdown", 189: "primary_stepped_down",
                     10107: "not_writable_primary", 13435: "not_primary_no_secondary_ok",
                     11602: "interrupted_repl_state_change", 13436: "not_primary_or_secondary",
                     6: "host_unreachable", 7: "host_not_found", 89: "network_timeout"}
_SHARDING_UNSUPPORTED = {59: "CommandNotFound", 20: "IllegalOperation"}
_RAW = CodecOptions(document_class=RawBSONDocument)  # documents left as BSON bytes: nothing decoded


def _bool(v: object) -> bool:
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("1", "true", "yes", "on")


def _w(v: object) -> int | str:
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        return int(v)
    return str(v)


def url_settings(url: Optional[str]) -> dict:
    """Database, user, write concern and read preference named by a MongoDB URL (no I/O)."""
    out: dict = {"database": None, "user": None, "write_concern": {}, "read_preference": None}
    if not url:
        return out
    parts = urlsplit(url)
    if parts.scheme not in ("mongodb", "mongodb+srv"):
        raise ValueError(f"mongodb target URL must start with mongodb:// or mongodb+srv://, not {parts.scheme}://")
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    out["user"] = userinfo.split(":", 1)[0] or None
    out["database"] = parts.path.lstrip("/") or None
    for key, value in parse_qsl(parts.query):
        k = key.lower()
        if k == "w":
            out["write_concern"]["w"] = _w(value)
        elif k in ("journal", "j"):
            out["write_concern"]["j"] = _bool(value)
        elif k in ("wtimeoutms", "wtimeout"):
            out["write_concern"]["wtimeout"] = int(value)
        elif k == "readpreference":
            out["read_preference"] = value
    return out


def effective_write_concern(url_wc: dict, option_wc: object) -> dict:
    wc: dict[str, Any] = dict(DEFAULT_WRITE_CONCERN)
    wc.update(url_wc)
    if option_wc is not None:
        if not isinstance(option_wc, dict):
            raise ValueError("target.options.write_concern must be a mapping like {w: 1, j: false}")
        for key, value in option_wc.items():
            k = {"journal": "j", "wtimeoutms": "wtimeout"}.get(str(key).lower(), str(key).lower())
            if k not in ("w", "j", "wtimeout"):
                raise ValueError(f"target.options.write_concern: unknown key {key!r} (w, j, wtimeout)")
            wc[k] = _w(value) if k == "w" else (_bool(value) if k == "j" else int(value))
    return wc


@register("mongodb")
class MongoBinding(KeyValueBinding):
    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self.client: Optional[MongoClient] = None
        self.db: Any = None  # the client's database (a pymongo Database) once connected
        self._colls: dict = {}
        opts = conn.options
        s = url_settings(conn.url)
        self._user = s["user"]
        self._database = opts.get("database") or s["database"] or DEFAULT_DATABASE
        self._wc = effective_write_concern(s["write_concern"], opts.get("write_concern"))
        self._read_pref = opts.get("read_preference") or s["read_preference"] or "primary"
        self._preparation: dict = {}
        self._server: dict = {}
        backend = opts.get("ferretdb_backend_url")
        if backend and "://" in str(backend) and urlsplit(str(backend)).password is not None:
            raise ValueError("target.options.ferretdb_backend_url must not contain a password "
                             "(libpq reads PGPASSWORD or ~/.pgpass)")

    # -- life cycle ------------------------------------------------------------------
    def _client_kwargs(self) -> dict:
        opts = self.conn.options
        wc = self._wc
        kw: dict[str, Any] = {"w": wc["w"], "journal": wc.get("j", False), "readPreference": self._read_pref,
              "serverSelectionTimeoutMS": int(opts.get("server_selection_timeout_ms", 10_000)),
              "appname": "dbswarm"}
        if "wtimeout" in wc:
            kw["wTimeoutMS"] = wc["wtimeout"]
        if opts.get("connect_timeout_ms") is not None:
            kw["connectTimeoutMS"] = int(opts["connect_timeout_ms"])
        if self._user and self.conn.password is not None:
            kw["password"] = self.conn.password
        return kw

    def connect(self) -> None:
        self.client = MongoClient(self.conn.url or "mongodb://127.0.0.1:27017", **self._client_kwargs())
        try:
            self.client.admin.command("ping")
        except Exception:
            self.client.close()
            self.client = None
            raise
        self.db = self.client[self._database]
        self._colls = {}

    def close(self) -> None:
        client, self.client, self.db, self._colls = self.client, None, None, {}
        if client is not None:
            client.close()

    def peer_addresses(self) -> Optional[list[str]]:
        """Every server the client knows after its ping: the seeds and the members a replica
        set named (host names: the check resolves them)."""
        client = cast(MongoClient, self.client)  # connected
        return [str(host) for host, _port in client.topology_description.server_descriptions()]

    def describe(self) -> dict:
        out = {"driver": f"pymongo {pymongo.version}", "database": self._database,
               "write_concern": dict(self._wc), "read_preference": self._read_pref,
               "authentication": f"user {self._user} (password from target.password)" if self._user
               else "none (the URL names no user)",
               # whether FerretDB's _id index is made (the result warns a FerretDB target without it)
               "ferretdb_backend_url": bool(self.conn.options.get("ferretdb_backend_url"))}
        if self.client is not None and not self._server:
            try:
                info = self.client.server_info()
                self._server = {"server_version": info.get("version")}
                if info.get("ferretdbVersion"):
                    self._server["ferretdb_version"] = info["ferretdbVersion"]
            except Exception as exc:  # describe never fails the caller
                self._server = {"server_version": f"unknown ({type(exc).__name__})"}
        out.update(self._server)
        if self._preparation:
            out["cluster_preparation"] = self._preparation
        return out

    def server_settings(self) -> dict:
        """Version, storage engine and the cluster's default write concern (what a write waits
        for unless the campaign sets target.options.write_concern), where the server says."""
        out: dict[str, str] = {}
        status = self.db.command("serverStatus")
        out["server_version"] = str(status.get("version", ""))
        if status.get("ferretdbVersion"):
            out["ferretdb_version"] = str(status["ferretdbVersion"])
        engine = (status.get("storageEngine") or {}).get("name")
        if engine:
            out["storage_engine"] = str(engine)
        try:
            rw = cast(MongoClient, self.client).admin.command("getDefaultRWConcern")
            out["default_write_concern"] = str(rw.get("defaultWriteConcern") or "server default (w: 1 / majority)")
        except Exception as exc:
            out["default_write_concern"] = f"unavailable ({type(exc).__name__})"
        out["write_concern"] = str(dict(self._wc) or "server default")
        return out

    COMMANDS = ("find", "insert", "update", "delete", "getMore", "findAndModify")

    def server_counters(self, settle: bool = False) -> Optional[dict]:
        """serverStatus: MongoDB's opcounters (insert counts documents), or where a server has
        none (FerretDB) its per-command totals (metrics.commands.<name>.total).
        statements = the reads and writes clients sent (commands other than these, such as
        hello and ping, are left out)."""
        status = self.db.command("serverStatus")
        ops = status.get("opcounters")
        out: dict[str, Any]
        if ops:
            out = {f"opcounters_{k}": int(v) for k, v in ops.items() if isinstance(v, (int, float))}
            out["statements"] = sum(out.get(f"opcounters_{k}", 0)
                                    for k in ("insert", "query", "update", "delete", "getmore"))
            lat = status.get("opLatencies")
            if isinstance(lat, dict):  # the server's own time (µs) per kind: the client-health verdict's
                out["statement_times"] = {k: {"calls": int(v.get("ops", 0)), "exec_us": float(v.get("latency", 0))}
                                          for k, v in lat.items() if isinstance(v, dict)}
                out["statement_source"] = "serverStatus opLatencies (server-wide, every client)"
            else:
                out["statement_times_missing"] = "serverStatus has no opLatencies on this server"
            return out
        commands = ((status.get("metrics") or {}).get("commands") or {})
        lower = {k.lower(): v for k, v in commands.items()}
        out = {f"command_{name}": int((lower.get(name.lower()) or {}).get("total", 0)) for name in self.COMMANDS}
        out["statements"] = sum(out.values())
        # FerretDB 1.24 keeps command totals, no time per operation (no opLatencies, no profiler)
        out["statement_times_missing"] = ("serverStatus has no opLatencies on this server"
                                          + (f" (FerretDB {status['ferretdbVersion']} keeps none)"
                                             if status.get("ferretdbVersion") else ""))
        return out

    def classify(self, exc: BaseException) -> ErrorClass:  # noqa: C901 (one case per server error)
        if isinstance(exc, DuplicateKeyError):
            return ErrorClass(DUPLICATE, "duplicate_key")
        if isinstance(exc, BulkWriteError):
            codes = {e.get("code") for e in exc.details.get("writeErrors", [])}
            if codes and codes <= _DUPLICATE_CODES and not exc.details.get("writeConcernErrors"):
                return ErrorClass(DUPLICATE, "duplicate_key")
            for code in codes:
                if code in _RETRYABLE_CODES:
                    return ErrorClass(RETRYABLE, _RETRYABLE_CODES[code])
            return ErrorClass(FATAL, "bulk_write_error")
        if isinstance(exc, ServerSelectionTimeoutError):
            return ErrorClass(CONNECTION, "server_selection_timeout")
        if isinstance(exc, NetworkTimeout):
            return ErrorClass(CONNECTION, "network_timeout")
        if isinstance(exc, (AutoReconnect, ConnectionFailure)):
            return ErrorClass(CONNECTION, "connection_lost")
        if isinstance(exc, ProtocolError):
            # the reply stream is out of step (FerretDB 1.24 answers w:0 writes): a new connection
            return ErrorClass(CONNECTION, "protocol_error")
        if isinstance(exc, OperationFailure):
            code = exc.code
            if code in _DUPLICATE_CODES:
                return ErrorClass(DUPLICATE, "duplicate_key")
            if code in _RETRYABLE_CODES:
                return ErrorClass(RETRYABLE, _RETRYABLE_CODES[code])
            if exc.has_error_label("TransientTransactionError"):
                return ErrorClass(RETRYABLE, "transient_transaction_error")
            if code in _CONNECTION_CODES:
                return ErrorClass(CONNECTION, _CONNECTION_CODES[code])
            return ErrorClass(FATAL, f"operation_failure_{code}")
        if isinstance(exc, InvalidOperation) and "after close" in str(exc):
            return ErrorClass(CONNECTION, "client_closed")
        if self.client is None and isinstance(exc, (AttributeError, TypeError)):
            return ErrorClass(CONNECTION, "not_connected")
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return ErrorClass(CONNECTION, "connection_lost")
        return ErrorClass(FATAL, type(exc).__name__)

    # -- helpers -----------------------------------------------------------------------
    def _coll(self, table: str) -> Any:
        c = self._colls.get(table)
        if c is None:
            c = self._colls[table] = self.db[table]
        return c

    def _raw_coll(self, table: str) -> Any:
        """The collection returning documents as undecoded BSON (reads with rows=False)."""
        key = (table, "raw")
        c = self._colls.get(key)
        if c is None:
            c = self._colls[key] = self.db[table].with_options(codec_options=_RAW)
        return c

    @staticmethod
    def _projection(fields: Optional[list[str]]) -> dict[str, int]:
        if fields is None:
            return {"_id": 0}
        return {"_id": 0, **{f: 1 for f in fields}}

    # -- YCSB --------------------------------------------------------------------------
    def create_table(self, table: str, fieldcount: int) -> None:
        self.db.drop_collection(table)
        self.db.create_collection(table)
        self._colls.pop(table, None)
        self._colls.pop((table, "raw"), None)
        prep: dict[str, Any] = {}
        if _bool(self.conn.options.get("sharded_cluster", False)):
            prep["sharding"] = self._shard(table)
        if self.conn.options.get("ferretdb_backend_url"):
            prep["ferretdb_index"] = self._ferretdb_index(table)
        self._preparation = prep

    def _shard(self, table: str) -> dict:
        chunks = int(self.conn.options.get("initial_chunks", DEFAULT_INITIAL_CHUNKS))
        ns = f"{self._database}.{table}"
        out: dict[str, Any] = {"requested": {"enableSharding": self._database, "shardCollection": ns,
                             "key": {"_id": "hashed"}, "numInitialChunks": chunks}}
        admin = cast(MongoClient, self.client).admin  # connected
        steps = (("enableSharding", lambda: admin.command("enableSharding", self._database)),
                 ("shardCollection", lambda: admin.command("shardCollection", ns, key={"_id": "hashed"},
                                                           numInitialChunks=chunks)))
        for name, step in steps:
            try:
                step()
                out[name] = "ok"
            except OperationFailure as exc:
                if exc.code not in _SHARDING_UNSUPPORTED:
                    raise
                out[name] = f"not supported by this server: {(exc.details or {}).get('errmsg', exc)} " \
                            f"(code {exc.code} {_SHARDING_UNSUPPORTED[exc.code]})"
                out["status"] = "skipped: the server is not a sharded cluster (or lacks the commands)"
                return out
        out["status"] = "sharded"
        return out

    def _ferretdb_index(self, table: str) -> dict:
        import psycopg  # only needed for this FerretDB work-around
        from psycopg import sql

        url = self.conn.options["ferretdb_backend_url"]
        schema = self._database
        out: dict = {}
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as pg:
            row = pg.execute(sql.SQL("SELECT _jsonb->>'table' FROM {}._ferretdb_database_metadata "
                                     "WHERE _jsonb->>'_id' = %s").format(sql.Identifier(schema)),
                             (table,)).fetchone()
            if row is None:
                raise RuntimeError(f"ferretdb_backend_url: collection {schema}.{table} has no table in the "
                                   "backend (is this FerretDB's PostgreSQL database?)")
            pg_table = row[0]
            # the name scripts/ferretdb-index uses, so that either one finds the other's index
            index = "dbswarm_id_gin_" + hashlib.md5(pg_table.encode()).hexdigest()[:12]
            pg.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {}.{} USING gin ((_jsonb->'_id') jsonb_path_ops)")
                       .format(sql.Identifier(index), sql.Identifier(schema), sql.Identifier(pg_table)))
            out["index"] = f"{schema}.{index} ON {pg_table} USING gin ((_jsonb->'_id') jsonb_path_ops)"
            try:
                pg.execute(sql.SQL("ALTER DATABASE {} SET plan_cache_mode = force_custom_plan").format(
                    sql.Identifier(pg.info.dbname)))
                out["plan_cache_mode"] = "force_custom_plan (new backend sessions)"
            except psycopg.Error as exc:
                out["plan_cache_mode"] = f"not set: {type(exc).__name__}"
        return out

    def ensure_table(self, table: str, fieldcount: int) -> None:
        pass  # a collection comes with its first insert; _id is unique

    def drop_table(self, table: str) -> None:
        self.db.drop_collection(table)
        self._colls.pop(table, None)
        self._colls.pop((table, "raw"), None)

    def count(self, table: str) -> int:
        return int(self._coll(table).count_documents({}))

    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any:
        if not rows:
            return 0 if self._raw_coll(table).find_one({"_id": key}, self._projection(fields)) is None else 1
        return self._coll(table).find_one({"_id": key}, self._projection(fields))

    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]], rows: bool = True) -> Any:
        proj = None if fields is None else {f: 1 for f in fields}
        if not rows:
            return sum(1 for _ in self._raw_coll(table).find({"_id": {"$gte": startkey}}, proj)
                       .sort("_id", 1).limit(count))
        out = []
        for doc in self._coll(table).find({"_id": {"$gte": startkey}}, proj).sort("_id", 1).limit(count):
            doc[KEY] = doc.pop("_id")
            out.append(doc)
        return out

    def update(self, table: str, key: str, values: dict) -> bool:
        r = self._coll(table).update_one({"_id": key}, {"$set": values})
        return r.matched_count > 0 if r.acknowledged else True

    def insert(self, table: str, key: str, values: dict) -> None:
        self._coll(table).insert_one({"_id": key, **values})

    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
        if not rows:
            return
        try:
            self._coll(table).insert_many([{"_id": key, **values} for key, values in rows], ordered=False)
        except BulkWriteError as exc:
            if self.classify(exc).kind != DUPLICATE:
                raise
            # the other documents of the batch were written (ordered=False): idempotent

    def delete(self, table: str, key: str) -> bool:
        r = self._coll(table).delete_one({"_id": key})
        return r.deleted_count > 0 if r.acknowledged else True
