#!/usr/bin/env python3
"""Independent PyIceberg reader for the Floe interop suite.

Takes the same arguments as the Java checker (java/.../Check.java):

  --metadata-location URL   s3://... or file:///... metadata.json of the table
  --expect FILE             JSON: table, columns, ranges {"topic/partition": [start, end]},
                            key_field, header_key, append_delta_equals_records
  --mode table|metadata-dir table: scan the table to Arrow and check every offset is there
                            exactly once; metadata-dir: parse every *.metadata.json beside it
  --mode time-travel [--snapshot-id ID|auto]  (PyIceberg only) scan an older snapshot (auto:
                            the middle of the history, and the first compaction after it) and
                            check it holds exactly the offsets below its floe.offsets, once each
  --mode pruning            (PyIceberg only) scan with a filter on one day of _kafka_timestamp
                            and on one _kafka_key: fewer files planned, exactly the produced rows
  --s3-endpoint URL --s3-access-key K --s3-secret-key S --s3-region R

Prints one OK line and exits 0 when every check passes; otherwise prints each problem and
exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import StaticTable
from pyiceberg.types import (
    BinaryType,
    IntegerType,
    ListType,
    LongType,
    StringType,
    StructType,
    TimestamptzType,
)

MAX_PROBLEMS = 20
METADATA_COLUMNS = {
    "_kafka_topic": StringType,
    "_kafka_partition": IntegerType,
    "_kafka_offset": LongType,
    "_kafka_timestamp": TimestamptzType,
    "_kafka_key": BinaryType,
}


def normalize(v, typ):
    """A value as the expectations write it: integers and decimals as plain strings,
    floats by repr, dates ISO, times and timestamps in microseconds, uuids canonical,
    bytes in hex."""
    import datetime as dt
    import decimal
    import uuid as uuidlib

    from pyiceberg.types import UUIDType

    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) if v.tzinfo else dt.datetime(1970, 1, 1)
        return str((v - epoch) // dt.timedelta(microseconds=1))
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond)
    if isinstance(v, uuidlib.UUID):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        if isinstance(typ, UUIDType):
            return str(uuidlib.UUID(bytes=bytes(v)))
        return bytes(v).hex()
    return str(v)


class Checker:
    def __init__(self, args: argparse.Namespace) -> None:
        self.location: str = args.metadata_location
        self.mode: str = args.mode
        with open(args.expect) as f:
            self.expect: dict = json.load(f)
        self.props: dict[str, str] = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
        if args.s3_endpoint:
            self.props["s3.endpoint"] = args.s3_endpoint
        if args.s3_access_key:
            self.props["s3.access-key-id"] = args.s3_access_key
        if args.s3_secret_key:
            self.props["s3.secret-access-key"] = args.s3_secret_key
        if args.s3_region:
            self.props["s3.region"] = args.s3_region
        self.args = args
        self.problems: list[str] = []

    def problem(self, msg: str) -> None:
        self.problems.append(msg)

    def ranges(self) -> dict[str, tuple[int, int]]:
        return {k: (int(v[0]), int(v[1])) for k, v in sorted(self.expect.get("ranges", {}).items())}

    # ------------------------------------------------------------ table mode

    def check_table(self) -> str:
        tbl = StaticTable.from_metadata(self.location, properties=self.props)
        schema = tbl.schema()
        self.check_schema(schema)
        if self.problems:
            return ""
        ranges = self.ranges()
        data = tbl.scan().to_arrow()
        rows = data.num_rows
        self.check_offsets(data, ranges, "")
        self.check_values(data, schema)

        expected = sum(e - s for s, e in ranges.values())
        if rows != expected:
            self.problem(f"table has {rows} rows, expected {expected}")

        key_field = self.expect.get("key_field") or ""
        keys = data["_kafka_key"].combine_chunks()
        if key_field:
            payload = data[key_field].combine_chunks().cast(pa.string()).cast(pa.binary())
            eq = pc.fill_null(pc.equal(keys.cast(pa.binary()), payload), False)
            bad = len(eq) - pc.sum(eq).as_py() if len(eq) else 0
            if bad:
                self.problem(f"{bad} rows whose _kafka_key does not match payload field {key_field}")
        header_key = self.expect.get("header_key") or ""
        if header_key:
            headers = data["_kafka_headers"].combine_chunks()
            flat = pc.list_flatten(headers)
            parents = pc.list_parent_indices(headers).to_numpy(zero_copy_only=False)
            hk = pc.struct_field(flat, "key")
            hv = pc.struct_field(flat, "value")
            sel = pc.fill_null(pc.equal(hk, header_key), False).to_numpy(zero_copy_only=False)
            sel_parents = parents[sel]
            sel_values = pc.filter(hv, pa.array(sel)).cast(pa.binary())
            matched = pc.fill_null(pc.equal(sel_values, pc.take(keys.cast(pa.binary()), pa.array(sel_parents))), False)
            good_rows = np.unique(sel_parents[matched.to_numpy(zero_copy_only=False)])
            bad = rows - len(good_rows)
            if bad:
                self.problem(f"{bad} rows whose header {header_key} does not equal the key")

        snap = tbl.current_snapshot()
        if snap is None:
            if expected:
                self.problem("table has no current snapshot")
        else:
            self.check_offsets_summary(snap, ranges)
            total = snap.summary.get("total-records") if snap.summary else None
            if total is not None and int(total) != expected:
                self.problem(f"snapshot summary total-records={total}, expected {expected}")
        return (
            f"rows={rows} partitions={len(ranges)} snapshot={snap.snapshot_id if snap else 'none'} "
            f"columns={len(schema.fields)}"
        )

    def by_partition(self, data: pa.Table) -> dict[str, np.ndarray]:
        """The sorted offsets of each "topic/partition" in data."""
        tp = pc.binary_join_element_wise(
            data["_kafka_topic"].cast(pa.string()), data["_kafka_partition"].cast(pa.string()), "/"
        )
        if tp.null_count or data["_kafka_offset"].null_count:
            self.problem(f"{max(tp.null_count, data['_kafka_offset'].null_count)} rows have a null topic, partition or offset")
        if data.num_rows == 0:
            return {}
        tp_enc = tp.combine_chunks().dictionary_encode()
        codes = tp_enc.indices.to_numpy(zero_copy_only=False)
        names = tp_enc.dictionary.to_pylist()
        offsets = data["_kafka_offset"].combine_chunks().to_numpy(zero_copy_only=False)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(names) + 1))
        by_tp: dict[str, np.ndarray] = {}
        for i, name in enumerate(names):
            by_tp[name] = np.sort(offsets[order[bounds[i] : bounds[i + 1]]])
        return by_tp

    def check_offsets(self, data: pa.Table, ranges: dict[str, tuple[int, int]], where: str) -> None:
        """Each topic/partition of ranges holds exactly the offsets start..end-1, each once,
        and there is nothing else. where prefixes the findings (e.g. a snapshot)."""
        by_tp = self.by_partition(data)
        for name, offs in by_tp.items():
            if name not in ranges:
                self.problem(f"{where}{len(offs)} rows from partition {name}, which was not produced to this table")
        for name, (start, end) in ranges.items():
            offs = by_tp.get(name, np.array([], dtype=np.int64))
            outside = offs[(offs < start) | (offs >= end)]
            if len(outside):
                self.problem(f"{where}{name}: {len(outside)} offsets outside the produced range [{start},{end}), e.g. {outside[:5].tolist()}")
            inside = offs[(offs >= start) & (offs < end)]
            uniq, counts = np.unique(inside, return_counts=True)
            dups = uniq[counts > 1]
            if len(dups):
                self.problem(f"{where}{name}: {int((counts[counts > 1] - 1).sum())} duplicate rows, e.g. offsets {dups[:5].tolist()} appear more than once")
            want = end - start
            if len(uniq) != want:
                present = np.zeros(want, dtype=bool)
                present[uniq - start] = True
                first_missing = int(np.argmin(present)) + start
                self.problem(f"{where}{name}: {len(uniq)} of {want} offsets in [{start},{end}) present; first missing {first_missing}")

    def check_schema(self, schema) -> None:
        names = {f.name: f for f in schema.fields}
        for col, want in sorted((self.expect.get("column_types") or {}).items()):
            f = names.get(col)
            if f is None:
                self.problem(f"schema lacks column {col} (expected {want})")
            elif str(f.field_type) != want:
                self.problem(f"column {col} is {f.field_type}, expected {want}")
        for c in self.expect.get("columns", []):
            if c not in names:
                self.problem(f"schema lacks column {c}; schema is {schema}")
        for col, typ in METADATA_COLUMNS.items():
            f = names.get(col)
            if f is None:
                self.problem(f"schema lacks metadata column {col}")
            elif not isinstance(f.field_type, typ):
                self.problem(f"metadata column {col} is {f.field_type}, expected {typ.__name__}")
        h = names.get("_kafka_headers")
        if h is None:
            self.problem("schema lacks metadata column _kafka_headers")
        else:
            t = h.field_type
            ok = isinstance(t, ListType) and isinstance(t.element_type, StructType)
            if ok:
                fields = {f.name: f.field_type for f in t.element_type.fields}
                ok = isinstance(fields.get("key"), StringType) and isinstance(fields.get("value"), BinaryType)
            if not ok:
                self.problem(f"metadata column _kafka_headers is {t}, expected list<struct<key: string, value: binary>>")

    def check_values(self, data: pa.Table, schema) -> None:
        """expect["values"]: {key: {column: normalized value}} for rows found by the
        key_field column (schema-registry scenarios: typed values read back)."""
        want = self.expect.get("values") or {}
        if not want:
            return
        key_field = self.expect.get("key_field") or "k"
        index = {k: i for i, k in enumerate(data[key_field].to_pylist())}
        types = {f.name: f.field_type for f in schema.fields}
        for key, cols in sorted(want.items()):
            i = index.get(key)
            if i is None:
                self.problem(f"no row with {key_field}={key}")
                continue
            for col, w in sorted(cols.items()):
                v = data[col][i].as_py() if col in data.column_names else None
                got = normalize(v, types.get(col))
                if got != w:
                    self.problem(f"row {key_field}={key}: column {col} = {got!r}, expected {w!r}")

    def floe_offsets(self, snap, where: str) -> dict[str, int] | None:
        summary = snap.summary
        raw = summary.get("floe.offsets") if summary else None
        if raw is None:
            self.problem(f"{where}: snapshot {snap.snapshot_id} summary lacks floe.offsets")
            return None
        if not (summary.get("floe.commit-id") or ""):
            self.problem(f"{where}: snapshot {snap.snapshot_id} summary lacks floe.commit-id")
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
                raise ValueError("not a JSON object of integer offsets")
            return dict(sorted(obj.items()))
        except ValueError as e:
            self.problem(f"{where}: snapshot {snap.snapshot_id} floe.offsets {raw} is not a JSON object of offsets: {e}")
            return None

    def check_offsets_summary(self, snap, ranges: dict[str, tuple[int, int]]) -> None:
        offs = self.floe_offsets(snap, "current snapshot")
        if offs is None:
            return
        for name, (start, end) in ranges.items():
            got = offs.get(name)
            if (got is None and end != start) or (got is not None and got != end):
                self.problem(f"floe.offsets[{name}]={got}, expected {end}")
        for name in offs:
            if name not in ranges:
                self.problem(f"floe.offsets has unexpected partition {name}")

    # ------------------------------------------------------------ metadata-dir mode

    def list_metadata(self, directory: str) -> list[str]:
        from pyarrow import fs

        u = urlparse(directory)
        if u.scheme == "file":
            filesystem, base = fs.LocalFileSystem(), u.path
        elif u.scheme in ("s3", "s3a"):
            kw = {}
            if self.args.s3_endpoint:
                ep = urlparse(self.args.s3_endpoint)
                kw["endpoint_override"] = ep.netloc
                kw["scheme"] = ep.scheme or "http"
            filesystem = fs.S3FileSystem(
                access_key=self.args.s3_access_key,
                secret_key=self.args.s3_secret_key,
                region=self.args.s3_region or "us-east-1",
                **kw,
            )
            base = u.netloc + u.path
        else:
            raise ValueError(f"cannot list {directory}: unknown scheme")
        infos = filesystem.get_file_info(fs.FileSelector(base.rstrip("/"), recursive=False))
        out = []
        for i in infos:
            if i.path.endswith(".metadata.json"):
                out.append(f"{u.scheme}://{i.path}" if u.scheme != "file" else f"file://{i.path}")
        return sorted(out)

    def check_metadata_dir(self) -> str:
        directory = self.location[: self.location.rfind("/") + 1]
        files = self.list_metadata(directory)
        if not files:
            self.problem(f"no *.metadata.json under {directory}")
            return ""
        if self.location not in files:
            self.problem(f"the current metadata {self.location} is not among the files listed under {directory}")
        io = load_file_io(properties=self.props, location=self.location)
        by_snapshot: dict[int, dict] = {}
        snapshots = 0
        current = None
        for f in files:
            try:
                md = FromInputFile.table_metadata(io.new_input(f))
            except Exception as e:  # noqa: BLE001 - any rejection is the finding
                self.problem(f"{f}: PyIceberg rejects it: {e}")
                continue
            if f == self.location:
                current = md
            where = f.rsplit("/", 1)[-1]
            commit_ids: set[str] = set()
            for s in md.snapshots:
                snapshots += 1
                offs = self.floe_offsets(s, where)
                if offs is None:
                    continue
                cid = s.summary.get("floe.commit-id")
                if cid and cid in commit_ids:
                    self.problem(f"{where}: floe.commit-id {cid} is on more than one snapshot")
                commit_ids.add(cid)
                prev = by_snapshot.setdefault(s.snapshot_id, offs)
                if prev != offs:
                    self.problem(f"snapshot {s.snapshot_id} has floe.offsets {prev} in one metadata file and {offs} in {where}")
        if current is not None:
            self.check_history(current)
        return f"{len(files)} metadata files parsed, {snapshots} snapshot entries carry floe.offsets"

    def check_history(self, md) -> None:
        """Each snapshot's offsets never go back from its parent's (a root
        first snapshot's parent offsets are the ranges' starts), and (optionally) an
        append adds exactly as many records as its offsets advance. A snapshot
        whose parent was expired has nothing to compare with and is skipped."""
        strict = bool(self.expect.get("append_delta_equals_records"))
        start = {k: s for k, (s, _) in self.ranges().items()}
        by_id = {}
        for s in md.snapshots:
            offs = self.floe_offsets(s, "history")
            if offs is not None:
                by_id[s.snapshot_id] = offs
        for s in md.snapshots:
            offs = by_id.get(s.snapshot_id)
            if offs is None:
                continue
            if s.parent_snapshot_id is None:
                # A first snapshot starts from the ranges' starts. Expiry may also leave a
                # later snapshot without a parent: one that did not start an empty table is skipped.
                summ = s.summary or {}
                if summ.get("total-records") is None or summ.get("total-records") != summ.get("added-records"):
                    continue
                base = start
            elif s.parent_snapshot_id in by_id:
                base = by_id[s.parent_snapshot_id]
            else:
                continue  # parent expired (or lacks offsets, reported above)
            delta = 0
            for k, v in offs.items():
                p = base.get(k, start.get(k, 0))
                if v < p:
                    self.problem(f"snapshot {s.snapshot_id} moves {k} back from {p} to {v}")
                delta += v - p
            for k, v in base.items():
                if k not in offs and v > start.get(k, 0):
                    self.problem(f"snapshot {s.snapshot_id} drops partition {k} from floe.offsets")
            op = s.summary.operation.value if s.summary and s.summary.operation else None
            if op == "replace":
                # Floe's compaction: the files change, the records and offsets do not.
                moved = {k: (base.get(k, start.get(k, 0)), v) for k, v in offs.items() if v != base.get(k, start.get(k, 0))}
                if moved:
                    self.problem(f"replace snapshot {s.snapshot_id} changes floe.offsets from its parent's: "
                                 + ", ".join(f"{k} {a}->{b}" for k, (a, b) in sorted(moved.items())))
                if strict:
                    added, deleted = s.summary.get("added-records", "0"), s.summary.get("deleted-records", "0")
                    if int(added) != int(deleted):
                        self.problem(f"replace snapshot {s.snapshot_id} adds {added} records but removes {deleted}")
                    parent = md.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
                    pt = parent.summary.get("total-records") if parent is not None and parent.summary else None
                    if pt is not None and s.summary.get("total-records") != pt:
                        self.problem(f"replace snapshot {s.snapshot_id} has total-records {s.summary.get('total-records')}, its parent {pt}")
            elif strict and op == "append":
                added = s.summary.get("added-records")
                if added is None or int(added) != delta:
                    self.problem(f"append snapshot {s.snapshot_id} added {added} records but its floe.offsets advance by {delta}")
            elif strict:
                self.problem(f"snapshot {s.snapshot_id} has operation {op}; Floe only appends and compacts (replace)")

    # ------------------------------------------------------------ time-travel mode

    def ancestors(self, md) -> list:
        """The current snapshot's retained ancestry, oldest first."""
        out = []
        s = md.current_snapshot()
        while s is not None:
            out.append(s)
            s = md.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
        return out[::-1]

    def check_time_travel(self) -> str:
        """Scans the table as of an older snapshot (--snapshot-id, or auto: the middle of the
        current snapshot's retained ancestry and the first compaction at or after it) and checks
        it holds exactly the offsets start..floe.offsets-1 of that snapshot, each once."""
        tbl = StaticTable.from_metadata(self.location, properties=self.props)
        md = tbl.metadata
        start = {k: s for k, (s, _) in self.ranges().items()}
        if self.args.snapshot_id and self.args.snapshot_id != "auto":
            picks = [md.snapshot_by_id(int(self.args.snapshot_id))]
            if picks[0] is None:
                self.problem(f"snapshot {self.args.snapshot_id} is not in the table's metadata")
                return ""
        else:
            chain = [s for s in self.ancestors(md) if s.summary and s.summary.get("floe.offsets")]
            if len(chain) < 2:
                self.problem(f"time travel needs at least 2 snapshots with floe.offsets, the table has {len(chain)}")
                return ""
            mid = len(chain) // 2
            if mid == len(chain) - 1:
                mid -= 1  # not the current snapshot
            picks = [chain[mid]]
            replace = next((s for s in chain[mid + 1 : -1] if s.summary.operation.value == "replace"), None)
            if replace is not None:
                picks.append(replace)
        out = []
        for snap in picks:
            offs = self.floe_offsets(snap, "time travel")
            if offs is None:
                continue
            ranges = {k: (s, offs.get(k, s)) for k, s in start.items()}
            for k in offs:
                if k not in ranges:
                    self.problem(f"snapshot {snap.snapshot_id}: floe.offsets has unexpected partition {k}")
            data = tbl.scan(snapshot_id=snap.snapshot_id).to_arrow()
            want = sum(e - s for s, e in ranges.values())
            op = snap.summary.operation.value
            where = f"snapshot {snap.snapshot_id} ({op}): "
            if data.num_rows != want:
                self.problem(f"{where}{data.num_rows} rows, but its floe.offsets minus the starts make {want}")
            self.check_offsets(data, ranges, where)
            total = snap.summary.get("total-records")
            if total is not None and int(total) != data.num_rows:
                self.problem(f"{where}total-records={total}, scan read {data.num_rows}")
            out.append(f"snapshot {snap.snapshot_id} ({op}, {snap.summary.get('floe.operation') or 'commit'}, "
                       f"ts={snap.timestamp_ms}) rows={data.num_rows}")
        ops: dict[str, int] = {}
        appended = rewritten = 0
        for snap in md.snapshots:
            op = snap.summary.operation.value if snap.summary else "?"
            ops[op] = ops.get(op, 0) + 1
            if op == "append":
                appended += int(snap.summary.get("added-data-files", "0"))
            elif op == "replace":
                rewritten += int(snap.summary.get("deleted-data-files", "0"))
        return (f"{len(md.snapshots)} snapshots retained ({', '.join(f'{v} {k}' for k, v in sorted(ops.items()))}; "
                f"appends added {appended} data files, compactions removed {rewritten}); " + "; ".join(out))

    # ------------------------------------------------------------ pruning mode

    def check_pruning(self) -> str:
        """Scans with row filters on one day of _kafka_timestamp and on one _kafka_key:
        PyIceberg must plan fewer data files than for the whole table, and read exactly
        the rows the producer made with that day (day_counts) or key (key_counts)."""
        from datetime import date, datetime, timedelta, timezone

        from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

        tbl = StaticTable.from_metadata(self.location, properties=self.props)
        all_files = len(list(tbl.scan().plan_files()))
        days = self.expect.get("day_counts") or {}
        keys = self.expect.get("key_counts") or {}
        if not days or not keys:
            self.problem("the expectation has no day_counts/key_counts (produce with --ts-days and --keys)")
            return ""
        filters = []
        for d, n in sorted(days.items()):
            lo = datetime.combine(date.fromisoformat(d), datetime.min.time(), tzinfo=timezone.utc)
            hi = lo + timedelta(days=1)
            f = And(GreaterThanOrEqual("_kafka_timestamp", lo.isoformat()), LessThan("_kafka_timestamp", hi.isoformat()))
            filters.append((f"day {d}", f, n, ("day", lo, hi)))
        for k in sorted(keys)[:2]:
            filters.append((f"key {k}", EqualTo("_kafka_key", k.encode()), keys[k], ("key", k.encode(), None)))
        out = []
        for label, f, want, (kind, a, b) in filters:
            scan = tbl.scan(row_filter=f)
            planned = len(list(scan.plan_files()))
            if planned >= all_files:
                self.problem(f"{label}: PyIceberg plans {planned} data files, the whole table has {all_files}: no pruning")
            data = scan.to_arrow()
            if data.num_rows != want:
                self.problem(f"{label}: {data.num_rows} rows, the producer made {want}")
            if kind == "day":
                ts = data["_kafka_timestamp"].combine_chunks()
                lo_s = pa.scalar(a, type=ts.type)
                hi_s = pa.scalar(b, type=ts.type)
                inside = pc.and_(pc.greater_equal(ts, lo_s), pc.less(ts, hi_s))
                bad = data.num_rows - pc.sum(inside).as_py() if data.num_rows else 0
            else:
                eq = pc.equal(data["_kafka_key"].combine_chunks().cast(pa.binary()), pa.scalar(a, pa.binary()))
                bad = data.num_rows - pc.sum(eq).as_py() if data.num_rows else 0
            if bad:
                self.problem(f"{label}: {bad} rows outside the filter")
            for name, offs in self.by_partition(data).items():
                uniq, counts = np.unique(offs, return_counts=True)
                if (counts > 1).any():
                    self.problem(f"{label}: {name} offsets {uniq[counts > 1][:5].tolist()} appear more than once")
            out.append(f"{label}: {planned}/{all_files} files, {data.num_rows} rows")
        return "; ".join(out)

    def run(self) -> int:
        name = self.expect.get("table", "table")
        try:
            if self.mode == "table":
                summary = self.check_table()
            elif self.mode == "metadata-dir":
                summary = self.check_metadata_dir()
            elif self.mode == "time-travel":
                summary = self.check_time_travel()
            elif self.mode == "pruning":
                summary = self.check_pruning()
            else:
                print(f"pyiceberg: unknown --mode {self.mode}", file=sys.stderr)
                return 2
        except Exception as e:  # noqa: BLE001 - report any reader failure as a failed check
            import traceback

            traceback.print_exc()
            self.problem(f"PyIceberg failed: {type(e).__name__}: {e}")
            summary = ""
        if self.problems:
            print(f"FAIL pyiceberg {self.mode} {name} ({self.location}): {len(self.problems)} problem(s)")
            for p in self.problems[:MAX_PROBLEMS]:
                print(f"  - {p}")
            if len(self.problems) > MAX_PROBLEMS:
                print(f"  ... and {len(self.problems) - MAX_PROBLEMS} more")
            return 1
        print(f"OK pyiceberg {self.mode} {name}: {summary}")
        return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--metadata-location", required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--mode", default="table", choices=["table", "metadata-dir", "time-travel", "pruning"])
    ap.add_argument("--snapshot-id", default="auto", help="time-travel: the snapshot to read (auto: the middle of the history)")
    ap.add_argument("--s3-endpoint")
    ap.add_argument("--s3-access-key")
    ap.add_argument("--s3-secret-key")
    ap.add_argument("--s3-region")
    return Checker(ap.parse_args()).run()


if __name__ == "__main__":
    sys.exit(main())
