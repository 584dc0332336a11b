"""Static HTML pages of a run, from the history (matrix/history.py).

  <run>/index.html      the matrix: the run's headline figures per target
                        (fault_bench's two checked ratios, stress and fuzz
                        ops and seeds), then targets as columns, tests as
                        rows, each cell linking to the test's log, then
                        every target the run did not boot (build-only,
                        compile-checked, left out) with its status and why
  <run>/<target>.html   one target across runs: fault_bench's ratios
                        plotted (median, min-max band, the bar it checks,
                        the newest value), kernel build, boot and guest
                        time, every other metric in a table (newest,
                        previous, change, sparkline; seeds whole), and its
                        tests' history
  <root>/index.html     the matrix page of the newest run, beside the runs

A target the run left out (matrix/plan.py: not selected, no compiler, a
candidate) has no results: no column, no page, a row in "Not booted".

Numbers have 3 significant digits with k, M, G, ... (times in the unit
that suits them); counts and seeds are exact integers.

Plain HTML and CSS with inline SVG; no script and nothing from the
network. Every link is relative, so the folder opens from file:// and
can be moved or copied as a whole. Regressions come first, then flaky
tests, then other failures.

  python3 -m matrix.dashboard [RUNS TARGETS TESTS]   time a run's share
                                                     on a long history
"""
from __future__ import annotations

import dataclasses
import functools
import html
import math
import os
import pathlib
import re
import urllib.parse
from typing import Optional

from .history import LEFT, ORDER, Classification, History, Run, Verdict, is_seed

HISTORY_RUNS = 40          # columns of a target page, points of its plots

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


def _e(s) -> str:
    return html.escape(str(s), quote=True)


class _Files:
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


_files: Optional[_Files] = None


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
    return urllib.parse.quote(link)


