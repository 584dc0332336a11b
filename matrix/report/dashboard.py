"""Static HTML pages of a run, from the history (matrix/report/history.py).

  <run>/index.html      the matrix: trees by architectures (a cell per
                        target: its status and counts), the run's
                        headline figures per target
                        (fault_bench's two checked ratios, stress and fuzz
                        ops and seeds), then targets as columns, tests as
                        rows, each cell linking to the test's log, then
                        every target the run did not boot (build-only,
                        compile-checked, left out) with its status and why
  <run>/<target>.html   one target across runs: fault_bench's ratios
                        plotted (median, min-max band, the bar it checks,
                        the newest value), kernel build, boot and guest
                        time, every other metric in a table (newest,
                        previous, change, sparkline; seeds whole), its
                        tests' history, and its tests on the run's other
                        trees (a column per tree)
  <root>/index.html     the matrix page of the newest run, beside the runs

A target the run left out (matrix/session/plan.py: not selected, no compiler, a
candidate) has no results: no column, no page, a row in "Not booted".

Numbers have 3 significant digits with k, M, G, ... (times in the unit
that suits them); counts and seeds are exact integers.

Plain HTML and CSS with inline SVG; no script and nothing from the
network. Every link is relative, so the folder opens from file:// and
can be moved or copied as a whole. Regressions come first, then flaky
tests, then other failures.

The pages are made of html.py (style, links), numbers.py, svg.py
(plots) and figures.py (fault_bench's ratios and the headline figures).
"""
from __future__ import annotations

import pathlib
from typing import Optional

from .figures import RATIO_CAPTION, Figures, figures_table
from .history import (LEFT, ORDER, Classification, History, Run, Verdict,
                      tree_of)
from .html import esc, href, listing, page, write_file

HISTORY_RUNS = 40          # columns of a target page, points of its plots


def _run_line(run: Run) -> str:
    parts = [f"commit {esc((run.git_commit or 'unknown')[:12])}",
             f"series {esc(run.series_hash or 'unknown')}",
             f"started {esc(run.started)}"]
    if run.wall_seconds is not None:
        parts.append(f"wall {run.wall_seconds:.1f} s")
    return f"<p class=\"meta\">{', '.join(parts)}</p>"


def _compared(cls: Classification) -> str:
    if cls.baseline is not None:
        return (f"<p class=\"meta\">compared with baseline run "
                f"<b>{esc(cls.baseline.key)}</b></p>")
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
            what = (f"failed; passed in {esc(v.ref_run)}" if cat ==
                    "regression" else "failed, then passed when rerun")
            logs = f" <a href=\"{link}\">log</a>" if link else ""
            rl = href(cls.run.results_path, v.rerun_log, page_dir)
            if rl:
                logs += f" <a href=\"{rl}\">rerun log</a>"
            tgt = f"{esc(v.target)} " if with_target else ""
            out.append(f"<li class=\"{cat}\">{tgt}{esc(v.item)}: {what}"
                       f"{logs}</li>")
        out.append("</ul></section>")
    return out


def _cell(cls_name: str, text: str, link: Optional[str],
          title: str = "", extra: str = "") -> str:
    inner = f"<a href=\"{link}\">{esc(text)}</a>" if link else esc(text)
    t = f" title=\"{esc(title)}\"" if title else ""
    return f"<td class=\"{cls_name}\"{t}>{inner}{extra}</td>"


def _verdict_cell(run: Run, v: Verdict, page_dir: pathlib.Path) -> str:
    label = {"regression": "REGRESSION", "fixed": "fixed",
             "xpassed": "XPASS", "xfailed": "known"}.get(v.category, v.status)
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
        name = esc(r.key) + (" (this run)" if r.id == current.id else "")
        item = f"<a href=\"{link}\">{name}</a>" if link else name
        out.append(f"<li>{item} <span class=\"meta\">{esc(r.started)}, "
                   f"commit {esc((r.git_commit or '?')[:12])}</span></li>")
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
        name = f"<a href=\"{link}\">{esc(t)}</a>" if link else esc(t)
        status = r["status"] or "not run"
        kind = {"failed": "failed", "not run": "skipped"}.get(status,
                                                              "passed")
        out.append(f"<tr data-target=\"{esc(t)}\"><th class=\"test\">"
                   f"{name}</th><td class=\"{kind}\">{esc(status)}</td>"
                   f"<td class=\"why\">{esc(r['why'])}</td></tr>")
    out.append("</tbody></table></section>")
    return out


def _label(target: str) -> str:
    return target.split("@", 1)[0]


