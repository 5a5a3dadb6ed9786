#!/usr/bin/env python3
"""Walks every page of Floe's console (/ui) in headless Chromium and runs each
of its actions over HTTP as a browser's form would: scenario 13 (issue 37).

Pages (each rendered by Chromium, its DOM checked and a screenshot kept in
--shots): the overview, the overview filtered by state, each table's page
(mapping, schema, partition spec, query-it block, lag/throughput/freshness
charts with axes, bad records), the mappings list and the new-mapping form.
Actions (POSTed with the session cookie and CSRF token a browser holds):
pause, resume and run maintenance on a table; create a mapping, be refused
with the error beside its field, and delete the mapping. Each answer page is
kept as HTML beside the screenshots. The node must run without tokens, so
Chromium gets an admin session on its own.

Exits non-zero with a message on failure; stdlib only.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request


from console_check import chromium, fail  # noqa: E402  (same directory)

class Session:
    """A browser's session: the cookie jar and the page's CSRF token."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.get("/ui/")  # the session cookie
        page = self.get("/ui/mappings/new")[1]  # an admin form: it carries the CSRF token
        m = re.search(r'name="csrf" value="([^"]+)"', page)
        if not m:
            fail("the new-mapping form carries no CSRF token (is the node running without tokens?)")
        self.csrf = m.group(1)

    def get(self, path: str) -> tuple[int, str]:
        return self._do(urllib.request.Request(self.base + path))

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, str]:
        body = urllib.parse.urlencode({"csrf": self.csrf, **fields}).encode()
        return self._do(urllib.request.Request(self.base + path, data=body, method="POST",
                                               headers={"Content-Type": "application/x-www-form-urlencoded"}))

    def _do(self, req: urllib.request.Request) -> tuple[int, str]:
        try:
            with self.opener.open(req, timeout=60) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()


def need(page: str, what: str, *needles: str) -> list[str]:
    return [f"{what} lacks {n!r}" for n in needles if n not in page]


def check_pages(a: argparse.Namespace, base: str) -> list[str]:
    errs: list[str] = []
    pages = {"overview": "/ui/", "overview-running": "/ui/?state=RUNNING", "mappings": "/ui/mappings",
             "mapping-new": "/ui/mappings/new"}
    for t in a.tables:
        pages["table-" + t] = f"/ui/tables/{t}"
    for name, path in pages.items():
        dom = chromium(a.chromium, "--dump-dom", base + path)
        shot = os.path.join(a.shots, f"{name}.png")
        chromium(a.chromium, f"--screenshot={shot}", base + path, window="1600,2400")
        if not os.path.exists(shot) or os.path.getsize(shot) == 0:
            errs.append(f"chromium wrote no screenshot of {name}")
        if name.startswith("table-"):
            t = name[len("table-"):]
            errs += need(dom, name, f'data-table="{t}"', "<h2>Mapping</h2>", "<h2>Schema</h2>", "data-field=",
                         "Partition spec", "<h2>Query it</h2>", "iceberg.rest-catalog.uri=", "iceberg_scan(",
                         'data-chart="lag"', 'data-chart="throughput"', 'data-chart="freshness"', "-60m", "now",
                         "<h2>Bad records</h2>")
            m = re.search(r'data-chart="freshness".*?</figure>', dom, re.S)
            if not m or "<polyline" not in m.group(0):
                errs.append(f"{name}: the freshness chart draws no line")
        elif name == "overview":
            errs += need(dom, name, "<h2>Kafka brokers</h2>", "data-broker=", 'name="q"', "tables</span>")
        elif name == "overview-running":
            errs += need(dom, name, f'{len(a.tables)} of ')
        elif name == "mappings":
            errs += need(dom, name, "<h1>Mappings</h1>", "data-mapping=")
        elif name == "mapping-new":
            errs += need(dom, name, 'name="partition_by"', 'name="formats_delta"', "Create")
    return errs


def keep(a: argparse.Namespace, name: str, page: str) -> None:
    with open(os.path.join(a.shots, name + ".html"), "w") as f:
        f.write(page)


def check_actions(a: argparse.Namespace, base: str) -> list[str]:
    errs: list[str] = []
    s = Session(base)
    t = a.tables[0]
    for act, want in (("pause", "done."), ("resume", "done."), ("maintain", "files rewritten:")):
        code, page = s.post(f"/ui/tables/{t}/{act}", {})
        keep(a, f"action-{act}", page)
        if code != 200 or want not in page:
            errs.append(f"{act} of {t}: {code}, the answer lacks {want!r}")
    form = {"name": "s13-extra", "topic": "s13_extra_topic", "namespace": "interop", "format": "json",
            "error_mode": "log", "formats_iceberg": "on", "partition_by": "day(_kafka_timestamp)"}
    code, page = s.post("/ui/mappings", form)
    keep(a, "action-mapping-create", page)
    if code != 200 or "created mapping s13-extra" not in page:
        errs.append(f"creating a mapping: {code}: {re.sub(r'<[^>]+>', ' ', page)[-300:]}")
    code, listing = s.get("/ui/mappings")
    if 'data-mapping="s13-extra"' not in listing:
        errs.append("the new mapping is not listed")
    code, page = s.post("/ui/mappings/s13-extra", {**form, "format": "xml"})
    keep(a, "action-mapping-refused", page)
    if code != 400 or "field-error" not in page:
        errs.append(f"a mapping with format xml: {code}, no error beside its field")
    code, page = s.post("/ui/mappings/s13-extra/delete", {})
    if code != 200 or "Yes, delete mapping s13-extra" not in page:
        errs.append(f"deleting a mapping asked no confirmation: {code}")
    code, page = s.post("/ui/mappings/s13-extra/delete", {"confirm": "yes"})
    keep(a, "action-mapping-delete", page)
    if code != 200 or "deleted mapping s13-extra" not in page:
        errs.append(f"deleting the mapping: {code}: {re.sub(r'<[^>]+>', ' ', page)[-300:]}")
    return errs


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--admin", required=True, help="the node's admin address host:port (no tokens)")
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--shots", required=True, help="directory for the screenshots and answer pages")
    p.add_argument("tables", nargs="+")
    a = p.parse_args()
    os.makedirs(a.shots, exist_ok=True)
    base = f"http://{a.admin}"
    errs = check_pages(a, base) + check_actions(a, base)
    if errs:
        fail("; ".join(errs))
    print(f"console pages and actions checked; screenshots and answers in {a.shots}")


if __name__ == "__main__":
    main()