def _write(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _page(title: str, body: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>\n"
            "<body>\n" + "\n".join(body) + "\n</body></html>\n")


def _run_line(run: Run) -> str:
    parts = [f"commit {_e((run.git_commit or 'unknown')[:12])}",
             f"series {_e(run.series_hash or 'unknown')}",
             f"started {_e(run.started)}"]
    if run.wall_seconds is not None:
        parts.append(f"wall {run.wall_seconds:.1f} s")
    return f"<p class=\"meta\">{', '.join(parts)}</p>"


def _compared(cls: Classification) -> str:
    if cls.baseline is not None:
        return (f"<p class=\"meta\">compared with baseline run "
                f"<b>{_e(cls.baseline.key)}</b></p>")
    return ("<p class=\"meta\">compared with each test's most recent "
            "earlier result</p>")


def _verdict_list(cls: Classification, vs: list[Verdict],
                  page_dir: pathlib.Path, with_target: bool) -> list[str]:
    out = []
    for cat, title in (("regression", "Regressions"), ("flaky", "Flaky")):
        these = [v for v in vs if v.category == cat]
        if not these:
            continue
        out.append(f"<section id=\"{cat}\"><h2>{title} ({len(these)})</h2>"
                   "<ul class=\"verdicts\">")
        for v in these:
            link = href(cls.run.results_path, v.log, page_dir)
            what = (f"failed; passed in {_e(v.ref_run)}" if cat ==
                    "regression" else "failed, then passed when rerun")
            logs = f" <a href=\"{link}\">log</a>" if link else ""
            rl = href(cls.run.results_path, v.rerun_log, page_dir)
            if rl:
                logs += f" <a href=\"{rl}\">rerun log</a>"
            tgt = f"{_e(v.target)} " if with_target else ""
            out.append(f"<li class=\"{cat}\">{tgt}{_e(v.item)}: {what}"
                       f"{logs}</li>")
        out.append("</ul></section>")
    return out


def _cell(cls_name: str, text: str, link: Optional[str],
          title: str = "", extra: str = "") -> str:
    inner = f"<a href=\"{link}\">{_e(text)}</a>" if link else _e(text)
    t = f" title=\"{_e(title)}\"" if title else ""
    return f"<td class=\"{cls_name}\"{t}>{inner}{extra}</td>"


def _verdict_cell(run: Run, v: Verdict, page_dir: pathlib.Path) -> str:
    label = {"regression": "REGRESSION", "fixed": "fixed"}.get(
        v.category, v.status)
    extra = ""
    rl = href(run.results_path, v.rerun_log, page_dir)
    if rl:
        extra = f" <a href=\"{rl}\">rerun</a>"
    title = v.item if v.ref_status is None else (
        f"{v.item}; {v.ref_status} in {v.ref_run}")
    return _cell(v.category, label, href(run.results_path, v.log, page_dir),
                 title, extra)


def _row_order(per_target: dict[str, list[Verdict]]) -> list[str]:
    first: dict[str, int] = {}
    rank: dict[str, int] = {}
    for vs in per_target.values():
        for v in vs:
            first.setdefault(v.test, len(first))
            r = ORDER.get(v.category, 9)
            rank[v.test] = min(rank.get(v.test, 9), r)
    return sorted(first, key=lambda t: (rank[t], first[t]))


def _row_class(tests: dict[str, Verdict]) -> str:
    cats = [v.category for v in tests.values()]
    for c in ("regression", "flaky", "failed"):
        if c in cats:
            return c
    return "ok"


def _runs_list(hist: History, current: Run, page_dir: pathlib.Path
               ) -> list[str]:
    out = ["<section id=\"runs\"><h2>Runs</h2><ul>"]
    for r in hist.runs(upto=None, limit=HISTORY_RUNS):
        link = href(r.results_path, "index.html", page_dir)
        name = _e(r.key) + (" (this run)" if r.id == current.id else "")
        item = f"<a href=\"{link}\">{name}</a>" if link else name
        out.append(f"<li>{item} <span class=\"meta\">{_e(r.started)}, "
                   f"commit {_e((r.git_commit or '?')[:12])}</span></li>")
    out.append("</ul></section>")
    return out


def _not_booted(run: Run, every: dict, page_dir: pathlib.Path
                ) -> list[str]:
    """Every target of the run that was not booted, with its status and
    why: build-only, compile-checked and left out ones."""
    rows = [(t, r) for t, r in every.items() if r["why"]]
    if not rows:
        return []
    out = [f"<section id=\"not-booted\"><h2>Not booted in this run "
           f"({len(rows)})</h2><table id=\"not-booted-table\"><thead><tr>"
           "<th>target</th><th>status</th><th>why</th></tr></thead><tbody>"]
    for t, r in rows:
        link = href(run.results_path, f"{t}.html", page_dir)
        name = f"<a href=\"{link}\">{_e(t)}</a>" if link else _e(t)
        status = r["status"] or "not run"
        kind = {"failed": "failed", "not run": "skipped"}.get(status,
                                                              "passed")
        out.append(f"<tr data-target=\"{_e(t)}\"><th class=\"test\">"
                   f"{name}</th><td class=\"{kind}\">{_e(status)}</td>"
                   f"<td class=\"why\">{_e(r['why'])}</td></tr>")
    out.append("</tbody></table></section>")
    return out


def matrix_page(hist: History, cls: Classification,
                page_dir: pathlib.Path, runs_list: bool = True) -> str:
    run = cls.run
    every = hist.targets(run.id)
    # a column per target with results: not those the run left out
    targets = {t: r for t, r in every.items() if r["role"] != LEFT}
    per_target = {t: cls.verdicts.get(t, []) for t in targets}
    body = [f"<h1>nopfn matrix: run {_e(run.key)}</h1>", _run_line(run),
            _compared(cls)]
    allv = [v for vs in per_target.values() for v in vs]
    body += _verdict_list(cls, allv, page_dir, with_target=True)
    body += _figures_table(hist, run, list(targets), page_dir)
    head = ["<th>test</th>"]
    for t, row in targets.items():
        vs = per_target[t]
        counts = {c: sum(1 for v in vs if v.status == c)
                  for c in ("passed", "failed", "flaky", "skipped")}
        n = ", ".join(f"{k} {c}" for k, c in counts.items() if k == "passed"
                      or k == "failed" or c)
        link = href(run.results_path, f"{t}.html", page_dir)
        name = f"<a href=\"{link}\">{_e(t)}</a>" if link else _e(t)
        boot = (f"<br>boot {row['boot_seconds']:.2f} s"
                if row["boot_seconds"] is not None else "")
        head.append(f"<th class=\"target\" data-target=\"{_e(t)}\">{name}"
                    f"<br>{_e(row['status'])}<br><span class=\"meta\">{n}"
                    f"<br>{_e(row['kernel_release'] or '')}{boot}</span></th>")
    body.append("<h2>Tests</h2><table id=\"matrix\"><thead><tr>" +
                "".join(head) + "</tr></thead><tbody>")
    by = {t: {v.test: v for v in vs} for t, vs in per_target.items()}
    for test in _row_order(per_target):
        row = {t: by[t][test] for t in targets if test in by[t]}
        cells = []
        for t in targets:
            v = row.get(t)
            cells.append(_verdict_cell(run, v, page_dir) if v else
                         _cell("none", "-", None))
        body.append(f"<tr class=\"{_row_class(row)}\" data-test=\"{_e(test)}"
                    f"\"><th class=\"test\">{_e(test)}</th>{''.join(cells)}"
                    "</tr>")
    body.append("</tbody></table>")
    body += _not_booted(run, every, page_dir)
    if runs_list:
        body += _runs_list(hist, run, page_dir)
    return _page(f"nopfn matrix {run.key}", body)


# ------------------------------------------------------------- numbers
_SUFFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"),
             (1e3, "k"))
_TIME = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME_NAMES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "\u00b5s"), (1e-9, "ns"))
EXACT = 2 ** 53         # above, a double's integer may be a rounded one


def _g3(x: float) -> str:
    s = f"{x:.3g}"
    if "e" in s:
        m, e = s.split("e")
        s = f"{m}e{int(e)}"
    return s


def fmt(v: float) -> str:
    """3 significant digits, with k, M, G, T, P, E above a thousand:
    415e6 is 415M, 0.74161 is 0.742."""
    if v != v or v in (math.inf, -math.inf):
        return str(v)
    if v == 0:
        return "0"
    r = float(f"{v:.3g}")           # rounded first: 999.7 is 1k
    if abs(r) < 1e21:
        for scale, suffix in _SUFFIXES:
            if abs(r) >= scale:
                return _g3(r / scale) + suffix
    return _g3(r)


def fmt_unit(v: float, unit: Optional[str]) -> str:
    """fmt() and the unit; a time in the unit that suits it (3.1 ms, not
    3.1M ns)."""
    unit = unit or ""
    if unit in _TIME and v != 0 and v == v:
        sec = float(f"{v * _TIME[unit]:.3g}")
        for scale, name in _TIME_NAMES:
            if abs(sec) >= scale:
                return f"{_g3(sec / scale)} {name}"
        return f"{_g3(sec / 1e-9)} ns"
    n = fmt(v)
    return f"{n} {unit}" if unit else n


