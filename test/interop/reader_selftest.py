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

    def make(name: str, commits: list[tuple[pa.Table, dict | None]], expire_first: bool = False) -> str:
        ident = f"selftest.{name}"
        if cat.table_exists(ident):
            cat.drop_table(ident)
        tbl = cat.create_table(ident, schema=SCHEMA)
        for i, (data, offsets) in enumerate(commits):
            props = {} if offsets is None else {"floe.offsets": json.dumps(offsets), "floe.commit-id": f"c{i}"}
            tbl.append(data, snapshot_properties=props)
        if expire_first:
            tbl.maintenance.expire_snapshots().by_id(tbl.metadata.snapshots[0].snapshot_id).commit()
        tbl = cat.load_table(ident)
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

    for name, mode, want, loc, text in cases:
        print(f"{name}\t{mode}\t{want}\t{loc}\t{text}")


if __name__ == "__main__":
    main()
