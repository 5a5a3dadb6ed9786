#!/usr/bin/env python3
"""Delta Lake reader checks for the Floe interop suite (tables with formats [iceberg, delta]).

  delta_check.py --table METADATA_LOCATION EXPECT_FILE SEQUENCE [--table ...]
                 [--spark-jars DIR --work DIR] [--self-test] + the S3 options of pyiceberg_check.py

METADATA_LOCATION is the Iceberg table's current metadata.json (its "location" is the
Delta table's root, its table-uuid the txn appId); EXPECT_FILE is the expectation the
Iceberg readers use; SEQUENCE is the commit sequence Floe's status recorded for the
table (delta.sequence), or -1 when unknown.

delta-rs (deltalake) on the table in S3, for each table:
  - every expected (topic/partition, offset) exactly once, nothing else, and the same
    multiset of (topic/partition, offset) as PyIceberg scans from the Iceberg view;
  - the newest commitInfo carrying floe.offsets equals the expected end offsets (and the
    Iceberg snapshot summary's floe.offsets); the log's txn version for the table's appId
    equals SEQUENCE (and is at least 1);
  - time travel: the version in the middle of the history holds exactly the offsets below
    the floe.offsets of the newest commitInfo at or before it, each once (a prefix).
Apache Spark with Delta (one local[1] session for every table given), when --spark-jars:
  - Spark reads a byte-for-byte local copy of the table (the _delta_log and the live data
    files, fetched from S3 with boto3; Spark's S3A needs hadoop-aws and the AWS SDK bundle,
    see README.md): the same row count and (topic/partition, offset) multiset as delta-rs;
  - DESCRIBE HISTORY lists as many versions as the log holds, every one with an operation
    Floe writes, the appends as STREAMING UPDATE with queryId = appId and
    epochId = the sequence, the newest append's epochId = SEQUENCE;
  - DeltaLog.forTable(spark, path).update().transactions()[appId] (Delta's own Scala API
    through the py4j gateway) equals SEQUENCE;
  - a Structured Streaming query from version 0 (startingVersion 0, trigger availableNow:
    a reader that ran across every append, compaction, kill and failover) reads every
    expected (topic/partition, offset) exactly once: compactions are OPTIMIZE with
    dataChange false, never new data (issue 36). Not for a log a stream cannot cross by
    design (deletion vectors, a DELETE, a schema change); the OK line says which.
--dead-letters METADATA_LOCATION EXPECT_FILE: a dead-letter table of a Delta table (its
Delta log mirrors its Iceberg snapshots, with no txn; docs/formats.md). EXPECT_FILE is
{"table": NAME, "offsets": {"topic/partition": [offset, ...]}}, the source records that
were dead-lettered. delta-rs and Spark must each read exactly those (topic/partition,
offset)s once, the same as PyIceberg, and every row must carry its error (column `error`).
--self-test then breaks the first table's local copy on purpose (a commit re-adding a
copy of a live data file under a new name) and requires delta-rs and Spark to report the
duplicated offsets.

Prints one OK line per table and reader, or FAIL lines with the problems; exits 1 on any.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import time
from urllib.parse import quote, unquote, urlparse

import pyarrow as pa
from deltalake import DeltaTable
from pyiceberg.table import StaticTable

KEY_COLS = ["_kafka_topic", "_kafka_partition", "_kafka_offset"]
MAX_PROBLEMS = 20
FLOE_OPERATIONS = {"CREATE TABLE", "STREAMING UPDATE", "OPTIMIZE", "DELETE", "WRITE", "ADD COLUMNS"}


def pairs_of(tbl: pa.Table) -> collections.Counter:
    """(topic/partition, offset) -> how often the rows hold it."""
    t, p, o = (tbl.column(c).to_pylist() for c in KEY_COLS)
    return collections.Counter((f"{a}/{b}", c) for a, b, c in zip(t, p, o))


def offset_problems(what: str, got: collections.Counter, ranges: dict[str, tuple[int, int]]) -> list[str]:
    """Every offset of ranges once in got, nothing else."""
    out = []
    dups = sorted(k for k, n in got.items() if n > 1)
    if dups:
        out.append(f"{what}: {len(dups)} (partition, offset) read more than once, e.g. {dups[:5]}")
    for tp, (start, end) in sorted(ranges.items()):
        have = {o for (k, o) in got if k == tp}
        missing = [o for o in range(start, end) if o not in have]
        if missing:
            out.append(f"{what}: {tp} misses {len(missing)} offsets of [{start}, {end}), first {missing[0]}")
    extra = sorted((k, o) for (k, o) in got if k not in ranges or not ranges[k][0] <= o < ranges[k][1])
    if extra:
        out.append(f"{what}: {len(extra)} (partition, offset) outside the produced ranges, e.g. {extra[:5]}")
    return out


class Table:
    """One table's expectations and what delta-rs found, for Spark to compare with."""

    def __init__(self, metadata_location: str, expect_file: str, sequence: str, props: dict, opts: dict) -> None:
        with open(expect_file) as f:
            self.expect = json.load(f)
        self.name = self.expect.get("table", metadata_location)
        self.ranges = {k: (int(v[0]), int(v[1])) for k, v in self.expect["ranges"].items()}
        self.sequence = int(sequence)
        self.iceberg = StaticTable.from_metadata(metadata_location, properties=props)
        self.root = self.iceberg.metadata.location.rstrip("/")
        self.app_id = str(self.iceberg.metadata.table_uuid)
        self.opts = opts
        self.problems: list[str] = []
        self.pairs: collections.Counter = collections.Counter()
        self.version = -1
        self.live_files: list[str] = []
        self.rs_reads = True  # delta-rs read the rows (False: a typeWidening table it refuses)
        self.stream: int | None = None  # rows a Spark stream from version 0 read (None: not streamable)

    def problem(self, msg: str) -> None:
        self.problems.append(msg)


