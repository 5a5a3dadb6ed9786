#!/usr/bin/env python3
"""Checks Floe's status console (/ui) in a real headless Chromium (Debian's
package) against GET /v1/status: scenario 13.

Chromium loads the overview as a browser does (no script is needed: the page
is rendered on the server), takes a screenshot (kept as a test artifact) and
dumps the DOM it built. Each named table's row must show the state and the
numbers /v1/status answers; the status is read just before and just after
the page, and a number that moved in between must lie between the two. No
page may refer to (link, load, post to) any URL but the node's own.

Exits non-zero with a message on failure; stdlib only.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser

# /v1/status fields the overview shows per table, compared by value.
ATTEMPTS = 5
NUMBERS = ["rows", "data_files", "avg_file_bytes", "dead_letter_rows", "lag"]
ROW_RE = r'(?s)<tr data-table="{name}">(.*?)</tr>'
CELL_RE = re.compile(r'data-k="([a-z_]+)" data-v="([^"]*)"')
URL_RE = re.compile(r"(?i)https?://[^\s\"'<>)]*")


class References(HTMLParser):
    """Collects what a page would load or go to: every attribute value and
    every style sheet. Text is left out: a reason may quote a URL (an S3
    endpoint the node failed to reach), which the page shows, not loads."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [v for _, v in attrs if v]
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = False

    def handle_data(self, data: str) -> None:
        if self._style:
            self.refs.append(data)


def references(page: str) -> list[str]:
    p = References()
    p.feed(page)
    return [u for r in p.refs for u in URL_RE.findall(r)]


def fail(msg: str) -> None:
    print(f"console_check.py: {msg}", file=sys.stderr)
    sys.exit(1)


def fetch_status(admin: str) -> dict:
    req = urllib.request.Request(f"http://{admin}/v1/status")
    token = os.environ.get("FLOE_TOKEN")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def chromium(binary: str, *args: str, window: str = "1600,1000") -> str:
    # --no-sandbox: the suite runs as root, where Chromium's sandbox refuses
    # to start; the page is the node's own.
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", f"--window-size={window}", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        fail(f"chromium {' '.join(args)} exited {out.returncode}: {out.stderr.strip()[-2000:]}")
    return out.stdout


def row_cells(dom: str, table: str) -> dict[str, str]:
    m = re.search(ROW_RE.format(name=re.escape(table)), dom)
    if not m:
        fail(f"the overview has no row for table {table}")
    return {k: html.unescape(v) for k, v in CELL_RE.findall(m.group(1))}


def check_table(table: str, cells: dict[str, str], before: dict, after: dict, state: str | None) -> list[str]:
    errs = []
    got_state = cells.get("state")
    if got_state not in (before.get("state"), after.get("state")):
        errs.append(f"{table}: overview state {got_state}, /v1/status {before.get('state')} then {after.get('state')}")
    if state and got_state != state:
        errs.append(f"{table}: overview state {got_state}, want {state}")
    for k in NUMBERS:
        if k not in cells:
            errs.append(f"{table}: the overview does not show {k}")
            continue
        v = float(cells[k])
        lo, hi = sorted((float(before.get(k, 0)), float(after.get(k, 0))))
        if not lo <= v <= hi:
            errs.append(f"{table} {k}: overview {v:g}, /v1/status {lo:g} then {hi:g}")
    return errs


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--admin", required=True, help="the node's admin address host:port")
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--shot", required=True, help="where to write the overview's screenshot (PNG)")
    p.add_argument("--state", help="the state every named table must show on the page")
    p.add_argument("tables", nargs="+")
    a = p.parse_args()
    url = f"http://{a.admin}/ui/"
    # A number can move while the page loads (lag rises and falls with each
    # commit), so a mismatch is tried again; in the scenario's steady phases
    # (storage down, or caught up) nothing moves and the first try is exact.
    for attempt in range(1, ATTEMPTS + 1):
        before = {t["table"]: t for t in fetch_status(a.admin).get("tables", [])}
        dom = chromium(a.chromium, "--dump-dom", url)
        after = {t["table"]: t for t in fetch_status(a.admin).get("tables", [])}
        errs = []
        for t in a.tables:
            if t not in before or t not in after:
                fail(f"/v1/status has no table {t}")
            errs += check_table(t, row_cells(dom, t), before[t], after[t], a.state)
        if not errs:
            break
        print(f"  attempt {attempt}: {'; '.join(errs)}", flush=True)
        time.sleep(1)
    # The screenshot is kept whether the numbers matched or not: it shows
    # what a person would have seen.
    chromium(a.chromium, f"--screenshot={a.shot}", url)
    if not os.path.exists(a.shot) or os.path.getsize(a.shot) == 0:
        fail(f"chromium wrote no screenshot to {a.shot}")
    if errs:
        fail(f"after {ATTEMPTS} attempts: {'; '.join(errs)}")
    # Every page the console serves: the overview and each table's page.
    pages = {"overview": dom}
    for t in a.tables:
        pages[t] = chromium(a.chromium, "--dump-dom", f"http://{a.admin}/ui/tables/{t}")
        if f'data-table="{t}"' not in pages[t]:
            errs.append(f"the page of {t} does not show it")
    for name, page in pages.items():
        for u in references(page):
            if not u.startswith(f"http://{a.admin}/"):
                errs.append(f"the {name} page refers to {u}")
    if errs:
        fail("; ".join(errs))
    print(f"console at {url}: {len(a.tables)} table(s) match /v1/status"
          f"{', all ' + a.state if a.state else ''}; screenshot {a.shot}")


if __name__ == "__main__":
    main()
