#!/usr/bin/env python3
"""Interop scenario 14: upsert tables read by PyIceberg and Iceberg Java.

Subcommands:
  produce          keyed records, many updates per key and tombstones, at a rate
                   for a duration; writes the acknowledged offsets per partition
  model            consumes the topic with a Kafka client (independently of the
                   producer's bookkeeping and of Floe) and writes every record:
                   the model is the latest value per (partition, key), a
                   tombstone removing it, below any snapshot's floe.offsets
  wait-caught-up   Floe's committed offset of every partition = the topic's end
  snapshots        the snapshots to check: the current one, and the ancestor
                   with the most position-delete files
  sample-deletes   while the producer runs, the live delete files of the table's
                   current snapshot (PyIceberg, from its manifests), each sample
                   at most --bound
  check-pyiceberg  PyIceberg scans a snapshot (position deletes applied) and the
                   rows must be exactly the model at that snapshot's floe.offsets
  compare          the same comparison for rows another reader dumped (the Java
                   UpsertDump, JSON lines)

Rows are compared as (partition, key) -> (offset, id, k, v): a key missing, one
too many (a tombstoned or superseded row showing), two live rows of a key, or a
value not the latest all fail, with the differences listed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import interop  # noqa: E402  (the suite's status helpers: fetch_status, pid_running)

MAX_DIFFS = 20


def fail(msg: str) -> None:
    print(f"upsert_check.py: {msg}", file=sys.stderr)
    sys.exit(1)


def s3_props(a: argparse.Namespace) -> dict[str, str]:
    p = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    for opt, prop in (("s3_endpoint", "s3.endpoint"), ("s3_access_key", "s3.access-key-id"),
                      ("s3_secret_key", "s3.secret-access-key"), ("s3_region", "s3.region")):
        if getattr(a, opt, None):
            p[prop] = getattr(a, opt)
    return p


# ------------------------------------------------------------------ producing and the model


def cmd_produce(a: argparse.Namespace) -> None:
    """Keyed records u-<n> of --keys keys, chosen at random (seeded), for
    --duration seconds at --rate records/s; a --tombstones share of them null.
    The default partitioner puts each key in one partition."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": a.bootstrap, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 20, "message.timeout.ms": 120000})
    rng = random.Random(a.seed)
    acked: dict[int, list[int]] = {}
    errors: list[str] = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(f"{msg.partition()}: {err}")
        else:
            acked.setdefault(msg.partition(), []).append(msg.offset())

    start = time.time()
    i = tombstones = 0
    while time.time() - start < a.duration:
        key = f"u-{rng.randrange(a.keys)}"
        value = None
        if rng.random() >= a.tombstones:
            value = json.dumps({"id": i, "k": key, "v": f"v{i}-{rng.randrange(1 << 30):x}"}).encode()
        else:
            tombstones += 1
        p.produce(a.topic, key=key.encode(), value=value, on_delivery=on_delivery)
        i += 1
        if i % 20 == 0:
            p.poll(0)
            ahead = i / a.rate - (time.time() - start)
            if ahead > 0:
                time.sleep(ahead)
    if p.flush(150):
        fail("records still unacknowledged after flush")
    if errors:
        fail(f"{len(errors)} records failed delivery, e.g. {errors[:3]}")
    ends = {}
    for part, offs in acked.items():
        offs.sort()
        if offs != list(range(offs[0], offs[0] + len(offs))):
            fail(f"partition {part}: acknowledged offsets are not contiguous")
        ends[f"{a.topic}/{part}"] = [offs[0], offs[-1] + 1]
    with open(a.report, "w") as f:
        json.dump({"topic": a.topic, "records": i, "tombstones": tombstones, "ranges": ends}, f)
    took = time.time() - start
    print(f"produced {i} records ({tombstones} tombstones) over {a.keys} keys in {took:.1f}s ({i / took:.0f}/s)")