class DeadLetters(Table):
    """A dead-letter table's expectation: the exact source offsets dead-lettered."""

    def __init__(self, metadata_location: str, expect_file: str, props: dict, opts: dict) -> None:
        with open(expect_file) as f:
            self.expect = json.load(f)
        self.want = collections.Counter((tp, int(o)) for tp, offs in self.expect["offsets"].items() for o in offs)
        self.name = self.expect.get("table", metadata_location)
        self.iceberg = StaticTable.from_metadata(metadata_location, properties=props)
        self.root = self.iceberg.metadata.location.rstrip("/")
        self.opts = opts
        self.problems = []
        self.pairs = collections.Counter()
        self.version = -1
        self.live_files = []


def check_dead_letters_rs(d: DeadLetters) -> None:
    dt = DeltaTable(d.root, storage_options=d.opts)
    d.version = dt.version()
    d.live_files = dt.file_uris()
    rows = dt.to_pyarrow_table(columns=KEY_COLS + ["error"])
    d.pairs = pairs_of(rows)
    iceberg = pairs_of(d.iceberg.scan(selected_fields=tuple(KEY_COLS)).to_arrow())
    if d.pairs != d.want:
        d.problem(f"delta-rs read dead letters {sorted(d.pairs.elements())}, want {sorted(d.want.elements())}")
    if iceberg != d.pairs:
        d.problem(f"delta-rs read {sorted(d.pairs.elements())}, PyIceberg {sorted(iceberg.elements())}")
    if any(not e for e in rows.column("error").to_pylist()):
        d.problem("a dead letter without its error")


def check_dead_letters_spark(spark, d: DeadLetters, path: str) -> None:
    got = spark_pairs(spark, path)
    if got != d.want:
        d.problem(f"Spark read dead letters {sorted(got.elements())}, want {sorted(d.want.elements())}")
    d.spark = sum(got.values())


def newest_offsets(history: list[dict], at_or_before: int) -> dict | None:
    """floe.offsets of the newest commitInfo at or before a version (history: newest first)."""
    for h in history:
        if h.get("version", -1) <= at_or_before and h.get("floe.offsets") is not None:
            off = h["floe.offsets"]
            return json.loads(off) if isinstance(off, str) else off
    return None


def widened(dt) -> bool:
    """The table carries Delta's typeWidening feature (a column was widened)."""
    return "typeWidening" in (dt.protocol().reader_features or [])


