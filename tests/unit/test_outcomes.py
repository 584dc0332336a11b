"""Reruns of failing in-guest items, flaky results, their logs, and the
exit status of a run with a regression (matrix/plugin/outcomes.py)."""
import types

import pytest

from matrix.plugin.outcomes import OutcomeHooks
from matrix.plugin.phases import Phase, Step
from matrix.session.matrix import ArchState, Options, ProgramRun
from matrix.spec import arch as archspec


class Outcome:
    """What pluggy hands a hookwrapper after the yield."""

    def __init__(self, exc=None, result=None):
        self.excinfo = (type(exc), exc, None) if exc else None
        self.result = result

    def force_result(self, result):
        self.result, self.excinfo = result, None

    def get_result(self):
        return self.result


class Guest:
    def __init__(self, workdir):
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.transcript = workdir / "console.log"
        self.transcript.write_text("console\n")


class Matrix:
    """run_program as matrix/session/matrix.py has it: cached per
    program, the output kept as <program>.ktap in the guest's folder."""

    def __init__(self, tmp_path, outputs):
        self.results = types.SimpleNamespace(path=tmp_path)
        self.programs = [types.SimpleNamespace(name="prog")]
        st = ArchState(archspec.load_all()["x86_64"])
        st.guest = Guest(tmp_path / "x86_64" / "boot1")
        self.state = {"x86_64": st}
        self.outputs = list(outputs)
        self.options = Options()

    def programs_of(self, tree):
        return self.programs

    def run_program(self, name, prog):
        st = self.state[name]
        if prog.name in st.runs:
            return st.runs[prog.name]
        text = self.outputs.pop(0)
        run = ProgramRun(error="guest died" if text is None else "")
        run.text = text
        st.runs[prog.name] = run
        if text is not None:
            (st.guest.workdir / "prog.ktap").write_text(text)
        return run


def hooks_for(m, summary=None):
    main = types.SimpleNamespace(matrix=m, summary=summary)
    config = types.SimpleNamespace(pluginmanager=types.SimpleNamespace(
        get_plugin=lambda name: main if name == "nopfn-matrix" else None))
    return OutcomeHooks(config)


def item(m, case, phase=Phase.TESTS, name=None):
    def fn():
        pass
    fn.matrix_step = Step(phase, 0, True, True, "run")

    def runtest():                  # what test_case does
        run = m.run_program("x86_64", m.programs[0])
        if run.error:
            pytest.fail(run.error)
        assert f"ok {case}" in run.text.splitlines(), run.text
    return types.SimpleNamespace(
        name=name or f"test_case[x86_64-prog-{case}]", function=fn,
        runtest=runtest,
        callspec=types.SimpleNamespace(params={"arch": "x86_64",
                                               "program": "prog",
                                               "case": case}))


def call(hooks, it):
    """Run an item as pytest would, through the call hook wrapper."""
    gen = hooks.pytest_runtest_call(it)
    next(gen)
    try:
        it.runtest()
        out = Outcome()
    except BaseException as exc:       # noqa: BLE001
        out = Outcome(exc)
    with pytest.raises(StopIteration):
        gen.send(out)
    return out


def report(hooks, m, it, status="passed"):
    m.state["x86_64"].tests[it.name] = {"status": status}
    rep = types.SimpleNamespace(when="call", passed=status == "passed",
                                sections=[])
    gen = hooks.pytest_runtest_makereport(it, None)
    next(gen)
    with pytest.raises(StopIteration):
        gen.send(Outcome(result=rep))
    return rep, m.state["x86_64"].tests[it.name]


def test_flaky_fails_the_run_by_default(tmp_path):
    m = Matrix(tmp_path, ["not ok a\nok b", "ok a\nok b"])
    h = hooks_for(m)
    a = item(m, "a")
    out = call(h, a)
    assert out.excinfo is not None, "a flaky item must fail the run"
    assert "AssertionError" in a.matrix_flaky
    rep = types.SimpleNamespace(when="call", passed=False, sections=[])
    m.state["x86_64"].tests[a.name] = {"status": "failed"}
    gen = h.pytest_runtest_makereport(a, None)
    next(gen)
    with pytest.raises(StopIteration):
        gen.send(Outcome(result=rep))
    rec = m.state["x86_64"].tests[a.name]
    assert rec["status"] == "flaky" and rep.matrix_flaky
    assert "fails the run" in rep.sections[-1][0]
    cat, letter, word = h.pytest_report_teststatus(rep, None)
    assert cat == "failed" and word == "FLAKY"