def seed_text(value: float, exact: Optional[str]) -> str:
    """A seed's digits; '≈' when only a double of it was kept."""
    if exact is not None:
        return exact
    n = int(value)
    return f"\u2248{n}" if abs(n) > EXACT else str(n)


def metric_text(name: str, value: float, exact: Optional[str],
                unit: Optional[str]) -> str:
    """A metric as the table shows it: seeds and counts exactly, the rest
    with fmt_unit()."""
    if is_seed(name):
        return seed_text(value, exact)
    if (unit or "") not in _TIME:
        if exact is None and value == value and abs(value) <= EXACT and \
                float(value).is_integer():
            exact = str(int(value))     # recorded before `exact`
        if exact is not None:
            return f"{exact} {unit}" if unit else exact
    return fmt_unit(value, unit)


def change_text(prev: float, now: float) -> str:
    if prev == now:
        return "="
    if prev == 0:
        return ("+" if now > 0 else "") + fmt(now)
    pct = (now - prev) / abs(prev) * 100
    return f"{'+' if pct > 0 else ''}{_g3(pct)}%"


# --------------------------------------------------------------- plots
@dataclasses.dataclass
class Point:
    i: int                      # the run's place on the axis, oldest 0
    run: str                    # its key, for the tooltip
    value: float
    lo: Optional[float] = None  # the band: min and max
    hi: Optional[float] = None


@dataclasses.dataclass
class Ref:
    """A bar: one value (dashed), or one per run (dotted, `per_run`)."""
    label: str
    value: Optional[float] = None
    per_run: list = dataclasses.field(default_factory=list)   # (i, value)
    checked: bool = True        # grey where the program does not check it


def _lin_ticks(lo: float, hi: float) -> list[float]:
    raw = (hi - lo) / 4
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step)
    return [k * step for k in range(first, int(math.floor(hi / step)) + 1)]


def _log_ticks(lo: float, hi: float) -> list[float]:
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))

    def at(mults):
        t = [float(f"{m * 10.0 ** e:.3g}") for e in range(e0, e1 + 1)
             for m in mults]
        return [v for v in t if lo <= v <= hi]
    t = at((1, 2, 5))
    if 3 <= len(t) <= 6:
        return t
    if len(t) > 6:
        t = at((1,))
        return t[::math.ceil(len(t) / 6)] if len(t) >= 2 else at((1, 2, 5))
    fine = at((1, 1.5, 2, 3, 5, 7))
    if 2 <= len(fine) <= 6:
        return fine
    return t if len(t) >= 2 else _lin_ticks(lo, hi)


def _date(started: str) -> str:
    """'2026-12-03T13:01:43' as '12-03 13:01'."""
    s = str(started or "")
    return s[5:16].replace("T", " ") if len(s) >= 16 else s


