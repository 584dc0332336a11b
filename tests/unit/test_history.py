"""History database, regression classification and the pages' HTML."""
import html.parser
import math
import pathlib
import re

import pytest

from matrix.report import dashboard, figures, history, numbers, svg
from matrix.report.html import href


def rec(statuses: dict, target: str = "x86_64", metrics=None, **kw) -> dict:
    r = {"arch": target, "status": "passed",
         "kernel": {"release": "6.1.192-nopfn", "config_sha": "abc",
                    "build_seconds": 100.0},
         "boot_seconds": [0.8], "guest_seconds": 3.0,
         "tests": {k.format(t=target): {"status": v, "duration": 0.1}
                   for k, v in statuses.items()}}
    if metrics is not None:
        r["metrics"] = metrics
    r.update(kw)
    return r


def add(h, tmp_path, key, *recs):
    d = tmp_path / key
    d.mkdir(exist_ok=True)
    return h.record(key, d, {r["arch"]: r for r in recs}, commit="c" + key,
                    series="s")


@pytest.fixture
def h(tmp_path):
    with history.History(tmp_path / "history.sqlite") as hist:
        yield hist


def cats(cls, target="x86_64"):
    return [(v.test, v.category) for v in cls.verdicts[target]]


def test_test_key_leaves_the_target_out():
    k = history.test_key
    assert k("test_case[x86_64-prog-a.b]", "x86_64") == "test_case[prog-a.b]"
    assert k("test_boot[x86_64-debug]", "x86_64-debug") == "test_boot"
    assert k("test_case[x86_64-debug-user/t-c]", "x86_64-debug") == \
        "test_case[user/t-c]"
    # a plain x86_64 item keeps a program that happens to say debug
    assert k("test_case[x86_64-debug-c]", "x86_64") == "test_case[debug-c]"
    assert k("test_style", "x86_64") == "test_style"


def test_pass_then_fail_is_a_regression_listed_first(h, tmp_path):
    a = {"test_boot[{t}]": "passed", "test_case[{t}-p-a]": "passed",
         "test_case[{t}-p-b]": "passed"}
    add(h, tmp_path, "r1", rec(a))
    r2 = add(h, tmp_path, "r2", rec(dict(a, **{"test_case[{t}-p-b]":
                                               "failed"})))
    cls = h.classify(r2.id)
    assert cats(cls)[0] == ("test_case[p-b]", "regression")
    assert [v.item for v in cls.regressions] == ["test_case[x86_64-p-b]"]
    assert cls.regressions[0].ref_run == "r1"
    assert {c for _, c in cats(cls)[1:]} == {"passed"}


def test_first_run_and_still_failing_are_not_regressions(h, tmp_path):
    r1 = add(h, tmp_path, "r1", rec({"test_case[{t}-p-a]": "failed"}))
    assert cats(h.classify(r1.id)) == [("test_case[p-a]", "failed")]
    r2 = add(h, tmp_path, "r2", rec({"test_case[{t}-p-a]": "failed"}))
    assert cats(h.classify(r2.id)) == [("test_case[p-a]", "failed")]
    r3 = add(h, tmp_path, "r3", rec({"test_case[{t}-p-a]": "passed"}))
    assert cats(h.classify(r3.id)) == [("test_case[p-a]", "fixed")]


def test_reference_skips_runs_without_the_test_and_skips(h, tmp_path):
    add(h, tmp_path, "r1", rec({"test_case[{t}-p-a]": "passed"}))
    add(h, tmp_path, "r2", rec({"test_boot[{t}]": "passed"}))      # -k
    add(h, tmp_path, "r3", rec({"test_case[{t}-p-a]": "skipped"}))
    r4 = add(h, tmp_path, "r4", rec({"test_case[{t}-p-a]": "failed"}))
    (v,) = h.classify(r4.id).verdicts["x86_64"]
    assert (v.category, v.ref_run, v.ref_status) == ("regression", "r1",
                                                      "passed")


def test_targets_are_compared_with_themselves(h, tmp_path):
    add(h, tmp_path, "r1", rec({"test_boot[{t}]": "passed"}),
        rec({"test_boot[{t}]": "failed"}, target="arm64"))
    r2 = add(h, tmp_path, "r2", rec({"test_boot[{t}]": "failed"},
                                    target="arm64"))
    assert cats(h.classify(r2.id), "arm64") == [("test_boot", "failed")]


