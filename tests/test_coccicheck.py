"""Coccinelle reports nothing new on the series' C files.

The tree's own semantic patches (scripts/coccinelle, as `make coccicheck
MODE=report` runs them) on each C file the series writes: a report the
same script does not make on the pristine file is a failure
(matrix/build/cocci.py). Every script must run: one this spatch cannot
run is a failure that says why, not a silent gap.
"""
import pytest

from matrix.build import cache, deps
from matrix.build.cocci import Coccicheck
from matrix.build.tree import Tree

FILES = Tree(cache.Cache()).touched_c_files()


@pytest.fixture(scope="module")
def cocci() -> Coccicheck:
    deps.ensure_needs(deps.COCCI)
    tree = Tree(cache.Cache())
    tree.ensure()
    return Coccicheck(tree.cache, tree)


def test_every_script_runs(cocci):
    assert cocci.scripts, "no semantic patch in scripts/coccinelle"
    assert not cocci.not_run, "\n".join(f"{s}: {why}"
                                        for s, why in cocci.not_run)


@pytest.mark.parametrize("rel", FILES)
def test_coccicheck_nothing_new(cocci, rel):
    new = cocci.new_reports(rel)
    assert not new, "coccinelle, new in the series:\n" + "\n".join(new)


def test_a_planted_report_is_new(tmp_path):
    """The check can fail: a file whose new code has a NULL test before
    kfree() (the tree's free/ifnullfree.cocci) gets that report as new;
    the same code in the pristine file as well makes it old."""
    real = Tree(cache.Cache()).ensure()
    script = "scripts/coccinelle/free/ifnullfree.cocci"
    trees = {}
    for name in ("patched", "pristine", "both"):
        root = tmp_path / name
        (root / script).parent.mkdir(parents=True)
        (root / script).write_text((real / script).read_text())
        (root / "mm").mkdir()
        trees[name] = root
    plain = "void f(void *p)\n{\n\tkfree(p);\n}\n"
    planted = "void f(void *p)\n{\n\tif (p)\n\t\tkfree(p);\n}\n"
    (trees["patched"] / "mm/x.c").write_text("\n" + planted)
    (trees["pristine"] / "mm/x.c").write_text(plain)
    (trees["both"] / "mm/x.c").write_text(planted)
    c = cache.Cache(tmp_path / "cache")
    deps.ensure_needs(deps.COCCI)

    class FakeTree:
        def __init__(self, src, pristine):
            self.src, self._old = src, pristine

        def pristine(self):
            return self._old

    new = Coccicheck(c, FakeTree(trees["patched"], trees["pristine"])
                     ).new_reports("mm/x.c")
    assert len(new) == 1 and "mm/x.c" in new[0] and script in new[0], new
    # reported on both sides, at another line: not new
    assert Coccicheck(c, FakeTree(trees["patched"], trees["both"])
                      ).new_reports("mm/x.c") == []
