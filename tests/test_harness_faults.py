"""The harness under faults, with real guests (x86_64, the fastest boot).

- guests that flood the console, hang, and panic are killed in bounded
  time, each failure carries its reason and the console log, and the run
  goes on with a fresh guest;
- two runs started at once share the cache without corrupting it or each
  other's results, and build each new entry once;
- a corrupted and a partial cache entry are detected and rebuilt.

Each runs `python3 -m matrix run` as its own process, as a user would.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from matrix.spec import arch as archspec
from matrix.build import cache
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
FAULTS = REPO / "tests" / "faults"
ARCH = "x86_64@6.1"

pytestmark = pytest.mark.skipif(
    ARCH not in [a.name for a in archspec.select(
        os.environ.get("NOPFN_ARCH", "all"))],
    reason=f"needs the {ARCH} guest (NOPFN_ARCH excludes it)")


@pytest.fixture(scope="module", autouse=True)
def built():
    """The kernel these runs boot, built before their time limits run."""
    prebuild(ARCH, "--variant", "none")


def matrix_run(results: pathlib.Path, user: pathlib.Path, *pytest_args: str,
               wait: bool = True):
    cmd = [sys.executable, "-m", "matrix", "run", "--arch", ARCH,
           "--tree", "6.1", "--user-tests", str(user), "--results", str(results),
           "--no-install", "--", "-k", "user", *pytest_args]
    p = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if not wait:
        return p
    out, _ = p.communicate(timeout=600)
    return p.returncode, out


def record(results: pathlib.Path) -> dict:
    return json.loads((results / f"{ARCH}.json").read_text())


def test_hang_flood_and_panic_are_killed_and_the_run_goes_on(tmp_path):
    res = tmp_path / "results"
    t0 = time.monotonic()
    # no reruns: each fault kills exactly one guest; three boots at most
    rc, out = matrix_run(res, FAULTS, "--test-timeout", "5",
                         "--max-output", "65536", "--reruns", "0",
                         "--max-boots", "3")
    wall = time.monotonic() - t0
    assert rc != 0, out
    rec = record(res)
    status = {n: t["status"] for n, t in rec["tests"].items()}
    prog = f"test_program[{ARCH}-user/%s]"
    assert status[prog % "flood"] == "failed", out
    assert status[prog % "hang"] == "failed", out
    assert status[prog % "panic"] == "failed", out
    # after two killed guests, a third boot runs the next test
    assert status[prog % "ok"] == "passed", out
    assert rec["boots"] == 3, out

    fails = {n: t.get("message", "") for n, t in rec["tests"].items()}
    assert "flooded the console" in fails[prog % "flood"]
    assert "printed no complete line for 5 s" in fails[prog % "hang"]
    assert "guest died" in fails[prog % "panic"]
    assert "kernel panic" in fails[prog % "panic"]
    # each failure is reported with the guest's console log
    assert out.count(f"console log of the {ARCH} guest") >= 3, out
    panic_log = (res / ARCH / "boot3" / "console.log").read_text(
        errors="replace")
    assert "Kernel panic - not syncing" in panic_log
    assert "flood line" in (res / ARCH / "boot1" / "console.log").read_text(
        errors="replace")
    # bounded: the flood cap, 5 s of silence, an immediate panic, and
    # three boots, not the default 60 s timeouts
    assert wall < 150, f"took {wall:.0f} s"


def _unique_tests(tmp_path: pathlib.Path) -> pathlib.Path:
    """A user test that no cache entry holds yet (a fresh token)."""
    d = tmp_path / "user"
    d.mkdir()
    (d / "unique.c").write_text(
        f'/* {uuid.uuid4()}: a new cache key for the tests and initramfs */\n'
        '#include <stdio.h>\n\nint main(void)\n{\n'
        '\tputs("unique ok");\n\treturn 0;\n}\n')
    return d


def _entries(summary: dict, step: str) -> list[str]:
    return [e for e in summary["rebuilt"] if e.startswith(step + "/")]


def test_two_runs_at_once_and_broken_cache_entries(tmp_path):
    user = _unique_tests(tmp_path)
    runs = [matrix_run(tmp_path / f"r{i}", user, wait=False)
            for i in (1, 2)]
    outs = [p.communicate(timeout=900)[0] for p in runs]
    for p, out in zip(runs, outs):
        assert p.returncode == 0, out
    sums = [json.loads((tmp_path / f"r{i}" / "summary.json").read_text())
            for i in (1, 2)]
    for i, s in enumerate(sums, 1):
        assert s["results"] == str(tmp_path / f"r{i}")
        assert s["arches"][ARCH]["status"] == "passed"
        assert record(tmp_path / f"r{i}")["tests"], "no tests recorded"
    # the new entries were built by one run and used by the other
    tests = _entries(sums[0], "tests") + _entries(sums[1], "tests")
    initrd = _entries(sums[0], "initramfs") + _entries(sums[1], "initramfs")
    assert len(tests) == 1 and len(initrd) == 1, sums
    root = cache.DEFAULT_ROOT
    try:
        # corrupted: half an initramfs; partial: a tests entry whose stamp
        # was never written (a build killed half way)
        cpio = root / initrd[0] / "initramfs.cpio"
        cpio.write_bytes(cpio.read_bytes()[: cpio.stat().st_size // 2])
        (root / tests[0] / cache.STAMP).unlink()
        rc, out = matrix_run(tmp_path / "r3", user)
        assert rc == 0, out
        s3 = json.loads((tmp_path / "r3" / "summary.json").read_text())
        assert _entries(s3, "tests") == tests, s3["rebuilt"]
        assert _entries(s3, "initramfs") == initrd, s3["rebuilt"]
        assert "unique ok" in (tmp_path / "r3" / ARCH / "boot1" /
                               "console.log").read_text(errors="replace")
    finally:
        for e in tests + initrd:        # entries only this test needed
            shutil.rmtree(root / e, ignore_errors=True)