def test_flaky_is_shown_and_flaky_then_failing_regresses(h, tmp_path):
    add(h, tmp_path, "r1", rec({"test_case[{t}-p-a]": "passed",
                                "test_case[{t}-p-b]": "passed"}))
    r2 = add(h, tmp_path, "r2", rec({"test_case[{t}-p-a]": "passed",
                                     "test_case[{t}-p-b]": "flaky"}))
    cls = h.classify(r2.id)
    assert cats(cls)[0] == ("test_case[p-b]", "flaky")
    assert [v.item for v in cls.flaky] == ["test_case[x86_64-p-b]"]
    assert not cls.regressions
    r3 = add(h, tmp_path, "r3", rec({"test_case[{t}-p-a]": "passed",
                                     "test_case[{t}-p-b]": "failed"}))
    assert cats(h.classify(r3.id))[0] == ("test_case[p-b]", "regression")


def test_named_baseline(h, tmp_path):
    r1 = add(h, tmp_path, "r1", rec({"test_case[{t}-p-a]": "failed"}))
    add(h, tmp_path, "r2", rec({"test_case[{t}-p-a]": "passed"}))
    r3 = add(h, tmp_path, "r3", rec({"test_case[{t}-p-a]": "failed"}))
    assert cats(h.classify(r3.id)) == [("test_case[p-a]", "regression")]
    base = h.find("r1")
    assert base.id == r1.id
    assert h.find(str(r1.id)).key == "r1"
    assert h.find(str(tmp_path / "r1") + "/").key == "r1"
    assert h.find("nosuch") is None
    cls = h.classify(r3.id, base)
    assert cats(cls) == [("test_case[p-a]", "failed")]
    assert cls.baseline.key == "r1"


def test_a_reused_results_folder_replaces_its_run(h, tmp_path):
    add(h, tmp_path, "r1", rec({"test_boot[{t}]": "passed"}))
    r = add(h, tmp_path, "r1", rec({"test_boot[{t}]": "failed"}))
    assert [x.key for x in h.runs()] == ["r1"]
    assert [v.status for v in h.classify(r.id).verdicts["x86_64"]] == \
        ["failed"]
    n = h.db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert n == 1


def test_run_fields_and_metrics(h, tmp_path):
    m = {"bench": {"ratio.x": {"value": 1.5, "unit": "x"},
                   "bad": {"value": "n/a"}}}
    r = add(h, tmp_path, "r1",
            rec({}, target="x86_64-debug", metrics=m, base="x86_64",
                variant="debug"),
            rec({}, target="arm64"))         # no "metrics" at all
    assert (r.git_commit, r.series_hash, r.path) == ("cr1", "s",
                                                      tmp_path / "r1")
    t = h.targets(r.id)
    assert (t["x86_64-debug"]["arch"], t["x86_64-debug"]["variant"],
            t["x86_64-debug"]["config_sha"]) == ("x86_64", "debug", "abc")
    assert t["arm64"]["variant"] == ""
    rows = h.metrics_of([r.id], "x86_64-debug")
    assert [(x["name"], x["value"], x["unit"]) for x in rows] == \
        [("ratio.x", 1.5, "x")]
    assert h.metrics_of([r.id], "arm64") == []


def test_seeds_and_counts_keep_their_digits(h, tmp_path):
    seed = 2194960933338486915          # what the harness gave the program
    printed = float(seed)       # what matrix/session/ktap.py made of it
    assert int(printed) != seed
    m = {"mmap_fuzz": {"fuzz.seed": {"value": int(printed), "unit": ""},
                       "fuzz.ops": {"value": 300, "unit": "ops"},
                       "fuzz.seconds": {"value": 10.756, "unit": "s"}},
         # a seed of its own: nothing to restore it from
         "other": {"x.seed": {"value": int(printed)},
                   "y.seed": {"value": seed},     # an int no double is
                   "big": {"value": 2 ** 60}}}
    progs = {"mmap_fuzz": {"args": f"--seed {seed}", "seed": seed},
             "other": {"seed": 12}}             # not what it printed
    r = add(h, tmp_path, "r1", rec({}, metrics=m, programs=progs))
    got = {(x["program"], x["name"]): (x["value"], x["exact"])
           for x in h.metrics_of([r.id], "x86_64")}
    assert got[("mmap_fuzz", "fuzz.seed")] == (printed, str(seed))
    assert got[("mmap_fuzz", "fuzz.ops")] == (300.0, "300")
    assert got[("mmap_fuzz", "fuzz.seconds")] == (10.756, None)
    assert got[("other", "x.seed")] == (printed, None)
    assert got[("other", "y.seed")] == (printed, str(seed))
    assert got[("other", "big")] == (2.0 ** 60, None)   # may be rounded


