"""Kernel trees, the matrix's second axis: tree files, trees by path,
targets named LABEL@TREE, an architecture file's `trees:` overrides, and
a user's tree extracted (or copied) into the cache."""
import pathlib
import subprocess

import pytest

from matrix.build import cache as cachemod
from matrix.build import tree as treemod
from matrix.build.log import BuildError
from matrix.session import plan
from matrix.spec import arch as archspec
from matrix.spec import tree as treespec

from test_archspec import GOOD, write


def kernel_tree(top: pathlib.Path, version=(6, 12, 7)) -> pathlib.Path:
    (top / "mm").mkdir(parents=True)
    (top / "mm" / "a.c").write_text("one\n")
    (top / "Makefile").write_text(
        "# SPDX\nVERSION = {}\nPATCHLEVEL = {}\nSUBLEVEL = {}\n".format(
            *version))
    return top


def test_shipped_trees_oldest_first_each_with_its_series():
    trees = treespec.load_all()
    assert list(trees)[:2] == ["6.1", "6.12"]
    for t in trees.values():
        assert (t.series_dir / "series").is_file(), t.name
        assert t.package == f"linux-source-{t.name}" and not t.user
    assert treespec.select(None)[0].name == treespec.DEFAULT
    assert [t.name for t in treespec.select("6.12,6.1,6.12")] == \
        ["6.12", "6.1"]


def test_unknown_tree_says_what_is_known():
    with pytest.raises(treespec.TreeError) as exc:
        treespec.select("6.13")
    assert "known: 6.1, 6.12" in str(exc.value)
    assert "by path" in str(exc.value)


def test_a_tree_by_path_takes_its_series_by_version(tmp_path):
    src = kernel_tree(tmp_path / "linux-6.12.7")
    (t,) = treespec.select(str(src))
    assert (t.name, t.version, t.user) == ("linux-6.12.7", "6.12", True)
    assert t.series_dir == treespec.PATCH_DIR / "6.12"
    # the sparse reports its version's tree file excuses go with it
    assert t.sparse_known == treespec.load_all()["6.12"].sparse_known
    old = kernel_tree(tmp_path / "old", (5, 10, 1))
    with pytest.raises(treespec.TreeError) as exc:
        treespec.select(str(old))
    assert "no series for it (kernel/patches/5.10/)" in str(exc.value)
    (src / ".config").write_text("CONFIG_MMU=y\n")
    with pytest.raises(treespec.TreeError, match="make mrproper"):
        treespec.select(str(src))
    with pytest.raises(treespec.TreeError, match="a folder must be a "
                       "kernel tree"):
        treespec.select(str(tmp_path))
    tarball = tmp_path / "linux-6.1.150.tar.xz"
    tarball.write_bytes(b"")
    (t,) = treespec.select(str(tarball))
    assert (t.name, t.version) == ("linux-6.1.150", "6.1")
    nameless = tmp_path / "kernel.tar.xz"
    nameless.write_bytes(b"")
    with pytest.raises(treespec.TreeError, match="does not say its "
                       "version"):
        treespec.select(str(nameless))


def test_targets_are_named_by_tree(tmp_path):
    write(tmp_path, "toy", GOOD)
    trees = treespec.select("6.1,6.12")
    names = [a.name for a in archspec.select(None, tmp_path, trees=trees)]
    assert names == ["toy@6.1", "toy@6.12"]
    one = archspec.select("toy@6.12", tmp_path, trees=trees)
    assert [(a.name, a.label, a.tree, a.version) for a in one] == \
        [("toy@6.12", "toy", "6.12", "6.12")]
    with pytest.raises(archspec.ArchError, match="not one of this run's"):
        archspec.select("toy@6.12", tmp_path,
                        trees=treespec.select("6.1"))


OVERRIDE = """\
trees:
  "6.12":
    kernel:
      drop: [CONFIG_SERIAL_AMBA_PL011]
      config: |
        CONFIG_NEW_NAME=y
    qemu: {cpu: max, smp: 2}
    module_params: {test_nopfn: carve_phys=0x2}
    known_failures:
      prog-case: why it misses there
"""


def test_a_tree_override_is_a_small_part_of_the_file(tmp_path):
    write(tmp_path, "toy", GOOD + OVERRIDE)
    old, new = archspec.select(None, tmp_path,
                               trees=treespec.select("6.1,6.12"))
    assert old.kernel.config.strip() == "CONFIG_SERIAL_AMBA_PL011=y"
    assert (old.qemu.cpu, old.qemu.smp) == ("cortex-a57", 1)
    # the renamed symbol's line is gone, the new one added
    assert new.kernel.config.split() == ["CONFIG_NEW_NAME=y"]
    assert (new.qemu.cpu, new.qemu.smp, new.qemu.machine) == \
        ("max", 2, "virt")
    assert new.module_params == {"test_nopfn": "carve_phys=0x2"}
    assert dict(new.known_failures) == {"prog-case": "why it misses there"}
    assert not old.known_failures
    # the kernel build's key sees the change on 6.12 only
    assert old.fingerprint() != new.fingerprint()


