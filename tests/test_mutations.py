"""The suites catch real bugs: each patch in tests/mutations/ breaks the
driver in one known way, and the matrix run on the mutated driver must
fail in the tests that the patch names.

A patch's header says which tests to run and which must catch it:

    Run: <pytest -k expression>
    Must-fail: <test name>      each of these fails
    Caught-by: <test name>      at least one of these fails

({arch} stands for the architecture). The module must still build
without a warning, so that the failure is the suites' doing. Nothing of
this lives in the driver: the mutated copy is built with --driver.
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

from matrix import archspec

REPO = pathlib.Path(__file__).resolve().parent.parent
MUTATIONS = sorted((REPO / "tests" / "mutations").glob("*.patch"))
# the race mutation needs real parallel faults: x86_64's guest collides
ARCH = os.environ.get("NOPFN_MUTATION_ARCH", "x86_64")

pytestmark = pytest.mark.skipif(
    ARCH not in [a.name for a in archspec.select(
        os.environ.get("NOPFN_ARCH", "all"))],
    reason=f"needs the {ARCH} guest (NOPFN_ARCH excludes it)")


def header(patch: pathlib.Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"Run": [], "Must-fail": [], "Caught-by": []}
    for line in patch.read_text().splitlines():
        if line.startswith("--- "):
            break
        m = re.match(r"^(Run|Must-fail|Caught-by):\s*(.+)$", line)
        if m:
            out[m.group(1)].append(m.group(2).replace("{arch}", ARCH))
    return out


def test_every_mutation_says_what_catches_it():
    assert len(MUTATIONS) >= 3
    for p in MUTATIONS:
        h = header(p)
        assert len(h["Run"]) == 1, f"{p.name}: one Run: line"
        assert h["Must-fail"] or h["Caught-by"], f"{p.name}: names no test"


@pytest.mark.parametrize("patch", MUTATIONS, ids=[p.stem for p in MUTATIONS])
def test_mutation_is_caught(tmp_path, patch):
    h = header(patch)
    driver = tmp_path / "driver"
    shutil.copytree(REPO / "driver", driver,
                    ignore=shutil.ignore_patterns(".*", "*.o", "*.ko"))
    r = subprocess.run(["patch", "-p1", "--no-backup-if-mismatch", "-d",
                        str(driver), "-i", str(patch)],
                       capture_output=True, text=True)
    assert r.returncode == 0, (f"{patch.name} no longer applies to driver/:"
                               f" update it\n{r.stdout}{r.stderr}")
    res = tmp_path / "results"
    run = subprocess.run(
        [sys.executable, "-m", "matrix", "run", "--arch", ARCH, "--driver",
         str(driver), "--results", str(res), "--no-install", "--",
         "-k", f"modules_build or ({h['Run'][0]})"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    rec = json.loads((res / f"{ARCH}.json").read_text())
    status = {n: t["status"] for n, t in rec["tests"].items()}
    assert status.get(f"test_modules_build[{ARCH}]") == "passed", \
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