def check_delta_rs(t: Table) -> None:
    dt = DeltaTable(t.root, storage_options=t.opts)
    t.version = dt.version()
    t.live_files = dt.file_uris()
    iceberg = pairs_of(t.iceberg.scan(selected_fields=tuple(KEY_COLS)).to_arrow())
    if widened(dt):
        # delta-rs 1.6.6 reads the log of a widened table but refuses its
        # data ("reader features: {'typeWidening'} ... not yet supported").
        # Its log checks below still run; Spark reads the rows, compared
        # with PyIceberg's instead of delta-rs'. A delta-rs that reads the
        # data is held to the full check.
        try:
            t.pairs = pairs_of(dt.to_pyarrow_table(columns=KEY_COLS))
        except Exception as e:  # deltalake raises DeltaProtocolError
            if "typeWidening" not in str(e):
                raise
            print(f"delta-rs {t.name}: refuses the data of a typeWidening table ({type(e).__name__}); Spark reads it")
            t.pairs, t.rs_reads = iceberg, False
    else:
        t.pairs = pairs_of(dt.to_pyarrow_table(columns=KEY_COLS))
    for p in offset_problems("delta-rs" if t.rs_reads else "PyIceberg", t.pairs, t.ranges):
        t.problem(p)
    if iceberg != t.pairs:
        only_d, only_i = t.pairs - iceberg, iceberg - t.pairs
        t.problem(f"delta-rs and PyIceberg disagree: {sum(only_d.values())} rows only in Delta "
                  f"(e.g. {sorted(only_d)[:3]}), {sum(only_i.values())} only in Iceberg (e.g. {sorted(only_i)[:3]})")
    history = dt.history()
    want = {k: end for k, (_, end) in t.ranges.items()}
    got = newest_offsets(history, t.version)
    if got != want:
        t.problem(f"newest commitInfo floe.offsets {got}, want the topic's end offsets {want}")
    snap = t.iceberg.current_snapshot()
    raw = snap.summary.get("floe.offsets") if snap and snap.summary else None
    ice = json.loads(raw) if raw else None
    if got != ice:
        t.problem(f"Delta floe.offsets {got} differ from the Iceberg snapshot's {ice}")
    txn = dt.transaction_version(t.app_id)
    if txn is None or txn < 1 or (t.sequence >= 0 and txn != t.sequence):
        t.problem(f"txn version for appId {t.app_id} is {txn}, want the last commit sequence {t.sequence}")
    t.history_len = len(history)
    if t.rs_reads:
        check_time_travel(t, history)


def check_time_travel(t: Table, history: list[dict]) -> None:
    """The middle version holds exactly the offsets below its floe.offsets: a prefix.

    Two versions are enough: version 0 (the first append) is then the one travelled to.
    A fast drain (300,000 records produced in 3 s) can commit a table in two appends."""
    if t.version < 1:
        t.problem(f"only {t.version + 1} Delta version: nothing to travel back to")
        return
    v = t.version // 2
    old = DeltaTable(t.root, storage_options=t.opts)
    old.load_as_version(v)
    offs = newest_offsets(history, v)
    if offs is None:
        t.problem(f"no commitInfo with floe.offsets at or before version {v}")
        return
    ranges = {k: (t.ranges[k][0] if k in t.ranges else 0, int(e)) for k, e in offs.items()}
    got = pairs_of(old.to_pyarrow_table(columns=KEY_COLS))
    for p in offset_problems(f"delta-rs version {v}", got, ranges):
        t.problem(p)
    if sum(got.values()) >= sum(t.pairs.values()):
        t.problem(f"version {v} holds {sum(got.values())} rows, not fewer than version {t.version}")
    t.travel = (v, sum(got.values()))


def local_copy(t: Table, s3, dest: str) -> None:
    """The table's _delta_log and data files, byte for byte, under dest: the live ones and
    every file an add of the log names that is still in the bucket (a streaming reader
    from version 0 reads files compaction removed since)."""
    u = urlparse(t.root)
    bucket, prefix = u.netloc, u.path.lstrip("/") + "/"
    logs = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "_delta_log/"):
        logs += [o["Key"] for o in page.get("Contents", [])]
    keys = set(logs)
    for f in t.live_files:
        fu = urlparse(f)
        keys.add(unquote(fu.path.lstrip("/")) if fu.scheme == "s3" else f)
    for k in logs:
        if k.endswith(".json"):
            body = s3.get_object(Bucket=bucket, Key=k)["Body"].read().decode()
            keys |= {prefix + unquote(p) for p in added_paths(body)}
    for k in sorted(keys):
        out = os.path.join(dest, k[len(prefix):])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        try:
            s3.download_file(bucket, k, out)
        except Exception as e:  # a removed file orphan cleanup took: the stream check says so
            if k in logs or not str(e).startswith("An error occurred (404)"):
                raise


