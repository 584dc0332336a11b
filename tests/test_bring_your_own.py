"""Your own driver and tests, first class (README, "Test your own
driver"), with real guests on x86_64 and arm64.

A copy of driver/ with the example module of docs/examples/mydriver/
added (its C file, its Kbuild line, its module-params.yaml) is run with
--driver, and the example's test program, docs/examples/tests/, with
--user-tests; the program defines _GNU_SOURCE itself. The extra module
must build and load (with the parameters its folder gives), each KTAP
case of the program must pass, and the run must be green. Each runs
`python3 -m matrix run` as its own process, as a user would, narrowed to
the items that concern the driver and the program: the builds, the boot,
the module loads and unloads, the program's items and the kernel log
scan (the project's own programs in the same guests are
tests/test_matrix.py's). The run's --json - output is parsed back and
must agree with its summary.json.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from matrix.build import programs
from matrix.spec import arch as archspec
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples"
ARCHES = ["x86_64", "arm64"]
SELECTED = [a.name for a in archspec.select(os.environ.get("NOPFN_ARCH",
                                                           "all"))]
MODULE = "nopfn_example"
PROGRAM = "user/nopfn_example"
ITEMS = "build or boot or module or user/ or test_kernel_log"


def driver_copy(tmp_path: pathlib.Path) -> pathlib.Path:
    """driver/ plus the example module, as README's walk-through makes
    it: the C file and the parameters file copied, the Kbuild appended."""
    d = tmp_path / "mydriver"
    shutil.copytree(REPO / "driver", d,
                    ignore=shutil.ignore_patterns(".*", "*.o", "*.ko"))
    mine = EXAMPLE / "mydriver"
    shutil.copy(mine / f"{MODULE}.c", d)
    shutil.copy(mine / "module-params.yaml", d)
    with (d / "Kbuild").open("a") as f:
        f.write("\n" + (mine / "Kbuild").read_text())
    return d


@pytest.mark.parametrize("target", ARCHES)
def test_your_module_and_program_on(tmp_path, target):
    arch = f"{target}@6.1"          # the target: its 6.1 kernel
    if arch not in SELECTED:
        pytest.skip(f"needs the {arch} guest (NOPFN_ARCH excludes it)")
    driver = driver_copy(tmp_path)
    user = EXAMPLE / "tests"
    where = ["--driver", str(driver), "--user-tests", str(user)]
    prebuild(arch, *where)
    res = tmp_path / "results"
    run = subprocess.run(
        [sys.executable, "-m", "matrix", "run", "--arch", arch,
         "--tree", "6.1", *where, "--results", str(res), "--no-install", "--json", "-",
         "--", "-k", ITEMS],
        cwd=REPO, capture_output=True, text=True, timeout=1800)
    out = run.stdout + run.stderr
    rec = json.loads((res / f"{arch}.json").read_text())
    status = {n: t["status"] for n, t in rec["tests"].items()}

    # the extra module: declared, built without a warning, loaded (with
    # pages=8 from the folder's module-params.yaml: the program's first
    # case reads it back), unloaded and loaded again
    assert status[f"test_modules_build[{arch}]"] == "passed", out
    for step in ("load", "unload"):
        assert status[f"test_module_{step}[{arch}-{MODULE}]"] == \
            "passed", out
    # the kernel's test module and driver/'s are still loaded beside it
    for mod in ("test_nopfn", "nopfn_bench", "mspec"):
        assert status[f"test_module_load[{arch}-{mod}]"] == "passed", out

    # the program: built as written (its own #define _GNU_SOURCE, no
    # warning), and each of its KTAP cases a passing item
    prog = programs.describe(PROGRAM, user / f"{MODULE}.c")
    assert len(prog.cases) >= 5, prog.cases
    assert status[f"test_program_builds[{arch}-{PROGRAM}]"] == "passed", out
    for case in prog.cases:
        assert status[f"test_case[{arch}-{PROGRAM}-{case}]"] == "passed", \
            f"{case}:\n{out}"
    assert status[f"test_program[{arch}-{PROGRAM}]"] == "passed", out

    # green: the run, the target, the kernel log
    assert status[f"test_kernel_log[{arch}]"] == "passed", out
    assert run.returncode == 0, out
    assert rec["status"] == "passed", out
    summary = json.loads((res / "summary.json").read_text())
    assert summary["arches"][arch]["status"] == "passed"
    assert summary["arches"][arch]["counts"]["failed"] == 0

    # --json -: stdout is the JSON document alone (pytest's report went
    # to stderr), and it says what summary.json and the record say
    doc = json.loads(run.stdout)
    mine = doc["targets"][arch]
    assert mine["status"] == summary["arches"][arch]["status"]
    assert mine["counts"] == summary["arches"][arch]["counts"]
    assert mine["tree"] == "6.1"
    assert {r["test"]: r["status"] for r in doc["results"]
            if r["target"] == arch} == status
    assert all(r["duration"] >= 0 for r in doc["results"])
