"""The dashboard as a person sees it, in headless Chromium.

Two runs go through the harness's own results code (results.write: the
JSON records, the history database, the classification and the pages),
of x86_64 on two kernel trees (targets x86_64@6.1 and x86_64@6.12),
with one test on x86_64@6.1 passing in the first and failing in the second
(a regression) and one failing then passing on its rerun (flaky). The
results folder is then moved elsewhere, and the pages are opened from
there with file:// and checked on screen: the regression rows first and
drawn red, the flaky one amber, passes green, every link pointing at a
file that exists (the regression's log link, followed, shows the
failure), and the figures drawn: fault_bench's ratios each with its
min-max band, its bar and its newest value, the harness's times, the
other metrics in a table with the seed whole (as the harness gave it,
not as a double), and no label or cell spilling out of its box.
"""
import pathlib
import re
import shutil
import types

import pytest

from headless import Browser, file_url, url_path
from matrix.build.builder import Builder
from matrix.build.cache import Cache
from matrix.report import results
from matrix.session import ktap, plan
from matrix.session.matrix import Matrix, Options
from matrix.spec import arch as archspec
from matrix.spec import tree as treespec

ITEMS = ["test_boot[{t}]", "test_case[{t}-prog-works]",
         "test_case[{t}-prog-wobbles]", "test_case[{t}-prog-breaks]",
         "test_program[{t}-prog]", "test_kernel_log[{t}]"]
REGRESSIONS = ["test_case[prog-breaks]", "test_program[prog]"]
FLAKY = "test_case[prog-wobbles]"
METRIC = "ratio.nopfn_vs_vmf.dense"
SEED = 2194960933338486915      # no double is this: 2194960933338487040
OLD, NEW = "x86_64@6.1", "x86_64@6.12"     # the target that breaks, not


def program_output(broken: bool) -> list[str]:
    """What fault_bench and mmap_fuzz print, in the harness's format."""
    r = 2.5 if broken else 2.0
    return [f"# METRIC {METRIC} {r:.4f}", f"# METRIC {METRIC}.min 0.9000",
            f"# METRIC {METRIC}.max {2 * r:.4f}",
            "# METRIC ratio.eager_vs_lazy.sparse 12.5000",
            "# METRIC ratio.eager_vs_lazy.sparse.min 7.2000",
            "# METRIC ratio.eager_vs_lazy.sparse.max 45.2463",
            "# METRIC ratio.fault_vs_eager_page 1.8411",
            "# METRIC ratio.fault_vs_eager_page.min 1.0000",
            "# METRIC ratio.fault_vs_eager_page.max 28.1581",
            # the label the old plots cut to "415e+06"
            "# METRIC ns_per_mapping.nopfn.untouched 415123456.7338 ns",
            f"# METRIC ns_per_page.nopfn.dense {142153.5983 * r:.4f} ns",
            f"# METRIC fuzz.seed {SEED}", "# METRIC fuzz.ops 300 ops",
            "# METRIC fuzz.seconds 10.756 s"]


