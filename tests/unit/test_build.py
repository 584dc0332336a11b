"""Builder.kernel_cached(): what a default run probes for the full tier,
without building anything."""
import pathlib

from matrix.spec import arch as archspec
from matrix.build import builder as build
from matrix.build import kernel
from matrix.build import toolchain
from matrix.build import cache as cachemod
from matrix.build.tree import Tree


def test_kernel_cached_counts_a_compiler_the_matrix_built(tmp_path):
    c = cachemod.Cache(tmp_path / "cache")
    b = build.Builder(c)
    ia64 = archspec.load_all()["ia64"]
    assert ia64.kernel.toolchain
    assert not b.kernel_cached(ia64)            # no compiler yet
    entry = toolchain._entry(ia64, c)
    gcc = pathlib.Path("install/bin/ia64-linux-gnu-gcc")
    (entry.path / gcc).parent.mkdir(parents=True)
    (entry.path / gcc).write_text("#!/bin/sh\necho 'ia64-linux-gnu-gcc "
                                  "(GCC) 12.2.0'\n")
    (entry.path / gcc).chmod(0o755)
    entry.complete([str(gcc)])
    assert not b.kernel_cached(ia64)            # a compiler, no kernel
    prefix = toolchain.cached_prefix(ia64, c)
    assert prefix == str(entry.path / "install/bin/ia64-linux-gnu-")
    kb = kernel.KernelBuild(ia64, b.tree, c, prefix)
    kb.entry.path.mkdir(parents=True)
    kb.entry.complete([])
    assert b.kernel_cached(ia64)
    # nothing was built to find out
    assert not (tmp_path / "cache" / "trees").exists()


def test_changed_lines_are_the_lines_the_series_wrote(tmp_path, monkeypatch):
    """W=1 warnings count only at lines the series wrote: a warning the
    pristine file already had (mips's do_page_fault() prototype) moves
    with the lines inserted above it and is not one of them."""
    old, new = tmp_path / "old", tmp_path / "new"
    (old / "a").mkdir(parents=True)
    (new / "a").mkdir(parents=True)
    (old / "a" / "f.c").write_text("one\ntwo\nthree\nfour\n")
    (new / "a" / "f.c").write_text("one\nTWO\nadded\nthree\nfour\nnew\n")
    tree = Tree.__new__(Tree)
    monkeypatch.setattr(tree, "_pristine", lambda: old, raising=False)
    monkeypatch.setattr(tree, "ensure", lambda: new, raising=False)
    assert tree.changed_lines("a/f.c") == {2, 3, 6}
    (new / "a" / "g.c").write_text("x\ny\n")       # a new file: every line
    assert tree.changed_lines("a/g.c") == {1, 2}
