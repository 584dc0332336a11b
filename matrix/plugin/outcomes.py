"""pytest hooks beside matrix/plugin/hooks.py: what each result means.

- A failing in-guest item (a KTAP case or a program's own check,
  Phase.TESTS) is rerun once: the program runs again in the guest (a
  dead guest is rebooted first) and the item is checked against that
  second run. If it
  passes there, the item is "flaky": reported as FLAKY, recorded as
  flaky in the results and on the dashboard, and it fails the run all
  the same (a failure that goes away on a rerun is still a failure);
  only --tolerate-flaky lets a flaky item pass. Each program is rerun
  at most once per target, however many of its items failed; every
  failing item is judged against that rerun.
- Each result records the log behind it, relative to the results
  folder: the program's .ktap (NAME.rerun.ktap for the rerun) or the
  boot's console.log.
- A run with a regression (matrix/report/history.py) exits non-zero.
"""
from __future__ import annotations

import os
import pathlib
from typing import Optional

import pytest

from ..session.guest import GuestError
from ..session.matrix import ArchState, Matrix, ProgramRun
from . import phases
from .phases import Phase


class OutcomeHooks:
    def __init__(self, config):
        self.config = config
        self.reruns: dict[tuple[str, str], ProgramRun] = {}
        self.logs: dict[tuple[str, str], dict[str, Optional[str]]] = {}

    @property
    def matrix(self) -> Optional[Matrix]:
        main = self.config.pluginmanager.get_plugin("nopfn-matrix")
        return main.matrix

    @staticmethod
    def _params(item) -> dict:
        spec = getattr(item, "callspec", None)
        return spec.params if spec else {}

    def _rel(self, path: Optional[pathlib.Path]) -> Optional[str]:
        if path is None or self.matrix is None:
            return None
        return os.path.relpath(path, self.matrix.results.path)

    # ------------------------------------------------------------ reruns
    def _rerunnable(self, item, exc: BaseException) -> bool:
        params = self._params(item)
        m = self.matrix
        return (m is not None and m.options.reruns > 0 and
                "program" in params and params.get("arch") in m.state and
                phases.step_of(item.function).phase == Phase.TESTS and
                not isinstance(exc, (pytest.skip.Exception,
                                     pytest.xfail.Exception,
                                     pytest.exit.Exception,
                                     KeyboardInterrupt)))

    def _rerun_program(self, st: ArchState, program: str) -> None:
        """Run the program again; keep both runs' logs."""
        m = self.matrix
        prog = next(p for p in m.programs_of(st.arch.tree)
                    if p.name == program)
        fname = program.replace("/", "-") + ".ktap"
        first_log: Optional[pathlib.Path] = None
        saved: Optional[bytes] = None
        if st.guest is not None:
            first_log = st.guest.workdir / fname
            if first_log.is_file():
                saved = first_log.read_bytes()
            else:
                first_log = st.guest.transcript
        st.runs.pop(program, None)
        try:
            run = m.run_program(st.arch.name, prog)
        except GuestError as exc:
            run = ProgramRun(error=str(exc))
        self.reruns[(st.arch.name, program)] = run
        rerun_log: Optional[pathlib.Path] = None
        if st.guest is not None:
            out = st.guest.workdir / fname
            if not run.error and out.is_file():
                rerun_log = out.with_name(fname[:-5] + ".rerun.ktap")
                os.replace(out, rerun_log)
                if saved is not None and out == first_log:
                    first_log.write_bytes(saved)
            else:
                rerun_log = st.guest.transcript
        self.logs[(st.arch.name, program)] = {
            "log": self._rel(first_log), "rerun_log": self._rel(rerun_log)}

    def _passes_on_rerun(self, item) -> bool:
        params = self._params(item)
        arch, program = params["arch"], params["program"]
        st = self.matrix.state[arch]
        first = st.runs.get(program)
        if (arch, program) not in self.reruns:
            self._rerun_program(st, program)
        rerun = self.reruns[(arch, program)]
        item.matrix_rerun = True
        if rerun.error:
            return False
        st.runs[program] = rerun
        try:
            item.runtest()
        except (KeyboardInterrupt, pytest.exit.Exception):
            raise
        except BaseException:      # noqa: BLE001 - failed (or skipped)
            return False
        finally:
            # later items of the program are judged on its first run
            if first is None:
                st.runs.pop(program, None)
            else:
                st.runs[program] = first
        return True

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        outcome = yield
        if outcome.excinfo is None:
            return
        exc = outcome.excinfo[1]
        if not self._rerunnable(item, exc):
            return
        if self._passes_on_rerun(item):
            item.matrix_flaky = f"{type(exc).__name__}: {exc}"[-2000:]
            if self.matrix.options.tolerate_flaky:
                outcome.force_result(None)

    # ----------------------------------------------------------- reports
    def _logs(self, item, st: ArchState) -> dict:
        program = self._params(item).get("program")
        key = (st.arch.name, program)
        if program is not None and key in self.logs:
            logs = dict(self.logs[key])
            if not getattr(item, "matrix_rerun", False):
                logs.pop("rerun_log", None)
            return logs
        g = st.guest
        if g is None:
            return {}
        if program is not None:
            ktap = g.workdir / (program.replace("/", "-") + ".ktap")
            if ktap.is_file():
                return {"log": self._rel(ktap)}
        return {"log": self._rel(g.transcript)}

    # Outermost wrapper: runs after hooks.py recorded the result.
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        m = self.matrix
        arch = self._params(item).get("arch")
        if m is None or arch not in m.state:
            return
        st = m.state[arch]
        rec = st.tests.get(item.name)
        if rec is None or rep.when not in ("call", "setup"):
            return
        if rep.when == "setup" and rep.passed:
            return
        rec.update({k: v for k, v in self._logs(item, st).items() if v})
        flaky = getattr(item, "matrix_flaky", None)
        if rep.when == "call" and flaky:
            rep.matrix_flaky = True
            rec["status"] = "flaky"
            rec["first_failure"] = flaky
            rep.sections.append(
                ("flaky: failed, then passed on its rerun"
                 + ("" if rep.passed else " (fails the run; "
                    "--tolerate-flaky to let it pass)"), flaky))

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report, config):
        if report.when == "call" and getattr(report, "matrix_flaky", False):
            if report.passed:
                return "flaky", "R", ("FLAKY", {"yellow": True})
            # a plain word: the short test summary prints it as it is
            return "failed", "R", "FLAKY"
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        main = self.config.pluginmanager.get_plugin("nopfn-matrix")
        summary = main.summary or {}
        if summary.get("regressions") and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
