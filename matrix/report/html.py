"""HTML for the dashboard's pages: the style sheet, escaping, relative
links that work from file://, writing a page."""
from __future__ import annotations

import contextlib
import functools
import html
import os
import pathlib
import urllib.parse
from typing import Iterator, Optional


CSS = """
body { font: 14px/1.35 sans-serif; margin: 1em 1.5em; color: #212121; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.2em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bdbdbd; padding: 2px 6px; text-align: left; }
th.test { font-weight: normal; font-family: monospace; white-space: nowrap; }
thead th { background: #f5f5f5; vertical-align: top; }
td a, li a { color: inherit; }
td.passed, li.passed { background: #c8e6c9; }
td.fixed { background: #81c784; }
td.skipped { background: #e0e0e0; color: #616161; }
td.failed, li.failed { background: #ef9a9a; }
td.regression, li.regression { background: #c62828; color: #ffffff;
  font-weight: bold; }
td.flaky, li.flaky { background: #ffb300; }
td.xpassed, li.xpassed { background: #4fc3f7; font-weight: bold; }
td.xfailed, li.xfailed { background: #e1bee7; }
td.none { background: #ffffff; color: #9e9e9e; }
tr.regression th.test { border-left: 6px solid #c62828; }
tr.flaky th.test { border-left: 6px solid #ffb300; }
ul.verdicts { padding: 0; list-style: none; }
ul.verdicts li { margin: 2px 0; padding: 2px 6px; font-family: monospace; }
.meta { color: #616161; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
figure.plot { margin: 0; border: 1px solid #e0e0e0; padding: 4px;
  width: 380px; }
figure.plot figcaption { font-size: 13px; min-height: 2.7em;
  overflow-wrap: anywhere; }
figure.plot figcaption code { font-size: 11px; color: #616161; }
figure.plot svg { display: block; }
.bar { color: #c62828; font-size: 12px; margin-left: 0.5em; }
.bar.unchecked { color: #757575; }
p.caption { max-width: 75em; color: #424242; font-size: 13px; }
table.figures td, #metrics td { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.stale { color: #9e9e9e; font-style: italic; }
tr.seed td.num { font-family: monospace; }
td.spark { padding: 0 4px; }
td.spark svg { display: block; }
p.checked { border-left: 6px solid #757575; padding: 2px 6px;
  background: #f5f5f5; max-width: 75em; }
"""


def esc(s) -> str:
    return html.escape(str(s), quote=True)


class Files:
    """Which files exist, from one listing per folder, and the pages
    being written (they link to each other): a page of a long history
    has tens of thousands of links."""

    def __init__(self, planned=()):
        self.planned = {os.path.normpath(str(p)) for p in planned}
        self.dirs: dict[str, set] = {}

    def exists(self, path: str) -> bool:
        if path in self.planned:
            return True
        d, name = os.path.split(path)
        names = self.dirs.get(d)
        if names is None:
            try:
                names = {e.name for e in os.scandir(d) if e.is_file()}
            except OSError:
                names = set()
            self.dirs[d] = names
        return name in names


_files: Optional[Files] = None      # while listing(): the pages' view


@contextlib.contextmanager
def listing(planned: list[pathlib.Path]) -> Iterator[None]:
    """While pages are written: href() asks one listing per folder, and
    counts the pages being written (planned) as there."""
    global _files
    _files = Files(planned)
    try:
        yield
    finally:
        _files = None


@functools.lru_cache(maxsize=1024)
def _reldir(base: str, page_dir: str) -> str:
    return os.path.relpath(base, page_dir)


def href(base, rel: Optional[str], page_dir) -> Optional[str]:
    """A relative link from page_dir to base/rel, if that file exists."""
    if not rel:
        return None
    base = str(base)
    full = os.path.normpath(os.path.join(base, rel))
    if not (_files.exists(full) if _files is not None
            else os.path.isfile(full)):
        return None
    link = os.path.normpath(os.path.join(_reldir(base, str(page_dir)), rel))
    return urllib.parse.quote(link, safe="/@")     # x86_64@6.12.html


def write_file(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head>\n"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")
