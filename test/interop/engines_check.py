#!/usr/bin/env python3
"""The engine matrix of interop scenario 15 (issue 36): every table Floe writes, read by
engines nobody here wrote, against what the broker acknowledged.

  engines_check.py produce --bootstrap B --out RECORDS.json [--pause S]
  engines_check.py matrix --records RECORDS.json --node WH=ADMIN_ADDR ... [--trino URL]
                   [--spark-jars DIR[,DIR]] [--duckdb-ext DIR] [--floe-bin BIN] --work DIR
                   --out MATRIX.txt + the S3 options of pyiceberg_check.py

`produce` writes four topics (2 partitions each) in three batches with a pause between
them (so each table gets several commits): s15_append (an append table; the field `extra`
first appears in the last batch, `tags` is a list that is sometimes null), s15_upsert
(mode upsert keyed by the Kafka key, 40 keys, every tenth record a tombstone), s15_part
(partition_by identity(region) over hostile values) and s15_upart (upsert and partitioned by
region; each record of a key moves it to another partition). Every record carries `big` =
2^60 + 1 + id, above 2^53, so a reader that goes through a double is caught. It records
each acknowledged (partition, offset, key, value) and checks that they are exactly Kafka's
[low, high) per partition.

`matrix` reads each table of each warehouse (WH is s3 or file; ADMIN_ADDR the Floe node
writing that warehouse) with each engine, in both formats, and compares with the
expectation computed from the acknowledged records: row count, sum(id), min/max(big), the
rows themselves (partition, offset and every value; for the upsert table the live key set
and each key's latest value), and time travel at every retained Iceberg snapshot and every
Delta version (the rows as of each = the records below its floe.offsets per partition,
for the upsert table the latest per key there). The upsert table is read before
`floe ctl tables maintain` (cells `upsert`) and after the compaction it commits
(`upsert+compacted`). A known upstream limit is a named cell (KNOWN, with the issue):
the rows differ from the expectation in exactly the way the limit says; if they no longer
do, the cell says FIXED? and fails, so the matrix is updated. An engine that cannot run
here is SKIPPED with the reason. Prints the matrix and writes it to --out (and
--out.json); exits 1 when a cell FAILs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.request
from urllib.parse import unquote, urlparse

BIG = 2**60 + 1
BATCHES = 3
HOSTILE = ["100%", "a/b", "são paulo", "with space", "k=v", "#hash", "what?", "a+b", "\U0001F986", "", None, "L" * 1000]
TOPICS = {"append": "s15_append", "upsert": "s15_upsert", "part": "s15_part", "upart": "s15_upart"}
PER_BATCH = {"append": 200, "upsert": 200, "part": 120, "upart": 120}
UPSERT_KEYS = 40
CORE = ["_kafka_partition", "_kafka_offset", "id", "k", "big"]
COLS = {"append": CORE + ["n", "tags", "extra", "labels"], "upsert": CORE + ["v"], "part": CORE + ["region"],
        "upart": CORE + ["v", "region"]}


def fail(msg: str) -> None:
    print(f"FAIL {msg}", flush=True)
    sys.exit(1)


# ------------------------------------------------------------------ producing

def value_of(table: str, i: int, batch: int) -> tuple[str, dict | None]:
    if table == "append":
        v = {"id": i, "k": f"a-{i}", "big": BIG + i, "n": i % 7, "tags": None if i % 7 == 3 else [f"t{i % 5}", "x"]}
        if batch == BATCHES - 1:  # the schema changes mid-stream: new fields, a string and a list
            v["extra"] = f"e{i}"
            v["labels"] = [f"l{i % 3}"]
        return v["k"], v
    if table == "upsert":
        k = f"u-{(i * 7) % UPSERT_KEYS}"
        if i % 10 == 9:
            return k, None  # a tombstone
        return k, {"id": i, "k": k, "big": BIG + i, "v": f"val-{i}"}
    if table == "upart":  # partitioned upsert: a key's region changes from one record to the next
        k = f"q-{i % 24}"
        if i % 10 == 9:
            return k, None
        return k, {"id": i, "k": k, "big": BIG + i, "v": f"val-{i}", "region": ("eu", "us", "ap", "a/b")[(i // 24) % 4]}
    k = f"p-{i}"
    return k, {"id": i, "k": k, "region": HOSTILE[i % len(HOSTILE)], "big": BIG + i}


def cmd_produce(a: argparse.Namespace) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    p = Producer({"bootstrap.servers": a.bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5})
    acked: dict[str, list] = {t: [] for t in TOPICS.values()}
    errors: list[str] = []

    def cb(err, msg):
        if err is not None:
            errors.append(f"{msg.topic()}: {err}")
            return
        v = msg.value()
        acked[msg.topic()].append([msg.partition(), msg.offset(), msg.key().decode(), None if v is None else v.decode()])

    ids = {t: 0 for t in TOPICS}
    for b in range(BATCHES):
        for table, topic in TOPICS.items():
            for _ in range(PER_BATCH[table]):
                k, v = value_of(table, ids[table], b)
                ids[table] += 1
                p.produce(topic, key=k.encode(), value=None if v is None else json.dumps(v, ensure_ascii=False).encode(),
                          on_delivery=cb)
                p.poll(0)
        if p.flush(60):
            fail("records still unacknowledged after 60s")
        if b < BATCHES - 1:
            time.sleep(a.pause)  # let Floe commit this batch: several snapshots and versions
    if errors:
        fail(f"{len(errors)} records failed delivery: {errors[:3]}")
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "interop-s15-expect"})
    for topic, recs in acked.items():
        parts = sorted(c.list_topics(topic, timeout=10).topics[topic].partitions)
        for part in parts:
            lo, hi = c.get_watermark_offsets(TopicPartition(topic, part), timeout=10)
            offs = sorted(r[1] for r in recs if r[0] == part)
            if offs != list(range(lo, hi)):
                fail(f"{topic}/{part}: acknowledged offsets {offs[:3]}..{offs[-3:]} ({len(offs)}) are not Kafka's [{lo}, {hi})")
    c.close()
    with open(a.out, "w") as f:
        json.dump(acked, f, ensure_ascii=False)
    print(f"produced and acknowledged: {', '.join(f'{t} {len(r)}' for t, r in acked.items())}")


# ------------------------------------------------------------------ the expectation

def canon(v):
    """A value as every engine's reader should give it, comparable across engines."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return tuple(sorted((k, canon(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)) or type(v).__name__ == "ndarray":
        return tuple(canon(x) for x in v)
    if hasattr(v, "item") and not isinstance(v, str):  # numpy scalars
        return v.item()
    return v


