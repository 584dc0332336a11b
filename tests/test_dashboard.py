"""The dashboard as a person sees it, in headless Chromium.

Two runs go through the harness's own results code (results.write: the
JSON records, the history database, the classification and the pages),
with one test on x86_64 passing in the first and failing in the second
(a regression) and one failing then passing on its rerun (flaky). The
results folder is then moved elsewhere, and the pages are opened from
there with file:// and checked on screen: the regression rows first and
drawn red, the flaky one amber, passes green, every link pointing at a
file that exists (the regression's log link, followed, shows the
failure), and the plots drawn.
"""
import pathlib
import re
import shutil
import types

import pytest

from headless import Browser, file_url, url_path
from matrix import archspec, results
from matrix.plugin import ArchState

ITEMS = ["test_boot[{t}]", "test_case[{t}-prog-works]",
         "test_case[{t}-prog-wobbles]", "test_case[{t}-prog-breaks]",
         "test_program[{t}-prog]", "test_kernel_log[{t}]"]
REGRESSIONS = ["test_case[prog-breaks]", "test_program[prog]"]
FLAKY = "test_case[prog-wobbles]"
METRIC = "ratio.nopfn_vs_vmf.dense"


def one_run(root: pathlib.Path, name: str, broken: bool) -> dict:
    """A results folder written by results.write, as a run leaves it."""
    arches = archspec.load_all()
    d = root / name
    state = {}
    for t in ("x86_64", "arm64"):
        st = ArchState(arches[t])
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
        bad = broken and t == "x86_64"
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
            for item in ("test_case[x86_64-prog-breaks]",
                         "test_program[x86_64-prog]"):
                st.tests[item].update(status="failed",
                                      rerun_log="x86_64/boot1/"
                                      "prog.rerun.ktap")
            st.tests["test_case[x86_64-prog-wobbles]"].update(
                status="flaky", rerun_log="x86_64/boot1/prog.rerun.ktap")
        st.metrics = {"bench": {METRIC: {"value": 2.5 if broken else 2.0,
                                         "unit": "x"}}}
        state[t] = st
    m = types.SimpleNamespace(state=state, config=None,
                              results=results.ResultsDir(d))
    results.write(m, wall=6.0)
    return m.summary


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
    assert heads == ["test", "x86_64", "arm64"]
    rows = check_rows(b, "#matrix")
    for r in rows:          # arm64 did not break: green everywhere
        assert r["cells"][1]["text"] == "passed"
        assert is_green(rgb(r["cells"][1]["bg"]))
    # the regression list is above the table and names both
    pos = b.eval("['regression', 'flaky', 'matrix'].map(id => "
                 "document.getElementById(id).getBoundingClientRect().top)")
    assert pos == sorted(pos), pos
    listed = b.eval("[...document.querySelectorAll('#regression li')]"
                    ".map(li => li.innerText)")
    assert len(listed) == 2
    assert any("test_case[x86_64-prog-breaks]" in t for t in listed)
    assert all(t.startswith("x86_64") for t in listed)
    links = check_links(b, pages.root)
    assert any(a["raw"] == "x86_64.html" for a in links)
    # following the regression's log shows the failure
    breaks = next(r for r in rows if r["test"] == "test_case[prog-breaks]")
    b.open(breaks["cells"][0]["href"])
    assert "not ok 3 breaks" in b.eval("document.body.innerText")


def test_target_page(pages):
    b = pages.b
    b.open(file_url(pages.run / "x86_64.html"))
    rows = check_rows(b, "#history")
    for r in rows:          # the column of the first run: all passed
        assert len(r["cells"]) == 2
        assert r["cells"][1]["text"] == "passed"
        assert is_green(rgb(r["cells"][1]["bg"]))
        assert "20260101-000000-1" in r["cells"][1]["href"]
    check_links(b, pages.root)
    plots = b.eval("""[...document.querySelectorAll('figure.plot')].map(f => {
      const s = f.querySelector('svg'), r = s.getBoundingClientRect();
      return {caption: f.querySelector('figcaption').innerText,
              x: r.left, y: r.top, w: r.width, h: r.height,
              points: s.querySelectorAll('circle').length,
              line: s.querySelector('polyline') !== null}; })""")
    captions = [p["caption"] for p in plots]
    assert any(c.startswith("kernel build") for c in captions), captions
    assert any(c.startswith("boot") for c in captions), captions
    assert any(METRIC in c for c in captions), captions
    shot = b.screenshot()
    for p in plots:
        assert p["w"] > 100 and p["h"] > 50 and p["points"] == 2 \
            and p["line"], p
        # the line is drawn: the plot's blue among its pixels
        box = shot.crop((int(p["x"]), int(p["y"]), int(p["x"] + p["w"]),
                         int(p["y"] + p["h"])))
        blue = sum(1 for px in box.getdata()
                   if px[2] > 150 and px[0] < 80 and px[1] < 140)
        assert blue > 20, (p["caption"], blue)


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
        "test_case[x86_64-prog-breaks]", "test_program[x86_64-prog]"]
    assert [r["test"] for r in s["flaky"]] == [
        "test_case[x86_64-prog-wobbles]"]
    lines = "\n".join(results.verdict_lines(s))
    assert "REGRESSIONS (2)" in lines and \
        "test_case[x86_64-prog-breaks]" in lines