def one_run(root: pathlib.Path, name: str, broken: bool) -> dict:
    """A results folder written by results.write, as a run leaves it."""
    d = root / name
    trees = treespec.select("6.1,6.12")
    targets = archspec.select("x86_64", variant="none", trees=trees)
    m = Matrix(Options(arch="x86_64", variant="none", tree="6.1,6.12",
                       results=str(d)),
               Builder(Cache(root / "cache"), trees=trees),
               plan.Plan(targets, [], {}))
    for t in (OLD, NEW):
        st = m.state[t]
        st.artifacts = types.SimpleNamespace(
            kernel_meta={"release": "6.1.192-nopfn", "config_sha": "c0ffee",
                         "build_seconds": 300.0 + (60 if broken else 0),
                         "key": "k", "cached": broken},
            seconds={}, errors={})
        st.boots, st.boot_times = 1, [0.9 if broken else 0.7]
        st.guest_seconds = 4.0
        boot = d / t / "boot1"
        boot.mkdir(parents=True)
        (boot / "console.log").write_text(f"{name} {t} console\n")
        bad = broken and t == OLD
        (boot / "prog.ktap").write_text(
            "KTAP version 1\n1..3\nok 1 works\n"
            f"{'not ok' if bad else 'ok'} 2 wobbles\n"
            f"{'not ok' if bad else 'ok'} 3 breaks\n")
        st.tests = {}
        for item in ITEMS:
            item = item.format(t=t)
            log = "console.log" if "prog" not in item else "prog.ktap"
            st.tests[item] = {"status": "passed", "duration": 0.01,
                              "log": f"{t}/boot1/{log}"}
        if bad:
            (boot / "prog.rerun.ktap").write_text(
                "KTAP version 1\n1..3\nok 1 works\nok 2 wobbles\n"
                "not ok 3 breaks\n")
            for item in (f"test_case[{OLD}-prog-breaks]",
                         f"test_program[{OLD}-prog]"):
                st.tests[item].update(status="failed",
                                      rerun_log=f"{OLD}/boot1/"
                                      "prog.rerun.ktap")
            st.tests[f"test_case[{OLD}-prog-wobbles]"].update(
                status="flaky", rerun_log=f"{OLD}/boot1/prog.rerun.ktap")
        figures = ktap.metrics(program_output(broken))
        st.metrics = {"fault_bench": {k: v for k, v in figures.items()
                                      if not k.startswith("fuzz.")},
                      "mmap_fuzz": {k: v for k, v in figures.items()
                                    if k.startswith("fuzz.")}}
        st.programs = {"mmap_fuzz": {"args": f"--seed {SEED}",
                                     "seed": SEED}}
    return results.write(m, wall=6.0)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    made = tmp_path_factory.mktemp("made") / "results"
    first = one_run(made, "20260101-000000-1", broken=False)
    second = one_run(made, "20260102-000000-2", broken=True)
    assert not first["regressions"]
    # moved: the pages must not depend on where they were written
    moved = tmp_path_factory.mktemp("moved") / "results"
    shutil.copytree(made, moved)
    with Browser() as b:
        yield types.SimpleNamespace(root=moved, b=b, summary=second,
                                    run=moved / "20260102-000000-2")


ROWS_JS = """(() => [...document.querySelectorAll('%s tbody tr')].map(tr => ({
  test: tr.dataset.test, top: tr.getBoundingClientRect().top,
  cells: [...tr.querySelectorAll('td')].map(td => {
    const r = td.getBoundingClientRect(), a = td.querySelector('a');
    const hit = document.elementFromPoint(r.left + r.width / 2,
                                          r.top + r.height / 2);
    return {cls: td.className, text: td.innerText.trim(),
            bg: getComputedStyle(td).backgroundColor,
            x: r.left, y: r.top, w: r.width, h: r.height,
            href: a ? a.href : null,
            visible: hit !== null && hit.closest('td') === td};
  })})))()"""

LINKS_JS = """[...document.querySelectorAll('a')].map(a => ({
  raw: a.getAttribute('href'), url: a.href, text: a.innerText}))"""


def rgb(css: str) -> tuple:
    return tuple(int(v) for v in re.findall(r"\d+", css)[:3])


def is_red(c) -> bool:
    return c[0] >= 150 and c[1] <= 90 and c[2] <= 90


def is_amber(c) -> bool:
    return c[0] >= 200 and 130 <= c[1] <= 215 and c[2] <= 90


def is_green(c) -> bool:
    return c[1] >= 150 and c[1] > c[0] + 20 and c[1] > c[2] + 20


def check_rows(b, table: str, first_col: int = 0) -> list:
    """Rows in the order they are drawn; colours computed and drawn."""
    rows = b.eval(ROWS_JS % table)
    assert rows, f"{table}: no rows on the page"
    tops = [r["top"] for r in rows]
    assert tops == sorted(tops), "rows are not drawn in document order"
    shot = b.screenshot()
    for r in rows:
        for c in r["cells"]:
            assert c["visible"], f"{r['test']}: a cell is covered or off page"
            assert c["w"] > 0 and c["h"] > 0
            # a point in the cell's left padding, as drawn
            drawn = shot.getpixel((int(c["x"]) + 3, int(c["y"] + c["h"] / 2)))
            css = rgb(c["bg"])
            assert max(abs(p - q) for p, q in zip(drawn, css)) <= 8, (
                r["test"], c["cls"], drawn, css)
    got = [r["test"] for r in rows]
    assert sorted(got[:2]) == sorted(REGRESSIONS), got
    assert got[2] == FLAKY, got
    for r in rows[:2]:
        c = r["cells"][first_col]
        # the word, and a link to the rerun's log after it
        assert c["text"] == "REGRESSION rerun" and is_red(rgb(c["bg"])), c
    c = rows[2]["cells"][first_col]
    assert c["text"] == "flaky rerun" and is_amber(rgb(c["bg"])), c
    for r in rows[3:]:
        c = r["cells"][first_col]
        assert c["text"] == "passed" and is_green(rgb(c["bg"])), (r, c)
    return rows