def test_a_history_from_before_exact_gains_the_column(tmp_path):
    import sqlite3
    p = tmp_path / "old.sqlite"
    db = sqlite3.connect(str(p))
    db.executescript(history.schema.SCHEMA.replace("    exact TEXT,\n", ""))
    db.execute("INSERT INTO metrics VALUES (99, 'x86_64', 'p', 'n', 2.0, "
               "'')")
    db.commit()
    db.close()
    with history.History(p) as h:
        (row,) = h.metrics_of([99], "x86_64")
        assert (row["value"], row["exact"]) == (2.0, None)
        r = add(h, tmp_path, "r2", rec({}, metrics={"p": {"n": 7}}))
        assert [x["exact"] for x in h.metrics_of([r.id], "x86_64")] == ["7"]
    with history.History(p) as h:         # opened again: nothing to add
        assert len(h.metrics_of([99, r.id], "x86_64")) == 2


def test_a_history_from_before_roles_gains_the_columns(tmp_path):
    """A history written before targets had a role and a why (and
    metrics an exact) gains the columns; its rows read NULL, and the
    targets of a new run, left ones included, are recorded in it."""
    import sqlite3
    p = tmp_path / "old.sqlite"
    db = sqlite3.connect(str(p))
    db.executescript(history.schema.SCHEMA.replace("    exact TEXT,\n", "")
                     .replace("    role TEXT,\n    why TEXT,\n", ""))
    cols = [r[1] for r in db.execute("PRAGMA table_info(targets)")]
    assert "role" not in cols and "why" not in cols
    db.execute("INSERT INTO runs (id, key, started, results_path) VALUES "
               "(99, 'old', '2026-01-01T00:00:00', '/r/old')")
    # as the old code wrote it: positional, twelve columns
    db.execute("INSERT INTO targets VALUES (99, 'x86_64', 'x86_64', '', "
               "'passed', 'abc', 'k', '6.1', 1, 100.0, 0.8, 3.0)")
    db.commit()
    db.close()
    with history.History(p) as h:
        # from before the tree axis: the target ran on 6.1, and is named so
        old = h.targets(99)["x86_64@6.1"]
        assert (old["status"], old["role"], old["why"], old["tree"]) == (
            "passed", None, None, "6.1")
        d = tmp_path / "r2"
        d.mkdir()
        r = h.record("r2", d, {
            "x86_64@6.1": rec({"test_boot[{t}]": "passed"}, role="run",
                              why=None, target="x86_64@6.1"),
            "riscv64@6.12": rec({"test_compile_check[{t}]": "passed"},
                                target="riscv64@6.12",
                                status="compile-checked", role="check",
                                why="not cached")},
            left={"sh4": "candidate"})
        t = h.targets(r.id)
        assert [(n, x["status"], x["role"], x["why"], x["tree"])
                for n, x in t.items()] == [
            ("x86_64@6.1", "passed", "run", None, "6.1"),
            ("riscv64@6.12", "compile-checked", "check", "not cached",
             "6.12"),
            ("sh4", "not run", "left", "candidate", "")]
        # what the old code read by position is where it was
        assert tuple(h.db.execute(
            "SELECT * FROM targets WHERE run_id = ? AND target = "
            "'x86_64@6.1'", (r.id,)).fetchone())[:12] == (
            r.id, "x86_64@6.1", "x86_64", "", "passed", "abc", None,
            "6.1.192-nopfn", 0, 100.0, 0.8, 3.0)
        # the old run lines up with the new one
        assert [x.key for x in h.runs("x86_64@6.1")] == ["r2", "old"]
    with history.History(p) as h:         # opened again: nothing to add
        assert len(h.targets(r.id)) == 3
        assert list(h.targets(99)) == ["x86_64@6.1"]


