"""pytest plugin: the matrix beyond this machine.

  --lg-env FILE [--lg-target NAME] [--lg-coordinator URL]
        boot on the board(s) of a labgrid environment file
        (matrix/session/boards.py; --lg-env and --lg-coordinator are labgrid's
        own pytest options)
  --lava-jobs DIR [--lava-url BASE]
        write a LAVA job per booted target (matrix/lab/lava.py)
  --kcidb FILE [--kcidb-origin NAME] [--kcidb-url BASE]
        export the run as KCIDB v5 data (matrix/report/kcidb.py)

It also routes the build progress lines (matrix/build/progress.py) to the
terminal past pytest's output capturing.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

from ..build import progress


def pytest_addoption(parser):
    g = parser.getgroup("lab", "nopfn matrix: boards, LAVA, KCIDB")
    # --lg-env FILE and --lg-coordinator URL are labgrid's own pytest
    # options (labgrid.pytestplugin, also LG_ENV): the matrix boots the
    # file's targets as boards (matrix/session/boards.py)
    g.addoption("--lg-target", default=None, help="the --lg-env file's "
                "target to boot (default: the one named like the matrix "
                "target, or its only one)")
    g.addoption("--lava-jobs", default=None, help="write a LAVA job per "
                "booted target into this folder")
    g.addoption("--lava-url", default=None, help="URL where the "
                "--lava-jobs folder is served (default: file://)")
    g.addoption("--kcidb", default=None, help="write the run's results "
                "as KCIDB v5 JSON to this file")
    g.addoption("--kcidb-origin", default="nopfn", help="KCIDB origin "
                "(the prefix of every id)")
    g.addoption("--kcidb-url", default=None, help="URL where the results "
                "folder is served (default: file://)")


@pytest.hookimpl(trylast=True)     # after the terminal reporter exists
def pytest_configure(config):
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if tr is None:
        return

    def write(text: str) -> None:
        if capman is not None:
            with capman.global_and_fixture_disabled():
                tr.write_line(text)
        else:
            tr.write_line(text)

    tty = sys.__stderr__.isatty() if sys.__stderr__ else False
    progress.configure(write, tty)


def _matrix(config):
    hooks = config.pluginmanager.get_plugin("nopfn-matrix")
    m = getattr(hooks, "matrix", None)
    return m if m is not None and m.used else None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """After matrix/plugin/hooks.py wrote the results."""
    config = session.config
    m = _matrix(config)
    if m is None:
        return
    lines = []
    failed = False
    jobs_dir = config.getoption("--lava-jobs")
    if jobs_dir:
        try:
            written = write_lava_jobs(m, pathlib.Path(jobs_dir),
                                      config.getoption("--lava-url"))
            names = ", ".join(map(str, written.values()))
            lines.append(f"  LAVA jobs: {names or 'none (nothing built)'}")
        except Exception as exc:  # noqa: BLE001 - reported, run fails
            lines.append(f"  LAVA jobs FAILED: {exc}")
            failed = True
    out = config.getoption("--kcidb")
    if out:
        from ..report import kcidb
        try:
            data = kcidb.write(m.results.path, pathlib.Path(out).resolve(),
                               config.getoption("--kcidb-origin"),
                               config.getoption("--kcidb-url"))
            lines.append(f"  KCIDB: {out} ({len(data['builds'])} builds, "
                         f"{len(data['tests'])} tests, valid v5)")
        except Exception as exc:  # noqa: BLE001
            lines.append(f"  KCIDB export FAILED: {exc}")
            failed = True
    config._nopfn_lab_lines = lines
    if failed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    for line in getattr(config, "_nopfn_lab_lines", []):
        terminalreporter.write_line(line)


def write_lava_jobs(m, out: pathlib.Path, base_url=None) -> dict:
    from ..lab import lava
    builds = [(st.arch, m.artifacts(name)) for name, st in m.state.items()
              if st.arch.bootable]
    return lava.write_jobs(out, builds,
                           lambda p, a: m.program_args(p, a.scale)[0],
                           base_url, {"nopfn.results": str(m.results.path)})
