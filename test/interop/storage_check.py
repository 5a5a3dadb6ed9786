#!/usr/bin/env python3
"""Storage checks of interop scenario 1, read from the object store with boto3.

  storage_check.py --admin A --endpoint E --access-key K --secret-key S [--region R]
                   [--class TABLE=CLASS ...] TABLE...

For each table (ns.name, as /v1/status names it), with its location taken from
the status's metadata_location:

- every data object (under <location>/data/) has the storage class given with
  --class for that table (head_object's StorageClass), or none for a table
  given no --class: S3 and MinIO leave the header out for STANDARD;
- no metadata object (under <location>/metadata/) has a storage class: the
  metadata files always stay at the bucket's default;
- the status's metadata_bytes_written equals the sizes of the objects under
  metadata/ (the node that wrote them is still up, and expiry and orphan
  cleanup delete nothing at their defaults). The table may still be
  committing, so both are read again until they agree, up to --timeout.
  Floe's tables drop metadata files beyond the newest 50 after a commit
  (write.metadata.previous-versions-max): once the current metadata's log is
  that long, the counter can only be checked to exceed what is stored.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.parse

import boto3


def fail(msg: str) -> None:
    print(f"storage_check.py: {msg}", file=sys.stderr)
    sys.exit(1)


def status(a: argparse.Namespace) -> dict[str, dict]:
    out = subprocess.run([a.floe_bin, "status", "--addr", a.admin, "-o", "json"], check=True,
                         capture_output=True, text=True, env=os.environ).stdout
    return {t["table"]: t for t in json.loads(out)["tables"]}


def location(t: dict) -> tuple[str, str]:
    """The table's bucket and key prefix, from its metadata location."""
    loc = t.get("metadata_location", "")
    if "/metadata/" not in loc:
        fail(f"{t['table']} has no metadata location yet: {loc!r}")
    u = urllib.parse.urlparse(loc[: loc.rindex("/metadata/")])
    return u.netloc, u.path.strip("/")


def objects(s3, bucket: str, prefix: str) -> list[dict]:
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        out += page.get("Contents", [])
    return out


def check_classes(s3, name: str, bucket: str, root: str, want: str) -> None:
    data = objects(s3, bucket, root + "/data/")
    if not data:
        fail(f"{name}: no data objects under s3://{bucket}/{root}/data/")
    for o in data:
        got = s3.head_object(Bucket=bucket, Key=o["Key"]).get("StorageClass", "")
        if got != want:
            fail(f"{name}: data object {o['Key']} has storage class {got!r}, want {want!r}")
    meta = objects(s3, bucket, root + "/metadata/")
    for o in meta:
        got = s3.head_object(Bucket=bucket, Key=o["Key"]).get("StorageClass", "")
        if got not in ("", "STANDARD"):
            fail(f"{name}: metadata object {o['Key']} has storage class {got!r}, want the default")
    print(f"{name}: {len(data)} data objects in {want or 'the default class'}, "
          f"{len(meta)} metadata objects in the default class")


PREVIOUS_VERSIONS_MAX = 50


def metadata_log_full(s3, t: dict) -> bool:
    """Whether the table may have dropped old metadata files already."""
    u = urllib.parse.urlparse(t["metadata_location"])
    body = s3.get_object(Bucket=u.netloc, Key=u.path.lstrip("/"))["Body"].read()
    return len(json.loads(body).get("metadata-log", [])) >= PREVIOUS_VERSIONS_MAX


def check_metadata_bytes(a: argparse.Namespace, s3, name: str) -> None:
    deadline = time.time() + a.timeout
    while True:
        t = status(a)[name]
        bucket, root = location(t)
        stored = sum(o["Size"] for o in objects(s3, bucket, root + "/metadata/"))
        counted = t.get("metadata_bytes_written", 0)
        if counted == stored and stored > 0:
            print(f"{name}: metadata_bytes_written {counted} = the bytes under metadata/")
            return
        if counted > stored > 0 and metadata_log_full(s3, t):
            print(f"{name}: metadata_bytes_written {counted} > {stored} under metadata/: "
                  f"its metadata log is full, old metadata files were dropped (not checked for equality)")
            return
        if time.time() > deadline:
            fail(f"{name}: metadata_bytes_written {counted}, objects under metadata/ hold {stored} bytes")
        time.sleep(1)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--admin", required=True)
    p.add_argument("--floe-bin", default=os.environ.get("FLOE_BIN", "floe"))
    p.add_argument("--endpoint", required=True)
    p.add_argument("--access-key", required=True)
    p.add_argument("--secret-key", required=True)
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--class", dest="classes", action="append", default=[], metavar="TABLE=CLASS")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("tables", nargs="+")
    a = p.parse_args()
    classes = dict(c.split("=", 1) for c in a.classes)
    s3 = boto3.client("s3", endpoint_url=a.endpoint, aws_access_key_id=a.access_key,
                      aws_secret_access_key=a.secret_key, region_name=a.region)
    tables = status(a)
    for name in a.tables:
        if name not in tables:
            fail(f"{name} is not in the status")
        bucket, root = location(tables[name])
        check_classes(s3, name, bucket, root, classes.get(name, ""))
        check_metadata_bytes(a, s3, name)


if __name__ == "__main__":
    main()