def _trees(every: dict) -> list[str]:
    """The run's trees, in the order its targets came."""
    out: list[str] = []
    for t, r in every.items():
        if "@" in t and r["tree"] not in out:
            out.append(r["tree"])
    return out


def _tree_grid(run: Run, every: dict, cls: Classification,
               page_dir: pathlib.Path) -> list[str]:
    """Architectures (and variants) as rows, trees as columns: a cell per
    target with its status and counts, linking to its page."""
    trees = _trees(every)
    labels: list[str] = []
    for t in every:
        if "@" in t and _label(t) not in labels:
            labels.append(_label(t))
    out = ["<section id=\"trees\"><h2>Trees by architecture</h2>"
           "<table id=\"tree-grid\"><thead><tr><th>target</th>" +
           "".join(f"<th class=\"tree\" data-tree=\"{esc(tr)}\">"
                   f"{esc(tr)}</th>" for tr in trees) +
           "</tr></thead><tbody>"]
    for label in labels:
        cells = []
        for tr in trees:
            t = f"{label}@{tr}"
            r = every.get(t)
            if r is None:
                cells.append(_cell("none", "-", None))
                continue
            status = r["status"] or "not run"
            vs = cls.verdicts.get(t, [])
            n = {c: sum(1 for v in vs if v.status == c)
                 for c in ("passed", "failed", "skipped")}
            kind = {"failed": "failed", "passed": "passed"}.get(
                status, "skipped")
            link = href(run.results_path, f"{t}.html", page_dir) \
                if r["role"] != LEFT else None
            cells.append(_cell(kind, status, link, r["why"] or t,
                               f"<br><span class=\"meta\">{n['passed']} "
                               f"passed, {n['failed']} failed, "
                               f"{n['skipped']} skipped</span>"
                               if vs else ""))
        out.append(f"<tr data-label=\"{esc(label)}\"><th class=\"test\">"
                   f"{esc(label)}</th>{''.join(cells)}</tr>")
    out.append("</tbody></table></section>")
    return out


def _across_trees(hist: History, cls: Classification, target: str,
                  page_dir: pathlib.Path) -> list[str]:
    """The target's tests on each tree of the run: a column per tree."""
    run = cls.run
    every = hist.targets(run.id)
    label = _label(target)
    same = [t for t, r in every.items()
            if _label(t) == label and r["role"] != LEFT]
    if len(same) < 2:
        return []
    by = {t: {v.test: v for v in cls.verdicts.get(t, [])} for t in same}
    tests: list[str] = []
    for t in same:
        tests += [x for x in by[t] if x not in tests]
    out = ["<section id=\"across-trees\"><h2>This architecture on each "
           "tree of the run</h2><table id=\"trees-table\"><thead><tr>"
           "<th>test</th>"]
    for t in same:
        link = href(run.results_path, f"{t}.html", page_dir)
        tr = esc(every[t]["tree"] or tree_of(t))
        name = f"<a href=\"{link}\">{tr}</a>" if link else tr
        out.append(f"<th class=\"tree\" data-tree=\"{tr}\">{name}</th>")
    out.append("</tr></thead><tbody>")
    for test in tests:
        cells = [_verdict_cell(run, by[t][test], page_dir) if test in by[t]
                 else _cell("none", "-", None) for t in same]
        out.append(f"<tr data-test=\"{esc(test)}\"><th class=\"test\">"
                   f"{esc(test)}</th>{''.join(cells)}</tr>")
    out.append("</tbody></table></section>")
    return out


def matrix_page(hist: History, cls: Classification,
                page_dir: pathlib.Path, runs_list: bool = True) -> str:
    run = cls.run
    every = hist.targets(run.id)
    # a column per target with results: not those the run left out
    targets = {t: r for t, r in every.items() if r["role"] != LEFT}
    per_target = {t: cls.verdicts.get(t, []) for t in targets}
    body = [f"<h1>nopfn matrix: run {esc(run.key)}</h1>", _run_line(run),
            _compared(cls)]
    allv = [v for vs in per_target.values() for v in vs]
    body += _verdict_list(cls, allv, page_dir, with_target=True)
    body += _tree_grid(run, every, cls, page_dir)
    body += figures_table(hist, run, list(targets), page_dir)
    head = ["<th>test</th>"]
    for t, row in targets.items():
        vs = per_target[t]
        counts = {c: sum(1 for v in vs if v.status == c)
                  for c in ("passed", "failed", "flaky", "skipped",
                            "xfailed", "xpassed")}
        n = ", ".join(f"{k} {c}" for k, c in counts.items() if k == "passed"
                      or k == "failed" or c)
        link = href(run.results_path, f"{t}.html", page_dir)
        name = f"<a href=\"{link}\">{esc(t)}</a>" if link else esc(t)
        boot = (f"<br>boot {row['boot_seconds']:.2f} s"
                if row["boot_seconds"] is not None else "")
        head.append(f"<th class=\"target\" data-target=\"{esc(t)}\">{name}"
                    f"<br>{esc(row['status'])}<br><span class=\"meta\">{n}"
                    f"<br>{esc(row['kernel_release'] or '')}{boot}"
                    "</span></th>")
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
        body.append(f"<tr class=\"{_row_class(row)}\" data-test=\"{esc(test)}"
                    f"\"><th class=\"test\">{esc(test)}</th>{''.join(cells)}"
                    "</tr>")
    body.append("</tbody></table>")
    body += _not_booted(run, every, page_dir)
    if runs_list:
        body += _runs_list(hist, run, page_dir)
    return page(f"nopfn matrix {run.key}", body)