def svg_plot(title: str, unit: str, points: list[Point], n: int,
             dates: tuple[str, str] = ("", ""), refs: tuple = (),
             log: bool = False, w: int = 380, h: int = 150) -> str:
    """A line of values over the last n runs (oldest left), the band of
    their min..max, the bars, and the newest value right of the plot."""
    left, right, top, bottom = 46, 80, 10, 24
    pw, ph = w - left - right, h - top - bottom
    vals = [p.value for p in points]
    vals += [v for p in points for v in (p.lo, p.hi) if v is not None]
    for r in refs:
        vals += ([r.value] if r.value is not None else [])
        vals += [v for _, v in r.per_run]
    log = log and min(vals) > 0
    lo, hi = min(vals), max(vals)
    if log:
        a, b = math.log10(lo), math.log10(hi)
        if b - a < 0.2:
            a, b = (a + b) / 2 - 0.1, (a + b) / 2 + 0.1
        pad = (b - a) * 0.06
        a, b = a - pad, b + pad
        lo, hi = 10 ** a, 10 ** b

        def y(v):
            return top + (b - math.log10(v)) * ph / (b - a)
        ticks = _log_ticks(lo, hi)
    else:
        pad = (hi - lo) * 0.06 if hi > lo else (abs(hi) * 0.1 or 1.0)
        lo = max(lo - pad, 0.0) if lo >= 0 else lo - pad
        hi += pad

        def y(v):
            return top + (hi - v) * ph / (hi - lo)
        ticks = _lin_ticks(lo, hi)

    def x(i):
        return left + (pw * i / (n - 1) if n > 1 else pw / 2)

    u = f" {unit}" if unit else ""
    parts = [f"<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
             f"width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" "
             f"role=\"img\" aria-label=\"{_e(title)}\" font-size=\"10\" "
             "font-family=\"sans-serif\">",
             f"<rect x=\"{left}\" y=\"{top}\" width=\"{pw}\" height=\"{ph}\" "
             "fill=\"#fafafa\" stroke=\"#bdbdbd\"/>"]
    for t in ticks:
        ty = y(t)
        parts.append(f"<line class=\"grid\" x1=\"{left}\" "
                     f"x2=\"{left + pw}\" y1=\"{ty:.1f}\" y2=\"{ty:.1f}\" "
                     "stroke=\"#e0e0e0\"/><text class=\"tick\" "
                     f"x=\"{left - 4}\" y=\"{ty + 3.5:.1f}\" "
                     f"text-anchor=\"end\" fill=\"#616161\">{fmt(t)}</text>")
    band = [p for p in points if p.lo is not None and p.hi is not None]
    if len(band) > 1:
        edge = [(x(p.i), y(p.hi)) for p in band] + \
            [(x(p.i), y(p.lo)) for p in reversed(band)]
        parts.append("<polygon class=\"band\" points=\"" +
                     " ".join(f"{a:.1f},{b:.1f}" for a, b in edge) +
                     "\" fill=\"#90caf9\" fill-opacity=\"0.6\"/>")
    elif band:
        p = band[0]
        parts.append(f"<rect class=\"band\" x=\"{x(p.i) - 5:.1f}\" "
                     f"y=\"{y(p.hi):.1f}\" width=\"10\" "
                     f"height=\"{max(y(p.lo) - y(p.hi), 1):.1f}\" "
                     "fill=\"#90caf9\" fill-opacity=\"0.6\"/>")
    halo = "paint-order=\"stroke\" stroke=\"#ffffff\" stroke-width=\"3\""
    labels = []             # drawn over the line, the points

    def beside(ry: float, line_y: float) -> float:
        """A label's baseline by a bar at ry: on the side away from the
        line at line_y, where there is room."""
        above, below = ry - 4, ry + 12
        if above - 10 < top:
            return below
        if below > top + ph:
            return above
        return above if line_y >= ry else below

    for r in refs:
        colour = "#c62828" if r.checked else "#757575"
        if r.value is not None:
            ry = y(r.value)
            ly = beside(ry, y(points[0].value))
            parts.append(f"<line class=\"ref\" x1=\"{left}\" "
                         f"x2=\"{left + pw}\" y1=\"{ry:.1f}\" "
                         f"y2=\"{ry:.1f}\" stroke=\"{colour}\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>")
            labels.append(f"<text class=\"ref-label\" x=\"{left + 4}\" "
                          f"y=\"{ly:.1f}\" fill=\"{colour}\" {halo}>"
                          f"{_e(r.label)}</text>")
        if r.per_run:
            pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in r.per_run)
            i, v = r.per_run[-1]
            ly = beside(y(v), y(points[-1].value))
            parts.append(f"<polyline class=\"ref checked\" points=\"{pts}\" "
                         f"fill=\"none\" stroke=\"{colour}\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"1.5 3\"/>")
            labels.append(f"<text class=\"ref-label\" "
                          f"x=\"{left + pw - 4}\" y=\"{ly:.1f}\" "
                          f"text-anchor=\"end\" fill=\"{colour}\" {halo}>"
                          f"{_e(r.label)}</text>")
    if len(points) > 1:
        pts = " ".join(f"{x(p.i):.1f},{y(p.value):.1f}" for p in points)
        parts.append(f"<polyline class=\"median\" points=\"{pts}\" "
                     "fill=\"none\" stroke=\"#1565c0\" stroke-width=\"1.8\"/>")
    for p in points:
        spread = (f" (min {fmt(p.lo)}, max {fmt(p.hi)})"
                  if p.lo is not None and p.hi is not None else "")
        parts.append(f"<circle cx=\"{x(p.i):.1f}\" cy=\"{y(p.value):.1f}\" "
                     f"r=\"2.5\" fill=\"#1565c0\"><title>{_e(p.run)}: "
                     f"{_e(fmt(p.value))}{_e(u)}{_e(spread)}</title>"
                     "</circle>")
    parts += labels
    last = points[-1]
    ly = min(max(y(last.value) + 4, top + 10), top + ph)
    parts.append(f"<text class=\"latest\" x=\"{left + pw + 6}\" "
                 f"y=\"{ly:.1f}\" font-size=\"12\" font-weight=\"bold\" "
                 f"fill=\"#0d47a1\">{_e(fmt(last.value) + u)}</text>")
    if last.lo is not None and last.hi is not None:
        sy = ly + 13 if ly + 13 <= h - 4 else ly - 15
        parts.append(f"<text class=\"latest-spread\" x=\"{left + pw + 6}\" "
                     f"y=\"{sy:.1f}\" fill=\"#616161\">"
                     f"{_e(fmt(last.lo))}\u2013{_e(fmt(last.hi))}</text>")
    runs = f"{n} run{'s' if n != 1 else ''}"
    if n > 1:
        parts.append(f"<text class=\"axis\" x=\"{left}\" y=\"{h - 7}\" "
                     f"fill=\"#616161\">{_e(dates[0])}</text>"
                     f"<text class=\"axis\" x=\"{left + pw / 2:.1f}\" "
                     f"y=\"{h - 7}\" text-anchor=\"middle\" fill=\"#616161\">"
                     f"{runs}</text>"
                     f"<text class=\"axis\" x=\"{left + pw}\" y=\"{h - 7}\" "
                     f"text-anchor=\"end\" fill=\"#616161\">"
                     f"{_e(dates[1])}</text>")
    else:
        parts.append(f"<text class=\"axis\" x=\"{left + pw / 2:.1f}\" "
                     f"y=\"{h - 7}\" text-anchor=\"middle\" fill=\"#616161\">"
                     f"{runs}, {_e(dates[1])}</text>")
    parts.append("</svg>")
    return "".join(parts)


