"""Builder.kernel_cached() and cache_state(): what a default run probes
for the full tier, and `matrix list` shows, without building anything."""
import pathlib

from matrix.spec import arch as archspec
from matrix.build import builder as build
from matrix.build import kernel
from matrix.build import toolchain
from matrix.build import cache as cachemod
from matrix.build.tree import Tree


def _fake_ia64_compiler(c: cachemod.Cache, ia64) -> cachemod.Entry:
    """A completed toolchain entry whose gcc only says its version."""
    entry = toolchain._entry(ia64, c)
    gcc = pathlib.Path("install/bin/ia64-linux-gnu-gcc")
    (entry.path / gcc).parent.mkdir(parents=True)
    (entry.path / gcc).write_text("#!/bin/sh\necho 'ia64-linux-gnu-gcc "
                                  "(GCC) 12.2.0'\n")
    (entry.path / gcc).chmod(0o755)
    entry.complete([str(gcc)])
    return entry


def test_kernel_cached_counts_a_compiler_the_matrix_built(tmp_path):
    c = cachemod.Cache(tmp_path / "cache")
    b = build.Builder(c)
    ia64 = archspec.load_all()["ia64"]
    assert ia64.kernel.toolchain
    assert not b.kernel_cached(ia64)            # no compiler yet
    entry = _fake_ia64_compiler(c, ia64)
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


def test_cache_state_says_what_a_target_has(tmp_path):
    """`matrix list`'s column: no compiler, not built, compile-checked
    only, kernel built (which wins), for the series given."""
    c = cachemod.Cache(tmp_path / "cache")
    b = build.Builder(c)
    ia64 = archspec.load_all()["ia64"]
    assert b.cache_state(ia64) == build.NO_COMPILER
    _fake_ia64_compiler(c, ia64)
    assert b.cache_state(ia64) == build.NOT_CACHED
    prefix = toolchain.cached_prefix(ia64, c)
    cc = kernel.CompileCheck(ia64, b.tree, c, prefix)
    cc.entry.path.mkdir(parents=True)
    cc.entry.complete([])
    assert b.cache_state(ia64) == build.CHECK_CACHED
    assert not b.kernel_cached(ia64)
    kb = kernel.KernelBuild(ia64, b.tree, c, prefix)
    kb.entry.path.mkdir(parents=True)
    kb.entry.complete([])
    assert b.cache_state(ia64) == build.KERNEL_CACHED
    # another series: nothing of it in the cache
    other = tmp_path / "patches"
    other.mkdir()
    (other / "series").write_text("")
    assert build.Builder(c, series_dir=other).cache_state(ia64) == \
        build.NOT_CACHED
    assert not (tmp_path / "cache" / "trees").exists()


def test_list_shows_tier_tree_cache_and_aliases(capsys):
    from matrix import __main__ as cli
    arches = list(archspec.load_all().values())
    states = {"x86_64": build.KERNEL_CACHED, "ia64": build.NO_COMPILER}
    lines = cli.list_lines(arches, "6.1",
                           lambda a: states.get(a.name, build.CHECK_CACHED))
    assert lines[0].split()[:5] == ["target", "tier", "kind", "tree",
                                    "cache"]
    row = {ln.split()[0]: ln for ln in lines[1:]}
    assert set(row) == {a.name for a in arches}
    x86 = row["x86_64"].split()
    assert x86[1:4] == ["fast", "boot", "6.1"]
    assert "kernel built" in row["x86_64"]
    assert row["x86_64"].endswith("amd64, qemu-x86_64")
    assert "no compiler yet" in row["ia64"] and "build-only" in row["ia64"]
    assert "compile-checked only" in row["armhf"]
    assert "+debug.config" in row["arm64-debug"]
    assert cli.main(["list", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "aarch64, qemu-arm64" in out and "cache not looked up" in out
    assert "candidates, not in the matrix: hppa" in out


def _series_check(tmp_path, *args: str) -> list[str]:
    """series-check sparse ARGS with a sparse that prints its arguments."""
    import os
    import subprocess
    fake = tmp_path / "bin" / "sparse"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    env = dict(os.environ, NOPFN_SPARSE_FILES="mm/memory.c",
               PATH=f"{fake.parent}:{os.environ['PATH']}")
    r = subprocess.run([str(kernel.SERIES_CHECK), "sparse", *args],
                       env=env, capture_output=True, text=True, check=True)
    return r.stderr.splitlines()


def test_series_check_runs_sparse_on_the_series_files_only(tmp_path):
    assert _series_check(tmp_path, "-D__x", "../src/mm/memory.c") == [
        "sparse: -D__x ../src/mm/memory.c"]
    assert _series_check(tmp_path, "-D__x", "../src/mm/mmap.c") == []


def test_series_check_gives_sparse_the_riscv_base_isa(tmp_path):
    """sparse 0.6.4 dies on -march=rv64imac_zicsr_...: the riscv64
    kernel's sparse check would check nothing."""
    out = _series_check(tmp_path, "-march=rv64imac_zicsr_zifencei_zicbom",
                        "-march=armv7-a", "mm/memory.c")
    assert out == ["sparse: -march=rv64imac -march=armv7-a mm/memory.c"]