def test_left_targets_are_recorded_without_results(h, tmp_path):
    """A run's left targets: a row each (status "not run", role "left",
    the reason, the architecture from the name), no results, and not a
    run of theirs in a target's history; a record wins over left."""
    add(h, tmp_path, "r1", rec({"test_boot[{t}]": "passed"},
                               target="x86_64-debug", role="run"))
    d = tmp_path / "r2"
    d.mkdir()
    r2 = h.record("r2", d, {"x86_64": rec({"test_boot[{t}]": "passed"},
                                          role="run")},
                  left={"x86_64-debug": "not selected: --arch x86_64",
                        "sh4": "candidate, not in the matrix",
                        "x86_64": "ignored: it has a record"})
    t = h.targets(r2.id)
    assert list(t) == ["x86_64", "x86_64-debug", "sh4"]
    assert (t["x86_64"]["role"], t["x86_64"]["why"]) == ("run", None)
    dbg = t["x86_64-debug"]
    assert (dbg["status"], dbg["role"], dbg["why"], dbg["arch"],
            dbg["variant"], dbg["boot_seconds"]) == (
        "not run", "left", "not selected: --arch x86_64", "x86_64", "debug",
        None)
    assert (t["sh4"]["arch"], t["sh4"]["variant"]) == ("sh4", "")
    assert h.results(r2.id, "x86_64-debug") == []
    cls = h.classify(r2.id)
    assert cls.verdicts["x86_64-debug"] == [] and not cls.regressions
    # the debug target's history is the runs that built it
    assert [x.key for x in h.runs("x86_64-debug")] == ["r1"]
    assert h.runs("sh4") == []
    assert [x.key for x in h.runs()] == ["r2", "r1"]
    # a reused results folder replaces the left rows too
    r2 = h.record("r2", d, {"x86_64": rec({}, role="run")})
    assert list(h.targets(r2.id)) == ["x86_64"]


def test_series_hash_follows_the_patches(tmp_path, monkeypatch):
    from matrix.build import tree
    assert len(history.series_hash()) == 16
    monkeypatch.setattr(tree, "SERIES_DIR", tmp_path)
    (tmp_path / "series").write_text("a.patch\n")
    (tmp_path / "a.patch").write_text("+++ b/mm/memory.c\n")
    a = history.series_hash()
    assert a == history.series_hash()
    (tmp_path / "a.patch").write_text("+++ b/mm/memory.c\n+x\n")
    assert history.series_hash() != a
    (tmp_path / "series").write_text("nosuch.patch\n")
    assert history.series_hash() == "unknown"


class Tables(html.parser.HTMLParser):
    """Rows (key, [td classes], [hrefs], [td texts]) of each table by id,
    keyed by the row's data-test, data-metric or data-target; the
    figures (data-metric, class, svg text) in order."""

    def __init__(self):
        super().__init__()
        self.tables, self.svgs, self.links, self.figures = {}, 0, [], []
        self._t = self._row = self._td = self._fig = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        key = a.get("data-test") or a.get("data-metric") or \
            a.get("data-target")
        if tag == "table":
            self._t = self.tables.setdefault(a.get("id"), [])
        elif tag == "tr" and key and self._t is not None:
            self._row = (key, [], [], [])
            self._t.append(self._row)
        elif tag == "td" and self._row:
            self._row[1].append(a.get("class"))
            self._td = []
        elif tag == "a":
            self.links.append(a["href"])
            if self._row:
                self._row[2].append(a["href"])
        elif tag == "svg":
            self.svgs += 1
        elif tag == "figure":
            self._fig = [a.get("data-metric"), a.get("class"), []]
            self.figures.append(self._fig)
        if self._fig is not None:
            self._fig[2].append(self.get_starttag_text())

    def handle_data(self, data):
        if self._td is not None:
            self._td.append(data)
        if self._fig is not None:
            self._fig[2].append(data)

    def handle_endtag(self, tag):
        if tag == "table":
            self._t = None
        elif tag == "tr":
            self._row = None
        elif tag == "td" and self._row and self._td is not None:
            self._row[3].append("".join(self._td).strip())
            self._td = None
        elif tag == "figure" and self._fig is not None:
            self._fig[2] = "".join(self._fig[2])
            self._fig = None


def parse(text: str) -> Tables:
    p = Tables()
    p.feed(text)
    return p


SEED = 2194960933338486915


def bench_metrics(ratio: float, ns: float, ops: int, seed: int) -> dict:
    m = {}
    for name, v in (("ratio.nopfn_vs_vmf.dense", ratio),
                    ("ratio.eager_vs_lazy.sparse", 20 * ratio),
                    (figures.PREMIUM, 1.5)):
        m[name] = {"value": v, "unit": ""}
        m[name + ".min"] = {"value": v / 2, "unit": ""}
        m[name + ".max"] = {"value": v * 2, "unit": ""}
    m["ns_per_page.nopfn.dense"] = {"value": ns, "unit": "ns"}
    return {"fault_bench": m,
            # as matrix/session/ktap.py gives it: through a double
            "mmap_fuzz": {"fuzz.seed": {"value": int(float(seed)),
                                        "unit": ""},
                          "fuzz.ops": {"value": ops, "unit": "ops"}}}