def sparkline(points: list[tuple[int, float]], n: int, title: str) -> str:
    """A line of a metric over the last n runs, as wide as a word."""
    w, h, m = 100, 18, 3
    vals = [v for _, v in points]
    lo, hi = min(vals), max(vals)

    def x(i):
        return m + ((w - 2 * m) * i / (n - 1) if n > 1 else (w - 2 * m) / 2)

    def y(v):
        return h / 2 if hi == lo else m + (hi - v) * (h - 2 * m) / (hi - lo)

    out = [f"<svg class=\"spark\" xmlns=\"http://www.w3.org/2000/svg\" "
           f"width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" "
           f"role=\"img\" aria-label=\"{_e(title)}\"><title>{_e(title)}"
           "</title>"]
    if len(points) > 1:
        out.append("<polyline points=\"" + " ".join(
            f"{x(i):.1f},{y(v):.1f}" for i, v in points) + "\" fill=\"none\""
            " stroke=\"#1565c0\" stroke-width=\"1.2\"/>")
    i, v = points[-1]
    out.append(f"<circle cx=\"{x(i):.1f}\" cy=\"{y(v):.1f}\" r=\"2\" "
               "fill=\"#1565c0\"/></svg>")
    return "".join(out)


# ------------------------------------------------- fault_bench's ratios
# The bars fault_bench checks (tests/guest/fault_bench.c; the unit tests
# hold these to its #defines and to the tests that check them).
BAR_NOPFN_VS_VMF = 1.05     # nopfn/vmf, the median at most: dense, dense_read
BAR_SPARSE_FACTOR = 2.0     # eager/nopfn sparse at least mapped/touched / it
SPARSE_STEP = 64            # sparse: one page touched in this many mapped
BAR_EAGER_VS_LAZY = SPARSE_STEP / BAR_SPARSE_FACTOR
BENCH = "fault_bench"
PREMIUM = "ratio.fault_vs_eager_page"
BARS = {"ratio.nopfn_vs_vmf.dense": ("\u2264", BAR_NOPFN_VS_VMF),
        "ratio.nopfn_vs_vmf.dense_read": ("\u2264", BAR_NOPFN_VS_VMF),
        "ratio.eager_vs_lazy.sparse": ("\u2265", BAR_EAGER_VS_LAZY)}
RATIO_ORDER = ["ratio.nopfn_vs_vmf.dense", "ratio.nopfn_vs_vmf.dense_read",
               "ratio.eager_vs_lazy.sparse", "ratio.nopfn_vs_vmf.sparse",
               "ratio.eager_vs_lazy.dense", PREMIUM,
               "ratio.eager_vs_vmf.dense", "ratio.eager_vs_vmf.sparse",
               "ratio.anon_vs_vmf.dense", "ratio.anon_vs_vmf.sparse"]

RATIO_CAPTION = (
    "Each figure is one path's cost over another's for the same pattern, "
    "taken within a round of the same boot: the median of the rounds "
    "(line, points) and their min\u2013max (band), log scale. Paths: "
    "<b>nopfn</b> <code>-&gt;nopfn()</code> (/dev/mspec_cached), "
    "<b>vmf</b> the same work per page from <code>-&gt;fault()</code> with "
    "<code>vmf_insert_pfn()</code>, <b>eager</b> every page mapped with "
    "<code>remap_pfn_range()</code> at <code>mmap()</code>, <b>anon</b> "
    "anonymous memory. Patterns: <b>dense</b> a write to each of 64 pages "
    "(<b>dense_read</b> a read), <b>sparse</b> a write to one page in 64 "
    "of 16 MiB. Dashed: the bar fault_bench checks (nopfn/vmf dense and "
    "dense_read at most 1.05; eager/nopfn sparse at least 64/2 = 32, as "
    "it is); grey where it does not check it (debug kernels). The fault "
    "premium (a fault over an eager page) is plotted beside them: it is "
    "why the sparse bar is missed under TCG (docs/benchmarks.md). The guests "
    "run under QEMU TCG, which makes absolute times meaningless: only "
    "ratios are plotted.")


def ratio_title(name: str) -> str:
    """'ratio.nopfn_vs_vmf.dense_read' as 'nopfn / vmf, dense_read'."""
    if name == PREMIUM:
        return "fault premium: a nopfn dense fault / an eager page"
    m = re.fullmatch(r"ratio\.(\w+?)_vs_(\w+?)\.(\w+)", name)
    if not m:
        return name[len("ratio."):]
    a, b, pattern = m.groups()
    return f"{a} / {'nopfn' if b == 'lazy' else b}, {pattern}"


def _finite(v) -> bool:
    return v is not None and math.isfinite(v)


def is_bench_ratio(program: str, name: str) -> bool:
    return program == BENCH and name.startswith("ratio.") and \
        not name.endswith((".min", ".max"))