def added_paths(commit_json: str) -> list[str]:
    """The relative paths of the adds of one commit file (as written: URI-escaped)."""
    out = []
    for line in commit_json.splitlines():
        if line.strip():
            a = json.loads(line).get("add")
            if a and "://" not in a["path"]:
                out.append(a["path"])
    return out


def log_lines(path: str):
    """Every action of the JSON commit files under path's _delta_log, in version order."""
    local = unquote(urlparse(path).path) if path.startswith("file:") else path
    d = os.path.join(local, "_delta_log")
    for name in sorted(n for n in os.listdir(d) if n.endswith(".json")):
        with open(os.path.join(d, name)) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def check_spark_stream(spark, t: Table, path: str) -> None:
    """Spark Structured Streaming from version 0 (trigger availableNow, as a reader that ran
    across every append, compaction, kill and failover): every (partition, offset) once.

    A compaction published as new data (dataChange true) would be read twice, or stop the
    stream at its removes ("Detected a data update"). Skipped, and said so, for a log a
    stream cannot cross by design: deletion vectors (an upsert table's updates are data
    changes), a replace rewind's DELETE, or a schema change in its history (a stream
    restarts on one)."""
    actions = list(log_lines(path))
    schemas = {a["metaData"]["schemaString"] for a in actions if "metaData" in a}
    deletes = any((a.get("commitInfo") or {}).get("operation") == "DELETE" for a in actions)
    if any("deletionVector" in (a.get("add") or {}) for a in actions) or len(schemas) > 1 or deletes:
        t.stream = None
        return
    name = "floe_stream_" + "".join(c if c.isalnum() else "_" for c in t.name)
    q = (spark.readStream.format("delta").option("startingVersion", 0).load(path).select(*KEY_COLS)
         .writeStream.format("memory").queryName(name).trigger(availableNow=True).start())
    try:
        q.awaitTermination()  # raises when the query failed
    except Exception as e:  # noqa: BLE001 - Spark's StreamingQueryException, reported as a problem
        t.problem(f"a Spark stream from version 0 failed: {str(e).splitlines()[0][:400]}")
        return
    rows = spark.sql(f"SELECT * FROM {name}").collect()
    got = collections.Counter((f"{r[0]}/{r[1]}", r[2]) for r in rows)
    for p in offset_problems("a Spark stream from version 0", got, t.ranges):
        t.problem(p)
    t.stream = sum(got.values())


def spark_session(jars_dir: str):
    from pyspark.sql import SparkSession

    jars = ",".join(os.path.join(jars_dir, j) for j in sorted(os.listdir(jars_dir)) if j.endswith(".jar"))
    return (SparkSession.builder.master("local[1]").appName("floe-delta-check")
            .config("spark.jars", jars)
            .config("spark.driver.memory", "768m")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.databricks.delta.snapshotPartitions", "1")
            .config("spark.sql.shuffle.partitions", "1")
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .getOrCreate())


def spark_pairs(spark, path: str) -> collections.Counter:
    rows = spark.read.format("delta").load(path).select(*KEY_COLS).collect()
    return collections.Counter((f"{r[0]}/{r[1]}", r[2]) for r in rows)


def spark_txn(spark, path: str, app_id: str):
    jvm = spark._jvm
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
    snap = log.update(False, jvm.scala.Option.empty(), jvm.scala.Option.empty())
    v = snap.transactions().get(app_id)
    return int(v.get()) if v.isDefined() else None