def test_pages(h, tmp_path):
    def run(key, b_status, ratio, target="x86_64", variant=""):
        d = tmp_path / "results" / key
        (d / target / "boot1").mkdir(parents=True, exist_ok=True)
        (d / target / "boot1" / "p.ktap").write_text("ok\n")
        seed = SEED + (key == "r2")
        r = rec({"test_case[{t}-p-a]": "passed",
                 "test_case[{t}-p-b]": b_status}, target=target,
                metrics=bench_metrics(ratio, 142153.6 * ratio, 300, seed),
                programs={"mmap_fuzz": {"seed": seed}}, variant=variant)
        for t in r["tests"].values():
            t["log"] = f"{target}/boot1/p.ktap"
        r["tests"][f"test_case[{target}-p-a]"]["rerun_log"] = \
            f"{target}/nosuch"
        run = h.record(key, d, {target: r})
        return dashboard.write(h, h.classify(run.id), d.parent)

    run("r1", "passed", 1.0)
    pages = run("r2", "failed", 1.2)
    d = tmp_path / "results" / "r2"
    assert pages == [d / "index.html", d / "x86_64.html",
                     tmp_path / "results" / "index.html"]
    m = parse(pages[0].read_text())
    rows = m.tables["matrix"]
    assert [r[0] for r in rows] == ["test_case[p-b]", "test_case[p-a]"]
    assert rows[0][1] == ["regression"] and rows[1][1] == ["passed"]
    assert rows[1][2] == ["x86_64/boot1/p.ktap"]   # none to a missing log
    for link in m.links:
        assert (d / link).is_file(), link
    # this run's headline figures, the seed whole
    (fig,) = m.tables["figures-table"]
    assert fig[0] == "x86_64" and fig[2] == ["x86_64.html"]
    assert fig[3] == ["1.2 0.6\u20132.4", "24 12\u201348", "", "300 ops",
                      str(SEED + 1), ""]
    t = parse(pages[1].read_text())
    assert "index.html" in t.links      # written after it, still linked
    hist = t.tables["history"]
    assert [r[0] for r in hist] == ["test_case[p-b]", "test_case[p-a]"]
    assert hist[0][1] == ["regression", "passed"]
    assert hist[0][2][1] == "../r1/x86_64/boot1/p.ktap"
    # the ratios first, the bars' first, each with its band; then the
    # harness's times
    figs = [(f[0], f[1]) for f in t.figures]
    assert figs == [("ratio.nopfn_vs_vmf.dense", "plot ratio"),
                    ("ratio.eager_vs_lazy.sparse", "plot ratio"),
                    (figures.PREMIUM, "plot ratio"),
                    ("build_seconds", "plot harness"),
                    ("boot_seconds", "plot harness"),
                    ("guest_seconds", "plot harness")]
    svg = {f[0]: f[2] for f in t.figures}
    for name in figs[:3]:
        assert svg[name[0]].count('class="band"') == 1, name
    assert 'class="ref"' in svg["ratio.nopfn_vs_vmf.dense"]
    assert "bar \u2264 1.05" in svg["ratio.nopfn_vs_vmf.dense"]
    assert "bar \u2265 32" in svg["ratio.eager_vs_lazy.sparse"]
    # the bar as it is, no premium-divided line beside it
    assert 'class="ref checked"' not in svg["ratio.eager_vs_lazy.sparse"]
    assert "premium" not in svg["ratio.eager_vs_lazy.sparse"]
    assert 'class="ref' not in svg[figures.PREMIUM]
    assert "band" not in svg["boot_seconds"]
    # the other metrics: no ratio, nor their min and max; seeds first
    mt = t.tables["metrics"]
    assert [r[0] for r in mt] == ["fault_bench:ns_per_page.nopfn.dense",
                                  "mmap_fuzz:fuzz.seed",
                                  "mmap_fuzz:fuzz.ops"]
    ns, seed, ops = (r[3] for r in mt)
    assert ns[2:5] == ["171 \u00b5s", "142 \u00b5s", "+20%"]
    assert seed[2:5] == [str(SEED + 1), str(SEED), ""]
    assert ops[2:5] == ["300 ops", "300 ops", "="]
    assert [r[1][-1] for r in mt] == ["spark"] * 3
    assert t.svgs == 6 + 2          # the plots, the sparklines (no seed's)
    root = parse(pages[2].read_text())
    assert root.tables["matrix"][0][2] == ["r2/x86_64/boot1/p.ktap"]
    assert "r1/index.html" in root.links
    assert root.tables["figures-table"][0][2] == ["r2/x86_64.html"]

    # on a debug kernel fault_bench does not check its bars: grey
    dbg = run("r3", "passed", 1.0, "x86_64-debug", "debug")[1]
    text = dbg.read_text()
    assert "not checked here" in text and "#c62828\" stroke-w" not in text
    assert 'class="ref"' in text


