#!/usr/bin/env python3
"""Helpers the interop shell library calls: ports, Kafka topics and production,
expected offset ranges, S3 buckets, Glue and Floe status polling.

Each subcommand prints what it did and exits non-zero with a message on failure.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

METADATA_COLUMNS = [
    "_kafka_topic",
    "_kafka_partition",
    "_kafka_offset",
    "_kafka_timestamp",
    "_kafka_key",
    "_kafka_headers",
]
# Payload columns of the records produce writes (see record()).
PAYLOAD_COLUMNS = ["id", "k", "amount", "region", "tags", "attrs"]


def fail(msg: str) -> None:
    print(f"interop.py: {msg}", file=sys.stderr)
    sys.exit(1)


# ------------------------------------------------------------------ ports


def cmd_free_ports(a: argparse.Namespace) -> None:
    socks = []
    for _ in range(a.n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    print(" ".join(str(s.getsockname()[1]) for s in socks))
    for s in socks:
        s.close()


# ------------------------------------------------------------------ kafka


def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def cmd_kafka_ready(a: argparse.Namespace) -> None:
    """Waits until the broker answers metadata requests and can create a topic."""
    deadline = time.time() + a.timeout
    last = ""
    while time.time() < deadline:
        try:
            md = admin(a.bootstrap).list_topics(timeout=5)
            if md.brokers:
                return
        except Exception as e:  # noqa: BLE001
            last = str(e)
        time.sleep(0.5)
    fail(f"Kafka at {a.bootstrap} not ready after {a.timeout}s: {last}")


def cmd_create_topics(a: argparse.Namespace) -> None:
    from confluent_kafka.admin import NewTopic

    ad = admin(a.bootstrap)
    fs = ad.create_topics([NewTopic(t, a.partitions, 1) for t in a.topics], operation_timeout=30)
    for t, f in fs.items():
        try:
            f.result()
        except Exception as e:  # noqa: BLE001
            fail(f"creating topic {t}: {e}")
    # Wait until every partition has a leader so production starts at once.
    deadline = time.time() + 30
    while time.time() < deadline:
        md = ad.list_topics(timeout=5)
        if all(t in md.topics and len(md.topics[t].partitions) == a.partitions and
               all(p.leader >= 0 for p in md.topics[t].partitions.values()) for t in a.topics):
            print(f"created topics {', '.join(a.topics)} with {a.partitions} partitions")
            return
        time.sleep(0.2)
    fail(f"topics {a.topics} have no leaders after 30s")


def record(topic: str, i: int, keys: int = 0) -> tuple[bytes, bytes]:
    """Record i of topic: key (= payload field k = header k) topic-i, or with keys > 0
    one of keys keys, topic-key<i % keys>."""
    k = f"{topic}-key{i % keys}" if keys > 0 else f"{topic}-{i}"
    v = {
        "id": i,
        "k": k,
        "amount": round(i * 0.25, 2),
        "region": ("eu", "us", "ap")[i % 3],
        "tags": ["t%d" % (i % 5), "x"],
        "attrs": {"n": i % 97, "flag": i % 2 == 0},
    }
    return k.encode(), json.dumps(v, separators=(",", ":")).encode()


def cmd_produce(a: argparse.Namespace) -> None:
    """Produces --count records to each topic with an idempotent producer and
    writes the offsets Kafka acknowledged, per partition, to --report-dir."""
    from confluent_kafka import KafkaException, Producer

    p = Producer({
        "bootstrap.servers": a.bootstrap,
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 20,
        "compression.type": "lz4",
        "message.timeout.ms": a.message_timeout_ms,
        "queue.buffering.max.messages": 2_000_000,
        "queue.buffering.max.kbytes": 2_000_000,
        "partitioner": "murmur2_random",
    })
    delivered: dict[str, list[int]] = {}
    errors: list[str] = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(f"{msg.topic()}/{msg.partition()}: {err}")
            return
        delivered.setdefault(f"{msg.topic()}/{msg.partition()}", []).append(msg.offset())

    total = a.count * len(a.topics)
    # --ts-days D: record timestamps set explicitly, over the D UTC days before today,
    # advancing with the record number (the first count/D records on the oldest day, ...),
    # spread over each day's seconds. Without it Kafka stamps the produce time.
    day0 = (int(time.time()) // 86400 - a.ts_days) * 86400 if a.ts_days > 0 else 0
    days: dict[str, int] = {}
    keys: dict[str, int] = {}
    # Pace in small steps at low rates, so records arrive steadily (not 1000 at a time).
    step = 1000 if a.rate <= 0 else min(1000, max(1, int(a.rate // 20)))
    start = time.time()
    n = 0
    for i in range(a.start_id, a.start_id + a.count):
        for t in a.topics:
            key, value = record(t, i, a.keys)
            kw = {}
            if a.ts_days > 0:
                j = i - a.start_id
                day = j * a.ts_days // a.count
                ts = day0 + day * 86400 + (j * 7919) % 86400
                kw["timestamp"] = ts * 1000 + j % 1000
                if t == a.topics[0]:  # the same days for every topic
                    d = time.strftime("%Y-%m-%d", time.gmtime(ts))
                    days[d] = days.get(d, 0) + 1
            if a.keys > 0:
                keys[key.decode()] = keys.get(key.decode(), 0) + 1
            while True:
                try:
                    p.produce(t, key=key, value=value, headers=[("k", key)], on_delivery=on_delivery, **kw)
                    break
                except BufferError:
                    p.poll(0.1)
                except KafkaException as e:
                    fail(f"producing to {t}: {e}")
            n += 1
        if n % step < len(a.topics):
            p.poll(0)
            if a.rate > 0:
                ahead = n / a.rate - (time.time() - start)
                if ahead > 0:
                    time.sleep(ahead)
    remaining = p.flush(a.message_timeout_ms / 1000 + 30)
    took = time.time() - start
    if remaining:
        fail(f"{remaining} records still unacknowledged after flush")
    if errors:
        fail(f"{len(errors)} records failed delivery, e.g. {errors[:3]}")
    got = sum(len(v) for v in delivered.values())
    if got != total:
        fail(f"{got} delivery reports for {total} records")
    os.makedirs(a.report_dir, exist_ok=True)
    for t in a.topics:
        ranges = {}
        for tp, offs in delivered.items():
            if tp.rsplit("/", 1)[0] != t:
                continue
            offs.sort()
            runs = []
            s = prev = offs[0]
            for o in offs[1:]:
                if o == prev:
                    fail(f"offset {tp}@{o} acknowledged twice")
                if o != prev + 1:
                    runs.append([s, prev + 1])
                    s = o
                prev = o
            runs.append([s, prev + 1])
            ranges[tp] = runs
        path = os.path.join(a.report_dir, f"{t}.{a.start_id}.{os.getpid()}.json")
        with open(path, "w") as f:
            rep = {"topic": t, "count": a.count, "ranges": ranges}
            if days:  # counts per day and key (per topic: every topic gets the same records)
                rep["days"] = days
            if keys:
                rep["keys"] = {k: v for k, v in keys.items() if k.startswith(f"{t}-key")}
            json.dump(rep, f)
    print(f"produced {total} records to {', '.join(a.topics)} in {took:.1f}s ({total / max(took, 1e-9):.0f}/s)")


def cmd_expect(a: argparse.Namespace) -> None:
    """Merges the producer reports of a topic into one range per partition,
    checks them against Kafka's watermarks, and writes the checkers' --expect file."""
    from confluent_kafka import Consumer, TopicPartition

    runs: dict[str, list[list[int]]] = {}
    count = 0
    day_counts: dict[str, int] = {}
    key_counts: dict[str, int] = {}
    for path in sorted(glob.glob(os.path.join(a.report_dir, f"{a.topic}.*.json"))):
        with open(path) as f:
            rep = json.load(f)
        if rep["topic"] != a.topic:
            continue
        count += rep["count"]
        for d, n in rep.get("days", {}).items():
            day_counts[d] = day_counts.get(d, 0) + n
        for k, n in rep.get("keys", {}).items():
            key_counts[k] = key_counts.get(k, 0) + n
        for tp, rs in rep["ranges"].items():
            runs.setdefault(tp, []).extend(rs)
    if not runs:
        fail(f"no producer reports for topic {a.topic} in {a.report_dir}")
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "interop-expect", "enable.auto.commit": False})
    md = c.list_topics(a.topic, timeout=10)
    parts = sorted(md.topics[a.topic].partitions)
    ranges = {}
    for part in parts:
        tp = f"{a.topic}/{part}"
        lo, hi = c.get_watermark_offsets(TopicPartition(a.topic, part), timeout=10)
        rs = sorted(runs.get(tp, []))
        merged: list[list[int]] = []
        for s, e in rs:
            if merged and s < merged[-1][1]:
                fail(f"{tp}: producer reports overlap at offset {s}")
            if merged and s == merged[-1][1]:
                merged[-1][1] = e
            else:
                merged.append([s, e])
        if not merged:
            merged = [[lo, lo]]
        if len(merged) != 1:
            fail(f"{tp}: acknowledged offsets are not contiguous: {merged}")
        if merged[0][0] != lo or merged[0][1] != hi:
            fail(f"{tp}: producers acknowledged [{merged[0][0]},{merged[0][1]}) but Kafka holds [{lo},{hi})")
        ranges[tp] = merged[0]
    c.close()
    total = sum(e - s for s, e in ranges.values())
    if total != count:
        fail(f"{a.topic}: {count} records produced but {total} offsets acknowledged")
    expect = {
        "table": a.table,
        "columns": METADATA_COLUMNS + PAYLOAD_COLUMNS,
        "ranges": ranges,
        "key_field": "k",
        "header_key": "k",
        "append_delta_equals_records": True,
    }
    if day_counts:  # records per UTC day of _kafka_timestamp (pyiceberg_check.py --mode pruning)
        expect["day_counts"] = dict(sorted(day_counts.items()))
    if key_counts:  # records per _kafka_key
        expect["key_counts"] = dict(sorted(key_counts.items()))
    with open(a.out, "w") as f:
        json.dump(expect, f, indent=1)
    print(f"expect {a.table}: {total} records in {len(ranges)} partitions")


# ------------------------------------------------------------------ s3 / glue


def cmd_create_bucket(a: argparse.Namespace) -> None:
    import boto3

    s3 = boto3.client("s3", endpoint_url=a.endpoint, aws_access_key_id=a.access_key,
                      aws_secret_access_key=a.secret_key, region_name=a.region)
    deadline = time.time() + a.timeout
    last = ""
    while time.time() < deadline:
        try:
            s3.create_bucket(Bucket=a.bucket)
            print(f"created bucket {a.bucket}")
            return
        except s3.exceptions.BucketAlreadyOwnedByYou:
            return
        except Exception as e:  # noqa: BLE001
            last = str(e)
            time.sleep(0.5)
    fail(f"creating bucket {a.bucket} at {a.endpoint}: {last}")


def cmd_glue_health(a: argparse.Namespace) -> None:
    import boto3

    glue = boto3.client("glue", endpoint_url=a.endpoint, aws_access_key_id="interop",
                        aws_secret_access_key="interop", region_name="us-east-1")
    deadline = time.time() + a.timeout
    last = ""
    while time.time() < deadline:
        try:
            glue.get_databases()
            return
        except Exception as e:  # noqa: BLE001
            last = str(e)
            time.sleep(0.5)
    fail(f"moto Glue API at {a.endpoint} does not answer GetDatabases: {last}")


def cmd_registry_health(a: argparse.Namespace) -> None:
    """GET /subjects, then registers a schema and reads it back: the registry
    is up and its storage (Kafka) works."""
    deadline = time.time() + a.timeout
    last = ""
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(a.url + "/subjects", timeout=5) as r:
                json.load(r)
            break
        except Exception as e:  # noqa: BLE001
            last = str(e)
            time.sleep(1)
    else:
        fail(f"schema registry at {a.url} does not answer GET /subjects after {a.timeout}s: {last}")
    schema = {"type": "record", "name": "InteropHealth", "fields": [{"name": "a", "type": "long"}]}
    req = urllib.request.Request(
        a.url + "/subjects/interop-health-value/versions",
        data=json.dumps({"schema": json.dumps(schema)}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        sid = json.load(r)["id"]
    with urllib.request.urlopen(f"{a.url}/schemas/ids/{sid}", timeout=10) as r:
        got = json.loads(json.load(r)["schema"])
    if got.get("name") != "InteropHealth":
        fail(f"schema registry returned {got} for id {sid}")
    print(f"schema registry ok: registered and read back schema id {sid}")


# ------------------------------------------------------------------ floe status


def fetch_status(addr: str, floe_bin: str | None = None) -> dict:
    """Floe's status: through `floe status -o json` when floe_bin is given,
    else GET /v1/status (the same JSON)."""
    if floe_bin:
        out = subprocess.run([floe_bin, "status", "--admin-addr", addr, "-o", "json"],
                             capture_output=True, text=True, timeout=20)
        if out.returncode != 0:
            raise RuntimeError(f"floe status exited {out.returncode}: {out.stderr.strip()}")
        return json.loads(out.stdout)
    req = urllib.request.Request(f"http://{addr}/v1/status")
    token = os.environ.get("FLOE_TOKEN")  # the floe CLI reads the same variable
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def caught_up(status: dict, expects: list[dict]) -> tuple[bool, str]:
    tables = {t["table"]: t for t in status.get("tables", [])}
    waiting = []
    for e in expects:
        t = tables.get(e["table"])
        want_rows = sum(r[1] - r[0] for r in e["ranges"].values())
        if t is None:
            waiting.append(f"{e['table']}: not in status")
            continue
        parts = {f"{p['topic']}/{p['partition']}": p for p in t.get("partitions") or []}
        behind = []
        for tp, (_, end) in e["ranges"].items():
            p = parts.get(tp)
            if p is None:
                behind.append(f"{tp} missing")
            elif p["committed"] != end or p["high_watermark"] != end or p["lag"] != 0:
                behind.append(f"{tp} committed={p['committed']} hw={p['high_watermark']}/{end} lag={p['lag']}")
        if behind or t.get("rows") != want_rows or t.get("state") != "RUNNING":
            waiting.append(f"{e['table']}: state={t.get('state')} rows={t.get('rows')}/{want_rows} "
                           f"{'; '.join(behind[:3])}{' ...' if len(behind) > 3 else ''}"
                           f"{(' reason=' + t['reason']) if t.get('reason') else ''}")
    return not waiting, " | ".join(waiting)


def cmd_wait_caught_up(a: argparse.Namespace) -> None:
    """Polls Floe's status until every expected table has committed every
    produced offset (lag 0, rows match) and is RUNNING."""
    expects = []
    for path in a.expect:
        with open(path) as f:
            expects.append(json.load(f))
    start = time.time()
    deadline = start + a.timeout
    last_print = 0.0
    msg = ""
    while time.time() < deadline:
        try:
            ok, msg = caught_up(fetch_status(a.admin), expects)
        except Exception as e:  # noqa: BLE001
            ok, msg = False, f"status unavailable: {e}"
        if ok:
            print(f"caught up after {time.time() - start:.1f}s")
            return
        if time.time() - last_print > 15:
            print(f"  waiting ({time.time() - start:.0f}s): {msg}", flush=True)
            last_print = time.time()
        time.sleep(1)
    fail(f"Floe did not catch up within {a.timeout}s: {msg}")


def cmd_metadata_locations(a: argparse.Namespace) -> None:
    """Prints 'table<TAB>metadata_location' for each named table."""
    st = fetch_status(a.admin)
    tables = {t["table"]: t for t in st.get("tables", [])}
    for name in a.tables:
        t = tables.get(name)
        if t is None or not t.get("metadata_location"):
            fail(f"table {name} has no metadata location in Floe's status")
        print(f"{name}\t{t['metadata_location']}")


def cmd_committed_rows(a: argparse.Namespace) -> None:
    st = fetch_status(a.admin)
    print(sum(t.get("rows", 0) for t in st.get("tables", [])))


def cmd_watch_state(a: argparse.Namespace) -> None:
    """Polls Floe's status for up to --duration seconds and succeeds once any
    (with --all: every) named table shows --state. DEGRADED and SUSPENDED also
    need a reason, matching --reason-regex when given."""
    rx = re.compile(a.reason_regex) if a.reason_regex else None
    need_reason = a.state in ("DEGRADED", "SUSPENDED")
    start = time.time()
    seen: dict[str, str] = {}
    st: dict = {}
    while time.time() - start < a.duration:
        try:
            st = fetch_status(a.admin, a.floe_bin)
        except Exception as e:  # noqa: BLE001
            print(f"  status unavailable: {e}")
            time.sleep(1)
            continue
        for t in st.get("tables", []):
            if t["table"] not in a.tables or t.get("state") != a.state:
                continue
            reason = t.get("reason") or ""
            if need_reason and not reason:
                continue
            if rx and not rx.search(reason):
                continue
            seen.setdefault(t["table"], reason)
        if seen and (not a.all or len(seen) == len(a.tables)):
            for k, v in seen.items():
                print(f"{k} is {a.state} after {time.time() - start:.1f}s{': ' + v if v else ''}")
            return
        time.sleep(0.5)
    last = [(t["table"], t.get("state"), t.get("reason")) for t in st.get("tables", [])]
    fail(f"{'not every' if a.all else 'no'} table of {a.tables} reported {a.state}"
         f"{' with a reason' if need_reason else ''}{' matching ' + repr(a.reason_regex) if rx else ''}"
         f" within {a.duration}s (last states: {last})")


def cmd_assert_no_reason(a: argparse.Namespace) -> None:
    """Fails if a named table's reason already matches --reason-regex (taken
    before a fault, so that what watch-state sees afterwards is the fault's)."""
    rx = re.compile(a.reason_regex)
    st = fetch_status(a.admin)
    for t in st.get("tables", []):
        if t["table"] in a.tables and rx.search(t.get("reason") or ""):
            fail(f"{t['table']} already reports {t.get('state')} before the fault: {t.get('reason')}")