class Expect:
    def __init__(self, records_file: str) -> None:
        with open(records_file) as f:
            self.acked = json.load(f)

    def ends(self, table: str) -> dict[str, int]:
        topic = TOPICS[table]
        out: dict[str, int] = {}
        for p, o, _, _ in self.acked[topic]:
            out[f"{topic}/{p}"] = max(out.get(f"{topic}/{p}", 0), o + 1)
        return out

    def rows(self, table: str, cols: list[str], offsets: dict[str, int] | None = None) -> list[tuple]:
        """The rows a reader must see when the table holds the records below offsets."""
        topic = TOPICS[table]
        recs = sorted(self.acked[topic], key=lambda r: (r[0], r[1]))
        if offsets is not None:
            recs = [r for r in recs if r[1] < int(offsets.get(f"{topic}/{r[0]}", 0))]
        if table in ("upsert", "upart"):
            live: dict[tuple, list] = {}
            for r in recs:
                if r[3] is None:
                    live.pop((r[0], r[2]), None)
                else:
                    live[(r[0], r[2])] = r
            recs = sorted(live.values(), key=lambda r: (r[0], r[1]))
        out = []
        for p, o, _, v in recs:
            d = json.loads(v)
            d["_kafka_partition"], d["_kafka_offset"] = p, o
            out.append(tuple(canon(d.get(c)) for c in cols))
        return out


def figures(rows: list[tuple], cols: list[str]) -> dict:
    ids = [r[cols.index("id")] for r in rows]
    bigs = [r[cols.index("big")] for r in rows if r[cols.index("big")] is not None]
    f = {"rows": len(rows), "sum_id": sum(i for i in ids if i is not None),
         "min_big": min(bigs) if bigs else None, "max_big": max(bigs) if bigs else None}
    f["keys"] = len({r[cols.index("k")] for r in rows})
    return f


def diff(got: list[tuple], want: list[tuple], cols: list[str], limit: int = 3) -> list[str]:
    g, w = collections.Counter(got), collections.Counter(want)
    if g == w:
        return []
    only_g, only_w = sorted(g - w, key=repr), sorted(w - g, key=repr)
    short = lambda r: dict(zip(cols, [(x[:40] + "...") if isinstance(x, str) and len(x) > 40 else x for x in r]))  # noqa: E731
    out = [f"{len(got)} rows, want {len(want)}: {sum((g - w).values())} unexpected, {sum((w - g).values())} missing"]
    out += [f"unexpected {short(r)}" for r in only_g[:limit]]
    out += [f"missing {short(r)}" for r in only_w[:limit]]
    return out


# ------------------------------------------------------------------ tables

class Ref:
    """One table of one warehouse, as the engines reach it."""

    def __init__(self, table: str, wh: str, admin: str, loc: str, props: dict) -> None:
        from pyiceberg.table import StaticTable

        self.table, self.wh, self.admin, self.loc = table, wh, admin, loc
        self.name = f"interop.{TOPICS[table]}"
        self.ice = StaticTable.from_metadata(loc, properties=props)
        self.root = self.ice.metadata.location.rstrip("/")
        self.snapshots = []  # (snapshot id, floe.offsets, operation)
        for s in sorted(self.ice.metadata.snapshots, key=lambda s: s.sequence_number):
            summ = s.summary.additional_properties if s.summary else {}
            offs = json.loads(summ["floe.offsets"]) if summ.get("floe.offsets") else None
            self.snapshots.append((s.snapshot_id, offs, summ.get("floe.operation") or (s.summary.operation.value if s.summary else "")))
        self.versions = []  # (version, floe.offsets as of it, operation)
        self.delta_error = None

    def load_delta(self, opts: dict) -> None:
        from deltalake import DeltaTable

        try:
            dt = DeltaTable(self.root, storage_options=opts)
            hist = sorted(dt.history(), key=lambda h: h["version"])
            offs = None
            for h in hist:
                o = h.get("floe.offsets")
                if o is not None:
                    offs = json.loads(o) if isinstance(o, str) else o
                self.versions.append((h["version"], offs, h.get("operation")))
        except Exception as e:  # noqa: BLE001
            self.delta_error = f"{type(e).__name__}: {e}"

    def local_path(self) -> str:
        return unquote(urlparse(self.root).path)


def at_points(ref: Ref, fmt: str) -> list[tuple]:
    """(label, snapshot id or version, floe.offsets) of every snapshot or version."""
    if fmt == "iceberg":
        return [(f"s{i}", sid, offs or {}) for i, (sid, offs, _) in enumerate(ref.snapshots)]
    return [(f"v{v}", v, offs or {}) for v, offs, _ in ref.versions]


# ------------------------------------------------------------------ engines

class Skip(Exception):
    pass


class Engine:
    name = ""
    fmt = ""
    travel = True  # reads as of a snapshot or version
    limits: list = []  # (name, issue, applies(table, wh), normalize(row, cols) -> row)

    def rows(self, ref: Ref, cols: list[str], at=None) -> list[tuple]:
        raise NotImplementedError

    def agg(self, ref: Ref, at=None) -> dict | None:
        return None

    def note(self, ref: Ref) -> str:
        return ""


def sql_cols(cols: list[str], quote: str = '"') -> str:
    return ", ".join(f"{quote}{c}{quote}" for c in cols)


AGG_SQL = "count(*), sum(id), min(big), max(big), count(DISTINCT k)"


def agg_dict(r) -> dict:
    return {"rows": int(r[0]), "sum_id": None if r[1] is None else int(r[1]),
            "min_big": None if r[2] is None else int(r[2]), "max_big": None if r[3] is None else int(r[3]),
            "keys": int(r[4])}


