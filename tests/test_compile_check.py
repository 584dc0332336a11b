"""A default run compile-checks the targets whose kernels it does not
build, so that a broken hunk for any architecture fails it.

A copy of the series gets one more patch that breaks a mips-only file
(an #error in arch/mips/mm/fault.c, which only the mips targets build).
Its kernels are in no cache, so a default run (no --arch: the fast tier
built and booted, the full tier compile-checked, matrix/session/plan.py) of the
compile checks must fail on mips64el and mipsel, with the compiler's
error, pass on a target that does not build the file (armhf), and name
every target and candidate in its summary with its status.
"""
from __future__ import annotations

import difflib
import json
import pathlib
import shutil
import subprocess
import sys

from matrix.spec import arch as archspec
from matrix.build import cache
from matrix.build.builder import Builder
from matrix.session import plan
from matrix.build.tree import SERIES_DIR, Tree

REPO = pathlib.Path(__file__).resolve().parent.parent
BROKEN = "arch/mips/mm/fault.c"
MIPS = ("mips64el", "mipsel")


def broken_series(tmp: pathlib.Path) -> pathlib.Path:
    """kernel/patches/6.1/ with a last patch that puts an #error in BROKEN."""
    series = tmp / "patches"
    shutil.copytree(SERIES_DIR, series)
    src = Tree(cache.Cache()).ensure()
    old = (src / BROKEN).read_text().splitlines(keepends=True)
    new = list(old)
    at = next(i for i, line in enumerate(new) if line.startswith("#include"))
    new.insert(at, '#error "a broken mips hunk (tests/test_compile_check.py)"'
               "\n")
    diff = difflib.unified_diff(old, new, f"a/{BROKEN}", f"b/{BROKEN}")
    (series / "zz-broken-mips.patch").write_text(
        "A mips-only hunk that does not compile.\n\n" + "".join(diff))
    with (series / "series").open("a") as f:
        f.write("zz-broken-mips.patch\n")
    return series


def checks(res: pathlib.Path, targets: tuple[str, ...], *args: str
           ) -> subprocess.CompletedProcess:
    """The default run's compile checks of @targets (the other targets'
    items are deselected: their checks are the same as armhf's, minutes
    more of the same). Without --no-install: on a new machine these
    targets' cross compilers are not installed yet when this test runs
    (matrix/setup installs the fast tier's; the default run installs the
    others' when it comes to their checks), so the run installs them as
    the default run would (apt-get is locked across processes)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(REPO / "tests" /
                                             "test_matrix.py"),
         "-p", "no:cacheprovider", "-q", *args, f"--results={res}",
         "-k", f"compile_check and ({' or '.join(targets)})"],
        cwd=REPO, capture_output=True, text=True, timeout=1800)


def test_a_broken_mips_hunk_fails_the_default_run(tmp_path):
    # the same checks of the series as it is pass: the failures below are
    # the broken hunk's doing. They are the default run's own checks, so
    # cold they are built once, here, and the broken series' checks start
    # from them. A target whose kernel is cached is booted by a default
    # run, not compile-checked: it has no check to run here (its kernel
    # built is the control), while the broken series, whose kernels are in
    # no cache, is compile-checked on all three.
    arches = archspec.load_all()
    builder = Builder(cache.Cache())
    plain = tuple(t for t in (*MIPS, "armhf")
                  if not builder.kernel_cached(arches[t]))
    if plain:
        p = checks(tmp_path / "plain", plain)
        assert p.returncode == 0, ("the series' own compile checks fail:\n"
                                   f"{p.stdout}{p.stderr}")
    series = broken_series(tmp_path)
    res = tmp_path / "results"
    p = checks(res, (*MIPS, "armhf"), f"--series={series}")
    out = p.stdout + p.stderr
    assert p.returncode != 0, f"the run passed with a broken hunk:\n{out}"
    summary = json.loads((res / "summary.json").read_text())
    for t in (f"{m}@6.1" for m in MIPS):      # the default tree's targets
        rec = json.loads((res / f"{t}.json").read_text())
        case = rec["tests"][f"test_compile_check[{t}]"]
        assert case["status"] == "failed", (t, case, out)
        assert "a broken mips hunk" in case["message"], case["message"]
        assert summary["arches"][t]["status"] == "failed"
    arm = json.loads((res / "armhf@6.1.json").read_text())
    assert arm["tests"]["test_compile_check[armhf@6.1]"]["status"] == \
        "passed"
    assert summary["arches"]["armhf@6.1"]["status"] == "compile-checked"
    # every target and candidate is named: booted, or why not
    every = {a.name for a in archspec.select(None)} | \
        set(plan.candidates())
    named = set(summary["arches"]) | set(summary["not_booted"])
    assert every <= named, sorted(every - named)
    for t in (*MIPS, "armhf"):
        assert summary["not_booted"][f"{t}@6.1"]["why"] == plan.NOT_CACHED
