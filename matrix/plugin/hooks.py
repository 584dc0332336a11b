"""pytest plugin: the matrix as pytest items, one guest per architecture.

Items are generated per architecture from the architecture files and the
test sources (no build is needed to collect), and ordered so that each
architecture's items run together: builds, boot, module loads, the C
tests' KTAP cases, module unloads, and the kernel log scan last. Only one
guest runs at a time; a guest that hangs or dies is killed, its items
fail with its console log, and the next item boots a fresh one.
"""
from __future__ import annotations

import pathlib
import time
from typing import Optional

import pytest

from ..build.selftests import ListError
from ..report import jsonout, results
from ..session.guest import GuestError
from ..session.matrix import Matrix, OptionError
from ..spec.arch import ArchError
from . import phases
from .options import options_from


def pytest_configure(config):
    from .outcomes import OutcomeHooks
    config.pluginmanager.register(MatrixHooks(config), "nopfn-matrix")
    config.pluginmanager.register(OutcomeHooks(config), "nopfn-outcomes")


class MatrixHooks:
    def __init__(self, config):
        self.config = config
        self.matrix: Optional[Matrix] = None
        self.summary: Optional[dict] = None     # what results.write() wrote

    def get(self) -> Matrix:
        if self.matrix is None:
            try:
                self.matrix = Matrix(options_from(self.config))
            except (OptionError, ArchError, ListError) as exc:
                raise pytest.UsageError(str(exc)) from exc
        return self.matrix

    def pytest_generate_tests(self, metafunc):
        if "arch" not in metafunc.fixturenames:
            return
        m = self.get()
        ph = phases.step_of(metafunc.function)
        arches = [a for a in m.arches if ph.role in ("run", "both") and
                  (a.bootable or not ph.guest)]
        arches += [a for a in m.checked if ph.role in ("check", "both")]
        user_only = ph.user
        if user_only:
            arches = [a for a in arches if a.user is not None]
        combos = []
        for a in arches:
            if "case" in metafunc.fixturenames:
                for p in m.programs_of(a.tree):
                    for c in p.cases:
                        combos.append((a.name, p.name, c))
            elif "program" in metafunc.fixturenames:
                for p in m.programs_of(a.tree):
                    combos.append((a.name, p.name))
            elif "module" in metafunc.fixturenames:
                for mod in m.modules:
                    combos.append((a.name, mod))
            elif "selftest" in metafunc.fixturenames:
                for t in m.selftests_of(a.tree):
                    combos.append((a.name, t.name))
            else:
                combos.append((a.name,))
        names = [n for n in ("arch", "program", "case", "module",
                             "selftest")
                 if n in metafunc.fixturenames]
        ids = ["-".join(c) for c in combos]
        metafunc.parametrize(",".join(names),
                             [c if len(c) > 1 else c[0] for c in combos],
                             ids=ids)

    def pytest_collection_modifyitems(self, session, config, items):
        m = self.get()
        order = {a.name: i for i, a in enumerate(m.arches + m.checked)}
        prog_order = {p.name: i for i, p in enumerate(m.programs)}

        def key(item):
            params = getattr(item, "callspec", None)
            params = params.params if params else {}
            ph = phases.step_of(item.function)
            return (order.get(params.get("arch"), -1), ph.phase,
                    prog_order.get(params.get("program"), 0), ph.sub)

        def empty(item):
            # a matrix test with no architecture to run on (e.g. the
            # guest tests with --arch ia64): nothing to report
            spec = getattr(item, "callspec", None)
            return ("arch" in getattr(item, "fixturenames", ()) and
                    (spec is None or spec.params.get("arch") not in order))
        gone = [i for i in items if empty(i)]
        if gone:
            config.hook.pytest_deselected(items=gone)
            items[:] = [i for i in items if not empty(i)]
        items.sort(key=key)

    def pytest_collection_finish(self, session):
        """Start building, in the background, the targets that the
        session's items need, in their order (the tests before them,
        e.g. ./tests/run's own, run meanwhile; an item that needs a
        target being built waits for it)."""
        m = self.matrix
        if m is None or session.config.option.collectonly:
            return
        names: list[str] = []
        for item in session.items:
            spec = getattr(item, "callspec", None)
            n = spec.params.get("arch") if spec else None
            if isinstance(n, str) and n in m.state and n not in names:
                names.append(n)
        m.prebuild(names)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if call.excinfo is not None and call.excinfo.errisinstance(
                GuestError):
            rep.longrepr = str(call.excinfo.value)   # no traceback needed
        params = getattr(item, "callspec", None)
        arch = params.params.get("arch") if params else None
        if arch is None or self.matrix is None:
            return
        st = self.matrix.state.get(arch)
        if st is None:
            return
        if rep.failed and st.guest is not None:
            rep.sections.append((f"console log of the {arch} guest "
                                 f"({st.guest.transcript})",
                                 st.guest.console_tail()))
        if rep.when == "call" or (rep.when == "setup" and not rep.passed):
            dur = dict(item.user_properties).get("guest_seconds",
                                                 rep.duration)
            xfail = getattr(rep, "wasxfail", None) is not None
            status = "xfailed" if xfail and rep.skipped else \
                "xpassed" if xfail and rep.passed else rep.outcome
            st.tests[item.name] = {"status": status,
                                   "duration": round(dur, 4),
                                   "nodeid": item.nodeid}
            if status in ("xfailed", "xpassed"):
                st.tests[item.name]["message"] = str(rep.wasxfail)[-4000:]
            elif not rep.passed:    # why, without the console log section
                st.tests[item.name]["message"] = \
                    str(rep.longrepr)[-4000:] if rep.longrepr else ""

    def pytest_sessionfinish(self, session, exitstatus):
        if self.matrix is not None and not self.matrix.used:
            self.matrix.stop_prebuild()
        if self.matrix is None or not self.matrix.used:
            return
        m = self.matrix
        m.stop_prebuild()
        m.stop_all()
        m.rebuilt = m.builder.cache.built
        self.summary = results.write(m, time.monotonic() - m.t0)
        dest = self.config.getoption("--json")
        if dest and dest != "-":
            jsonout.write(dest, m.results.path)

    def pytest_terminal_summary(self, terminalreporter):
        if self.summary is None:
            return
        for line in results.summary_lines(self.summary):
            terminalreporter.write_line(line)
        dest = self.config.getoption("--json")
        if dest and dest != "-":
            terminalreporter.write_line(f"  json: {dest}")

    def pytest_unconfigure(self, config):
        """--json -: the document goes to stdout last, after everything
        pytest printed (./matrix/run --json - keeps stdout for it
        alone)."""
        if self.summary is None or config.getoption("--json") != "-":
            return
        capman = config.pluginmanager.getplugin("capturemanager")
        if capman is None:
            jsonout.write("-", pathlib.Path(self.summary["results"]))
            return
        with capman.global_and_fixture_disabled():
            jsonout.write("-", pathlib.Path(self.summary["results"]))


@pytest.fixture(scope="session")
def matrix(request) -> Matrix:
    return request.config.pluginmanager.get_plugin("nopfn-matrix").get()


