#!/usr/bin/env python3
"""Catalog checks of interop scenario 9: read Floe's tables through catalogs.

  rest   --uri U [--token T] [--header K=V] --table ns.t --expect F   PyIceberg's RestCatalog
  glue   --endpoint E --table db.t --expect F                        PyIceberg's GlueCatalog (moto)
  glue-location --endpoint E --table db.t                            prints Glue's metadata_location
  glue-alter    --endpoint E --table db.t --location L               a hand edit of the Glue entry
  rest-refused  --uri U --table ns.t                                 a client without a token is refused

Loading commands print the table's metadata location on stdout and check the
scanned rows: every expected (topic/partition, offset) exactly once. The full
reader checks (schema, keys, summaries) run separately on that location with
pyiceberg_check.py and the Java checker.
"""
from __future__ import annotations

import argparse
import json
import sys

import boto3
import pyarrow.compute as pc

S3 = {}


def s3_props(a: argparse.Namespace) -> dict[str, str]:
    p = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    if a.s3_endpoint:
        p.update({"s3.endpoint": a.s3_endpoint, "s3.access-key-id": a.s3_access_key,
                  "s3.secret-access-key": a.s3_secret_key, "s3.region": a.s3_region})
    return p


def check_rows(tbl, expect_file: str) -> str:
    with open(expect_file) as f:
        expect = json.load(f)
    t = tbl.scan(selected_fields=("_kafka_topic", "_kafka_partition", "_kafka_offset")).to_arrow()
    topics = t.column("_kafka_topic").to_pylist()
    parts = t.column("_kafka_partition").to_pylist()
    offs = t.column("_kafka_offset").to_pylist()
    seen: dict[str, set[int]] = {}
    dups = 0
    for tp, p, o in zip(topics, parts, offs):
        s = seen.setdefault(f"{tp}/{p}", set())
        if o in s:
            dups += 1
        s.add(o)
    problems = []
    total = 0
    for k, (start, end) in sorted(expect["ranges"].items()):
        got = seen.get(k, set())
        want = set(range(int(start), int(end)))
        total += len(want)
        if got != want:
            problems.append(f"{k}: {len(got)} distinct offsets, want {len(want)} ({start}..{end})")
    if dups:
        problems.append(f"{dups} duplicated offsets")
    if t.num_rows != total:
        problems.append(f"{t.num_rows} rows, want {total}")
    if problems:
        print("FAIL " + "; ".join(problems), file=sys.stderr)
        sys.exit(1)
    return f"{t.num_rows} rows, each expected offset once"


def glue_client(a):
    return boto3.client("glue", endpoint_url=a.endpoint, region_name="us-east-1",
                        aws_access_key_id="interop", aws_secret_access_key="interop")


def cmd_rest(a):
    from pyiceberg.catalog.rest import RestCatalog
    props = {"uri": a.uri, **s3_props(a)}
    if a.token:
        props["token"] = a.token
    for h in a.header or []:
        k, v = h.split("=", 1)
        props[f"header.{k}"] = v
    cat = RestCatalog("floe", **props)
    ns = a.table.rsplit(".", 1)[0]
    tables = [".".join(i) for i in cat.list_tables(ns)]
    if a.table not in tables:
        print(f"FAIL {a.table} not in list_tables({ns}): {tables}", file=sys.stderr)
        sys.exit(1)
    tbl = cat.load_table(a.table)
    summary = check_rows(tbl, a.expect) if a.expect else "loaded"
    print(tbl.metadata_location)
    print(f"OK pyiceberg rest {a.table} via {a.uri}: {summary}", file=sys.stderr)


def cmd_rest_refused(a):
    from pyiceberg.catalog.rest import RestCatalog
    try:
        RestCatalog("floe", uri=a.uri).load_table(a.table)
    except Exception as e:  # noqa: BLE001 - any refusal will do, it must name authorization
        if "401" in str(e) or "Unauthorized" in str(e) or "NotAuthorized" in str(e):
            print(f"OK refused without a token: {type(e).__name__}", file=sys.stderr)
            return
        print(f"FAIL refused for another reason: {e!r}", file=sys.stderr)
        sys.exit(1)
    print("FAIL a client without a token loaded the table", file=sys.stderr)
    sys.exit(1)


def cmd_glue(a):
    from pyiceberg.catalog.glue import GlueCatalog
    cat = GlueCatalog("glue", **{"glue.endpoint": a.endpoint, "glue.region": "us-east-1",
                                 "glue.access-key-id": "interop", "glue.secret-access-key": "interop", **s3_props(a)})
    tbl = cat.load_table(a.table)
    summary = check_rows(tbl, a.expect)
    print(tbl.metadata_location)
    print(f"OK pyiceberg glue {a.table} via {a.endpoint}: {summary}", file=sys.stderr)


def cmd_glue_location(a):
    db, name = a.table.rsplit(".", 1)
    try:
        t = glue_client(a).get_table(DatabaseName=db, Name=name)["Table"]
    except Exception as e:  # noqa: BLE001 - not there (yet), or moto down
        print(f"-\t{type(e).__name__}")
        return
    print(f"{t.get('Parameters', {}).get('metadata_location', '-')}\t{t.get('TableType', '')}/{t.get('Parameters', {}).get('table_type', '')}")


def cmd_glue_alter(a):
    db, name = a.table.rsplit(".", 1)
    g = glue_client(a)
    t = g.get_table(DatabaseName=db, Name=name)["Table"]
    params = dict(t.get("Parameters", {}))
    params["metadata_location"] = a.location
    params["altered_by"] = "interop"
    g.update_table(DatabaseName=db, TableInput={"Name": name, "TableType": t.get("TableType", "EXTERNAL_TABLE"),
                                                "Parameters": params, "StorageDescriptor": t.get("StorageDescriptor", {})})
    print(f"altered {a.table}: metadata_location={a.location}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(required=True)

    def add(name, fn, *args):
        s = sub.add_parser(name)
        for arg in args:
            s.add_argument(arg, required=arg in ("--table",))
        for arg in ("--s3-endpoint", "--s3-access-key", "--s3-secret-key", "--s3-region"):
            s.add_argument(arg)
        s.set_defaults(fn=fn)
        return s

    s = add("rest", cmd_rest, "--uri", "--token", "--table", "--expect")
    s.add_argument("--header", action="append")
    add("rest-refused", cmd_rest_refused, "--uri", "--table")
    add("glue", cmd_glue, "--endpoint", "--table", "--expect")
    add("glue-location", cmd_glue_location, "--endpoint", "--table")
    add("glue-alter", cmd_glue_alter, "--endpoint", "--table", "--location")
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