def check_links(b, root: pathlib.Path) -> list:
    links = b.eval(LINKS_JS)
    assert links
    for a in links:
        assert not a["raw"].startswith(("/", "file:", "http")), a
        p = url_path(a["url"])
        assert p.is_file(), f"link {a['raw']} ({a['text']}): no {p}"
        assert root in p.parents, f"link {a['raw']} leaves {root}"
    return links


def test_matrix_page(pages):
    b = pages.b
    b.open(file_url(pages.run / "index.html"))
    heads = b.eval("[...document.querySelectorAll('#matrix thead th')]"
                   ".map(th => th.innerText.split('\\n')[0])")
    assert heads == ["test", OLD, NEW]
    rows = check_rows(b, "#matrix")
    for r in rows:          # 6.12 did not break: green everywhere
        assert r["cells"][1]["text"] == "passed"
        assert is_green(rgb(r["cells"][1]["bg"]))
    # the regression list is above the table and names both
    pos = b.eval("['regression', 'flaky', 'matrix'].map(id => "
                 "document.getElementById(id).getBoundingClientRect().top)")
    assert pos == sorted(pos), pos
    listed = b.eval("[...document.querySelectorAll('#regression li')]"
                    ".map(li => li.innerText)")
    assert len(listed) == 2
    assert any(f"test_case[{OLD}-prog-breaks]" in t for t in listed)
    assert all(t.startswith(OLD) for t in listed)
    links = check_links(b, pages.root)
    assert any(a["raw"] == f"{OLD}.html" for a in links)
    # trees by architecture: one row, x86_64, a column per tree
    grid = b.eval("[...document.querySelectorAll('#tree-grid tr')].map("
                  "tr => [...tr.children].map(c => [c.innerText.split("
                  "'\\n')[0], c.className, (c.querySelector('a') || "
                  "{}).href || null]))")
    assert [c[0] for c in grid[0]] == ["target", "6.1", "6.12"]
    (row,) = grid[1:]
    assert [c[:2] for c in row] == [["x86_64", "test"],
                                    ["failed", "failed"],
                                    ["passed", "passed"]], row
    assert row[1][2].endswith(f"/{OLD}.html")
    assert row[2][2].endswith(f"/{NEW}.html")
    # this run's headline figures per target, above the tests
    figs = b.eval(FIGURES_JS)
    assert [f["target"] for f in figs] == [OLD, NEW]
    for f in figs:
        assert f["href"].endswith(f"/20260102-000000-2/{f['target']}.html")
        assert f["cells"] == ["2.5 0.9\u20135", "12.5 7.2\u201345.2", "",
                              "300 ops", str(SEED), ""], f
    heads = b.eval("[...document.querySelectorAll('#figures-table th')]"
                   ".map(th => th.innerText.replace(/\\n/g, ' '))")
    assert heads[:3] == ["target", "nopfn / vmf dense bar \u2264 1.05",
                         "eager / nopfn sparse bar \u2265 32"], heads
    assert "fuzz seed" in heads
    assert pos[-1] > b.eval("document.getElementById('figures')"
                            ".getBoundingClientRect().top")
    assert not b.eval(OVERFLOW_JS), b.eval(OVERFLOW_JS)
    # following the regression's log shows the failure
    breaks = next(r for r in rows if r["test"] == "test_case[prog-breaks]")
    b.open(breaks["cells"][0]["href"])
    assert "not ok 3 breaks" in b.eval("document.body.innerText")