class _Figures:
    """A target's figures over its last runs, oldest first."""

    def __init__(self, hist: History, target: str, runs: list[Run]):
        old_first = list(reversed(runs))
        self.ids = [r.id for r in old_first]
        self.pos = {r.id: i for i, r in enumerate(old_first)}
        self.key = {r.id: r.key for r in old_first}
        self.n = len(old_first)
        self.dates = (_date(old_first[0].started), _date(
            old_first[-1].started)) if old_first else ("", "")
        self.current = runs[0].id if runs else None
        self.rows = hist.target_rows(self.ids, target)
        self.metrics: dict[tuple[str, str], dict[int, object]] = {}
        for m in hist.metrics_of(self.ids, target):
            self.metrics.setdefault((m["program"], m["name"]), {})[
                m["run_id"]] = m

    def _points(self, by_run: dict, band: str = "") -> list[Point]:
        lo = self.metrics.get((BENCH, band + ".min"), {}) if band else {}
        hi = self.metrics.get((BENCH, band + ".max"), {}) if band else {}
        out = []
        for rid in self.ids:
            if rid in by_run and _finite(by_run[rid]["value"]):
                a, b = lo.get(rid), hi.get(rid)
                a = a if a is not None and _finite(a["value"]) else None
                b = b if b is not None and _finite(b["value"]) else None
                out.append(Point(self.pos[rid], self.key[rid],
                                 by_run[rid]["value"],
                                 a["value"] if a is not None else None,
                                 b["value"] if b is not None else None))
        return out

    def ratio_names(self) -> list[str]:
        names = [n for p, n in self.metrics if is_bench_ratio(p, n)]
        known = [n for n in RATIO_ORDER if n in names]
        return known + sorted(set(names) - set(known))

    def ratios(self, checked: bool) -> list[str]:
        out = []
        for name in self.ratio_names():
            points = self._points(self.metrics[(BENCH, name)], name)
            if not points:
                continue
            refs = []
            if name in BARS:
                how, bar = BARS[name]
                refs.append(Ref(f"bar {how} {fmt(bar)}", bar,
                                checked=checked))
            bar = ""
            if name in BARS:
                bar = (" <span class=\"bar\">" if checked else
                       " <span class=\"bar unchecked\">")
                bar += (f"bar {BARS[name][0]} {fmt(BARS[name][1])}"
                        f"{'' if checked else ', not checked here'}</span>")
            out.append(
                f"<figure class=\"plot ratio\" data-metric=\"{_e(name)}\">"
                f"<figcaption><b>{_e(ratio_title(name))}</b>{bar}<br>"
                f"<code>{_e(name)}</code></figcaption>" +
                svg_plot(ratio_title(name), "", points, self.n, self.dates,
                         tuple(refs), log=True) + "</figure>")
        return out

    def harness(self) -> list[str]:
        out = []
        for col, caption in (("build_seconds", "kernel build"),
                             ("boot_seconds", "boot"),
                             ("guest_seconds", "guest time")):
            points = [Point(self.pos[i], self.key[i], self.rows[i][col])
                      for i in self.ids
                      if i in self.rows and _finite(self.rows[i][col])]
            if points:
                out.append(f"<figure class=\"plot harness\" data-metric=\""
                           f"{col}\"><figcaption><b>{caption}</b> (s)"
                           "</figcaption>" + svg_plot(caption, "s", points,
                                                      self.n, self.dates) +
                           "</figure>")
        return out

    def table(self) -> list[str]:
        """Every metric that is not a ratio plot: latest, previous,
        change, history."""
        used = set()
        for p, n in self.metrics:
            if is_bench_ratio(p, n):
                used |= {(p, n), (p, n + ".min"), (p, n + ".max")}
        rows = sorted((k for k in self.metrics if k not in used),
                      key=lambda k: (k[0], not is_seed(k[1]), k[1]))
        out = []
        for prog, name in rows:
            by_run = self.metrics[(prog, name)]
            have = [rid for rid in self.ids if rid in by_run]
            if not have:
                continue
            last = by_run[have[-1]]
            prev = by_run[have[-2]] if len(have) > 1 else None
            seed = is_seed(name)

            def text(m):
                return metric_text(name, m["value"], m["exact"], m["unit"])
            stale = have[-1] != self.current
            cls = " stale" if stale else ""
            cells = [f"<td class=\"prog\">{_e(prog)}</td>",
                     f"<td class=\"name\"><code>{_e(name)}</code></td>",
                     f"<td class=\"num latest{cls}\" title=\""
                     f"{_e(self.key[have[-1]])}\">{_e(text(last))}</td>"]
            if prev is None:
                cells.append("<td class=\"num prev\"></td>"
                             "<td class=\"num change\"></td>")
            else:
                cells.append(f"<td class=\"num prev\" title=\""
                             f"{_e(self.key[have[-2]])}\">"
                             f"{_e(text(prev))}</td>")
                change = "" if seed else change_text(prev["value"],
                                                     last["value"])
                cells.append(f"<td class=\"num change\">{_e(change)}</td>")
            pts = [] if seed else [(self.pos[r], by_run[r]["value"])
                                   for r in have
                                   if _finite(by_run[r]["value"])]
            if not pts:
                cells.append("<td class=\"spark\"></td>")
            else:
                vals = [v for _, v in pts]
                u = last["unit"] or ""
                title = (f"{len(pts)} run{'s' if len(pts) != 1 else ''}: "
                         f"{fmt_unit(min(vals), u)} .. "
                         f"{fmt_unit(max(vals), u)}")
                cells.append("<td class=\"spark\">" +
                             sparkline(pts, self.n, title) + "</td>")
            out.append(f"<tr class=\"{'seed' if seed else 'metric'}\" "
                       f"data-metric=\"{_e(prog)}:{_e(name)}\">" +
                       "".join(cells) + "</tr>")
        return out


# The matrix page's figures of the run: (heading, program, metric).
SUMMARY = (("nopfn / vmf dense", BENCH, "ratio.nopfn_vs_vmf.dense"),
           ("eager / nopfn sparse", BENCH, "ratio.eager_vs_lazy.sparse"),
           ("stress ops", "mspec_stress", "stress.ops"),
           ("fuzz ops", "mmap_fuzz", "fuzz.ops"),
           ("fuzz seed", "mmap_fuzz", "fuzz.seed"),
           ("stress seed", "mspec_stress", "stress.seed"))