def test_a_run_without_the_figures_has_no_figures_table(h, tmp_path):
    d = tmp_path / "r1"
    d.mkdir()
    r = h.record("r1", d, {"x86_64": rec({"test_boot[{t}]": "passed"})})
    pages = dashboard.write(h, h.classify(r.id))
    assert "figures-table" not in pages[0].read_text()
    t = parse(pages[1].read_text())
    assert "metrics" not in t.tables and len(t.figures) == 3


# why a target is not booted, as matrix/session/plan.py says it
NOT_CACHED = "kernel not cached for this series: compile-checked only"
BUILD_ONLY = "build-only: QEMU has no machine for it"


def not_booted_run(h, tmp_path):
    """A run with run, check and left targets, as matrix/report/results.py
    records it: x86_64 booted, ia64 build-only, riscv64 compile-checked,
    mips64el's check failed, arm64 and sh4 left out."""
    d = tmp_path / "results" / "r1"
    d.mkdir(parents=True)
    recs = {
        "x86_64": rec({"test_boot[{t}]": "passed",
                       "test_case[{t}-p-a]": "passed"}, role="run",
                      why=None),
        "ia64": rec({"test_kernel_build[{t}]": "passed"}, target="ia64",
                    status="build-only", role="run", why=BUILD_ONLY,
                    boot_seconds=[]),
        "riscv64": rec({"test_compile_check[{t}]": "passed",
                        "test_modules_build[{t}]": "passed"},
                       target="riscv64", status="compile-checked",
                       role="check", why=NOT_CACHED, boot_seconds=[],
                       kernel={}),
        "mips64el": rec({"test_compile_check[{t}]": "failed"},
                        target="mips64el", status="failed", role="check",
                        why=NOT_CACHED, boot_seconds=[], kernel={}),
    }
    left = {"arm64": "not selected: --arch x86_64,ia64",
            "sh4": "candidate, not in the matrix: candidates/sh4.yaml "
                   "says why (README, Candidates)"}
    run = h.record("r1", d, recs, left=left)
    return d, dashboard.write(h, h.classify(run.id), d.parent)


def test_pages_name_the_targets_not_booted(h, tmp_path):
    d, pages = not_booted_run(h, tmp_path)
    # a page per target with results: none for the left ones
    assert pages == [d / "index.html", d / "x86_64.html", d / "ia64.html",
                     d / "riscv64.html", d / "mips64el.html",
                     tmp_path / "results" / "index.html"]
    assert not (d / "arm64.html").exists() and not (d / "sh4.html").exists()
    text = pages[0].read_text()
    m = parse(text)
    # a column per target with results
    heads = re.findall(r'<th class="target" data-target="([^"]+)"', text)
    assert heads == ["x86_64", "ia64", "riscv64", "mips64el"]
    assert "Not booted in this run (5)" in text
    # after the tests, before the runs
    assert text.index('id="matrix"') < text.index('id="not-booted"') < \
        text.index('id="runs"')
    rows = {r[0]: r for r in m.tables["not-booted-table"]}
    assert list(rows) == ["ia64", "riscv64", "mips64el", "arm64", "sh4"]
    assert rows["ia64"][1:] == (["passed", "why"], ["ia64.html"],
                                ["build-only", BUILD_ONLY])
    assert rows["riscv64"][1:] == (["passed", "why"], ["riscv64.html"],
                                   ["compile-checked", NOT_CACHED])
    assert rows["mips64el"][1] == ["failed", "why"]
    assert rows["mips64el"][3] == ["failed", NOT_CACHED]
    # left: no page to link to
    assert rows["arm64"][1:] == (["skipped", "why"], [],
                                 ["not run",
                                  "not selected: --arch x86_64,ia64"])
    assert rows["sh4"][3][1].startswith("candidate, not in the matrix")
    for link in m.links:
        assert (d / link).is_file(), link
    root = parse(pages[-1].read_text())
    assert [r[2] for r in root.tables["not-booted-table"]][:2] == [
        ["r1/ia64.html"], ["r1/riscv64.html"]]
    # a compile-checked target's page says so at the top; a booted one's
    # says nothing of the kind
    rv = pages[3].read_text()
    assert '<p class="checked" id="not-booted"><b>Compile-checked only' \
        in rv and NOT_CACHED in rv
    assert rv.index("Compile-checked only") < rv.index('id="history"')
    assert "Compile-checked only" in pages[4].read_text()
    ia = pages[2].read_text()
    assert "<b>Not booted</b> in this run: " + BUILD_ONLY in ia
    assert "Compile-checked" not in ia
    assert 'id="not-booted"' not in pages[1].read_text()