def without(col: str):
    """A limit that shows only in one column: the rows agree once it is blanked."""
    def norm(row: tuple, cols: list[str]) -> tuple:
        if col not in cols:
            return row
        i = cols.index(col)
        return row[:i] + (None,) + row[i + 1:]
    return norm


def empty_as_null(col: str):
    def norm(row: tuple, cols: list[str]) -> tuple:
        if col not in cols:
            return row
        i = cols.index(col)
        return row[:i] + (None if row[i] == "" else row[i],) + row[i + 1:]
    return norm


# Delta's PROTOCOL.md, "Partition Value Serialization": "An empty string for any type
# translates to a null partition value." Floe writes "" for an empty string, so a reader
# that follows the protocol reads null: the Delta log cannot tell "" from null.
EMPTY_PARTITION = ("empty-string partition value read as null (Delta PROTOCOL.md, Partition Value Serialization)",
                   "delta-io/delta PROTOCOL.md", lambda t, wh: t == "part", empty_as_null("region"))


class PyIceberg(Engine):
    name, fmt = "pyiceberg", "iceberg"
    # apache/iceberg-python#3833 (a null list read as empty) was seen in issue 36's reads;
    # these tables' lists (`tags`, null in some rows; `labels`, absent from the older
    # files) read as null here, so it is not a named cell: the rows are compared as is.

    def rows(self, ref, cols, at=None):
        tbl = ref.ice.scan(selected_fields=tuple(cols), snapshot_id=at).to_arrow()
        return arrow_rows(tbl, cols)


def arrow_rows(tbl, cols) -> list[tuple]:
    d = tbl.select(cols).to_pydict() if hasattr(tbl, "select") else tbl
    return [tuple(canon(d[c][i]) for c in cols) for i in range(len(d[cols[0]]))]


class DuckDB(Engine):
    """DuckDB 1.4 with the iceberg, delta, httpfs and avro extensions LOADed by path."""

    def __init__(self, ext_dir: str, s3: dict | None, rest: dict[str, str]) -> None:
        import duckdb

        # Two connections: ATTACHing a REST catalog makes secrets of its own for the
        # tables' locations (from the catalog's config, without keys), which delta_scan
        # then prefers to ours and gets 403 from MinIO.
        self.con = self.connect(duckdb, ext_dir, s3)
        self.rest = self.connect(duckdb, ext_dir, s3)
        self.attached = {}
        for wh, admin in rest.items():
            # ACCESS_DELEGATION_MODE 'none': no vended credentials (Floe vends none by
            # default), so the data is read with our S3 secret, not a keyless one the
            # catalog's table config would make.
            for opt in (", ACCESS_DELEGATION_MODE 'none'", ""):
                try:
                    self.rest.execute(f"ATTACH '' AS rest_{wh} (TYPE iceberg, ENDPOINT 'http://{admin}/iceberg', "
                                      f"AUTHORIZATION_TYPE 'none'{opt})")
                    self.attached[wh] = None
                    break
                except Exception as e:  # noqa: BLE001
                    self.attached[wh] = f"ATTACH of http://{admin}/iceberg failed: {e}"

    @staticmethod
    def connect(duckdb, ext_dir: str, s3: dict | None):
        con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
        for e in ("httpfs", "avro", "iceberg", "delta"):
            path = os.path.join(ext_dir, f"{e}.duckdb_extension")
            if not os.path.exists(path):
                raise Skip(f"no {path} (duckdb-ext-{e} wheel)")
            con.execute(f"LOAD '{path}'")
        if s3:
            u = urlparse(s3["endpoint"])
            con.execute(f"CREATE SECRET floe_s3 (TYPE s3, KEY_ID '{s3['key']}', SECRET '{s3['secret']}', "
                        f"REGION '{s3['region']}', ENDPOINT '{u.netloc}', URL_STYLE 'path', USE_SSL false)")
        return con

    def query(self, sql: str, rest: bool = False):
        return (self.rest if rest else self.con).execute(sql).fetchall()


def duck_path(ref: Ref, uri: str) -> str:
    return unquote(urlparse(uri).path) if ref.wh == "file" else uri


class DuckIcebergScan(Engine):
    name, fmt = "duckdb iceberg_scan", "iceberg"

    def __init__(self, db: DuckDB) -> None:
        self.db = db

    def src(self, ref, at):
        extra = f", snapshot_from_id => {at}" if at is not None else ""
        return f"iceberg_scan('{duck_path(ref, ref.loc)}'{extra})"

    def rows(self, ref, cols, at=None):
        return [tuple(canon(x) for x in r) for r in self.db.query(f"SELECT {sql_cols(cols)} FROM {self.src(ref, at)}")]

    def agg(self, ref, at=None):
        return agg_dict(self.db.query(f"SELECT {AGG_SQL} FROM {self.src(ref, at)}")[0])


class DuckRest(DuckIcebergScan):
    name = "duckdb REST ATTACH"

    def rows(self, ref, cols, at=None):
        return [tuple(canon(x) for x in r) for r in
                self.db.query(f"SELECT {sql_cols(cols)} FROM {self.src(ref, at)}", rest=True)]

    def agg(self, ref, at=None):
        return agg_dict(self.db.query(f"SELECT {AGG_SQL} FROM {self.src(ref, at)}", rest=True)[0])

    def src(self, ref, at):
        err = self.db.attached.get(ref.wh)
        if err:
            raise RuntimeError(err)
        return f"rest_{ref.wh}.interop.{TOPICS[ref.table]}" + (f" AT (VERSION => {at})" if at is not None else "")


class DuckDelta(DuckIcebergScan):
    name, fmt = "duckdb delta_scan", "delta"
    travel = False  # delta_scan in 1.4 reads the latest version only
    limits = [EMPTY_PARTITION]

    def src(self, ref, at):
        return f"delta_scan('{duck_path(ref, ref.root)}')"


class Polars(Engine):
    def __init__(self, opts: dict, props: dict) -> None:
        import polars

        self.pl, self.opts, self.props = polars, opts, props

    def frame_rows(self, df, cols):
        d = df.select(cols).to_dict(as_series=False)
        return [tuple(canon(d[c][i]) for c in cols) for i in range(df.height)]