def _figures_table(hist: History, run: Run, targets: list[str],
                   page_dir: pathlib.Path) -> list[str]:
    """Per target, this run's headline figures, linking to its page;
    nothing when no target printed any."""
    have = {t: {(m["program"], m["name"]): m
                for m in hist.metrics_of([run.id], t)} for t in targets}
    if not any((p, n) in have[t] for t in targets for _, p, n in SUMMARY):
        return []
    head = ["<th>target</th>"]
    for title, _, name in SUMMARY:
        bar = (f"<br><span class=\"bar\">bar {BARS[name][0]} "
               f"{fmt(BARS[name][1])}</span>" if name in BARS else "")
        head.append(f"<th>{_e(title)}{bar}</th>")
    out = ["<section id=\"figures\"><h2>Figures</h2>"
           "<table id=\"figures-table\" class=\"figures\"><thead><tr>" +
           "".join(head) + "</tr></thead><tbody>"]
    for t in targets:
        link = href(run.results_path, f"{t}.html", page_dir)
        name = f"<a href=\"{link}\">{_e(t)}</a>" if link else _e(t)
        cells = [f"<th class=\"test\">{name}</th>"]
        for _, prog, metric in SUMMARY:
            m = have[t].get((prog, metric))
            if m is None or m["value"] is None:
                cells.append("<td class=\"num\"></td>")
                continue
            text = _e(metric_text(metric, m["value"], m["exact"],
                                  m["unit"]))
            if is_bench_ratio(prog, metric):
                text = _e(fmt(m["value"]))
                lo = have[t].get((prog, metric + ".min"))
                hi = have[t].get((prog, metric + ".max"))
                if lo is not None and hi is not None:
                    text += (f" <span class=\"meta\">{_e(fmt(lo['value']))}"
                             f"\u2013{_e(fmt(hi['value']))}</span>")
            cls = "num seed" if is_seed(metric) else "num"
            cells.append(f"<td class=\"{cls}\" data-metric=\"{_e(metric)}\">"
                         f"{text}</td>")
        out.append(f"<tr data-target=\"{_e(t)}\">" + "".join(cells) +
                   "</tr>")
    out.append("</tbody></table></section>")
    return out


def target_page(hist: History, cls: Classification, target: str,
                page_dir: pathlib.Path) -> str:
    run = cls.run
    runs = hist.runs(target, upto=run.id, limit=HISTORY_RUNS)
    row = hist.targets(run.id).get(target)
    vs = cls.verdicts.get(target, [])
    link = href(run.results_path, "index.html", page_dir)
    body = [f"<h1>{_e(target)}: run {_e(run.key)}</h1>",
            f"<p><a href=\"{link}\">the whole matrix of this run</a></p>"
            if link else "", _run_line(run), _compared(cls)]
    if row is not None:
        variant = f", variant {_e(row['variant'])}" if row["variant"] else ""
        if row["role"] == "check":
            body.append("<p class=\"checked\" id=\"not-booted\">"
                        "<b>Compile-checked only</b> in this run (its "
                        "kernel configured and the series' files compiled;"
                        " not built, not booted)"
                        f"{': ' + _e(row['why']) if row['why'] else ''}"
                        "</p>")
        elif row["why"]:
            body.append("<p class=\"checked\" id=\"not-booted\">"
                        f"<b>Not booted</b> in this run: {_e(row['why'])}"
                        "</p>")
        body.append(f"<p class=\"meta\">status {_e(row['status'])}; kernel "
                    f"{_e(row['kernel_release'] or '?')}, config "
                    f"{_e(row['config_sha'] or '?')}{variant}</p>")
    body += _verdict_list(cls, vs, page_dir, with_target=False)
    figs = _Figures(hist, target, runs)
    # fault_bench skips its bars on a debug kernel
    checked = row is None or "debug" not in (row["variant"] or "")
    ratios = figs.ratios(checked)
    if ratios:
        body.append("<section id=\"ratios\"><h2>Fault benchmark: cost per "
                    "page relative to the <code>vmf_insert_pfn()</code> "
                    f"path</h2><p class=\"caption\">{RATIO_CAPTION}</p>"
                    "<div class=\"plots\">" + "".join(ratios) +
                    "</div></section>")
    harness = figs.harness()
    if harness:
        body.append("<section id=\"harness\"><h2>Kernel build, boot and "
                    "guest time</h2><div class=\"plots\" id=\"plots\">" +
                    "".join(harness) + "</div></section>")
    table = figs.table()
    if table:
        body.append("<section id=\"other\"><h2>Other figures</h2>"
                    "<p class=\"caption\">Every other <code># METRIC</code> "
                    "the programs printed: the newest value (grey: not "
                    "printed in this run), the one before it, the change, "
                    "and the last runs (oldest left). Seeds are given "
                    "whole, to rerun with.</p><table id=\"metrics\">"
                    "<thead><tr><th>program</th><th>metric</th>"
                    "<th>latest</th><th>previous</th><th>change</th>"
                    f"<th>last {figs.n} runs</th></tr></thead><tbody>" +
                    "".join(table) + "</tbody></table></section>")
    older = runs[1:] if runs and runs[0].id == run.id else runs
    res = hist.results_of([r.id for r in older], target)
    head = ["<th>test</th>", f"<th>{_e(run.key)}<br>(this run)</th>"]
    for r in older:
        rl = href(r.results_path, f"{target}.html", page_dir)
        name = f"<a href=\"{rl}\">{_e(r.key)}</a>" if rl else _e(r.key)
        head.append(f"<th>{name}<br><span class=\"meta\">"
                    f"{_e((r.git_commit or '?')[:8])}</span></th>")
    body.append("<h2>Tests across runs (newest left)</h2>"
                "<table id=\"history\"><thead><tr>" + "".join(head) +
                "</tr></thead><tbody>")
    for v in vs:
        cells = [_verdict_cell(run, v, page_dir)]
        for r in older:
            o = res.get((r.id, v.test))
            if o is None:
                cells.append(_cell("none", "-", None))
            else:
                cells.append(_cell(o["status"], o["status"],
                                   href(r.results_path, o["log"],
                                        page_dir), r.key))
        body.append(f"<tr class=\"{_row_class({0: v})}\" data-test=\""
                    f"{_e(v.test)}\"><th class=\"test\">{_e(v.test)}</th>"
                    f"{''.join(cells)}</tr>")
    body.append("</tbody></table>")
    return _page(f"{target} {run.key}", body)