def test_fails_then_passes_on_rerun_is_flaky_when_tolerated(tmp_path):
    first = "not ok a\nok b"
    m = Matrix(tmp_path, [first, "ok a\nok b"])
    m.options = Options(tolerate_flaky=True)
    h = hooks_for(m)
    m.run_program("x86_64", m.programs[0])
    a = item(m, "a")
    out = call(h, a)
    assert out.excinfo is None, "--tolerate-flaky: a flaky item passes"
    assert "AssertionError" in a.matrix_flaky
    st = m.state["x86_64"]
    assert st.runs["prog"].text == first     # later items: the first run
    boot = tmp_path / "x86_64" / "boot1"
    assert (boot / "prog.ktap").read_text() == first
    assert (boot / "prog.rerun.ktap").read_text() == "ok a\nok b"
    rep, rec = report(h, m, a)
    assert rep.matrix_flaky and rec["status"] == "flaky"
    assert rec["log"] == "x86_64/boot1/prog.ktap"
    assert rec["rerun_log"] == "x86_64/boot1/prog.rerun.ktap"
    assert h.pytest_report_teststatus(rep, None)[0] == "flaky"
    # b passed on the first run: judged there, no rerun log of its own
    b = item(m, "b")
    assert call(h, b).excinfo is None and not hasattr(b, "matrix_flaky")
    _, rec = report(h, m, b)
    assert rec == {"status": "passed", "log": "x86_64/boot1/prog.ktap"}


def test_fails_again_stays_failed_and_reruns_once(tmp_path):
    m = Matrix(tmp_path, ["not ok a\nnot ok b", "not ok a\nok b"])
    m.options = Options(tolerate_flaky=True)
    h = hooks_for(m)
    a, b = item(m, "a"), item(m, "b")
    assert call(h, a).excinfo is not None
    assert not hasattr(a, "matrix_flaky")
    # b failed on the first run too: judged on the same rerun, where
    # it passes; no third run
    assert call(h, b).excinfo is None and hasattr(b, "matrix_flaky")
    assert m.outputs == []
    _, rec = report(h, m, a, "failed")
    assert rec["status"] == "failed"
    assert rec["rerun_log"] == "x86_64/boot1/prog.rerun.ktap"


def test_a_guest_that_dies_on_the_rerun_is_a_failure(tmp_path):
    m = Matrix(tmp_path, ["not ok a", None])
    h = hooks_for(m)
    a = item(m, "a")
    assert call(h, a).excinfo is not None
    _, rec = report(h, m, a, "failed")
    assert rec["log"] == "x86_64/boot1/prog.ktap"
    assert rec["rerun_log"] == "x86_64/boot1/console.log"


def test_only_in_guest_failures_are_rerun(tmp_path):
    m = Matrix(tmp_path, ["not ok a", "ok a"])
    h = hooks_for(m)
    assert call(h, item(m, "a", phase=Phase.LOAD)).excinfo is not None
    skipped = item(m, "a")
    skipped.runtest = lambda: pytest.skip("no svpbmt")
    assert call(h, skipped).excinfo is not None
    assert m.outputs == ["ok a"], "rerun for a skip or another phase"


def test_a_regression_makes_the_exit_status_non_zero(tmp_path):
    m = Matrix(tmp_path, [])
    session = types.SimpleNamespace(exitstatus=0)
    hooks_for(m, {}).pytest_sessionfinish(session, 0)
    assert session.exitstatus == 0
    hooks_for(m, {"regressions": [{"target": "x86_64", "test": "t"}]}
              ).pytest_sessionfinish(session, 0)
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED


def test_a_known_failure_is_not_rerun(tmp_path):
    """A case its target is known to miss reports XFAIL: rerunning the
    program would cost a run and could not turn it into anything else."""
    m = Matrix(tmp_path, ["not ok a", "ok a"])
    h = hooks_for(m)
    a = item(m, "a")

    def runtest():
        m.run_program("x86_64", m.programs[0])
        pytest.xfail("a: fail (known on x86_64: reason)")
    a.runtest = runtest
    out = call(h, a)
    assert out.excinfo is not None and out.excinfo[0] is pytest.xfail.Exception
    assert m.outputs == ["ok a"], "the program must not run again"
