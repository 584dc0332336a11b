"""Static HTML pages of a run, from the history (matrix/history.py).

  <run>/index.html      the matrix: targets as columns, tests as rows,
                        each cell linking to the test's log
  <run>/<target>.html   one target across runs: its tests' history, and
                        plots of kernel build time, boot time, guest time
                        and every metric the programs printed
  <root>/index.html     the matrix page of the newest run, beside the runs

Plain HTML and CSS with inline SVG; no script and nothing from the
network. Every link is relative, so the folder opens from file:// and
can be moved or copied as a whole. Regressions come first, then flaky
tests, then other failures.

  python3 -m matrix.dashboard [RUNS TARGETS TESTS]   time a run's share
                                                     on a long history
"""
from __future__ import annotations

import functools
import html
import os
import pathlib
import urllib.parse
from typing import Optional

from .history import ORDER, Classification, History, Run, Verdict

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
figure.plot { margin: 0; border: 1px solid #e0e0e0; padding: 4px; }
figure.plot figcaption { font-size: 12px; font-family: monospace; }
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


def matrix_page(hist: History, cls: Classification,
                page_dir: pathlib.Path, runs_list: bool = True) -> str:
    run = cls.run
    targets = hist.targets(run.id)
    per_target = {t: cls.verdicts.get(t, []) for t in targets}
    body = [f"<h1>nopfn matrix: run {_e(run.key)}</h1>", _run_line(run),
            _compared(cls)]
    allv = [v for vs in per_target.values() for v in vs]
    body += _verdict_list(cls, allv, page_dir, with_target=True)
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
    if runs_list:
        body += _runs_list(hist, run, page_dir)
    return _page(f"nopfn matrix {run.key}", body)


def svg_plot(title: str, unit: str, points: list[tuple[str, float]]) -> str:
    """A small line plot of values over runs, oldest first."""
    w, h, left, right, top, bottom = 300, 110, 48, 34, 8, 16
    vals = [v for _, v in points]
    lo, hi = min(vals), max(vals)
    if hi == lo:
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    n = len(points)

    def x(i):
        return left + ((w - left - right) * i / (n - 1) if n > 1
                       else (w - left - right) / 2)

    def y(v):
        return top + (hi - v) * (h - top - bottom) / (hi - lo)

    u = f" {unit}" if unit else ""
    parts = [f"<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
             f"width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" "
             f"role=\"img\" aria-label=\"{_e(title)}\">",
             f"<rect x=\"{left}\" y=\"{top}\" width=\"{w - left - right}\" "
             f"height=\"{h - top - bottom}\" fill=\"#fafafa\" "
             "stroke=\"#e0e0e0\"/>",
             f"<text x=\"{left - 4}\" y=\"{top + 8}\" font-size=\"10\" "
             f"text-anchor=\"end\">{hi:.4g}</text>",
             f"<text x=\"{left - 4}\" y=\"{h - bottom}\" font-size=\"10\" "
             f"text-anchor=\"end\">{lo:.4g}</text>",
             f"<text x=\"{left}\" y=\"{h - 3}\" font-size=\"10\">"
             f"{n} run{'s' if n != 1 else ''}, newest right</text>"]
    if n > 1:
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(vals))
        parts.append(f"<polyline points=\"{pts}\" fill=\"none\" "
                     "stroke=\"#1565c0\" stroke-width=\"1.5\"/>")
    for i, (label, v) in enumerate(points):
        parts.append(f"<circle cx=\"{x(i):.1f}\" cy=\"{y(v):.1f}\" r=\"2.5\" "
                     f"fill=\"#1565c0\"><title>{_e(label)}: {v:.4g}{_e(u)}"
                     "</title></circle>")
    parts.append(f"<text x=\"{w - right + 3}\" y=\"{y(vals[-1]) + 3:.1f}\" "
                 f"font-size=\"10\">{vals[-1]:.3g}</text></svg>")
    return "".join(parts)


def _plots(hist: History, target: str, runs: list[Run]) -> list[str]:
    """(caption, svg) for the target's figures, oldest run first."""
    old_first = list(reversed(runs))
    ids = [r.id for r in old_first]
    key = {r.id: r.key for r in old_first}
    rows = hist.target_rows(ids, target)
    series: list[tuple[str, str, list[tuple[str, float]]]] = []
    for col, caption in (("build_seconds", "kernel build"),
                         ("boot_seconds", "boot"),
                         ("guest_seconds", "guest time")):
        pts = [(key[i], rows[i][col]) for i in ids
               if i in rows and rows[i][col] is not None]
        if pts:
            series.append((caption, "s", pts))
    metrics: dict[tuple[str, str], list] = {}
    units: dict[tuple[str, str], str] = {}
    for m in hist.metrics_of(ids, target):
        k = (m["program"], m["name"])
        metrics.setdefault(k, []).append((key[m["run_id"]], m["value"]))
        units[k] = m["unit"] or ""
    for k in sorted(metrics):
        series.append((f"{k[0]}: {k[1]}", units[k], metrics[k]))
    out = []
    for caption, unit, pts in series:
        u = f" ({unit})" if unit else ""
        out.append(f"<figure class=\"plot\"><figcaption>{_e(caption)}{_e(u)}"
                   f"</figcaption>{svg_plot(caption, unit, pts)}</figure>")
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
        body.append(f"<p class=\"meta\">status {_e(row['status'])}; kernel "
                    f"{_e(row['kernel_release'] or '?')}, config "
                    f"{_e(row['config_sha'] or '?')}{variant}</p>")
    body += _verdict_list(cls, vs, page_dir, with_target=False)
    plots = _plots(hist, target, runs)
    body.append("<h2>Figures across runs</h2><div class=\"plots\" "
                "id=\"plots\">" + "".join(plots) + "</div>")
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


def write(hist: History, cls: Classification,
          root: Optional[pathlib.Path] = None) -> list[pathlib.Path]:
    """Write the run's pages (and the root index); returns their paths."""
    global _files
    d = cls.run.path
    _files = _Files([d / "index.html"] + [d / f"{t}.html" for t in
                                          hist.targets(cls.run.id)])
    try:
        return _write_pages(hist, cls, root)
    finally:
        _files = None


def _write_pages(hist: History, cls: Classification,
                 root: Optional[pathlib.Path]) -> list[pathlib.Path]:
    d = cls.run.path
    pages = []
    for target in hist.targets(cls.run.id):
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


def bench(runs: int = 500, targets: int = 6, tests: int = 150) -> str:
    """Time what a run adds on top of a long history: record the run,
    classify it, write its pages (synthetic records, in a temp folder)."""
    import tempfile
    import time
    names = ["x86_64", "x86_64-debug", "arm64", "arm64-debug", "riscv64",
             "ia64", "t6", "t7"][:targets]

    def recs(i: int) -> dict:
        return {t: {"arch": t, "status": "passed",
                    "kernel": {"build_seconds": 300.0},
                    "boot_seconds": [1.0], "guest_seconds": 30.0,
                    "tests": {f"test_case[{t}-p{j // 10}-c{j}]": {
                        "status": "failed" if (i + j) % 97 == 0
                        else "passed", "duration": 0.1,
                        "log": f"{t}/boot1/p{j // 10}.ktap"}
                        for j in range(tests)},
                    "metrics": {"bench": {f"ratio.m{k}": {
                        "value": 1 + i % 7, "unit": "x"} for k in range(8)}}}
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