def target_page(hist: History, cls: Classification, target: str,
                page_dir: pathlib.Path) -> str:
    run = cls.run
    runs = hist.runs(target, upto=run.id, limit=HISTORY_RUNS)
    row = hist.targets(run.id).get(target)
    vs = cls.verdicts.get(target, [])
    link = href(run.results_path, "index.html", page_dir)
    body = [f"<h1>{esc(target)}: run {esc(run.key)}</h1>",
            f"<p><a href=\"{link}\">the whole matrix of this run</a></p>"
            if link else "", _run_line(run), _compared(cls)]
    if row is not None:
        variant = f", variant {esc(row['variant'])}" if row["variant"] else ""
        if row["role"] == "check":
            body.append("<p class=\"checked\" id=\"not-booted\">"
                        "<b>Compile-checked only</b> in this run (its "
                        "kernel configured and the series' files compiled;"
                        " not built, not booted)"
                        f"{': ' + esc(row['why']) if row['why'] else ''}"
                        "</p>")
        elif row["why"]:
            body.append("<p class=\"checked\" id=\"not-booted\">"
                        f"<b>Not booted</b> in this run: {esc(row['why'])}"
                        "</p>")
        body.append(f"<p class=\"meta\">tree "
                    f"<b>{esc(row['tree'] or tree_of(target))}</b>; status "
                    f"{esc(row['status'])}; kernel "
                    f"{esc(row['kernel_release'] or '?')}, config "
                    f"{esc(row['config_sha'] or '?')}{variant}</p>")
    body += _verdict_list(cls, vs, page_dir, with_target=False)
    figs = Figures(hist, target, runs)
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
    head = ["<th>test</th>", f"<th>{esc(run.key)}<br>(this run)</th>"]
    for r in older:
        rl = href(r.results_path, f"{target}.html", page_dir)
        name = f"<a href=\"{rl}\">{esc(r.key)}</a>" if rl else esc(r.key)
        head.append(f"<th>{name}<br><span class=\"meta\">"
                    f"{esc((r.git_commit or '?')[:8])}</span></th>")
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
                    f"{esc(v.test)}\"><th class=\"test\">{esc(v.test)}</th>"
                    f"{''.join(cells)}</tr>")
    body.append("</tbody></table>")
    body += _across_trees(hist, cls, target, page_dir)
    return page(f"{target} {run.key}", body)


def _paged(hist: History, run: Run) -> list[str]:
    """The targets of the run that have a page: not those it left out."""
    return [t for t, r in hist.targets(run.id).items() if r["role"] != LEFT]


def write(hist: History, cls: Classification,
          root: Optional[pathlib.Path] = None) -> list[pathlib.Path]:
    """Write the run's pages (and the root index); returns their paths."""
    d = cls.run.path
    with listing([d / "index.html"] + [d / f"{t}.html" for t in
                                       _paged(hist, cls.run)]):
        return _write_pages(hist, cls, root)


def _write_pages(hist: History, cls: Classification,
                 root: Optional[pathlib.Path]) -> list[pathlib.Path]:
    d = cls.run.path
    pages = []
    for target in _paged(hist, cls.run):
        p = d / f"{target}.html"
        write_file(p, target_page(hist, cls, target, d))
        pages.append(p)
    p = d / "index.html"
    write_file(p, matrix_page(hist, cls, d))
    pages.insert(0, p)
    if root is not None and root.resolve() != d.resolve():
        p = root / "index.html"
        write_file(p, matrix_page(hist, cls, root))
        pages.append(p)
    return pages