def cmd_model(a: argparse.Namespace) -> None:
    """Reads every record of the topic up to its end offsets and writes them
    (partition, offset, key, value or null) after checking they are exactly
    the ones the producer got acknowledged."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    with open(a.report) as f:
        rep = json.load(f)
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "interop-upsert-model",
                  "enable.auto.commit": False, "isolation.level": "read_committed"})
    parts = sorted(c.list_topics(a.topic, timeout=10).topics[a.topic].partitions)
    ends = {p: c.get_watermark_offsets(TopicPartition(a.topic, p), timeout=10) for p in parts}
    for p, (lo, hi) in ends.items():
        want = rep["ranges"].get(f"{a.topic}/{p}", [lo, lo])
        if [lo, hi] != want:
            fail(f"partition {p}: Kafka holds [{lo},{hi}) but the producer got [{want[0]},{want[1]}) acknowledged")
    c.assign([TopicPartition(a.topic, p, OFFSET_BEGINNING) for p in parts])
    recs: dict[int, list] = {p: [] for p in parts}
    left = {p for p, (lo, hi) in ends.items() if hi > lo}
    deadline = time.time() + 120
    while left and time.time() < deadline:
        for m in c.consume(1000, timeout=1):
            if m.error():
                fail(f"consuming {a.topic}: {m.error()}")
            p, off = m.partition(), m.offset()
            if off >= ends[p][1]:
                continue
            val = m.value()
            recs[p].append([off, m.key().decode(), None if val is None else json.loads(val)])
            if off == ends[p][1] - 1:
                left.discard(p)
    c.close()
    if left:
        fail(f"partitions {sorted(left)} not read to their end within 120s")
    n = sum(len(r) for r in recs.values())
    if n != rep["records"]:
        fail(f"read {n} records, the producer got {rep['records']} acknowledged")
    out = {"topic": a.topic, "ends": {f"{a.topic}/{p}": ends[p][1] for p in parts},
           "records": {str(p): r for p, r in recs.items()}}
    with open(a.out, "w") as f:
        json.dump(out, f)
    live = model_at(out, out["ends"])
    print(f"model of {a.topic}: {n} records, {len(live)} live keys at the end")


def model_at(model: dict, offsets: dict[str, int]) -> dict[str, tuple]:
    """The latest row per (partition, key) among the records below offsets
    ("topic/partition" -> next offset): "p|key" -> (offset, id, k, v)."""
    live: dict[str, tuple] = {}
    for p, recs in model["records"].items():
        below = offsets.get(f"{model['topic']}/{p}", 0)
        for off, key, val in recs:
            if off >= below:
                break
            if val is None:
                live.pop(f"{p}|{key}", None)
            else:
                live[f"{p}|{key}"] = (off, val["id"], val["k"], val["v"])
    return live


def diff(reader: str, got: dict[str, list], want: dict[str, tuple]) -> list[str]:
    """The differences between the rows a reader read (id -> every row of
    that partition and key) and the model."""
    out = []
    for ident in sorted(set(got) | set(want)):
        rows, w = got.get(ident, []), want.get(ident)
        if w is None:
            out.append(f"{reader}: {ident} has {len(rows)} live row(s) {rows[:2]}, the model has none (tombstoned or never written)")
        elif not rows:
            out.append(f"{reader}: {ident} missing, the model has {w}")
        elif len(rows) > 1:
            out.append(f"{reader}: {ident} has {len(rows)} live rows {rows[:3]}, the model has one: {w}")
        elif tuple(rows[0]) != w:
            out.append(f"{reader}: {ident} reads {tuple(rows[0])}, the model has {w}")
    return out


def verdict(reader: str, snap_id, deletes: int, got: dict[str, list], want: dict[str, tuple]) -> None:
    d = diff(reader, got, want)
    nrows = sum(len(r) for r in got.values())
    if d:
        print(f"FAIL {reader} upsert snapshot {snap_id}: {len(d)} difference(s) from the model "
              f"({nrows} rows read, {len(want)} keys in the model, {deletes} delete files applied)")
        for line in d[:MAX_DIFFS]:
            print(f"  - {line}")
        if len(d) > MAX_DIFFS:
            print(f"  ... and {len(d) - MAX_DIFFS} more")
        sys.exit(1)
    print(f"OK {reader} upsert snapshot {snap_id}: {nrows} rows = the model's {len(want)} latest values "
          f"({deletes} position-delete files applied)")


def load_model(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


# ------------------------------------------------------------------ Floe and the table


def cmd_wait_caught_up(a: argparse.Namespace) -> None:
    """Until every partition's committed offset is the topic's end (the model's
    ends), the table is RUNNING and its key index counts the model's live keys;
    rows are not compared (a flush keeps only the last record per key)."""
    model = load_model(a.model)
    ends = model["ends"]
    want_keys = len(model_at(model, ends))  # the index's live keys (status upsert.keys)
    start = time.time()
    msg = ""
    while time.time() - start < a.timeout:
        try:
            t = next(x for x in interop.fetch_status(a.admin)["tables"] if x["table"] == a.table)
            parts = {f"{p['topic']}/{p['partition']}": p.get("committed") for p in t.get("partitions") or []}
            behind = {tp: parts.get(tp) for tp, end in ends.items() if parts.get(tp) != end}
            msg = f"state={t.get('state')} behind={behind} reason={t.get('reason')}"
            keys = (t.get("upsert") or {}).get("keys")
            msg += f" upsert.keys={keys}/{want_keys}"
            if not behind and t.get("state") == "RUNNING" and keys == want_keys:
                print(f"caught up after {time.time() - start:.1f}s: committed = end offsets {ends}; upsert {t.get('upsert')}")
                return
        except Exception as e:  # noqa: BLE001
            msg = f"status unavailable: {e}"
        time.sleep(1)
    fail(f"{a.table} did not catch up within {a.timeout}s: {msg}")


def live_delete_files(tbl, snap) -> int:
    """Position-delete files live in snap, from its delete manifests."""
    n = 0
    for m in snap.manifests(tbl.io):
        if m.content.name != "DELETES":
            continue
        n += len(m.fetch_manifest_entry(tbl.io, discard_deleted=True))
    return n


def static_table(location: str, a: argparse.Namespace):
    from pyiceberg.table import StaticTable

    return StaticTable.from_metadata(location, properties=s3_props(a))


def cmd_snapshots(a: argparse.Namespace) -> None:
    """Prints 'snapshot_id<TAB>delete_files' for the current snapshot and for
    the one of its newest --depth retained ancestors with the most delete
    files: there the readers apply the most deletes, and the model is taken
    at offsets below the topic's end. Compaction may have left the current
    snapshot without any."""
    tbl = static_table(a.metadata_location, a)
    snap = tbl.current_snapshot()
    if snap is None:
        fail("the table has no snapshot")
    print(f"{snap.snapshot_id}\t{live_delete_files(tbl, snap)}")
    best, most = None, 0
    for _ in range(a.depth):
        if snap.parent_snapshot_id is None:
            break
        snap = tbl.metadata.snapshot_by_id(snap.parent_snapshot_id)
        if snap is None:
            break  # expired
        n = live_delete_files(tbl, snap)
        if n > most:
            best, most = snap, n
    if best is not None:
        print(f"{best.snapshot_id}\t{most}")


def cmd_sample_deletes(a: argparse.Namespace) -> None:
    """Every --interval seconds while process --pid runs: the live delete
    files of the table's current snapshot; fails at once above --bound. At
    the end, compaction must have run --min-compactions times and the peak
    must have reached --min-peak (else the bound proved nothing)."""
    start = time.time()
    peak = samples = 0
    first = last = None
    with open(a.out, "a") as out:
        while interop.pid_running(a.pid):
            try:
                t = next(x for x in interop.fetch_status(a.admin)["tables"] if x["table"] == a.table)
                loc = t.get("metadata_location")
                tbl = static_table(loc, a) if loc else None
                snap = tbl.current_snapshot() if tbl else None
            except Exception as e:  # noqa: BLE001
                print(f"  {time.time() - start:5.0f}s status or table unavailable: {e}", flush=True)
                time.sleep(a.interval)
                continue
            if snap is not None:
                n = live_delete_files(tbl, snap)
                samples += 1
                peak = max(peak, n)
                first = t.get("compactions", 0) if first is None else first
                last = t.get("compactions", 0)
                line = {"t": round(time.time() - start, 1), "delete_files": n, "data_files": t.get("data_files"),
                        "commits": t.get("commits"), "compactions": last, "snapshot": snap.snapshot_id}
                out.write(json.dumps(line) + "\n")
                print(f"  {line['t']:5.1f}s delete_files={n} data_files={line['data_files']} "
                      f"commits={line['commits']} compactions={last}", flush=True)
                if n > a.bound:
                    fail(f"{a.table}: {n} position-delete files live in snapshot {snap.snapshot_id}, bound {a.bound}")
            time.sleep(a.interval)
    ran = (last or 0) - (first or 0)
    print(f"{samples} samples over {time.time() - start:.0f}s: peak delete_files={peak} <= {a.bound}, "
          f"{ran} compactions meanwhile")
    if samples < 5:
        fail(f"only {samples} samples of the delete files")
    if ran < a.min_compactions:
        fail(f"{ran} compactions while sampling, wanted at least {a.min_compactions}: the bound was not exercised")
    if peak < a.min_peak:
        fail(f"the delete files peaked at {peak}, below {a.min_peak}: too few to need compaction, the bound proved nothing")


def rows_by_key(data) -> dict[str, list]:
    got: dict[str, list] = {}
    for r in data.to_pylist():
        key = r["_kafka_key"].decode() if r["_kafka_key"] is not None else None
        got.setdefault(f"{r['_kafka_partition']}|{key}", []).append(
            [r["_kafka_offset"], None if r["id"] is None else int(r["id"]), r["k"], r["v"]])
    return got


def cmd_check_pyiceberg(a: argparse.Namespace) -> None:
    """PyIceberg scans snapshot --snapshot-id (position deletes applied) and
    compares the rows with the model at that snapshot's floe.offsets. When the
    scan planned delete files, the same data files read without them must
    differ from the model: else a reader ignoring deletes would pass too."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan
    from pyiceberg.table import FileScanTask

    tbl = static_table(a.metadata_location, a)
    snap = tbl.metadata.snapshot_by_id(a.snapshot_id)
    if snap is None:
        fail(f"no snapshot {a.snapshot_id}")
    scan = tbl.scan(snapshot_id=a.snapshot_id,
                    selected_fields=("_kafka_partition", "_kafka_offset", "_kafka_key", "id", "k", "v"))
    tasks = list(scan.plan_files())
    deletes = {d.file_path for task in tasks for d in task.delete_files}
    want = model_at(load_model(a.model), json.loads(snap.summary["floe.offsets"]))
    if deletes:
        raw = ArrowScan(tbl.metadata, tbl.io, scan.projection(), AlwaysTrue()).to_table(
            [FileScanTask(t.file) for t in tasks])
        if not diff("raw", rows_by_key(raw), want):
            fail(f"snapshot {a.snapshot_id}: its data files read without their {len(deletes)} delete files "
                 "already equal the model: the check cannot tell whether deletes are applied")
        print(f"without its {len(deletes)} delete files snapshot {a.snapshot_id} has {raw.num_rows} rows: "
              f"{len(diff('raw', rows_by_key(raw), want))} differences from the model")
    verdict("pyiceberg", a.snapshot_id, len(deletes), rows_by_key(scan.to_arrow()), want)


