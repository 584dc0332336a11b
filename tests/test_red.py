"""The suite goes red when something really went wrong.

One matrix run, as a user would start it, on the x86_64 debug kernel
(it has the kernel's fault injection, under which mspec_stress used to
tolerate any worker death by SIGSEGV), with the programs of tests/red/:

- wild_stress: mspec_stress with one wild write in a worker: its
  worker_exits case fails, naming the wild access;
- flaky: fails once, passes on its rerun: FLAKY, and the run fails;
- inner_skip: a plain program that declares its cases: its skip is a
  pytest skip with the program's reason;
- inner_skip_undeclared: a plain program whose KTAP has a skip but that
  declares no cases: it fails, saying to declare them.

The lockdep splat of a killed guest and the kernel log scan's other
holes are recorded logs in tests/unit/test_kernlog.py.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from matrix.spec import arch as archspec
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
RED = REPO / "tests" / "red"
TARGET = "x86_64-debug@6.1"

pytestmark = pytest.mark.skipif(
    TARGET not in [a.name for a in archspec.select(
        os.environ.get("NOPFN_ARCH", "all"))],
    reason=f"needs the {TARGET} guest (NOPFN_ARCH excludes it)")


@pytest.fixture(scope="module")
def red_run(tmp_path_factory):
    res = tmp_path_factory.mktemp("red") / "results"
    prebuild(TARGET, "--user-tests", str(RED))
    cmd = [sys.executable, "-m", "matrix", "run", "--arch", TARGET,
           "--tree", "6.1", "--user-tests", str(RED), "--results", str(res), "--no-install",
           "--", "-k", "user"]
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                       timeout=1200)
    out = p.stdout + p.stderr
    rec = json.loads((res / f"{TARGET}.json").read_text())
    return p.returncode, out, rec


def _status(rec: dict, name: str) -> dict:
    t = rec["tests"].get(name)
    assert t is not None, f"{name} not run: {sorted(rec['tests'])}"
    return t


def test_run_is_red(red_run):
    rc, out, rec = red_run
    assert rc != 0, out
    assert rec["status"] == "failed", out


def test_wild_access_in_a_stress_worker_fails(red_run):
    _, out, rec = red_run
    case = _status(rec, f"test_case[{TARGET}-user/wild_stress-worker_exits]")
    # Failed, and red either way: the rerun may not reach the wild write
    # (the kernel's fault injection can end the generation of the worker
    # that makes it first: a forced SIGSEGV), and then the case is
    # "flaky", which fails the run too; the first run's failure must be
    # the wild access.
    assert case["status"] in ("failed", "flaky"), out
    why = case.get("first_failure") or case.get("message", "")
    assert "wild access" in why, case
    # and the guest had the kernel's fault injection on
    inj = _status(rec, f"test_case[{TARGET}-user/wild_stress-"
                       "kernel_fault_injection]")
    assert inj["status"] == "passed", inj


def test_fails_once_then_passes_is_red(red_run):
    _, out, rec = red_run
    t = _status(rec, f"test_program[{TARGET}-user/flaky]")
    assert t["status"] == "flaky", out
    assert "rerun_log" in t, t
    assert "FLAKY" in out


def test_inner_skip_is_a_pytest_skip_with_its_reason(red_run):
    _, out, rec = red_run
    ok = _status(rec, f"test_case[{TARGET}-user/inner_skip-checked]")
    skip = _status(rec, f"test_case[{TARGET}-user/inner_skip-not_checked]")
    assert ok["status"] == "passed", out
    assert skip["status"] == "skipped", out
    assert "nothing to check it on" in skip.get("message", ""), skip


def test_undeclared_inner_skip_fails(red_run):
    _, out, rec = red_run
    t = _status(rec, f"test_program[{TARGET}-user/inner_skip_undeclared]")
    assert t["status"] == "failed", out
    assert "matrix-cases" in t.get("message", ""), t
