"""matrix bisect: the search over prefixes of the series with a fake step
function, how a step's results are judged, the prefix folders, and the
command end to end with a fake `matrix run`."""
import json
import math
import pathlib
import sys

import pytest

from matrix import bisect
from matrix.build import cache as cachemod
from matrix.build import tree

REPO = pathlib.Path(__file__).resolve().parents[2]


def fake_step(first_bad: int, calls: list):
    def step(n: int) -> bisect.Step:
        calls.append(n)
        return bisect.Step(n, bisect.BAD if n >= first_bad else bisect.GOOD,
                           f"fails at {n}" if n >= first_bad else "")
    return step


@pytest.mark.parametrize("good, bad", [(0, 11), (0, 1), (7, 14), (11, 14),
                                       (3, 100)])
def test_finds_the_first_bad_patch_in_few_steps(good, bad):
    for first in range(good + 1, bad + 1):
        calls: list = []
        found, steps = bisect.search(good, bad, fake_step(first, calls))
        assert found == first
        # the endpoints first, bad then good; then halving
        assert calls[:2] == [bad, good]
        assert len(calls) <= 2 + math.ceil(math.log2(bad - good))
        assert [s.n for s in steps] == calls
        assert len(set(calls)) == len(calls)


def test_refuses_endpoints_that_are_not_what_they_should_be():
    with pytest.raises(bisect.BisectError, match="passes with 11 patches"):
        bisect.search(0, 11, fake_step(99, []))     # never fails
    calls: list = []
    with pytest.raises(bisect.BisectError,
                       match="fails already with 0 patches.*--good N"):
        bisect.search(0, 11, fake_step(0, calls))   # fails everywhere
    assert calls == [11, 0]
    with pytest.raises(bisect.BisectError, match="must be shorter"):
        bisect.search(5, 5, fake_step(1, []))


def test_a_step_that_cannot_be_judged_stops_it():
    def step(n):
        if n == 5:
            return bisect.Step(n, bisect.ERROR, "the run left no results")
        return bisect.Step(n, bisect.BAD if n >= 8 else bisect.GOOD)
    with pytest.raises(bisect.BisectError, match="prefix of 5 patches: "
                       "the run left no results"):
        bisect.search(0, 11, step)


ITEM = "test_case[x86_64@6.1-nopfn_faults-nopfn.ram_read_write_remap]"


def rec(**statuses):
    return {"tests": {name: {"status": s, "duration": 0.1,
                             "message": f"{name} says why" if s != "passed"
                             else "", "log": "x86_64@6.1/boot1/p.ktap"}
                      for name, s in statuses.items()}}


def test_judge_an_item_by_its_result():
    assert bisect.is_item(ITEM) and not bisect.is_item("nopfn_faults")
    assert bisect.judge(rec(**{ITEM: "passed"}), ITEM)[0] == bisect.GOOD
    v, msg, log = bisect.judge(rec(**{ITEM: "failed", "other": "passed"}),
                               ITEM)
    assert v == bisect.BAD and msg.startswith(f"{ITEM} failed: ")
    assert log == "x86_64@6.1/boot1/p.ktap"
    # a flaky and a known failure are the test failing
    assert bisect.judge(rec(**{ITEM: "flaky"}), ITEM)[0] == bisect.BAD
    assert bisect.judge(rec(**{ITEM: "xfailed"}), ITEM)[0] == bisect.BAD
    # another item failing does not make this one bad
    assert bisect.judge(rec(**{ITEM: "passed", "x": "failed"}), ITEM)[0] \
        == bisect.GOOD
    v, msg, _ = bisect.judge(rec(x="passed"), ITEM)
    assert v == bisect.ERROR and "did not run" in msg


def test_judge_an_expression_by_every_item_it_ran():
    assert bisect.judge(rec(a="passed", b="skipped"), "x")[0] == bisect.GOOD
    assert bisect.judge(rec(a="passed", b="failed"), "x")[0] == bisect.BAD
    assert bisect.judge(rec(a="skipped"), "x")[:2] == (
        bisect.ERROR, "-k x: every item was skipped")
    assert bisect.judge(rec(), "x")[1] == "-k x: nothing ran"


def test_a_prefix_folder_is_the_prefix_tree(tmp_path, monkeypatch):
    """The step's --series folder is the tree of Tree.prefix(n), by the
    cache's key: its cached build seeds the next steps' builds."""
    tarball = tmp_path / "linux.tar.xz"
    tarball.write_bytes(b"not really")
    monkeypatch.setattr(tree, "TARBALL", tarball)
    series = tmp_path / "patches"
    series.mkdir()
    for i in (1, 2, 3):
        (series / f"{i}.patch").write_text(f"Subject: [PATCH {i}/3] p{i}\n")
    (series / "series").write_text("1.patch\n# a comment\n2.patch -p0\n"
                                   "3.patch\n")
    patches = tree.parse_series(series)
    c = cachemod.Cache(tmp_path / "cache")
    full = tree.Tree(c, series)
    for n in range(4):
        d = bisect.prefix_folder(patches, n, tmp_path / f"s{n}")
        assert tree.Tree(c, d).key == full.prefix(n).key
    assert (tmp_path / "s2" / "series").read_text() == \
        "1.patch\n2.patch -p0\n"
    assert bisect.subject(series / "2.patch") == "p2"