def _paged(hist: History, run: Run) -> list[str]:
    """The targets of the run that have a page: not those it left out."""
    return [t for t, r in hist.targets(run.id).items() if r["role"] != LEFT]


def write(hist: History, cls: Classification,
          root: Optional[pathlib.Path] = None) -> list[pathlib.Path]:
    """Write the run's pages (and the root index); returns their paths."""
    global _files
    d = cls.run.path
    _files = _Files([d / "index.html"] + [d / f"{t}.html" for t in
                                          _paged(hist, cls.run)])
    try:
        return _write_pages(hist, cls, root)
    finally:
        _files = None


def _write_pages(hist: History, cls: Classification,
                 root: Optional[pathlib.Path]) -> list[pathlib.Path]:
    d = cls.run.path
    pages = []
    for target in _paged(hist, cls.run):
        p = d / f"{target}.html"
        _write(p, target_page(hist, cls, target, d))
        pages.append(p)
    p = d / "index.html"
    _write(p, matrix_page(hist, cls, d))
    pages.insert(0, p)
    if root is not None and root.resolve() != d.resolve():
        p = root / "index.html"
        _write(p, matrix_page(hist, cls, root))
        pages.append(p)
    return pages


def bench_metrics(i: int) -> tuple[dict, dict]:
    """Run i's metrics and programs, as many as fault_bench, mspec_stress
    and mmap_fuzz print: 10 ratios with their spread, 13 times, 20
    counts and rates, two seeds."""
    seeds = {"mspec_stress": 2221493935565901272 + i,
             "mmap_fuzz": 2194960933338486915 + i}
    fb = {}
    for k, name in enumerate(RATIO_ORDER):
        v = 0.5 + (i + k) % 7 / 4
        fb[name] = {"value": v, "unit": ""}
        fb[name + ".min"] = {"value": v / 2, "unit": ""}
        fb[name + ".max"] = {"value": v * 2, "unit": ""}
    for k in range(13):
        fb[f"ns_per_page.p{k}"] = {"value": 1e5 + 997.5 * ((i * k) % 13),
                                   "unit": "ns"}
    stress = {f"stress.op.o{k}": {"value": 100 + (i * k) % 50,
                                  "unit": "ops"} for k in range(16)}
    stress.update({"stress.ops": {"value": 1600 + i % 50, "unit": "ops"},
                   "stress.seconds": {"value": 10.5, "unit": "s"}})
    fuzz = {"fuzz.ops": {"value": 300 + i % 9, "unit": "ops"},
            "fuzz.ops_per_s": {"value": 27.9, "unit": "ops/s"}}
    # seeds as matrix/ktap.py passes them on: through a double
    stress["stress.seed"] = {"value": int(float(seeds["mspec_stress"])),
                             "unit": ""}
    fuzz["fuzz.seed"] = {"value": int(float(seeds["mmap_fuzz"])), "unit": ""}
    return ({BENCH: fb, "mspec_stress": stress, "mmap_fuzz": fuzz},
            {p: {"seed": s} for p, s in seeds.items()})


def bench(runs: int = 500, targets: int = 6, tests: int = 150) -> str:
    """Time what a run adds on top of a long history: record the run,
    classify it, write its pages (synthetic records, in a temp folder)."""
    import tempfile
    import time
    names = ["x86_64", "x86_64-debug", "arm64", "arm64-debug", "riscv64",
             "ia64", "t6", "t7"][:targets]

    def recs(i: int) -> dict:
        metrics, programs = bench_metrics(i)
        return {t: {"arch": t, "status": "passed",
                    "kernel": {"build_seconds": 300.0},
                    "boot_seconds": [1.0], "guest_seconds": 30.0,
                    "tests": {f"test_case[{t}-p{j // 10}-c{j}]": {
                        "status": "failed" if (i + j) % 97 == 0
                        else "passed", "duration": 0.1,
                        "log": f"{t}/boot1/p{j // 10}.ktap"}
                        for j in range(tests)},
                    "metrics": metrics, "programs": programs}
                for t in names}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        with History(root / "history.sqlite") as h:
            for i in range(runs - 1):
                h.record(f"run{i:04d}", root / f"run{i:04d}", recs(i))
            d = root / "last"
            d.mkdir()
            t0 = time.monotonic()
            run = h.record("last", d, recs(runs))
            pages = write(h, h.classify(run.id), root)
            took = time.monotonic() - t0
            size = (root / "history.sqlite").stat().st_size
            kib = sum(p.stat().st_size for p in pages) >> 10
    return (f"{runs} runs x {targets} targets x {tests} tests: record, "
            f"classify and pages of the last run {took:.2f} s (history "
            f"{size >> 20} MiB, pages {kib} KiB)")


if __name__ == "__main__":
    import sys
    print(bench(*(int(a) for a in sys.argv[1:4])))
