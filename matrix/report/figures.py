"""fault_bench's figures on the dashboard: its ratios and the bars they
are checked against, plotted per target across runs, and a run's
headline figures per target."""
from __future__ import annotations

import math
import pathlib
import re

from .history import History, Run, is_seed
from .html import esc, href
from .numbers import change_text, fmt, fmt_unit, metric_text
from .svg import Point, Ref, date_label, sparkline, svg_plot

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


class Figures:
    """A target's figures over its last runs, oldest first."""

    def __init__(self, hist: History, target: str, runs: list[Run]):
        old_first = list(reversed(runs))
        self.ids = [r.id for r in old_first]
        self.pos = {r.id: i for i, r in enumerate(old_first)}
        self.key = {r.id: r.key for r in old_first}
        self.n = len(old_first)
        self.dates = (date_label(old_first[0].started), date_label(
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
                f"<figure class=\"plot ratio\" data-metric=\"{esc(name)}\">"
                f"<figcaption><b>{esc(ratio_title(name))}</b>{bar}<br>"
                f"<code>{esc(name)}</code></figcaption>" +
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
            cells = [f"<td class=\"prog\">{esc(prog)}</td>",
                     f"<td class=\"name\"><code>{esc(name)}</code></td>",
                     f"<td class=\"num latest{cls}\" title=\""
                     f"{esc(self.key[have[-1]])}\">{esc(text(last))}</td>"]
            if prev is None:
                cells.append("<td class=\"num prev\"></td>"
                             "<td class=\"num change\"></td>")
            else:
                cells.append(f"<td class=\"num prev\" title=\""
                             f"{esc(self.key[have[-2]])}\">"
                             f"{esc(text(prev))}</td>")
                change = "" if seed else change_text(prev["value"],
                                                     last["value"])
                cells.append(f"<td class=\"num change\">{esc(change)}</td>")
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
                       f"data-metric=\"{esc(prog)}:{esc(name)}\">" +
                       "".join(cells) + "</tr>")
        return out


# The matrix page's figures of the run: (heading, program, metric).
SUMMARY = (("nopfn / vmf dense", BENCH, "ratio.nopfn_vs_vmf.dense"),
           ("eager / nopfn sparse", BENCH, "ratio.eager_vs_lazy.sparse"),
           ("stress ops", "mspec_stress", "stress.ops"),
           ("fuzz ops", "mmap_fuzz", "fuzz.ops"),
           ("fuzz seed", "mmap_fuzz", "fuzz.seed"),
           ("stress seed", "mspec_stress", "stress.seed"))


def figures_table(hist: History, run: Run, targets: list[str],
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
        head.append(f"<th>{esc(title)}{bar}</th>")
    out = ["<section id=\"figures\"><h2>Figures</h2>"
           "<table id=\"figures-table\" class=\"figures\"><thead><tr>" +
           "".join(head) + "</tr></thead><tbody>"]
    for t in targets:
        link = href(run.results_path, f"{t}.html", page_dir)
        name = f"<a href=\"{link}\">{esc(t)}</a>" if link else esc(t)
        cells = [f"<th class=\"test\">{name}</th>"]
        for _, prog, metric in SUMMARY:
            m = have[t].get((prog, metric))
            if m is None or m["value"] is None:
                cells.append("<td class=\"num\"></td>")
                continue
            text = esc(metric_text(metric, m["value"], m["exact"],
                                  m["unit"]))
            if is_bench_ratio(prog, metric):
                text = esc(fmt(m["value"]))
                lo = have[t].get((prog, metric + ".min"))
                hi = have[t].get((prog, metric + ".max"))
                if lo is not None and hi is not None:
                    text += (f" <span class=\"meta\">{esc(fmt(lo['value']))}"
                             f"\u2013{esc(fmt(hi['value']))}</span>")
            cls = "num seed" if is_seed(metric) else "num"
            cells.append(f"<td class=\"{cls}\" data-metric=\"{esc(metric)}\">"
                         f"{text}</td>")
        out.append(f"<tr data-target=\"{esc(t)}\">" + "".join(cells) +
                   "</tr>")
    out.append("</tbody></table></section>")
    return out