def test_target_page(pages):
    b = pages.b
    b.open(file_url(pages.run / f"{OLD}.html"))
    assert "tree 6.1;" in b.eval("document.body.innerText")
    rows = check_rows(b, "#history")
    for r in rows:          # the column of the first run: all passed
        assert len(r["cells"]) == 2
        assert r["cells"][1]["text"] == "passed"
        assert is_green(rgb(r["cells"][1]["bg"]))
        assert "20260101-000000-1" in r["cells"][1]["href"]
    check_links(b, pages.root)
    assert not b.eval(OVERFLOW_JS), b.eval(OVERFLOW_JS)
    # the same architecture on the run's other tree: a column each
    trees = b.eval("[...document.querySelectorAll('#trees-table thead th')]"
                   ".map(th => th.innerText)")
    assert trees == ["test", "6.1", "6.12"]
    across = {r["test"]: [c["text"] for c in r["cells"]]
              for r in b.eval(ROWS_JS % "#trees-table")}
    assert across["test_case[prog-breaks]"] == ["REGRESSION rerun",
                                                "passed"]
    assert across["test_boot"] == ["passed", "passed"]
    plots = b.eval(PLOTS_JS)
    metrics = [p["metric"] for p in plots]
    # the ratios first, those with a bar first; then the harness's times
    assert metrics == [METRIC, "ratio.eager_vs_lazy.sparse",
                       "ratio.fault_vs_eager_page", "build_seconds",
                       "boot_seconds", "guest_seconds"], metrics
    assert plots[0]["caption"].startswith("nopfn / vmf, dense"), plots[0]
    assert "bar \u2264 1.05" in plots[0]["caption"]
    assert plots[1]["caption"].startswith("eager / nopfn, sparse")
    assert b.eval("document.querySelector('#ratios').getBoundingClientRect()"
                  ".top < document.querySelector('#harness')"
                  ".getBoundingClientRect().top")
    caption = b.eval("document.querySelector('#ratios p.caption')"
                     ".innerText")
    assert "TCG" in caption and "only ratios" in caption
    shot = b.screenshot()

    def pixels(box, test):
        crop = shot.crop((int(box["x"]), int(box["y"]),
                          int(box["x"] + box["w"]) + 1,
                          int(box["y"] + box["h"]) + 1))
        return sum(1 for px in crop.getdata() if test(px))

    for p in plots:
        assert p["w"] > 300 and p["h"] > 100 and p["points"] == 2 \
            and p["line"], p
        # the line is drawn: the plot's blue among its pixels
        blue = pixels(p, lambda px: px[2] > 150 and px[0] < 80
                      and px[1] < 140)
        assert blue > 20, (p["metric"], blue)
        # the newest value, right of the plot area
        assert p["latest"]["x"] >= p["area"]["x"] + p["area"]["w"], p
    latest = {p["metric"]: p["latest"]["text"] for p in plots}
    assert latest[METRIC] == "2.5" and latest["build_seconds"] == "360 s"
    for p in plots[:3]:
        # the band: drawn, light blue, around the line
        band = p["band"]
        assert band and band["h"] > 10 and band["w"] > 100, p
        light = pixels(band, lambda px: 170 <= px[0] <= 205 and
                       205 <= px[1] <= 235 and px[2] >= 235)
        assert light > band["w"] * band["h"] / 8, (p["metric"], light)
        assert p["spread"], p
    for p in plots[3:]:
        assert p["band"] is None and not p["refs"], p
    # the bars, dashed and red across the plot, where fault_bench has them
    # (the sparse bar as written: no premium-divided line beside it)
    assert [len(p["refs"]) for p in plots[:3]] == [1, 1, 0]
    for p in plots[:2]:
        ref = p["refs"][0]
        assert ref["dash"] and ref["w"] == pytest.approx(p["area"]["w"], 1)
        red = pixels(dict(ref, y=ref["y"] - 1, h=2),
                     lambda px: px[0] >= 150 and px[1] <= 90
                     and px[2] <= 90)
        assert red > ref["w"] * 0.3, (p["metric"], red)
    bar_y = plots[0]["refs"][0]["y"]
    assert plots[0]["ys"][-1] < bar_y < plots[0]["ys"][0] + 60  # 2.5 > 1.05

    # every other metric in the table, the seed whole
    rows = {r["metric"]: r for r in b.eval(METRICS_JS)}
    assert list(rows) == ["fault_bench:ns_per_mapping.nopfn.untouched",
                          "fault_bench:ns_per_page.nopfn.dense",
                          "mmap_fuzz:fuzz.seed", "mmap_fuzz:fuzz.ops",
                          "mmap_fuzz:fuzz.seconds"], list(rows)
    seed = rows["mmap_fuzz:fuzz.seed"]
    assert seed["cells"][2:5] == [str(SEED), str(SEED), ""], seed
    assert not seed["spark"]
    assert rows["fault_bench:ns_per_mapping.nopfn.untouched"]["cells"][
        2:5] == ["415 ms", "415 ms", "="]
    assert rows["fault_bench:ns_per_page.nopfn.dense"]["cells"][2:5] == [
        "355 \u00b5s", "284 \u00b5s", "+25%"]
    assert rows["mmap_fuzz:fuzz.ops"]["cells"][2] == "300 ops"
    for name, r in rows.items():
        if name != "mmap_fuzz:fuzz.seed":
            assert r["spark"] == 2, r