PLANTED = """\
Subject: [PATCH] mm: every ->nopfn() fault is SIGBUS

Planted by a unit test.
---
"""


def test_the_command_names_the_planted_patch(tmp_path, monkeypatch,
                                            capsys):
    """Three patches after the series, the middle one breaking: the fake
    `matrix run` fails the item on every prefix that has it."""
    series = tmp_path / "patches"
    series.mkdir()
    names = [p.name for p, _ in tree.parse_series()]
    for p, _ in tree.parse_series():
        (series / p.name).write_text(p.read_text())
    n = len(names)              # the series; n + 2 is the planted patch
    bad = f"{n + 2:04d}-breaks.patch"
    extra = [f"{n + 1:04d}-harmless.patch", bad, f"{n + 3:04d}-harmless.patch"]
    for name in extra:
        (series / name).write_text(PLANTED if "breaks" in name else
                                   f"Subject: [PATCH] {name}\n")
    (series / "series").write_text("".join(f"{x}\n" for x in names + extra))
    runs = []

    def fake_run(cmd, cwd, capture_output, text):
        runs.append(cmd)
        assert cmd[:4] == [sys.executable, "-m", "matrix", "run"]
        opts = dict(zip(cmd[4::2], cmd[5::2]))
        folder = pathlib.Path(opts["--series"])
        prefix = folder.joinpath("series").read_text().split()
        res = pathlib.Path(opts["--results"])
        (res / "x86_64@6.1" / "boot1").mkdir(parents=True)
        broken = bad in prefix
        (res / "x86_64@6.1.json").write_text(json.dumps(rec(**{
            ITEM: "failed" if broken else "passed"})))
        return type("R", (), {"stdout": "", "stderr": "", "returncode":
                              int(broken)})()
    monkeypatch.setattr(bisect.subprocess, "run", fake_run)
    root = tmp_path / "bisect"
    rc = bisect.main(["--arch", "amd64", "--test", ITEM, "--series",
                      str(series), "--good", str(n), "--results", str(root),
                      "--no-install"], ["--reruns", "0"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert f"first bad patch: {n + 2} of {n + 3}, {bad}" in out
    assert "mm: every ->nopfn() fault is SIGBUS" in out
    assert f"{ITEM} failed: {ITEM} says why" in out
    assert f"log: {root / f'step-{n + 2:03d}' / 'x86_64@6.1/boot1/p.ktap'}" \
        in out
    assert f"with {n + 1} patches it passes" in out
    # the endpoints, then the halves
    steps = [int(pathlib.Path(dict(zip(c[4::2], c[5::2]))["--series"])
                 .name.split("-")[1]) for c in runs]
    assert steps == [n + 3, n, n + 1, n + 2]
    cmd = runs[0]
    assert cmd[cmd.index("--arch") + 1] == "x86_64@6.1"
    assert "--no-install" in cmd
    assert cmd[cmd.index("--") + 1:] == ["-k", bisect.k_expression(ITEM),
                                         "--reruns", "0"]
    # refused: the good end fails too
    rc = bisect.main(["--arch", "x86_64", "--test", ITEM, "--series",
                      str(series), "--good", str(n + 2), "--results",
                      str(tmp_path / "again")], [])
    assert rc == 1
    assert f"fails already with {n + 2} patches" in capsys.readouterr().err


def test_bad_arguments_exit_2(capsys):
    assert bisect.main(["--arch", "all", "--test", "x"], []) == 2
    assert bisect.main(["--arch", "x86_64", "--test", "x", "--good", "9",
                        "--bad", "3"], []) == 2
    assert bisect.main(["--arch", "x86_64", "--test",
                        "test_case[arm64-p-c]"], []) == 2
    err = capsys.readouterr().err
    assert "one target" in err and "0 <= good < bad" in err
    assert "not an item of x86_64" in err


def test_an_item_of_a_tree_is_selected_without_its_at():
    """pytest's -k takes no "@": an item's name is split there, and the
    halves select that item of that tree only."""
    from _pytest.mark.expression import Expression
    expr = bisect.k_expression(ITEM)
    assert "@" not in expr and bisect.k_expression("nopfn and not x") == \
        "nopfn and not x"
    e = Expression.compile(expr)
    for name, want in ((ITEM, True),
                       (ITEM.replace("@6.1-", "@6.12-"), False),
                       (ITEM.replace("remap]", "other]"), False)):
        assert e.evaluate(lambda k: k.lower() in name.lower()) is want, name
