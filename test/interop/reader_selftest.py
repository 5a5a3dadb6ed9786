#!/usr/bin/env python3
"""Makes small file:// Iceberg tables shaped like Floe's, some correct and some
broken on purpose, so run.sh can prove that both readers accept the good one
and reject each fault (a checker that passes everything proves nothing).

  reader_selftest.py --dir DIR

writes the tables under DIR and prints one line per check:
  case <TAB> mode <TAB> want (ok|fail) <TAB> metadata location <TAB> expect file <TAB> text
where text is what the reader's output must contain (its finding).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from datetime import datetime, timezone

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog

HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
SCHEMA = pa.schema([
    ("_kafka_topic", pa.string()),
    ("_kafka_partition", pa.int32()),
    ("_kafka_offset", pa.int64()),
    ("_kafka_timestamp", pa.timestamp("us", tz="UTC")),
    ("_kafka_key", pa.binary()),
    ("_kafka_headers", pa.list_(HEADER)),
    ("id", pa.int64()),
    ("k", pa.string()),
])
TOPIC = "t"


def batch(rows: list[tuple[int, int]], bad_key_at: int | None = None) -> pa.Table:
    """rows: (partition, offset). Keys follow interop.py's record(): k = topic-id."""
    cols: dict[str, list] = {f.name: [] for f in SCHEMA}
    ts = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for p, o in rows:
        i = p * 1_000_000 + o
        k = f"{TOPIC}-{i}"
        key = (k + "x") if bad_key_at == o else k
        cols["_kafka_topic"].append(TOPIC)
        cols["_kafka_partition"].append(p)
        cols["_kafka_offset"].append(o)
        cols["_kafka_timestamp"].append(ts)
        cols["_kafka_key"].append(key.encode())
        cols["_kafka_headers"].append([{"key": "k", "value": key.encode()}])
        cols["id"].append(i)
        cols["k"].append(k)
    return pa.Table.from_pydict(cols, schema=SCHEMA)


def compact(tbl, props: dict, duplicate: bool = False) -> None:
    """Commits a snapshot as Floe's compaction does: every live data file rewritten
    into one, floe.offsets as given, "floe.operation": "compaction". PyIceberg cannot
    write a replace summary, so it commits an overwrite and mark_replace (after the
    last commit) renames the operation in every metadata file.
    duplicate=True writes some rows twice (a broken rewrite)."""
    from pyiceberg.io.pyarrow import _dataframe_to_data_files
    from pyiceberg.table.snapshots import Operation
    from pyiceberg.table.update.snapshot import _OverwriteFiles

    tasks = list(tbl.scan().plan_files())
    data = tbl.scan().to_arrow()
    if duplicate:
        data = pa.concat_tables([data, data.slice(0, 5)])
    with tbl.transaction() as tx:
        rewrite = _OverwriteFiles(operation=Operation.OVERWRITE, transaction=tx, io=tbl.io,
                                  snapshot_properties={**props, "floe.operation": "compaction"})
        for t in tasks:
            rewrite.delete_data_file(t.file)
        for df in _dataframe_to_data_files(tx.table_metadata, data.cast(tbl.schema().as_arrow()), tbl.io):
            rewrite.append_data_file(df)
        rewrite.commit()


def mark_replace(metadata_location: str) -> None:
    """Sets operation "replace" on every snapshot marked floe.operation=compaction, in
    every metadata file of the table (file:// only)."""
    d = os.path.dirname(metadata_location.removeprefix("file://"))
    for f in os.listdir(d):
        if not f.endswith(".metadata.json"):
            continue
        path = os.path.join(d, f)
        with open(path) as fh:
            md = json.load(fh)
        for snap in md.get("snapshots", []):
            if snap.get("summary", {}).get("floe.operation") == "compaction":
                snap["summary"]["operation"] = "replace"
        with open(path, "w") as fh:
            json.dump(md, fh)


