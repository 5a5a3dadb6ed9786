"""Reads a Delta table with delta-rs (the deltalake package), a reader no one
here wrote, and prints what the Go test checks, as JSON on one line:
the version, the row count, the distinct ids, rows per region, the protocol,
the txn-free history's operations and floe commit ids, and a time-travel count.

usage: python read_delta.py TABLE_DIR [VERSION_FOR_TIME_TRAVEL]
"""
import json
import os
import sys

import pyarrow as pa
from deltalake import DeltaTable


def main():
    path = sys.argv[1]
    dt = DeltaTable(path)
    tbl = dt.to_pyarrow_table()
    ids = tbl.column("id").to_pylist()
    regions = {}
    for r in tbl.column("region").to_pylist():
        regions[str(r)] = regions.get(str(r), 0) + 1
    proto = dt.protocol()
    hist = dt.history()
    out = {
        "version": dt.version(),
        "rows": tbl.num_rows,
        "distinct_ids": len(set(ids)),
        "regions": regions,
        "columns": tbl.column_names,
        "min_reader": proto.min_reader_version,
        "min_writer": proto.min_writer_version,
        "operations": [h.get("operation") for h in hist],
        "commit_ids": [h.get("floe.commit-id") for h in hist if h.get("floe.commit-id")],
        "partition_columns": dt.metadata().partition_columns,
        "u_type": str(tbl.schema.field("u").type),
        "u_lengths": sorted({len(v) for v in tbl.column("u").to_pylist()}),
        "ts_type": str(tbl.schema.field("ts").type),
        "local_type": str(tbl.schema.field("local").type),
        "skipped_eu": dt.to_pyarrow_table(filters=[("region", "=", "eu")]).num_rows,
    }
    # The per-file statistics as delta-rs parses them (data skipping).
    adds = pa.table(dt.get_add_actions(flatten=True)).to_pydict()
    out["stats_min_id"] = min(adds["min.id"])
    out["stats_max_id"] = max(adds["max.id"])
    out["stats_min_ts"] = str(min(adds["min.ts"]))
    out["stats_max_amount"] = str(max(adds["max.amount"]))
    out["stats_nested_nulls"] = sum(adds["null_count.nested.a"])
    out["filtered_ids"] = dt.to_pyarrow_table(filters=[("id", "<", 30)]).num_rows
    if len(sys.argv) > 2:
        old = DeltaTable(path, version=int(sys.argv[2]))
        out["time_travel_rows"] = old.to_pyarrow_table().num_rows
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
    # deltalake's native runtime sometimes aborts during interpreter
    # teardown ("terminate called without an active exception") after the
    # answer is printed; leave without the teardown.
    sys.stdout.flush()
    os._exit(0)
