"""The suites catch real bugs: each patch in tests/mutations/ breaks the
driver in one known way, and the matrix run on the mutated driver must
fail in the tests that the patch names.

A patch's header says which tests to run and which must catch it:

    Target: kernel              the patch applies to the kernel tree after
                                the series (default: to driver/)
    Arch: <target>              the target it runs on, instead of
                                NOPFN_MUTATION_ARCH's (a case that only a
                                debug kernel can run)
    Run: <pytest -k expression>
    Must-fail: <test name>      each of these fails
    Caught-by: <test name>      at least one of these fails
    Survives: <reason>          (lines joined) the tests cannot catch it
                                on this machine, for this reason: skipped
                                with the reason unless
                                NOPFN_MUTATION_SURVIVORS=1, then a strict
                                xfail: reported with the reason while it
                                survives, a failure (XPASS) once the
                                tests do catch it

({arch} stands for the architecture). The module (and for a kernel
mutation, the kernel) must still build without a warning, so that the
failure is the suites' doing. Only a plain failure catches: a test that
fails and then passes on its rerun does not. Nothing of this lives in the
driver or the series: the mutated copy is built with --driver, or a copy
of kernel/patches/6.1/ with the mutation appended to its series with
--series.

NOPFN_MUTATION_ARCH names the targets (comma list; default x86_64).
NOPFN_MUTATION_SURVIVORS=1 runs the mutations marked Survives: too (a
kernel build and a guest each, for a verdict known in advance: not in
the default run, which CI's cold budget does not leave room for).
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from matrix.build.tree import SERIES_DIR
from matrix.spec import arch as archspec
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
MUTATIONS = sorted((REPO / "tests" / "mutations").glob("*.patch"))
# the race mutation needs real parallel faults: x86_64's guest collides
ARCHES = os.environ.get("NOPFN_MUTATION_ARCH", "x86_64").split(",")
SELECTED = [a.name for a in archspec.select(os.environ.get("NOPFN_ARCH",
                                                           "all"))]
SURVIVORS = os.environ.get("NOPFN_MUTATION_SURVIVORS") == "1"


def header(patch: pathlib.Path, arch: str = "x86_64@6.1"
           ) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"Run": [], "Must-fail": [], "Caught-by": [],
                                 "Target": [], "Arch": [], "Survives": []}
    for line in patch.read_text().splitlines():
        if line.startswith("--- "):
            break
        m = re.match(r"^(Run|Must-fail|Caught-by|Target|Arch|Survives):"
                     r"\s*(.+)$", line)
        if m:
            out[m.group(1)].append(m.group(2).replace("{arch}", arch))
    return out


def test_every_mutation_says_what_catches_it():
    """... and at least 14 of them are caught here (the series issue's
    bar): a mutation marked Survives: does not count."""
    assert len([p for p in MUTATIONS if not header(p)["Survives"]]) >= 14
    kinds = {"kernel": 0, "driver": 0}
    for p in MUTATIONS:
        h = header(p)
        assert len(h["Run"]) == 1, f"{p.name}: one Run: line"
        assert h["Must-fail"] or h["Caught-by"], f"{p.name}: names no test"
        assert h["Target"] in ([], ["kernel"]), f"{p.name}: Target: kernel"
        assert len(h["Arch"]) <= 1, f"{p.name}: one Arch: line at most"
        for a in h["Arch"]:
            assert a in archspec.load_all(), f"{p.name}: unknown Arch: {a}"
        kinds["kernel" if h["Target"] else "driver"] += 1
    assert kinds["kernel"] >= 3 and kinds["driver"] >= 3, kinds


def _kernel_series(tmp_path: pathlib.Path, patch: pathlib.Path) -> str:
    """A copy of kernel/patches/6.1/ with the mutation last in its series."""
    series = tmp_path / "patches"
    shutil.copytree(SERIES_DIR, series)
    shutil.copy(patch, series / ("zz-mutation-" + patch.name))
    with (series / "series").open("a") as f:
        f.write(f"zz-mutation-{patch.name}\n")
    return str(series)


def cases() -> list:
    """(patch, target): each mutation on its Arch:, else on each of
    NOPFN_MUTATION_ARCH's targets; one that Survives: is a strict xfail."""
    out = []
    for p in MUTATIONS:
        h = header(p)
        marks = [pytest.mark.xfail(strict=True, reason="survives: " +
                                   " ".join(h["Survives"]))] \
            if h["Survives"] else []
        out += [pytest.param(p, t, id=f"{p.stem}-{t}", marks=marks)
                for t in (h["Arch"] or ARCHES)]
    return out


@pytest.mark.parametrize("patch,target", cases())
def test_mutation_is_caught(tmp_path, patch, target):
    arch = f"{target}@6.1"          # the series of 6.1, mutated
    if arch not in SELECTED:
        pytest.skip(f"needs the {arch} guest (NOPFN_ARCH excludes it)")
    h = header(patch, arch)
    if h["Survives"] and not SURVIVORS:
        pytest.skip("survives on this machine: " + " ".join(h["Survives"]) +
                    " (NOPFN_MUTATION_SURVIVORS=1 runs it, a strict xfail)")
    if not archspec.load_all()[target].bootable:
        pytest.skip(f"{arch} is build-only: no guest runs the tests there")
    kernel = h["Target"] == ["kernel"]
    driver = tmp_path / "driver"
    shutil.copytree(REPO / "driver", driver,
                    ignore=shutil.ignore_patterns(".*", "*.o", "*.ko"))
    if kernel:
        where = ["--series", _kernel_series(tmp_path, patch)]
    else:
        r = subprocess.run(["patch", "-p1", "--no-backup-if-mismatch", "-d",
                            str(driver), "-i", str(patch)],
                           capture_output=True, text=True)
        assert r.returncode == 0, (f"{patch.name} no longer applies to "
                                   f"driver/: update it\n{r.stdout}"
                                   f"{r.stderr}")
        where = ["--driver", str(driver)]
    res = tmp_path / "results"
    prebuild(arch, *where)
    run = subprocess.run(
        [sys.executable, "-m", "matrix", "run", "--arch", arch,
         "--tree", "6.1", *where, "--results", str(res), "--no-install",
         "--",
         "-k", f"kernel_build or modules_build or ({h['Run'][0]})"],
        cwd=REPO, capture_output=True, text=True, timeout=1800)
    out = run.stdout + run.stderr
    rec = json.loads((res / f"{arch}.json").read_text())
    status = {n: t["status"] for n, t in rec["tests"].items()}
    assert status.get(f"test_kernel_build[{arch}]") == "passed", \
        f"the (mutated) kernel must build:\n{out}"
    assert status.get(f"test_modules_build[{arch}]") == "passed", \
        f"the mutated driver must build cleanly:\n{out}"
    # only a plain failure catches: a test that failed and then passed
    # on its rerun ("flaky") might have failed for another reason
    caught_as = ("failed",)
    assert any(s in caught_as for s in status.values()), \
        f"{patch.name} went unnoticed:\n{out}"
    for name in h["Must-fail"]:
        assert status.get(name) in caught_as, \
            f"{patch.name}: {name} is {status.get(name)}, not failed:\n{out}"
    if h["Caught-by"]:
        caught = [n for n in h["Caught-by"] if status.get(n) in caught_as]
        assert caught, (f"{patch.name}: none of {h['Caught-by']} failed:"
                        f"\n{out}")
