"""matrix bisect finds a planted failing patch, with real x86_64 guests.

A copy of kernel/patches/6.1/ gets three patches after the series: a
harmless one (a new file under Documentation/), one that makes
do_nopfn() fail every fault with SIGBUS, and another harmless one. From
the series itself, known to pass (--good N), `python3 -m matrix bisect`
must name the middle one for a nopfn_faults case that maps RAM through
->nopfn(). Four steps: the endpoints (N + 3 patches, N) and two halves
(N + 1, N + 2); each step's kernel is seeded from a cached build of a
shorter prefix, so three kernels are relinked rather than built. The
test drops those three from the cache first, so that they are built
by it, from their seeds, however old the trees an earlier run left.

The breaking patch is made from the tree's mm/memory.c when the test
runs, so that it applies to whatever the series is then.
"""
from __future__ import annotations

import difflib
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from matrix.build import cache, kernel, tree
from matrix.spec import arch as archspec
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
ARCH = "x86_64"
# bisect runs on the default tree, 6.1: its target is x86_64@6.1
TEST = f"test_case[{ARCH}@6.1-nopfn_faults-nopfn.ram_read_write_remap]"

pytestmark = pytest.mark.skipif(
    ARCH not in [a.label for a in archspec.select(
        os.environ.get("NOPFN_ARCH", "all"))],
    reason=f"needs the {ARCH} guest (NOPFN_ARCH excludes it)")


def harmless(name: str) -> str:
    return (f"Subject: [PATCH] Documentation: {name}\n\n"
            "Changes no code: tests/test_bisect.py plants it around the "
            "breaking patch.\n---\n"
            f"--- /dev/null\n+++ b/Documentation/mm/{name}.rst\n"
            "@@ -0,0 +1 @@\n"
            f"+{name}: a harmless patch of tests/test_bisect.py.\n")


def breaking(src: pathlib.Path) -> str:
    """A patch that makes do_nopfn() return VM_FAULT_SIGBUS before it
    calls the handler, for every fault."""
    old = (src / "mm" / "memory.c").read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(old)
                 if ln.startswith("static vm_fault_t do_nopfn("))
    call = next(i for i in range(start, len(old))
                if old[i].strip() == "pfn = nopfn(vmf);")
    new = old[:call] + [
        "\t/* Planted by tests/test_bisect.py: every fault fails */\n",
        "\tif (vma)\n", "\t\treturn VM_FAULT_SIGBUS;\n"] + old[call:]
    diff = difflib.unified_diff(old, new, "a/mm/memory.c", "b/mm/memory.c")
    return ("Subject: [PATCH] mm: do_nopfn(): fail every fault with "
            "SIGBUS\n\nPlanted by tests/test_bisect.py.\n---\n"
            + "".join(diff))


def planted_series(tmp_path: pathlib.Path) -> tuple[pathlib.Path, int]:
    """kernel/patches/6.1/ with the three patches after it, and how many
    patches the series itself has."""
    series = tmp_path / "patches"
    shutil.copytree(tree.SERIES_DIR, series)
    n = len(tree.parse_series())
    src = tree.Tree(cache.Cache()).ensure()     # built by prebuild()
    planted = [(f"{n + 1:04d}-bisect-harmless-before.patch",
                harmless("bisect-before")),
               (f"{n + 2:04d}-bisect-do_nopfn-sigbus.patch", breaking(src)),
               (f"{n + 3:04d}-bisect-harmless-after.patch",
                harmless("bisect-after"))]
    with (series / "series").open("a") as f:
        for name, text in planted:
            (series / name).write_text(text)
            f.write(f"{name}\n")
    return series, n


def test_bisect_names_the_planted_patch(tmp_path):
    prebuild(ARCH, "--variant", "none")     # the good end: the series
    series, n = planted_series(tmp_path)
    c = cache.Cache()
    target = archspec.load_all()[ARCH]
    # the kernels of the longer series are built by this run, whatever
    # an earlier one left in the cache: how they are made is under test
    planted = tree.Tree(c, series)
    for step in (n + 1, n + 2, n + 3):
        entry = kernel.KernelBuild(target, planted.prefix(step), c, "").entry
        with entry.lock():
            shutil.rmtree(entry.path, ignore_errors=True)
    root = tmp_path / "bisect"
    r = subprocess.run(
        [sys.executable, "-m", "matrix", "bisect", "--arch", ARCH,
         "--test", TEST, "--series", str(series), "--good", str(n),
         "--results", str(root), "--no-install", "--", "--reruns", "0"],
        cwd=REPO, capture_output=True, text=True, timeout=3600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    bad = f"{n + 2:04d}-bisect-do_nopfn-sigbus.patch"
    assert f"first bad patch: {n + 2} of {n + 3}, {bad}" in out, out
    assert "mm: do_nopfn(): fail every fault with SIGBUS" in out
    assert f"with {n + 1} patches it passes" in out
    failure = out.split("  failure:", 1)[1]
    assert "ram_read_write_remap" in failure, out
    log = pathlib.Path(re.search(r"^  log: (\S+)$", out, re.M).group(1))
    assert log.is_file() and log.name == "nopfn_faults.ktap", out
    assert "not ok" in log.read_text()
    # the endpoints, then the two halves; no more
    assert f"steps: 4 ({n + 3}, {n}, {n + 1}, {n + 2} patches)" in out
    # each step's kernel was made from a shorter prefix's build
    if kernel.stable_paths_available():
        for step in (n + 1, n + 2, n + 3):
            t = tree.Tree(c, root / f"series-{step:03d}")
            assert t.key == planted.prefix(step).key
            meta = kernel.KernelBuild(target, t, c, "").meta()
            assert meta is not None and meta.get("seeded_from"), \
                f"the kernel of {step} patches was built from nothing"
