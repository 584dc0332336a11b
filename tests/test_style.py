"""Kernel code style: checkpatch.pl --strict from the extracted tree.

Every patch of the series and every C file of driver/ must be clean:
no error, no warning, no check.
"""
import pathlib
import subprocess

import pytest

from matrix import cache, kernel

REPO = pathlib.Path(__file__).resolve().parent.parent
PATCHES = [p for p, _ in kernel.parse_series()]
DRIVER = sorted(p for p in (REPO / "driver").rglob("*")
                if p.suffix in (".c", ".h"))


@pytest.fixture(scope="module")
def tree() -> pathlib.Path:
    return kernel.Tree(cache.Cache()).ensure()


def checkpatch(tree: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["perl", "scripts/checkpatch.pl", "--strict",
                           "--color=never", *args], cwd=tree,
                          capture_output=True, text=True)


@pytest.mark.parametrize("patch", PATCHES, ids=[p.name for p in PATCHES])
def test_patch_checkpatch_clean(tree, patch):
    r = checkpatch(tree, str(patch))
    assert r.returncode == 0 and "total: 0 errors, 0 warnings, 0 checks" \
        in r.stdout, r.stdout


@pytest.mark.parametrize("path", DRIVER,
                         ids=[str(p.relative_to(REPO)) for p in DRIVER])
def test_driver_checkpatch_clean(tree, path):
    r = checkpatch(tree, "--no-tree", "-f", str(path))
    assert r.returncode == 0 and " 0 errors, 0 warnings, 0 checks" \
        in r.stdout, r.stdout


def test_series_is_not_empty():
    assert PATCHES, "kernel/patches/series lists no patch"