def check_spark(spark, t: Table, path: str) -> None:
    got = spark_pairs(spark, path)
    other = "delta-rs" if t.rs_reads else "PyIceberg"
    if got != t.pairs:
        t.problem(f"Spark read {sum(got.values())} rows, {other} {sum(t.pairs.values())}; "
                  f"only Spark: {sorted(got - t.pairs)[:3]}, only {other}: {sorted(t.pairs - got)[:3]}")
    for p in offset_problems("Spark", got, t.ranges):
        t.problem(p)
    hist = spark.sql(f"DESCRIBE HISTORY delta.`{path}`").select("version", "operation", "operationParameters").collect()
    if len(hist) != t.version + 1 or hist[0]["version"] != t.version:
        t.problem(f"DESCRIBE HISTORY lists {len(hist)} versions up to {hist[0]['version'] if hist else None}, "
                  f"the log holds 0..{t.version}")
    ops = collections.Counter(h["operation"] for h in hist)
    if set(ops) - FLOE_OPERATIONS:
        t.problem(f"DESCRIBE HISTORY has operations Floe does not write: {dict(ops)}")
    appends = [h for h in hist if h["operation"] == "STREAMING UPDATE"]
    bad = [h["version"] for h in appends if (h["operationParameters"] or {}).get("queryId") != t.app_id]
    if not appends or bad:
        t.problem(f"DESCRIBE HISTORY: {len(appends)} STREAMING UPDATE versions, {len(bad)} without queryId {t.app_id}")
    elif t.sequence >= 0 and int(appends[0]["operationParameters"].get("epochId", -1)) != t.sequence:
        t.problem(f"newest STREAMING UPDATE has epochId {appends[0]['operationParameters'].get('epochId')}, want {t.sequence}")
    txn = spark_txn(spark, path, t.app_id)
    if txn is None or (t.sequence >= 0 and txn != t.sequence):
        t.problem(f"Spark DeltaLog transactions[{t.app_id}] = {txn}, want {t.sequence}")
    t.spark = (sum(got.values()), dict(ops), txn)
    check_spark_stream(spark, t, path)