FIGURES_JS = """[...document.querySelectorAll('#figures-table tbody tr')]
  .map(tr => ({target: tr.dataset.target,
               href: tr.querySelector('a') ? tr.querySelector('a').href : '',
               cells: [...tr.querySelectorAll('td')].map(
                 td => td.innerText.trim())}))"""

PLOTS_JS = """[...document.querySelectorAll('figure.plot')].map(f => {
  const s = f.querySelector('svg'), box = e => {
    if (!e) return null;
    const r = e.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height};
  }, latest = s.querySelector('text.latest');
  return Object.assign(box(s), {
    metric: f.dataset.metric, caption: f.querySelector('figcaption')
      .innerText.replace(/\\n/g, ' '),
    points: s.querySelectorAll('circle').length,
    ys: [...s.querySelectorAll('circle')].map(
      c => c.getBoundingClientRect().top + 2.5),
    line: s.querySelector('polyline.median') !== null,
    area: box(s.querySelector('rect')), band: box(s.querySelector('.band')),
    refs: [...s.querySelectorAll('.ref')].map(r => Object.assign(box(r),
      {dash: r.getAttribute('stroke-dasharray')})),
    latest: Object.assign(box(latest), {text: latest.textContent}),
    spread: s.querySelector('text.latest-spread') !== null}); })"""

METRICS_JS = """[...document.querySelectorAll('#metrics tbody tr')]
  .map(tr => ({
  metric: tr.dataset.metric,
  cells: [...tr.querySelectorAll('td')].map(td => td.innerText.trim()),
  spark: tr.querySelectorAll('td.spark svg circle, td.spark svg polyline')
    .length}))"""

# Anything drawn outside its box: an SVG label past its SVG, an SVG past
# its figure or cell, text wider or taller than the box that holds it, a
# figures section wider than the page.
OVERFLOW_JS = """(() => {
  const bad = [], r = e => e.getBoundingClientRect(),
    inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5
      && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  for (const svg of document.querySelectorAll('svg')) {
    for (const t of svg.querySelectorAll('text'))
      if (!inside(r(t), r(svg))) bad.push(['label', t.textContent]);
    const holder = svg.parentElement.closest('figure, td');
    if (holder && !inside(r(svg), r(holder)))
      bad.push(['svg', svg.getAttribute('aria-label')]);
  }
  for (const e of document.querySelectorAll(
      'figure, figcaption, td, th, p.caption, section'))
    if (e.scrollWidth > e.clientWidth + 1 ||
        e.scrollHeight > e.clientHeight + 1)
      bad.push(['box', e.tagName, e.className, e.innerText.slice(0, 40),
                e.scrollWidth, e.clientWidth]);
  for (const e of document.querySelectorAll(
      '#ratios, #harness, #other, #figures'))
    if (r(e).right > document.documentElement.clientWidth)
      bad.push(['page', e.id]);
  return bad;
})()"""


def test_root_index_is_the_latest_run(pages):
    b = pages.b
    b.open(file_url(pages.root / "index.html"))
    assert "20260102-000000-2" in b.eval("document.querySelector('h1')"
                                         ".innerText")
    check_rows(b, "#matrix")
    links = check_links(b, pages.root)
    runs = [a["raw"] for a in links if a["raw"].endswith("/index.html")]
    assert runs == ["20260102-000000-2/index.html",
                    "20260101-000000-1/index.html"]


def test_summary_names_the_regression(pages):
    s = pages.summary
    assert sorted(r["test"] for r in s["regressions"]) == [
        f"test_case[{OLD}-prog-breaks]", f"test_program[{OLD}-prog]"]
    assert [r["test"] for r in s["flaky"]] == [
        f"test_case[{OLD}-prog-wobbles]"]
    assert {t: a["tree"] for t, a in s["arches"].items()} == {
        OLD: "6.1", NEW: "6.12"}
    assert sorted(s["trees"]) == ["6.1", "6.12"]
    lines = "\n".join(results.verdict_lines(s))
    assert "REGRESSIONS (2)" in lines and \
        f"test_case[{OLD}-prog-breaks]" in lines