def table_status(addr: str, floe_bin: str, table: str) -> dict:
    for t in fetch_status(addr, floe_bin).get("tables", []):
        if t["table"] == table:
            return t
    raise RuntimeError(f"{table} is not in Floe's status")


HEALTH_FIELDS = ["state", "rows", "commits", "data_files", "small_files", "avg_file_bytes", "compactions",
                 "files_rewritten", "bytes_rewritten", "snapshots", "commit_failures"]


def health_line(t: dict) -> str:
    return " ".join(f"{k}={t.get(k)}" for k in HEALTH_FIELDS)


def pid_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except OSError:
        return False


def cmd_sample_status(a: argparse.Namespace) -> None:
    """While process --pid runs (the producer), reads `floe status -o json` every
    --interval seconds and logs the table's health; fails as soon as commit_failures
    is not 0. Writes the samples (JSON lines) to --out."""
    start = time.time()
    peak = 0
    samples = 0
    with open(a.out, "a") as out:
        while True:
            running = pid_running(a.pid)
            try:
                t = table_status(a.admin, a.floe_bin, a.table)
            except Exception as e:  # noqa: BLE001
                print(f"  {time.time() - start:5.0f}s status unavailable: {e}", flush=True)
            else:
                samples += 1
                peak = max(peak, t.get("data_files") or 0)
                out.write(json.dumps({"t": round(time.time() - start, 1), **{k: t.get(k) for k in HEALTH_FIELDS}}) + "\n")
                out.flush()
                print(f"  {time.time() - start:5.0f}s {health_line(t)}", flush=True)
                if t.get("commit_failures"):
                    fail(f"{a.table}: commit_failures={t['commit_failures']} while compaction runs "
                         f"(reason: {t.get('reason')})")
            if not running:
                break
            time.sleep(a.interval)
    print(f"{samples} samples over {time.time() - start:.0f}s, peak data_files={peak}, commit_failures=0")


