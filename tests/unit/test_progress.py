"""Build progress lines (matrix/build/progress.py) from the build steps, the
cache and the logged commands."""
import re

import pytest

from matrix.build import cache as cachemod
from matrix.build import log
from matrix.build import progress


@pytest.fixture
def lines(monkeypatch):
    got: list[str] = []
    monkeypatch.delenv("NOPFN_PROGRESS", raising=False)
    progress.configure(got.append, tty=True)
    yield got
    progress.configure(None, None)


LINE = re.compile(r"^\[\s*\d+:\d\d\] (\S+)\s+(\S+)\s+(.*)$")


def test_a_build_step_says_target_step_and_outcome(lines, tmp_path):
    c = cachemod.Cache(tmp_path)
    with progress.step("x86_64", "kernel"):
        e = c.entry("kernels", "x86_64", {"a": 1})
        with e.lock():
            e.reset()
            log.run_logged(["true"], e.path / "build.log",
                           what="building the kernel")
            e.complete([])
        progress.step_done(181.0, built=True, failed=False)
    with progress.step("x86_64", "modules"):
        progress.step_done(0.02, built=False, failed=False)
    with progress.step("arm64", "busybox"):
        progress.step_done(3.0, built=False, failed=True)
    parsed = [LINE.match(s).groups() for s in lines]
    assert parsed == [
        ("x86_64", "kernel", f"building kernels/{e.path.name} (not cached)"),
        ("x86_64", "kernel", "building the kernel"),
        ("x86_64", "kernel", "built in 3m01s"),
        ("x86_64", "modules", "cached (0.02 s)"),
        ("arm64", "busybox", "FAILED after 3.00 s")]


def test_a_long_command_reports_while_it_runs(lines, tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "HEARTBEAT", 0.2)
    with progress.step("riscv64", "busybox"):
        log.run_logged(["sleep", "0.7"], tmp_path / "log",
                       what="building busybox")
    msgs = [LINE.match(s).group(3) for s in lines]
    assert msgs[0] == "building busybox"
    ticks = [m for m in msgs[1:] if re.fullmatch(
        r"building busybox: 0\.\d\d s so far", m)]
    assert len(ticks) >= 2, msgs


def test_failing_command_still_raises(lines, tmp_path):
    with pytest.raises(log.BuildError, match="exit 3"):
        log.run_logged(["sh", "-c", "exit 3"], tmp_path / "log", what="x")


def test_only_on_a_terminal_unless_forced(monkeypatch):
    got: list[str] = []
    monkeypatch.delenv("NOPFN_PROGRESS", raising=False)
    progress.configure(got.append, tty=False)
    try:
        progress.emit("hidden")
        monkeypatch.setenv("NOPFN_PROGRESS", "1")
        progress.emit("forced")
        progress.configure(got.append, tty=True)
        monkeypatch.setenv("NOPFN_PROGRESS", "0")
        progress.emit("off")
    finally:
        progress.configure(None, None)
    assert [LINE.match(s).group(3) if LINE.match(s) else s.split("] ")[1]
            .strip() for s in got] == ["forced"]


def test_durations():
    assert progress.duration(0.5) == "0.50 s"
    assert progress.duration(42) == "42 s"
    assert progress.duration(125) == "2m05s"
    assert progress.duration(3725) == "1h02m05s"


def test_lines_get_past_pytest_capturing(tmp_path):
    """Builds run inside pytest items, whose output pytest captures: the
    lab plugin writes the lines through the terminal reporter instead,
    so they show while the item runs."""
    import os
    import pathlib
    import subprocess
    repo = pathlib.Path(__file__).resolve().parents[2]
    t = tmp_path / "test_x.py"
    t.write_text("from matrix.build import progress\n"
                 "def test_build():\n"
                 "    print('captured stdout')\n"
                 "    with progress.step('arm64', 'kernel'):\n"
                 "        progress.emit('building the kernel')\n")
    r = subprocess.run(["/usr/bin/python3", "-m", "pytest", "-q", "-p",
                        "matrix.plugin.lab", "-p", "no:cacheprovider",
                        str(t)],
                       cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(repo),
                                NOPFN_PROGRESS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    got = [ln for ln in r.stdout.splitlines() if "building the" in ln]
    assert len(got) == 1 and LINE.match(got[0]).groups() == (
        "arm64", "kernel", "building the kernel"), r.stdout
    assert "captured stdout" not in r.stdout
