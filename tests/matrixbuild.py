"""Build before a timed run: the tests that start `python3 -m matrix run`
as a user would bound each run's time, and on an empty cache the first of
them to need a target would spend that bound building its kernel (5 to 9
minutes, more while another heavy build holds the machine-wide lock).
`prebuild()` builds what the run will boot with `python3 -m matrix build`
and the same arguments, bounded only by the build's own commands (which
report progress and fail on their own), so that a run's time limit is
the guest's.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def prebuild(arch: str, *args: str, env: dict | None = None) -> None:
    """`python3 -m matrix build --arch ARCH ARGS...`; fails the test with
    the build's output when the build fails."""
    r = subprocess.run(
        [sys.executable, "-m", "matrix", "build", "--arch", arch,
         "--no-install", *args],
        cwd=REPO, capture_output=True, text=True,
        env=env if env is not None else dict(os.environ))
    assert r.returncode == 0, f"building {arch} failed:\n{r.stdout}{r.stderr}"