class PolarsIceberg(Polars):
    name, fmt = "polars scan_iceberg", "iceberg"

    def rows(self, ref, cols, at=None):
        kw = {"snapshot_id": at} if at is not None else {}
        if ref.wh == "s3" and self.opts:
            kw["storage_options"] = self.opts
        df = self.pl.scan_iceberg(ref.ice, **kw).select(cols).collect()
        return self.frame_rows(df, cols)


class PolarsDelta(Polars):
    name, fmt = "polars read_delta", "delta"
    limits = [("partition values taken from folder names, not the log's partitionValues",
               "pola-rs/polars (read_delta partition values)", lambda t, wh: t == "part", without("region"))]

    def rows(self, ref, cols, at=None):
        kw = {"version": at} if at is not None else {}
        df = self.pl.read_delta(ref.root, storage_options=self.opts or None, **kw)
        return self.frame_rows(df.select(cols), cols)


class DeltaRsDataFusion(Engine):
    name, fmt = "delta-rs QueryBuilder", "delta"

    def __init__(self, opts: dict) -> None:
        self.opts = opts

    def run(self, ref, sql, at):
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder

        dt = DeltaTable(ref.root, storage_options=self.opts or None, version=at)
        out = QueryBuilder().register("t", dt).execute(sql)
        return pa.table(out.read_all() if hasattr(out, "read_all") else out)

    def rows(self, ref, cols, at=None):
        return arrow_rows(self.run(ref, f"SELECT {sql_cols(cols)} FROM t", at), cols)

    def agg(self, ref, at=None):
        t = self.run(ref, f"SELECT {AGG_SQL.replace('count(*)', 'count(*) AS c')} FROM t", at)
        return agg_dict([t.column(i)[0].as_py() for i in range(5)])


class DeltaRsPyArrow(Engine):
    name, fmt = "delta-rs to_pyarrow_table", "delta"
    limits = [("refuses deletion vectors", "delta-io/delta-rs (to_pyarrow_table: deletionVectors)",
               lambda t, wh: t.startswith("upsert") or t == "upart", None), EMPTY_PARTITION]

    def __init__(self, opts: dict) -> None:
        self.opts = opts

    def rows(self, ref, cols, at=None):
        from deltalake import DeltaTable

        dt = DeltaTable(ref.root, storage_options=self.opts or None, version=at)
        return arrow_rows(dt.to_pyarrow_table(columns=cols), cols)