def cmd_compare(a: argparse.Namespace) -> None:
    """Compares a reader's dump (first line: snapshot id, floe.offsets and the
    delete files its scan applied; then one row per line) with the model."""
    got: dict[str, list] = {}
    with open(a.rows) as f:
        head = json.loads(f.readline())
        for line in f:
            r = json.loads(line)
            got.setdefault(f"{r['p']}|{r['key']}", []).append([r["o"], r["id"], r["k"], r["v"]])
    offsets = json.loads(head["floe_offsets"])
    verdict(a.reader, head["snapshot_id"], head["delete_files"], got, model_at(load_model(a.model), offsets))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def s3(s):
        for o in ("--s3-endpoint", "--s3-access-key", "--s3-secret-key", "--s3-region"):
            s.add_argument(o)

    s = sub.add_parser("produce"); s.add_argument("--bootstrap", required=True); s.add_argument("--topic", required=True)
    s.add_argument("--keys", type=int, default=400); s.add_argument("--rate", type=float, default=200)
    s.add_argument("--duration", type=float, default=60); s.add_argument("--tombstones", type=float, default=0.1)
    s.add_argument("--seed", type=int, default=14); s.add_argument("--report", required=True)
    s.set_defaults(fn=cmd_produce)
    s = sub.add_parser("model"); s.add_argument("--bootstrap", required=True); s.add_argument("--topic", required=True)
    s.add_argument("--report", required=True); s.add_argument("--out", required=True); s.set_defaults(fn=cmd_model)
    s = sub.add_parser("wait-caught-up"); s.add_argument("--admin", required=True); s.add_argument("--table", required=True)
    s.add_argument("--model", required=True); s.add_argument("--timeout", type=float, default=120)
    s.set_defaults(fn=cmd_wait_caught_up)
    s = sub.add_parser("snapshots"); s.add_argument("--metadata-location", required=True); s3(s)
    s.add_argument("--depth", type=int, default=60, help="ancestors to look at")
    s.set_defaults(fn=cmd_snapshots)
    s = sub.add_parser("sample-deletes"); s.add_argument("--admin", required=True); s.add_argument("--table", required=True)
    s.add_argument("--pid", type=int, required=True); s.add_argument("--bound", type=int, required=True)
    s.add_argument("--min-compactions", type=int, default=2); s.add_argument("--min-peak", type=int, default=1)
    s.add_argument("--interval", type=float, default=2); s.add_argument("--out", required=True); s3(s)
    s.set_defaults(fn=cmd_sample_deletes)
    s = sub.add_parser("check-pyiceberg"); s.add_argument("--metadata-location", required=True)
    s.add_argument("--snapshot-id", type=int, required=True); s.add_argument("--model", required=True); s3(s)
    s.set_defaults(fn=cmd_check_pyiceberg)
    s = sub.add_parser("compare"); s.add_argument("--rows", required=True); s.add_argument("--model", required=True)
    s.add_argument("--reader", default="iceberg-java"); s.set_defaults(fn=cmd_compare)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