def self_test(spark, t: Table, path: str) -> list[str]:
    """A commit re-adding a copy of a live file: both readers must see duplicates."""
    broken = path + "-duplicated-add"
    shutil.copytree(path, broken)
    name = sorted(os.listdir(os.path.join(broken, "_delta_log")))
    last = max(int(n[:20]) for n in name if n.endswith(".json") and n[:20].isdigit())
    victim = urlparse(t.live_files[0])
    rel = unquote(victim.path)[len(urlparse(t.root).path):].lstrip("/")
    copy_rel = os.path.join(os.path.dirname(rel), "dup-" + os.path.basename(rel))
    shutil.copy(os.path.join(broken, rel), os.path.join(broken, copy_rel))
    add = {"path": quote(copy_rel), "partitionValues": {}, "size": os.path.getsize(os.path.join(broken, copy_rel)),
           "modificationTime": int(time.time() * 1000), "dataChange": True}
    dt = DeltaTable(broken)
    for a in pa.table(dt.get_add_actions(flatten=False)).to_pylist():
        if unquote(a["path"]) == rel:
            add["partitionValues"] = {k: (None if v is None else str(v)) for k, v in (a.get("partition_values") or {}).items()}
    with open(os.path.join(broken, "_delta_log", f"{last + 1:020d}.json"), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": add["modificationTime"], "operation": "WRITE"}}) + "\n")
        f.write(json.dumps({"add": add}) + "\n")
    out = []
    rs = offset_problems("delta-rs", pairs_of(DeltaTable(broken).to_pyarrow_table(columns=KEY_COLS)), t.ranges)
    sp = offset_problems("Spark", spark_pairs(spark, broken), t.ranges)
    # The unbroken table's rows against an expectation that lacks its last
    # offset of one partition: that offset must be reported as not produced.
    tp = sorted(t.ranges)[0]
    short = dict(t.ranges, **{tp: (t.ranges[tp][0], t.ranges[tp][1] - 1)})
    rs_short = offset_problems("delta-rs", t.pairs, short)
    sp_short = offset_problems("Spark", spark_pairs(spark, path), short)
    for what, probs, finding in (("delta-rs", rs, "more than once"), ("Spark", sp, "more than once"),
                                 ("delta-rs", rs_short, "outside the produced ranges"),
                                 ("Spark", sp_short, "outside the produced ranges")):
        hits = [p for p in probs if finding in p]
        if not hits:
            out.append(f"self-test: {what} did not report '{finding}' ({probs})")
        else:
            print(f"self-test: {what} rejects the broken case: {hits[0]}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", nargs=3, action="append", required=True, metavar=("METADATA", "EXPECT", "SEQUENCE"))
    ap.add_argument("--dead-letters", nargs=2, action="append", default=[], metavar=("METADATA", "EXPECT"))
    ap.add_argument("--spark-jars")
    ap.add_argument("--work", help="directory for Spark's local copies")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--s3-endpoint")
    ap.add_argument("--s3-access-key")
    ap.add_argument("--s3-secret-key")
    ap.add_argument("--s3-region", default="us-east-1")
    args = ap.parse_args()
    props = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    opts = {}
    if args.s3_endpoint:
        props.update({"s3.endpoint": args.s3_endpoint, "s3.access-key-id": args.s3_access_key,
                      "s3.secret-access-key": args.s3_secret_key, "s3.region": args.s3_region})
        opts = {"AWS_ENDPOINT_URL": args.s3_endpoint, "AWS_ACCESS_KEY_ID": args.s3_access_key,
                "AWS_SECRET_ACCESS_KEY": args.s3_secret_key, "AWS_REGION": args.s3_region, "AWS_ALLOW_HTTP": "true"}
    tables = [Table(m, e, s, props, opts) for m, e, s in args.table]
    dlqs = [DeadLetters(m, e, props, opts) for m, e in args.dead_letters]
    for d in dlqs:
        check_dead_letters_rs(d)
        if not d.problems:
            print(f"OK delta-rs {d.name} (dead letters): {sum(d.pairs.values())} rows, version {d.version}")
    for t in tables:
        t0 = time.time()
        check_delta_rs(t)
        if not t.problems and t.rs_reads:
            print(f"OK delta-rs {t.name}: {sum(t.pairs.values())} rows, version {t.version}, txn {t.sequence}, "
                  f"time travel to version {t.travel[0]}: {t.travel[1]} rows ({time.time() - t0:.1f}s)")
        elif not t.problems:
            print(f"OK delta-rs {t.name} (log only): version {t.version}, txn {t.sequence}, floe.offsets "
                  f"as Iceberg's ({time.time() - t0:.1f}s)")
    if any(not t.rs_reads for t in tables) and not args.spark_jars:
        for t in tables:
            if not t.rs_reads:
                t.problem("no reader read the rows: delta-rs refuses a typeWidening table and --spark-jars is not given")
    failed = [t for t in tables + dlqs if t.problems]
    spark = None
    if args.spark_jars and not failed:
        import boto3

        t0 = time.time()
        spark = spark_session(args.spark_jars)
        spark.sparkContext.setLogLevel("ERROR")
        print(f"Spark {spark.version} (local[1]) started in {time.time() - t0:.1f}s")
        s3 = boto3.client("s3", endpoint_url=args.s3_endpoint, aws_access_key_id=args.s3_access_key,
                          aws_secret_access_key=args.s3_secret_key, region_name=args.s3_region) if opts else None
        for t in tables:
            t0 = time.time()
            path = t.root if not opts else os.path.join(args.work, t.name)
            if opts:
                local_copy(t, s3, path)
            check_spark(spark, t, path)
            if not t.problems:
                rows, ops, txn = t.spark
                stream = (f"a stream from version 0 read {t.stream} rows once each" if t.stream is not None else
                          "no stream (deletion vectors, a DELETE or a schema change in the log)")
                print(f"OK Spark {t.name}: {rows} rows, history {ops}, transactions[appId] = {txn}, {stream} "
                      f"({time.time() - t0:.1f}s)")
        for d in dlqs:
            path = d.root if not opts else os.path.join(args.work, d.name)
            if opts:
                local_copy(d, s3, path)
            check_dead_letters_spark(spark, d, path)
            if not d.problems:
                print(f"OK Spark {d.name} (dead letters): {d.spark} rows")
        if args.self_test and not any(t.problems for t in tables):
            t = tables[0]
            t.problems += self_test(spark, t, t.root if not opts else os.path.join(args.work, t.name))
    rc = 0
    for t in tables + dlqs:
        if t.problems:
            rc = 1
            print(f"FAIL {t.name} (Delta at {t.root}):")
            for p in t.problems[:MAX_PROBLEMS]:
                print(f"  {p}")
    sys.stdout.flush()
    if spark is not None:
        spark.stop()
    os._exit(rc)  # delta-rs' runtime threads can abort the interpreter's exit


if __name__ == "__main__":
    main()