class Spark:
    """One local[1] session with Delta 4.3.1 and Iceberg 1.12 (REST catalogs on Floe)."""

    def __init__(self, jar_dirs: list[str], rest: dict[str, str], s3: dict | None, work: str) -> None:
        from pyspark.sql import SparkSession

        jars = [os.path.join(d, j) for d in jar_dirs for j in sorted(os.listdir(d)) if j.endswith(".jar")]
        b = (SparkSession.builder.master("local[1]").appName("floe-engines")
             .config("spark.jars", ",".join(jars))
             .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.databricks.delta.snapshotPartitions", "1").config("spark.sql.shuffle.partitions", "1")
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension,"
                     "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"))
        for wh, admin in rest.items():
            c = f"spark.sql.catalog.ice_{wh}"
            b = b.config(c, "org.apache.iceberg.spark.SparkCatalog").config(f"{c}.type", "rest") \
                .config(f"{c}.uri", f"http://{admin}/iceberg").config(f"{c}.cache-enabled", "false")
            if wh == "s3" and s3:
                b = (b.config(f"{c}.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
                     .config(f"{c}.s3.endpoint", s3["endpoint"]).config(f"{c}.s3.path-style-access", "true")
                     .config(f"{c}.s3.access-key-id", s3["key"]).config(f"{c}.s3.secret-access-key", s3["secret"])
                     .config(f"{c}.client.region", s3["region"]))
            else:
                b = b.config(f"{c}.io-impl", "org.apache.iceberg.hadoop.HadoopFileIO")
        t0 = time.time()
        self.spark = b.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        print(f"Spark {self.spark.version} (local[1], Delta and Iceberg) started in {time.time() - t0:.1f}s", flush=True)
        self.s3, self.work = s3, work
        self.copies: dict[str, str] = {}


class SparkIceberg(Engine):
    name, fmt = "spark iceberg (REST)", "iceberg"

    def __init__(self, sp: Spark) -> None:
        self.sp = sp

    def src(self, ref, at):
        return f"ice_{ref.wh}.interop.{TOPICS[ref.table]}" + (f" VERSION AS OF {at}" if at is not None else "")

    def rows(self, ref, cols, at=None):
        return [tuple(canon(x) for x in r) for r in
                self.sp.spark.sql(f"SELECT {sql_cols(cols, '`')} FROM {self.src(ref, at)}").collect()]

    def agg(self, ref, at=None):
        return agg_dict(self.sp.spark.sql(f"SELECT {AGG_SQL} FROM {self.src(ref, at)}").collect()[0])


class SparkDelta(Engine):
    """Spark reads the Delta table: on file:// in place; on S3 a byte-for-byte copy of
    everything under the table's root (Spark's S3A needs hadoop-aws, not installed)."""
    name, fmt = "spark delta", "delta"

    def __init__(self, sp: Spark) -> None:
        self.sp = sp

    def path(self, ref) -> str:
        if ref.wh == "file":
            return ref.local_path()
        key = f"{ref.wh}/{ref.table}/{ref.loc}"
        if key not in self.sp.copies:
            import boto3

            s3 = self.sp.s3
            cli = boto3.client("s3", endpoint_url=s3["endpoint"], aws_access_key_id=s3["key"],
                               aws_secret_access_key=s3["secret"], region_name=s3["region"])
            u = urlparse(ref.root)
            prefix = u.path.lstrip("/") + "/"
            dest = os.path.join(self.sp.work, f"{ref.table}-{len(self.sp.copies)}")
            for page in cli.get_paginator("list_objects_v2").paginate(Bucket=u.netloc, Prefix=prefix):
                for o in page.get("Contents", []):
                    out = os.path.join(dest, o["Key"][len(prefix):])
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    cli.download_file(u.netloc, o["Key"], out)
            self.sp.copies[key] = dest
        return self.sp.copies[key]

    def note(self, ref):
        return "read from a byte-for-byte local copy of the S3 table (Spark's S3A is not installed)" if ref.wh == "s3" else ""

    def df(self, ref, at):
        r = self.sp.spark.read.format("delta")
        if at is not None:
            r = r.option("versionAsOf", at)
        return r.load(self.path(ref))

    def rows(self, ref, cols, at=None):
        return [tuple(canon(x) for x in r) for r in self.df(ref, at).select(*cols).collect()]

    def agg(self, ref, at=None):
        self.df(ref, at).createOrReplaceTempView("floe_delta_t")
        return agg_dict(self.sp.spark.sql(f"SELECT {AGG_SQL} FROM floe_delta_t").collect()[0])


class Trino:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def query(self, sql: str) -> list[list]:
        req = urllib.request.Request(f"{self.url}/v1/statement", data=sql.encode(),
                                     headers={"X-Trino-User": "interop"})
        with urllib.request.urlopen(req, timeout=120) as r:
            res = json.load(r)
        rows: list[list] = []
        while True:
            if res.get("error"):
                raise RuntimeError(f"Trino: {res['error'].get('message')}")
            rows += res.get("data") or []
            nxt = res.get("nextUri")
            if not nxt:
                return rows
            with urllib.request.urlopen(nxt, timeout=120) as r:
                res = json.load(r)


class TrinoIceberg(Engine):
    name, fmt = "trino iceberg (REST)", "iceberg"

    def __init__(self, tr: Trino) -> None:
        self.tr = tr

    def src(self, ref, at):
        return f"iceberg_{ref.wh}.interop.{TOPICS[ref.table]}" + (f" FOR VERSION AS OF {at}" if at is not None else "")

    def rows(self, ref, cols, at=None):
        return [tuple(canon(x) for x in r) for r in self.tr.query(f"SELECT {sql_cols(cols)} FROM {self.src(ref, at)}")]

    def agg(self, ref, at=None):
        return agg_dict(self.tr.query(f"SELECT {AGG_SQL} FROM {self.src(ref, at)}")[0])


class TrinoDelta(TrinoIceberg):
    name, fmt = "trino delta (register_table)", "delta"
    limits = [EMPTY_PARTITION]

    def __init__(self, tr: Trino) -> None:
        super().__init__(tr)
        self.registered: dict[tuple, str | None] = {}

    def src(self, ref, at):
        key = (ref.wh, ref.table)
        name = f"delta_{ref.wh}.interop.{TOPICS[ref.table]}"
        if key not in self.registered:
            try:
                self.tr.query(f"CREATE SCHEMA IF NOT EXISTS delta_{ref.wh}.interop")
                self.tr.query(f"CALL delta_{ref.wh}.system.register_table(schema_name => 'interop', "
                              f"table_name => '{TOPICS[ref.table]}', table_location => '{ref.root}')")
                self.registered[key] = None
            except Exception as e:  # noqa: BLE001
                self.registered[key] = str(e)
        if self.registered[key]:
            raise RuntimeError(f"register_table: {self.registered[key]}")
        return name + (f" FOR VERSION AS OF {at}" if at is not None else "")


# ------------------------------------------------------------------ cells

class Cell:
    def __init__(self, engine: Engine, label: str, ref: Ref | None, fmt: str, wh: str) -> None:
        self.engine, self.label, self.ref, self.fmt, self.wh = engine, label, ref, fmt, wh
        self.status, self.figures, self.notes, self.secs = "", {}, [], 0.0

    def row(self) -> dict:
        return {"engine": self.engine.name, "table": self.label, "format": self.fmt, "warehouse": self.wh,
                "status": self.status, "figures": self.figures, "notes": self.notes, "secs": round(self.secs, 1)}


def run_cell(c: Cell, exp: Expect) -> None:
    t0 = time.time()
    try:
        check_cell(c, exp)
    except Skip as e:
        c.status, c.notes = "SKIPPED", [str(e)]
    except Exception as e:  # noqa: BLE001
        c.status = "FAIL"
        c.notes.append(f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
        if os.environ.get("FLOE_S15_TRACE"):
            traceback.print_exc()
    c.secs = time.time() - t0


def limit_of(c: Cell):
    for name, issue, applies, norm in c.engine.limits:
        if applies(c.ref.table if c.ref else c.label, c.wh):
            return name, issue, norm
    return None


def check_cell(c: Cell, exp: Expect) -> None:
    ref, eng, table = c.ref, c.engine, c.ref.table
    if c.fmt == "delta" and ref.delta_error:
        raise RuntimeError(f"no Delta log: {ref.delta_error}")
    cols = COLS[table]
    ends = exp.ends(table)
    want = exp.rows(table, cols)
    lim = limit_of(c)
    problems: list[str] = []
    limited: list[str] = []  # differences the known limit explains
    try:
        got = eng.rows(ref, cols)
    except Exception as e:  # noqa: BLE001
        if lim and lim[2] is None:  # a limit that shows as an error
            c.status = "KNOWN"
            c.notes = [f"{lim[0]} ({lim[1]}): {type(e).__name__}: {str(e).splitlines()[0][:200]}"]
            return
        raise
    d = diff(got, want, cols)
    if d and lim and lim[2] is not None and not diff([lim[2](r, cols) for r in got], [lim[2](r, cols) for r in want], cols):
        limited = d
    elif d:
        problems += [f"current: {x}" for x in d]
    f = figures(got, cols)
    fw = figures(want, cols)
    agg = eng.agg(ref)
    if agg is not None:
        for k in ("rows", "sum_id", "min_big", "max_big", "keys"):
            if agg[k] != fw[k]:
                problems.append(f"engine {k} = {agg[k]}, want {fw[k]}")
        f = agg
    c.figures = {"rows": f["rows"], "sum_id": f["sum_id"], "min_big": f["min_big"], "max_big": f["max_big"]}
    if table in ("upsert", "upart"):
        c.figures["keys"] = f["keys"]
    # The current snapshot or version must be at the topics' end offsets.
    pts = at_points(ref, c.fmt)
    if not pts or pts[-1][2] != ends:
        problems.append(f"newest {'snapshot' if c.fmt == 'iceberg' else 'version'} floe.offsets "
                        f"{pts[-1][2] if pts else None} != the acknowledged ends {ends}")
    if eng.travel:
        ok = 0
        for lbl, at, offs in pts:
            w = exp.rows(table, CORE, offs)
            try:
                g = eng.rows(ref, CORE, at)
            except Exception as e:  # noqa: BLE001
                problems.append(f"time travel {lbl} ({at}): {type(e).__name__}: {str(e).splitlines()[0][:200]}")
                continue
            dd = diff(g, w, CORE, 2)
            if dd:
                problems += [f"time travel {lbl} ({at}): {x}" for x in dd]
            else:
                ok += 1
        c.figures["travel"] = f"{ok}/{len(pts)}"
    else:
        c.figures["travel"] = "n/a"
    c.notes = problems
    if problems:
        c.status = "FAIL"
    elif lim and limited:
        c.status = "KNOWN"
        c.notes = [f"{lim[0]} ({lim[1]}): {limited[0]}"] + limited[1:3]
    elif lim:
        c.status = "FIXED?"
        c.notes = [f"the known limit '{lim[0]}' ({lim[1]}) did not show: update the matrix"]
    else:
        c.status = "PASS"
        c.notes = [eng.note(ref)] if eng.note(ref) else []


# ------------------------------------------------------------------ matrix

def status_of(admin: str) -> dict:
    with urllib.request.urlopen(f"http://{admin}/v1/status", timeout=20) as r:
        return json.load(r)


def wait_caught_up(admin: str, exp: Expect, timeout: float) -> dict[str, str | None]:
    """Per table: None once every partition committed its end offset, else why not."""
    deadline = time.time() + timeout
    why: dict[str, str | None] = {}
    while True:
        try:
            st = {t["table"]: t for t in status_of(admin).get("tables", [])}
        except Exception as e:  # noqa: BLE001
            st, why = {}, {t: f"status: {e}" for t in TOPICS}
        for table, topic in TOPICS.items():
            t = st.get(f"interop.{topic}")
            if t is None:
                why[table] = "not in the status"
                continue
            parts = {f"{p['topic']}/{p['partition']}": p.get("committed") for p in t.get("partitions") or []}
            behind = [f"{tp} committed {parts.get(tp)}/{end}" for tp, end in exp.ends(table).items() if parts.get(tp) != end]
            why[table] = None if not behind and t.get("metadata_location") else \
                f"state {t.get('state')}: {'; '.join(behind) or 'no metadata location'}" + \
                (f"; reason: {t.get('reason')}" if t.get("reason") else "")
        if all(v is None for v in why.values()) or time.time() > deadline:
            return why
        time.sleep(1)


def metadata_location(admin: str, table: str) -> str:
    for t in status_of(admin).get("tables", []):
        if t["table"] == f"interop.{TOPICS[table]}":
            return t["metadata_location"]
    raise RuntimeError(f"{table} not in the status of {admin}")


def build_engines(a, s3, opts, props, rest) -> tuple[list[Engine], dict[str, str]]:
    engines: list[Engine] = [PyIceberg()]
    skipped: dict[str, str] = {}
    try:
        db = DuckDB(a.duckdb_ext, s3, rest)
        engines += [DuckIcebergScan(db), DuckRest(db), DuckDelta(db)]
    except Exception as e:  # noqa: BLE001
        for n in ("duckdb iceberg_scan", "duckdb REST ATTACH", "duckdb delta_scan"):
            skipped[n] = f"DuckDB: {e}"
    engines += [PolarsIceberg(opts, props), PolarsDelta(opts, props), DeltaRsDataFusion(opts), DeltaRsPyArrow(opts)]
    if a.spark_jars:
        try:
            sp = Spark(a.spark_jars.split(","), rest, s3, os.path.join(a.work, "spark-copies"))
            engines += [SparkIceberg(sp), SparkDelta(sp)]
        except Exception as e:  # noqa: BLE001
            skipped["spark iceberg (REST)"] = skipped["spark delta"] = f"Spark did not start: {e}"
    else:
        skipped["spark iceberg (REST)"] = skipped["spark delta"] = "no --spark-jars"
    if a.trino and not a.trino.startswith("SKIP:"):
        tr = Trino(a.trino)
        engines += [TrinoIceberg(tr), TrinoDelta(tr)]
    else:
        why = a.trino[5:] if a.trino else "no --trino"
        skipped["trino iceberg (REST)"] = skipped["trino delta (register_table)"] = why
    return engines, skipped


class SkippedEngine(Engine):
    def __init__(self, name: str, fmt: str, why: str) -> None:
        self.name, self.fmt, self.why = name, fmt, why


def cmd_matrix(a: argparse.Namespace) -> None:
    exp = Expect(a.records)
    os.makedirs(a.work, exist_ok=True)
    s3 = {"endpoint": a.s3_endpoint, "key": a.s3_access_key, "secret": a.s3_secret_key, "region": a.s3_region} \
        if a.s3_endpoint else None
    props = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    opts: dict[str, str] = {}
    if s3:
        props.update({"s3.endpoint": s3["endpoint"], "s3.access-key-id": s3["key"], "s3.secret-access-key": s3["secret"],
                      "s3.region": s3["region"]})
        opts = {"AWS_ENDPOINT_URL": s3["endpoint"], "AWS_ACCESS_KEY_ID": s3["key"], "AWS_SECRET_ACCESS_KEY": s3["secret"],
                "AWS_REGION": s3["region"], "AWS_ALLOW_HTTP": "true"}
    nodes = dict(n.split("=", 1) for n in a.node)
    t0 = time.time()
    caught = {}
    for wh, admin in nodes.items():
        caught[wh] = wait_caught_up(admin, exp, a.timeout)
        for table, why in caught[wh].items():
            print(f"{wh} {table}: {'caught up' if why is None else 'NOT caught up: ' + why}", flush=True)
    print(f"waited {time.time() - t0:.1f}s for the tables", flush=True)
    engines, skipped = build_engines(a, s3, opts, props, nodes)
    engines += [SkippedEngine(n, "delta" if "delta" in n else "iceberg", why) for n, why in skipped.items()]
    order = ["pyiceberg", "duckdb iceberg_scan", "duckdb REST ATTACH", "polars scan_iceberg", "spark iceberg (REST)",
             "trino iceberg (REST)", "delta-rs QueryBuilder", "delta-rs to_pyarrow_table", "duckdb delta_scan",
             "polars read_delta", "spark delta", "trino delta (register_table)"]
    engines.sort(key=lambda e: order.index(e.name) if e.name in order else 99)
    cells: list[Cell] = []
    context: list[str] = []

    def refs_for(tables):
        out = {}
        for wh, admin in nodes.items():
            for table in tables:
                if caught[wh][table] is not None:
                    out[(wh, table)] = caught[wh][table]
                    continue
                try:
                    r = Ref(table, wh, admin, metadata_location(admin, table), props)
                    r.load_delta(opts if wh == "s3" else {})
                    out[(wh, table)] = r
                except Exception as e:  # noqa: BLE001
                    out[(wh, table)] = f"{type(e).__name__}: {e}"
        return out

    def run(label, refs):
        for (wh, table), r in refs.items():
            if isinstance(r, Ref):
                ops = collections.Counter(o for _, _, o in r.versions)
                context.append(f"{label} on {wh}: {len(r.snapshots)} snapshots "
                               f"({dict(collections.Counter(o for _, _, o in r.snapshots))}), "
                               f"Delta {'versions ' + str(len(r.versions)) + ' ' + str(dict(ops)) if not r.delta_error else r.delta_error}")
            for e in engines:
                c = Cell(e, label, r if isinstance(r, Ref) else None, e.fmt, wh)
                if isinstance(e, SkippedEngine):
                    c.status, c.notes = "SKIPPED", [e.why]
                elif not isinstance(r, Ref):
                    c.status, c.notes = "FAIL", [f"table not readable: {r}"]
                else:
                    run_cell(c, exp)
                cells.append(c)
                print(f"  {c.status:7} {e.name:30} {label:16} {c.fmt:7} {wh:4} {fig_text(c.figures)} "
                      f"{'; '.join(c.notes)[:300]}", flush=True)

    # The upsert table before compaction, then `floe ctl tables maintain`, then every table.
    run("upsert", refs_for(["upsert"]))
    for wh, admin in nodes.items():
        if caught[wh]["upsert"] is not None:
            continue
        before = metadata_location(admin, "upsert")
        cmd = [a.floe_bin, "ctl", "tables", "maintain", "interop.s15_upsert", "--addr", admin]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        line = " ".join((out.stdout + out.stderr).split())
        context.append(f"maintain on {wh}: exit {out.returncode}: {line[:300]}")
        print(f"floe ctl tables maintain interop.s15_upsert ({wh}): exit {out.returncode}: {line[:300]}", flush=True)
        deadline = time.time() + 60
        while metadata_location(admin, "upsert") == before and time.time() < deadline:
            time.sleep(1)
    refs = refs_for(["append", "part", "upsert", "upart"])
    for (wh, table), r in refs.items():
        if table == "upsert" and isinstance(r, Ref):
            comp = [s for s in r.snapshots if s[2] in ("compaction", "replace")]
            if not comp:
                context.append(f"upsert on {wh}: no compaction snapshot after maintain")
            if r.versions:
                context.append(f"upsert on {wh}: newest Delta version {r.versions[-1][0]} is {r.versions[-1][2]}")
    run("append", {k: v for k, v in refs.items() if k[1] == "append"})
    for (wh, table), r in list(refs.items()):
        if table == "upsert" and isinstance(r, Ref) and not any(s[2] in ("compaction", "replace") for s in r.snapshots):
            refs[(wh, table)] = "no compaction snapshot after `floe ctl tables maintain` (nothing was rewritten)"
        elif table == "upsert" and isinstance(r, Ref):
            c = Cell(LogCheck(), "upsert+compacted", r, "delta", wh)
            run_log_check(c, s3)
            cells.append(c)
            print(f"  {c.status:7} {c.engine.name:30} upsert+compacted delta   {wh:4} {'; '.join(c.notes)[:300]}", flush=True)
    run("upsert+compacted", {k: v for k, v in refs.items() if k[1] == "upsert"})
    run("part", {k: v for k, v in refs.items() if k[1] == "part"})
    run("upart", {k: v for k, v in refs.items() if k[1] == "upart"})
    cells += self_test(engines, refs, exp)
    report(cells, context, a.out, time.time() - t0)
    sys.stdout.flush()
    os._exit(1 if any(c.status in ("FAIL", "FIXED?") for c in cells) else 0)


class Mutated(Expect):
    """The expectation with one acknowledged record's `big` off by one (2^60 + 1 + id + 1:
    a double cannot tell them apart), so a comparison that misses it fails the self-test."""

    def __init__(self, exp: Expect, table: str) -> None:
        self.acked = json.loads(json.dumps(exp.acked))
        recs = self.acked[TOPICS[table]]
        r = next(r for r in reversed(recs) if r[3] is not None)
        v = json.loads(r[3])
        v["big"] += 1
        r[3] = json.dumps(v)


def self_test(engines: list[Engine], refs: dict, exp: Expect) -> list[Cell]:
    """Cells that must FAIL: a SQL engine and a dataframe engine per format against a
    mutated expectation (one value above 2^53 off by one). A cell that passes means the
    matrix cannot see such a difference: the self-test cell then FAILs."""
    out = []
    names = {"pyiceberg", "trino iceberg (REST)", "delta-rs QueryBuilder", "spark delta"}
    for e in engines:
        if e.name not in names or isinstance(e, SkippedEngine):
            continue
        r = refs.get(("s3", "append"))
        c = Cell(e, "self-test", r if isinstance(r, Ref) else None, e.fmt, "s3")
        if c.ref is None:
            c.status, c.notes = "FAIL", [f"self-test: no table to read: {r}"]
        else:
            probe = Cell(e, "append", c.ref, e.fmt, "s3")
            run_cell(probe, Mutated(exp, "append"))
            hit = [n for n in probe.notes if "unexpected" in n or "max_big" in n or "sum" in n]
            if probe.status == "FAIL" and hit:
                c.status, c.notes = "PASS", [f"rejects one value off by one above 2^53: {hit[0][:200]}"]
            else:
                c.status, c.notes = "FAIL", [f"self-test: {e.name} did not notice one value off by one above 2^53 "
                                             f"({probe.status}: {probe.notes[:2]})"]
            c.figures, c.secs = probe.figures, probe.secs
        out.append(c)
        print(f"  {c.status:7} {e.name:30} self-test        {c.fmt:7} s3   {'; '.join(c.notes)[:300]}", flush=True)
    return out


class LogCheck(Engine):
    name, fmt = "delta log (the compaction)", "delta"


def read_log_entry(ref: Ref, version: int, s3: dict | None) -> list[dict]:
    rel = f"_delta_log/{version:020d}.json"
    if ref.wh == "file":
        with open(os.path.join(ref.local_path(), rel)) as f:
            text = f.read()
    else:
        import boto3

        u = urlparse(ref.root)
        cli = boto3.client("s3", endpoint_url=s3["endpoint"], aws_access_key_id=s3["key"],
                           aws_secret_access_key=s3["secret"], region_name=s3["region"])
        text = cli.get_object(Bucket=u.netloc, Key=f"{u.path.lstrip('/')}/{rel}")["Body"].read().decode()
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def run_log_check(c: Cell, s3: dict | None) -> None:
    """The compaction `maintain` committed is published to Delta as a rewrite that adds
    no data (issue 36, defect 1): the newest version is an OPTIMIZE whose every add and
    remove says dataChange false, at the same floe.offsets as the version before."""
    t0 = time.time()
    try:
        ref = c.ref
        if ref.delta_error or not ref.versions:
            raise RuntimeError(f"no Delta log: {ref.delta_error}")
        v, offs, op = ref.versions[-1]
        actions = read_log_entry(ref, v, s3)
        adds = [a["add"] for a in actions if "add" in a]
        removes = [a["remove"] for a in actions if "remove" in a]
        changed = [x.get("path") for x in adds + removes if x.get("dataChange") is not False]
        c.figures = {"version": v, "operation": op, "adds": len(adds), "removes": len(removes)}
        problems = []
        if op != "OPTIMIZE":
            problems.append(f"newest version {v} is {op}, not OPTIMIZE")
        if not removes:
            problems.append(f"version {v} removes no file")
        if changed:
            problems.append(f"{len(changed)} add/remove actions of version {v} have dataChange true, e.g. {changed[0]}")
        if len(ref.versions) > 1 and ref.versions[-2][1] != offs:
            problems.append(f"floe.offsets moved from {ref.versions[-2][1]} to {offs}")
        c.status, c.notes = ("FAIL", problems) if problems else ("PASS", [
            f"version {v} OPTIMIZE: {len(removes)} removes, {len(adds)} adds, all dataChange false"])
    except Exception as e:  # noqa: BLE001
        c.status, c.notes = "FAIL", [f"{type(e).__name__}: {e}"]
    c.secs = time.time() - t0


def fig_text(f: dict) -> str:
    if not f:
        return "-"
    s = f"rows={f.get('rows')} sum={f.get('sum_id')} min={f.get('min_big')} max={f.get('max_big')}"
    if "keys" in f:
        s += f" keys={f['keys']}"
    return s + f" tt={f.get('travel', '-')}"


def report(cells: list[Cell], context: list[str], out: str, secs: float) -> None:
    hdr = ["engine", "table", "format", "wh", "result", "rows", "sum(id)", "min(big)", "max(big)", "keys", "time travel", "secs", "notes"]
    lines = []
    for c in cells:
        f = c.figures
        lines.append([c.engine.name, c.label, c.fmt, c.wh, c.status, str(f.get("rows", "-")), str(f.get("sum_id", "-")),
                      str(f.get("min_big", "-")), str(f.get("max_big", "-")), str(f.get("keys", "-")),
                      str(f.get("travel", "-")), f"{c.secs:.1f}", "; ".join(c.notes)[:400]])
    w = [max(len(h), *(len(r[i]) for r in lines)) if i < len(hdr) - 1 else 0 for i, h in enumerate(hdr)]
    fmt = lambda r: "  ".join(x.ljust(w[i]) if i < len(hdr) - 1 else x for i, x in enumerate(r))  # noqa: E731
    counts = collections.Counter(c.status for c in cells)
    text = ["engine matrix (issue 36): engine x table x format x warehouse, each against the broker's acknowledged records",
            fmt(hdr), fmt(["-" * x for x in w[:-1]] + ["-----"])] + [fmt(r) for r in lines]
    text += ["", f"{len(cells)} cells: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f" ({secs:.0f}s)", ""]
    text += ["tables:"] + [f"  {x}" for x in context]
    out_text = "\n".join(text) + "\n"
    print(out_text, flush=True)
    with open(out, "w") as f:
        f.write(out_text)
    with open(out + ".json", "w") as f:
        json.dump([c.row() for c in cells], f, indent=1, ensure_ascii=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("produce")
    s.add_argument("--bootstrap", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--pause", type=float, default=4)
    s.set_defaults(fn=cmd_produce)
    s = sub.add_parser("matrix")
    s.add_argument("--records", required=True)
    s.add_argument("--node", action="append", required=True, help="WH=ADMIN_ADDR (WH: s3 or file)")
    s.add_argument("--trino", help="Trino's URL, or SKIP:<reason>")
    s.add_argument("--spark-jars", help="comma-separated jar directories")
    s.add_argument("--duckdb-ext", required=True, help="directory with the *.duckdb_extension files")
    s.add_argument("--floe-bin", required=True)
    s.add_argument("--work", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--timeout", type=float, default=120)
    for o in ("--s3-endpoint", "--s3-access-key", "--s3-secret-key"):
        s.add_argument(o)
    s.add_argument("--s3-region", default="us-east-1")
    s.set_defaults(fn=cmd_matrix)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