@pytest.mark.parametrize("bad, message", [
    ('trees:\n  6.12: {}\n', "quote it"),
    ('trees:\n  "6.12": {userspace: {cc: gcc}}\n', "expected a mapping of"),
    ('trees:\n  "6.12": {kernel: {arch: x86}}\n', "only config"),
    ('trees:\n  "6.12": {kernel: {drop: [SOC_VIRT]}}\n', "only config"),
    ('trees:\n  "6.12": {qemu: {bios: x}}\n', "keys of the file's qemu"),
    ('trees:\n  "6.12": {removed: gone, qemu: {cpu: max}}\n',
     "and nothing else"),
])
def test_bad_overrides_are_refused(tmp_path, bad, message):
    write(tmp_path, "toy", GOOD + bad)
    with pytest.raises(archspec.ArchError, match=message):
        archspec.load_all(tmp_path)


def test_an_architecture_a_tree_removed_is_left_out_with_why(tmp_path):
    write(tmp_path, "toy", GOOD + 'trees:\n  "6.12": {removed: gone in '
          '6.7}\n')
    write(tmp_path, "aaa", GOOD.replace("name: toy", "name: aaa"))
    trees = treespec.select("6.1,6.12")
    assert [a.name for a in archspec.select(None, tmp_path, trees=trees)] \
        == ["aaa@6.1", "toy@6.1", "aaa@6.12"]
    with pytest.raises(archspec.ArchError, match="toy: gone in 6.7"):
        archspec.select("toy", tmp_path, trees=treespec.select("6.12"))
    cands = tmp_path / "cands"
    cands.mkdir()
    p = plan.chosen_plan("all", tmp_path, cand_dir=cands, trees=trees)
    assert p.left == {"toy@6.12": "not in this tree: gone in 6.7"}
    # the shipped ia64 is not in 6.12
    assert "ia64@6.12" in archspec.removed(treespec.select("all"))


def test_a_folder_tree_is_copied_without_git_and_keyed_by_content(
        tmp_path):
    src = kernel_tree(tmp_path / "linux-6.12")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref\n")
    series = tmp_path / "series"
    series.mkdir()
    (series / "1.patch").write_text("--- a/mm/a.c\n+++ b/mm/a.c\n"
                                    "@@ -1 +1 @@\n-one\n+two\n")
    (series / "series").write_text("1.patch\n")
    spec = treespec.from_path(src)
    c = cachemod.Cache(tmp_path / "cache")
    t = treemod.Tree(c, series, spec=spec)
    out = t.ensure()
    assert (out / "mm" / "a.c").read_text() == "two\n"
    assert not (t.pristine() / ".git").exists()
    assert (src / "mm" / "a.c").read_text() == "one\n"      # untouched
    key = t.key
    treemod._digests.clear()
    (src / "mm" / "a.c").write_text("changed\n")
    assert treemod.Tree(c, series, spec=spec).key != key


def test_a_tarball_that_is_not_the_version_its_name_says(tmp_path):
    kernel_tree(tmp_path / "x" / "linux-6.12.1", (6, 1, 5))
    tarball = tmp_path / "linux-6.12.1.tar.xz"
    subprocess.run(["tar", "-C", str(tmp_path / "x"), "-cJf", str(tarball),
                    "linux-6.12.1"], check=True)
    spec = treespec.from_path(tarball)
    c = cachemod.Cache(tmp_path / "cache")
    with pytest.raises(BuildError, match="is Linux 6.1, not 6.12"):
        treemod.Tree(c, spec.series_dir, [], spec).pristine()


def test_a_tree_file_names_what_it_drops_and_why(tmp_path):
    (tmp_path / "6.12.yaml").write_text(
        'name: "6.12"\nsource: /x.tar.xz\nconfig_drop:\n'
        '  CONFIG_GONE: renamed\n')
    (t,) = treespec.load_all(tmp_path).values()
    assert t.config_drop == (("CONFIG_GONE", "renamed"),)
    (tmp_path / "6.12.yaml").write_text(
        'name: "6.12"\nsource: /x.tar.xz\nconfig_drop: [CONFIG_GONE]\n')
    with pytest.raises(treespec.TreeError, match="config_drop must map"):
        treespec.load_all(tmp_path)
    # the shipped 6.12 drops what debug.config sets and 6.12 lacks
    assert dict(treespec.load_all()["6.12"].config_drop).keys() == \
        {"CONFIG_UBSAN_SANITIZE_ALL"}


def test_a_tree_file_gives_what_a_variant_needs_there(tmp_path):
    (tmp_path / "6.12.yaml").write_text(
        'name: "6.12"\nsource: /x.tar.xz\nvariant_config:\n'
        '  debug: "# CONFIG_SLUB_TINY is not set"\n')
    (t,) = treespec.load_all(tmp_path).values()
    assert dict(t.variant_config) == {"debug":
                                      "# CONFIG_SLUB_TINY is not set"}
    (tmp_path / "6.12.yaml").write_text(
        'name: "6.12"\nsource: /x.tar.xz\nvariant_config: {debug: 3}\n')
    with pytest.raises(treespec.TreeError, match="variant_config"):
        treespec.load_all(tmp_path)
    assert "SLUB_TINY" in dict(
        treespec.load_all()["6.12"].variant_config)["debug"]