def test_a_run_that_booted_all_has_no_not_booted_section(h, tmp_path):
    d = tmp_path / "r1"
    d.mkdir()
    r = h.record("r1", d, {"x86_64": rec({"test_boot[{t}]": "passed"})})
    pages = dashboard.write(h, h.classify(r.id))
    assert "not-booted" not in pages[0].read_text()


def test_numbers():
    f, u = numbers.fmt, numbers.fmt_unit
    assert [f(v) for v in (415e6, 0.74161, 999.7, 1234, 0, -2.5e9, 1.23e-5,
                           32.0, 1e21, 100)] == \
        ["415M", "0.742", "1k", "1.23k", "0", "-2.5G", "1.23e-5", "32",
         "1e21", "100"]
    assert [u(*a) for a in ((3104830.7338, "ns"), (142153.6, "ns"),
                            (10.756, "s"), (759, "s"), (27.9, "ops/s"),
                            (0.5, "ns"), (0, "s"), (2.0, ""))] == \
        ["3.1 ms", "142 \u00b5s", "10.8 s", "759 s", "27.9 ops/s",
         "0.5 ns", "0 s", "2"]
    t = numbers.metric_text
    assert t("fuzz.seed", float(SEED), str(SEED), "") == str(SEED)
    # only a double of it was kept: said so, not passed off as exact
    assert t("fuzz.seed", float(SEED), None, "") == \
        "\u2248" + str(int(float(SEED)))
    assert t("stress.seed", 12.0, None, "") == "12"
    assert t("stress.ops", 41134.0, None, "ops") == "41134 ops"
    assert t("stress.ops", 41134.0, "41134", "ops") == "41134 ops"
    assert t("x", 1e17, None, "") == "100P"
    assert t("fuzz.seconds", 10.0, "10", "s") == "10 s"
    c = numbers.change_text
    assert [c(2.0, 2.5), c(4, 3), c(0, 5), c(1, 1), c(3, 3.001)] == \
        ["+25%", "-25%", "+5", "=", "+0.0333%"]


def test_ticks():
    for lo, hi in ((0.09, 5.8), (0.6, 2.1), (0.95, 1.1), (0.001, 1e6),
                   (7.2, 45.2)):
        t = svg._log_ticks(lo, hi)
        assert 2 <= len(t) <= 6 and t == sorted(t), (lo, hi, t)
        assert all(lo <= v <= hi for v in t), (lo, hi, t)
    assert svg._log_ticks(0.09, 5.8) == [0.1, 0.2, 0.5, 1, 2, 5]
    assert svg._lin_ticks(683, 835) == [700, 750, 800]


