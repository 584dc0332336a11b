"""tree.Tree made from a cached shorter series, the seed of a build
(kernel.TreeBuild.seed()), and the series' reports in a build log."""
import os
import subprocess
import time

import pytest

from matrix.spec import arch as archspec
from matrix.build import kernel, tree
from matrix.build import cache as cachemod


def patch(path: str, old: str, new: str) -> str:
    return (f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-{old}\n+{new}\n")


@pytest.fixture
def fake_tree(tmp_path, monkeypatch):
    """A tarball with three files, and a series of three patches, one per
    file (the third in tools/)."""
    top = tmp_path / "x" / "linux-source-6.1"
    for rel in ("mm/a.c", "arch/b.c", "tools/c.h", "Makefile"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("one\n")
    tarball = tmp_path / "linux.tar.xz"
    subprocess.run(["tar", "-C", str(tmp_path / "x"), "-cJf", str(tarball),
                    "linux-source-6.1"], check=True)
    monkeypatch.setattr(tree, "TARBALL", tarball)
    series = tmp_path / "patches"
    series.mkdir()
    for i, rel in enumerate(("mm/a.c", "arch/b.c", "tools/c.h"), 1):
        (series / f"{i}.patch").write_text(patch(rel, "one", f"two {i}"))
    (series / "series").write_text("1.patch\n2.patch\n3.patch\n")
    return cachemod.Cache(tmp_path / "cache"), series


def test_a_longer_series_is_made_from_the_shorter_one(fake_tree):
    c, series = fake_tree
    short = tree.Tree(c, series, tree.parse_series(series)[:2])
    src = short.ensure()
    assert (src / "arch/b.c").read_text() == "two 2\n"
    old = {f: (src / f).stat().st_mtime_ns for f in ("mm/a.c", "Makefile")}
    time.sleep(0.05)
    full = tree.Tree(c, series)
    fsrc = full.ensure()
    assert full.entry.meta()["based_on"] == 2
    assert (fsrc / "tools/c.h").read_text() == "two 3\n"
    # what the third patch does not write keeps its time stamp ...
    for f, t in old.items():
        assert (fsrc / f).stat().st_mtime_ns == t
    # ... and the shorter tree is as it was
    assert (src / "tools/c.h").read_text() == "one\n"
    assert full.touched_files(2) == ["tools/c.h"]


def test_user_key_changes_only_with_what_user_space_reads(fake_tree):
    c, series = fake_tree
    key = tree.Tree(c, series).user_key
    (series / "1.patch").write_text(patch("mm/a.c", "one", "three"))
    assert tree.Tree(c, series).user_key == key
    assert tree.Tree(c, series).key != key
    (series / "3.patch").write_text(patch("tools/c.h", "one", "three"))
    assert tree.Tree(c, series).user_key != key


def test_a_build_is_seeded_from_an_older_build_of_a_prefix(fake_tree):
    if not kernel.stable_paths_available():
        pytest.skip("needs root and unshare (stable paths)")
    c, series = fake_tree
    arch = archspec.load_all()["x86_64"]
    short = tree.Tree(c, series, tree.parse_series(series)[:2])
    short.ensure()
    base = kernel.KernelBuild(arch, short, c, "")
    base.entry.path.mkdir(parents=True)
    base.entry.complete([], stable=True)
    time.sleep(0.05)
    full = tree.Tree(c, series)
    kb = kernel.KernelBuild(arch, full, c, "")
    assert kb.seed() is None            # the tree is not made yet
    full.ensure()
    entry, n = kb.seed()
    assert (entry.key, n) == (base.key, 2)
    # a file of the third patch older than the seed (the tree was made
    # before the seed was built): make would not compile it again, so
    # the seed touches it
    f = full.src / "tools/c.h"
    completed = base.entry.meta()["completed"]
    os.utime(f, (completed - 10, completed - 10))
    entry, n = kb.seed()
    assert (entry.key, n) == (base.key, 2)
    assert f.stat().st_mtime > completed
    # the files of the first two patches keep their time stamps
    assert (full.src / "mm/a.c").stat().st_mtime <= completed


def test_series_diagnostics():
    log = "\n".join([
        "/c/stable/src/mm/memory.c:10:5: warning: unused variable 'x' "
        "[-Wunused-variable]",
        "/c/stable/src/mm/other.c:3:1: warning: not ours",
        "sparse: /c/stable/src/mm/memory.c:12:9: warning: context imbalance",
        "sparse: command-line: note: in included file:",
        "sparse: sh: 1: sparse: not found",
        "sparse:    expected int",
        "/c/stable/src/mm/memory.c:10:5: warning: unused variable 'x' "
        "[-Wunused-variable]",
    ])
    cc, sp = kernel.series_diagnostics(log, ["mm/memory.c"], ["/c/stable/src"])
    assert cc == ["mm/memory.c:10:5: warning: unused variable 'x' "
                  "[-Wunused-variable]"]
    assert sp == ["sparse: mm/memory.c:12:9: warning: context imbalance",
                  "sparse: sh: 1: sparse: not found"]


def test_built_by():
    cfg = {"CONFIG_MIPS": "y", "CONFIG_MSPEC": "m"}
    assert kernel.built_by("mm/memory.c", cfg, "mips")
    assert kernel.built_by("arch/mips/mm/fault.c", cfg, "mips")
    assert not kernel.built_by("arch/riscv/mm/fault.c", cfg, "mips")
    assert kernel.built_by("drivers/char/mspec.c", cfg, "mips")
    assert not kernel.built_by("drivers/char/mspec.c", {}, "ia64")
    # not listed: by where it is
    assert kernel.built_by("arch/mips/kernel/new.c", {}, "mips")
    assert not kernel.built_by("arch/x86/kernel/new.c", {}, "mips")