def cmd_wait_compacted(a: argparse.Namespace) -> None:
    """After production: polls until the table's data_files is at most --max-files and at
    most --max-commit-ratio of its commits (compaction of the cooled table has caught
    up), with commit_failures 0. Prints the table's health and writes it to --out."""
    start = time.time()
    deadline = start + a.timeout
    t: dict = {}
    last_print = 0.0
    while True:
        try:
            t = table_status(a.admin, a.floe_bin, a.table)
        except Exception as e:  # noqa: BLE001
            print(f"  status unavailable: {e}")
            t = {}
        if t:
            if t.get("commit_failures"):
                fail(f"{a.table}: commit_failures={t['commit_failures']} (reason: {t.get('reason')})")
            # Floe's commits count compaction commits too; the appends are the rest.
            files = t.get("data_files") or 0
            commits = (t.get("commits") or 0) - (t.get("compactions") or 0)
            bound = min(a.max_files, int(a.max_commit_ratio * commits))
            if commits and files <= bound:
                print(f"compacted after {time.time() - start:.0f}s: data_files={files} <= {bound} "
                      f"(min of {a.max_files} and {a.max_commit_ratio:g} x {commits} append commits)")
                print(f"  {health_line(t)} last_compaction={t.get('last_compaction')}")
                if a.out:
                    with open(a.out, "w") as f:
                        json.dump({**t, "partitions": None, "waited_seconds": round(time.time() - start),
                                   "bound": bound}, f, indent=1)
                return
            if time.time() - last_print > 10:
                print(f"  waiting ({time.time() - start:.0f}s): data_files={files} > {bound}; {health_line(t)}", flush=True)
                last_print = time.time()
        if time.time() > deadline:
            fail(f"{a.table}: data_files={t.get('data_files')} after {a.timeout}s, want <= {a.max_files} "
                 f"and <= {a.max_commit_ratio:g} x append commits (commits - compactions); {health_line(t)}")
        time.sleep(a.interval)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("free-ports"); s.add_argument("n", type=int); s.set_defaults(fn=cmd_free_ports)

    s = sub.add_parser("kafka-ready"); s.add_argument("--bootstrap", required=True)
    s.add_argument("--timeout", type=float, default=60); s.set_defaults(fn=cmd_kafka_ready)
    s = sub.add_parser("create-topics"); s.add_argument("--bootstrap", required=True)
    s.add_argument("--partitions", type=int, default=6); s.add_argument("topics", nargs="+")
    s.set_defaults(fn=cmd_create_topics)
    s = sub.add_parser("produce"); s.add_argument("--bootstrap", required=True)
    s.add_argument("--count", type=int, required=True, help="records per topic")
    s.add_argument("--start-id", type=int, default=0)
    s.add_argument("--rate", type=float, default=0, help="records/s over all topics; 0 = as fast as possible")
    s.add_argument("--message-timeout-ms", type=int, default=180000)
    s.add_argument("--keys", type=int, default=0, help="use this many distinct keys (0: one per record)")
    s.add_argument("--ts-days", type=int, default=0,
                   help="set record timestamps over this many past UTC days (0: Kafka's produce time)")
    s.add_argument("--report-dir", required=True); s.add_argument("topics", nargs="+")
    s.set_defaults(fn=cmd_produce)
    s = sub.add_parser("expect"); s.add_argument("--bootstrap", required=True)
    s.add_argument("--report-dir", required=True); s.add_argument("--topic", required=True)
    s.add_argument("--table", required=True); s.add_argument("--out", required=True)
    s.set_defaults(fn=cmd_expect)

    s = sub.add_parser("create-bucket"); s.add_argument("--endpoint", required=True)
    s.add_argument("--access-key", required=True); s.add_argument("--secret-key", required=True)
    s.add_argument("--region", default="us-east-1"); s.add_argument("--bucket", required=True)
    s.add_argument("--timeout", type=float, default=30); s.set_defaults(fn=cmd_create_bucket)
    s = sub.add_parser("glue-health"); s.add_argument("--endpoint", required=True)
    s.add_argument("--timeout", type=float, default=30); s.set_defaults(fn=cmd_glue_health)
    s = sub.add_parser("registry-health"); s.add_argument("--url", required=True)
    s.add_argument("--timeout", type=float, default=180); s.set_defaults(fn=cmd_registry_health)

    s = sub.add_parser("wait-caught-up"); s.add_argument("--admin", required=True)
    s.add_argument("--timeout", type=float, default=300); s.add_argument("expect", nargs="+")
    s.set_defaults(fn=cmd_wait_caught_up)
    s = sub.add_parser("metadata-locations"); s.add_argument("--admin", required=True)
    s.add_argument("tables", nargs="+"); s.set_defaults(fn=cmd_metadata_locations)
    s = sub.add_parser("committed-rows"); s.add_argument("--admin", required=True)
    s.set_defaults(fn=cmd_committed_rows)
    s = sub.add_parser("watch-state"); s.add_argument("--admin", required=True)
    s.add_argument("--state", required=True); s.add_argument("--duration", type=float, default=20)
    s.add_argument("--floe-bin", help="read the status with `FLOE_BIN status -o json`")
    s.add_argument("--reason-regex", help="the reason must match this (Python) regex")
    s.add_argument("--all", action="store_true", help="wait until every named table shows the state")
    s.add_argument("tables", nargs="+"); s.set_defaults(fn=cmd_watch_state)

    s = sub.add_parser("assert-no-reason"); s.add_argument("--admin", required=True)
    s.add_argument("--reason-regex", required=True); s.add_argument("tables", nargs="+")
    s.set_defaults(fn=cmd_assert_no_reason)

    s = sub.add_parser("sample-status"); s.add_argument("--admin", required=True)
    s.add_argument("--floe-bin", required=True); s.add_argument("--table", required=True)
    s.add_argument("--pid", type=int, required=True, help="sample while this process runs")
    s.add_argument("--interval", type=float, default=15); s.add_argument("--out", required=True)
    s.set_defaults(fn=cmd_sample_status)
    s = sub.add_parser("wait-compacted"); s.add_argument("--admin", required=True)
    s.add_argument("--floe-bin", required=True); s.add_argument("--table", required=True)
    s.add_argument("--max-files", type=int, required=True)
    s.add_argument("--max-commit-ratio", type=float, default=0.25)
    s.add_argument("--timeout", type=float, default=120); s.add_argument("--interval", type=float, default=3)
    s.add_argument("--out")
    s.set_defaults(fn=cmd_wait_compacted)

    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