def test_bars_are_fault_bench_s():
    """The dashboard's bars are the ones the program checks."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    src = (repo / "tests" / "guest" / "fault_bench.c").read_text()

    def define(name):
        return float(re.search(rf"#define\s+{name}\s+([\d.]+)",
                               src).group(1))
    assert figures.BAR_NOPFN_VS_VMF == define("BAR_NOPFN_VS_VMF")
    assert figures.BAR_SPARSE_FACTOR == define("BAR_SPARSE_FACTOR")
    assert figures.SPARSE_STEP == define("SPARSE_STEP")
    checked = re.findall(r"check_nopfn_vs_vmf\(_metadata, (\w+)\)", src)
    assert {f"ratio.nopfn_vs_vmf.{p.lower()}" for p in checked} == {
        n for n, (how, _) in figures.BARS.items() if how == "\u2264"}
    assert "ratios(EAGER, NOPFN, SPARSE, ratio);" in src
    assert '"ratio.eager_vs_lazy.%s"' in src and \
        f'ratio_metrics("{figures.PREMIUM}", prem)' in src
    # mapped / touched of the sparse pattern is SPARSE_STEP on any page
    uapi = (repo / "driver" / "include" / "uapi" / "nopfn_bench.h"
            ).read_text()
    shift = int(re.search(r"#define\s+NOPFN_BENCH_MAX_BYTES\s+\(16U << "
                          r"(\d+)\)", uapi).group(1))
    for psz in (4096, 16384, 65536):
        pages = (16 << shift) // psz
        touched = -(-pages // figures.SPARSE_STEP)
        assert pages / touched / figures.BAR_SPARSE_FACTOR == \
            figures.BAR_EAGER_VS_LAZY == 32


def test_svg_plot():
    P = svg.Point
    pts = [P(0, "a", 1.0, 0.5, 2.0), P(1, "b", 3.0, 2.0, 4.0),
           P(3, "c", 2.0, 1.0, 8.0)]
    ref = svg.Ref("bar \u2264 1.05", 1.05)
    plot = svg.svg_plot("t", "", pts, 4, ("01-01 00:00", "01-04 00:00"),
                        (ref,), log=True)
    cys = [float(c) for c in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)"',
                                        plot)]
    cxs = [float(c) for c in re.findall(r'<circle cx="([\d.]+)"', plot)]
    assert cys[1] < cys[2] < cys[0]            # higher value, higher up
    # x by the run's place: c is two runs after b
    assert cxs[2] - cxs[1] == pytest.approx(2 * (cxs[1] - cxs[0]), abs=0.2)
    band = re.search(r'<polygon class="band" points="([^"]+)"', plot).group(1)
    assert len(band.split()) == 6
    ry = float(re.search(r'<line class="ref"[^>]* y1="([\d.]+)"',
                         plot).group(1))
    # log scale: 1.05 is log(1.05)/log(3) of the way from 1 up to 3
    assert ry == pytest.approx(cys[0] - (cys[0] - cys[1]) * math.log(1.05)
                               / math.log(3), abs=0.2)
    assert re.search(r'class="latest"[^>]*>2<', plot)
    assert "1\u20138<" in plot                 # the newest spread
    # everything inside the box
    for attr in re.findall(r' (?:x|x1|x2|cx)="([\d.]+)"', plot):
        assert 0 <= float(attr) <= 380
    for attr in re.findall(r' (?:y|y1|y2|cy)="([\d.]+)"', plot):
        assert 0 <= float(attr) <= 150
    one = svg.svg_plot("t", "s", [P(0, "a", 5.0)], 1)
    assert one.count("<circle") == 1 and "<polyline" not in one
    assert "band" not in one and ">5 s<" in one


def test_href_is_relative_and_quoted(tmp_path):
    f = tmp_path / "run" / "x" / "user-a b.ktap"
    f.parent.mkdir(parents=True)
    f.write_text("")
    assert href(tmp_path / "run", "x/user-a b.ktap",
                          tmp_path) == "run/x/user-a%20b.ktap"
    assert href(tmp_path / "run", "x/none", tmp_path) is None
    assert pathlib.Path(href(tmp_path / "run", "x/user-a b.ktap",
                                       tmp_path / "run")).parts[0] == "x"


def test_results_write_with_a_baseline(tmp_path):
    """--baseline and --history through results.write, as a run uses them."""
    from matrix.build.builder import Builder
    from matrix.build.cache import Cache
    from matrix.report import results
    from matrix.session.matrix import Matrix, Options
    from matrix.session.plan import Plan
    from matrix.spec import arch as archspec

    def run(key, status, **opts):
        ia64 = archspec.load_all()["ia64"]          # no QEMU asked
        m = Matrix(Options(arch="ia64", results=str(tmp_path / key),
                           **opts), Builder(Cache(tmp_path / "cache")),
                   Plan([ia64], [], {}))
        m.state["ia64"].tests = {"test_kernel_build[ia64]": {
            "status": status, "duration": 1.0}}
        return results.write(m, wall=1.0)

    db = str(tmp_path / "elsewhere" / "h.sqlite")
    run("r1", "failed", history=db)
    run("r2", "passed", history=db)
    s = run("r3", "failed", history=db)
    assert [r["reference"] for r in s["regressions"]] == ["r2"]
    assert s["dashboard"]["history"] == db
    assert not (tmp_path / "history.sqlite").exists()
    s = run("r4", "failed", history=db, baseline="r1")
    assert s["regressions"] == [] and s["dashboard"]["baseline"] == "r1"
    s = run("r5", "failed", history=db, baseline="nosuch")
    assert "baseline nosuch: no such run" in s["dashboard"]["error"]
    assert any("baseline nosuch" in ln for ln in results.verdict_lines(s))


def test_matrix_run_refuses_an_unknown_baseline(tmp_path):
    import argparse
    from matrix.__main__ import check_baseline
    args = argparse.Namespace(results=str(tmp_path / "r9"), history=None,
                              baseline="r1")
    assert "no history at" in check_baseline(args)
    with history.History(tmp_path / "history.sqlite") as h:
        add(h, tmp_path, "r1", rec({}))
    assert check_baseline(args) == ""
    args.baseline = "r2"
    assert "no such run" in check_baseline(args) and "r1" in \
        check_baseline(args)