def rng(p: int, a: int, b: int) -> list[tuple[int, int]]:
    return [(p, o) for o in range(a, b)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    d = os.path.abspath(a.dir)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cat = SqlCatalog("selftest", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}/warehouse")
    cat.create_namespace_if_not_exists("selftest")

    ranges = {f"{TOPIC}/0": [0, 100], f"{TOPIC}/1": [0, 50]}
    expect = {
        "table": "",
        "columns": [f.name for f in SCHEMA],
        "ranges": ranges,
        "key_field": "k",
        "header_key": "k",
        "append_delta_equals_records": True,
    }

    def make(name: str, commits: list[tuple[pa.Table | str, dict | None]], expire_first: bool = False) -> str:
        """commits: (rows, floe.offsets) appends; rows "compact" (or "compact+dup") makes a
        replace snapshot like Floe's compaction instead, with the given offsets."""
        ident = f"selftest.{name}"
        if cat.table_exists(ident):
            cat.drop_table(ident)
        tbl = cat.create_table(ident, schema=SCHEMA)
        for i, (data, offsets) in enumerate(commits):
            props = {} if offsets is None else {"floe.offsets": json.dumps(offsets), "floe.commit-id": f"c{i}"}
            if isinstance(data, str):
                compact(tbl, props, duplicate=data == "compact+dup")
                tbl = cat.load_table(ident)
            else:
                tbl.append(data, snapshot_properties=props)
        if expire_first:
            tbl.maintenance.expire_snapshots().by_id(tbl.metadata.snapshots[0].snapshot_id).commit()
        tbl = cat.load_table(ident)
        if any(isinstance(data, str) for data, _ in commits):
            mark_replace(tbl.metadata_location)
        path = os.path.join(d, f"{name}.expect.json")
        with open(path, "w") as f:
            json.dump({**expect, "table": ident}, f)
        return f"{tbl.metadata_location}\t{path}"

    first = {f"{TOPIC}/0": 60, f"{TOPIC}/1": 30}
    full = {f"{TOPIC}/0": 100, f"{TOPIC}/1": 50}
    good1 = batch(rng(0, 0, 60) + rng(1, 0, 30))
    good2 = batch(rng(0, 60, 100) + rng(1, 30, 50))

    cases = []
    loc = make("good", [(good1, first), (good2, full)])
    cases += [("good", "table", "ok", loc, "OK"), ("good", "metadata-dir", "ok", loc, "OK")]
    # Three commits, the first snapshot expired (as Floe's snapshot expiry does).
    mid = {f"{TOPIC}/0": 80, f"{TOPIC}/1": 40}
    loc = make("expired", [(good1, first), (batch(rng(0, 60, 80) + rng(1, 30, 40)), mid),
                           (batch(rng(0, 80, 100) + rng(1, 40, 50)), full)], expire_first=True)
    cases += [("expired", "table", "ok", loc, "OK"), ("expired", "metadata-dir", "ok", loc, "OK")]
    # Offsets 20..29 of partition 1 written twice (a replay after a lost commit).
    loc = make("duplicate", [(good1, first), (pa.concat_tables([good2, batch(rng(1, 20, 30))]), full)])
    cases += [("duplicate", "table", "fail", loc, "more than once"),
              ("duplicate", "metadata-dir", "fail", loc, "added 70 records but its floe.offsets advance by 60")]
    # Offset 70 of partition 0 never written.
    loc = make("gap", [(good1, first), (batch(rng(0, 60, 70) + rng(0, 71, 100) + rng(1, 30, 50)), full)])
    cases += [("gap", "table", "fail", loc, "first missing 70"),
              ("gap", "metadata-dir", "fail", loc, "added 59 records but its floe.offsets advance by 60")]
    # A row whose key is not the record's (columns shuffled between rows).
    loc = make("wrong-key", [(good1, first), (batch(rng(0, 60, 100) + rng(1, 30, 50), bad_key_at=75), full)])
    cases += [("wrong-key", "table", "fail", loc, "does not match payload field k")]
    # The summary claims fewer offsets than the table holds.
    loc = make("stale-offsets", [(good1, first), (good2, {f"{TOPIC}/0": 99, f"{TOPIC}/1": 50})])
    cases += [("stale-offsets", "table", "fail", loc, "floe.offsets[t/0]=99, expected 100"),
              ("stale-offsets", "metadata-dir", "fail", loc, "added 60 records but its floe.offsets advance by 59")]
    # A snapshot without floe.offsets.
    loc = make("no-offsets", [(good1, first), (good2, None)])
    cases += [("no-offsets", "table", "fail", loc, "lacks floe.offsets"),
              ("no-offsets", "metadata-dir", "fail", loc, "lacks floe.offsets")]

    # Floe's compaction: appends, a replace snapshot rewriting all files (same offsets),
    # then another append. Good; time travel to the middle snapshot must see 120 rows.
    loc = make("compacted", [(good1, first), (batch(rng(0, 60, 80) + rng(1, 30, 40)), mid), ("compact", mid),
                             (batch(rng(0, 80, 100) + rng(1, 40, 50)), full)])
    cases += [("compacted", "table", "ok", loc, "OK"), ("compacted", "metadata-dir", "ok", loc, "OK"),
              ("compacted", "time-travel", "ok", loc, "OK")]
    # A compaction that writes 5 rows twice.
    loc = make("compacted-dup", [(good1, first), (good2, full), ("compact+dup", full)])
    cases += [("compacted-dup", "table", "fail", loc, "more than once"),
              ("compacted-dup", "metadata-dir", "fail", loc, "adds 155 records but removes 150")]
    # A compaction whose floe.offsets claim more than its parent's.
    loc = make("compacted-moved", [(good1, first), ("compact", full), (good2, full)])
    cases += [("compacted-moved", "metadata-dir", "fail", loc, "replace snapshot")]
    # The middle snapshot claims offset 80 of t/0 but holds only 60..79: time travel to it
    # finds one row fewer than its floe.offsets say.
    loc = make("stale-middle", [(good1, first), (batch(rng(0, 60, 80) + rng(1, 30, 40)), {f"{TOPIC}/0": 81, f"{TOPIC}/1": 40}),
                                (batch(rng(0, 80, 100) + rng(1, 40, 50)), full)])
    cases += [("stale-middle", "time-travel", "fail", loc, "first missing 80")]

    for name, mode, want, loc, text in cases:
        print(f"{name}\t{mode}\t{want}\t{loc}\t{text}")


if __name__ == "__main__":
    main()
