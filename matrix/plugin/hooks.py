"""pytest plugin: the matrix as pytest items, one guest per architecture.

Items are generated per architecture from the architecture files and the
test sources (no build is needed to collect), and ordered so that each
architecture's items run together: builds, boot, module loads, the C
tests' KTAP cases, module unloads, and the kernel log scan last. Only one
guest runs at a time; a guest that hangs or dies is killed, its items
fail with its console log, and the next item boots a fresh one.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import random
import re
import threading
import time
from typing import Optional

import pytest

from ..spec import arch as archspec
from ..build import cache as cachemod
from ..session import kernlog
from ..session import ktap
from ..build import log
from ..build import selftests as mmselftests
from ..session import plan
from ..session import boards as remote
from ..report import results
from ..build.builder import Artifacts, Builder, expected_programs
from ..session.guest import Guest, GuestError, Output

REPO = pathlib.Path(__file__).resolve().parents[2]
EXPECTED_WARNINGS = REPO / "tests" / "guest" / "expected-warnings.txt"
MAX_BOOTS = 5       # a death, its rerun, and another death, with room


def pytest_addoption(parser):
    g = parser.getgroup("matrix", "nopfn architecture matrix")
    g.addoption("--arch", default=os.environ.get("NOPFN_ARCH", "default"),
                help="comma list of architectures, or all (every file in "
                "matrix/arches/), or default: the fast tier, plus each "
                "full-tier target whose kernel is already cached")
    g.addoption("--variant", default=os.environ.get("NOPFN_VARIANT", "all"),
                help="which kernels: all (default: every architecture and "
                "its variants), none (plain kernels only), or a variant "
                "(e.g. debug: kernel/config/debug.config)")
    g.addoption("--driver", default=None, help="build the modules from "
                "this copy of driver/ instead (e.g. a mutated one)")
    g.addoption("--series", default=None, help="apply this copy of "
                "kernel/patches/ (its series file) instead (e.g. with a "
                "mutation added)")
    g.addoption("--user-tests", default=None, help="folder of extra C test "
                "sources (KTAP or plain exit status) for every guest")
    g.addoption("--results", default=None, help="results folder (default "
                "results/<date>-<pid>)")
    g.addoption("--test-timeout", type=float, default=60.0,
                help="seconds a guest test may stay silent before the "
                "guest is killed")
    g.addoption("--boot-timeout", type=int, default=60)
    g.addoption("--reruns", type=int, choices=(0, 1), default=1,
                help="rerun a failing guest program once, to tell a flaky "
                "failure from a real one (0: do not)")
    g.addoption("--tolerate-flaky", action="store_true",
                help="a test that fails and then passes on its rerun is "
                "reported FLAKY without failing the run (default: it "
                "fails the run)")
    g.addoption("--max-boots", type=int, default=MAX_BOOTS,
                help="boots of one target's guest before its remaining "
                "items fail without booting again")
    g.addoption("--max-output", type=int, default=1 << 20,
                help="bytes a guest command may print before the guest "
                "is killed as flooding its console")
    g.addoption("--seed", type=int, default=None, help="the {seed} given "
                "to the test programs that take one (default: a fresh "
                "random seed per program and run, kept in the results)")
    g.addoption("--no-install", action="store_true",
                help="report missing packages instead of installing them")
    g.addoption("--baseline", default=None, help="compare with this run "
                "(its id or results folder name) instead of each test's "
                "previous result")
    g.addoption("--history", default=None, help="history database (default "
                "history.sqlite beside the run folders)")


def module_names() -> list[str]:
    """Modules that driver/Kbuild declares (obj-m += name.o)."""
    kbuild = REPO / "driver" / "Kbuild"
    if not kbuild.exists():
        return []
    names = []
    for m in re.finditer(r"^obj-m\s*[+:]?=\s*(.+)$", kbuild.read_text(),
                         re.M):
        names += [w[:-2] for w in m.group(1).split() if w.endswith(".o")]
    return names


@dataclasses.dataclass
class ProgramRun:
    output: Optional[Output] = None
    report: Optional[ktap.Report] = None
    error: str = ""


@dataclasses.dataclass
class ArchState:
    arch: archspec.Arch
    role: str = "run"       # "run" or "check" (matrix/plan.py)
    artifacts: Optional[Artifacts] = None
    guest: Optional[Guest] = None
    boot_error: str = ""
    boots: int = 0
    boot_times: list[float] = dataclasses.field(default_factory=list)
    guest_seconds: float = 0.0
    module_load: dict[str, Output] = dataclasses.field(default_factory=dict)
    runs: dict[str, ProgramRun] = dataclasses.field(default_factory=dict)
    tests: dict[str, dict] = dataclasses.field(default_factory=dict)
    # per program: "# METRIC" figures, and how it was run (args, seed)
    metrics: dict[str, dict] = dataclasses.field(default_factory=dict)
    programs: dict[str, dict] = dataclasses.field(default_factory=dict)
    kernel_version: str = ""
    # held while the artifacts are built (the prebuild thread, or a test)
    building: threading.Lock = dataclasses.field(
        default_factory=threading.Lock)


class Matrix:
    def __init__(self, config):
        self.config = config
        opt = config.getoption
        user = opt("--user-tests")
        self.user_tests = pathlib.Path(user).resolve() if user else None
        self.programs = expected_programs(self.user_tests)
        self.modules = module_names()
        try:        # the kernel's mm selftests: tests/mm-selftests.yaml
            self.selftests = mmselftests.load(
                arches={a.base or a.name for a in archspec.load_all(
                ).values()})
        except mmselftests.ListError as exc:
            raise pytest.UsageError(str(exc)) from exc
        self.selftest_results: dict[str, dict] = {}
        driver = opt("--driver")
        if driver and not (pathlib.Path(driver) / "Kbuild").is_file():
            raise pytest.UsageError(f"--driver {driver}: no Kbuild there "
                                    "(give a copy of driver/)")
        series = opt("--series")
        if series and not (pathlib.Path(series) / "series").is_file():
            raise pytest.UsageError(f"--series {series}: no series file "
                                    "there (give a copy of kernel/patches/)")
        self.builder = Builder(cachemod.Cache(), self.user_tests,
                               not opt("--no-install"),
                               pathlib.Path(driver).resolve() if driver
                               else None,
                               pathlib.Path(series).resolve() if series
                               else None)
        try:
            if opt("--arch") == "default":
                self.plan = plan.default_plan(
                    self.builder.kernel_cached, self.builder.compiler_cached,
                    variant=opt("--variant"))
            else:
                self.plan = plan.chosen_plan(opt("--arch"),
                                             variant=opt("--variant"))
        except archspec.ArchError as exc:
            raise pytest.UsageError(str(exc)) from exc
        self.arches = self.plan.run         # built, and booted if they can
        self.checked = self.plan.check      # compile-checked only
        self.test_timeout = opt("--test-timeout")
        self.boot_timeout = opt("--boot-timeout")
        self.seed = opt("--seed")
        self.max_output = opt("--max-output")
        self.reruns = opt("--reruns")
        self.tolerate_flaky = opt("--tolerate-flaky")
        self.max_boots = opt("--max-boots")
        self._results_opt = opt("--results")
        self._results: Optional[results.ResultsDir] = None
        self.expected = kernlog.load_expected(EXPECTED_WARNINGS)
        self.state = {a.name: ArchState(a) for a in self.arches}
        self.state.update((a.name, ArchState(a, role="check"))
                          for a in self.checked)
        self.current: Optional[ArchState] = None
        self.rebuilt: list[str] = []
        self.t0 = time.monotonic()
        self._prebuilder: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    @property
    def results(self) -> results.ResultsDir:
        """Created on first use, so runs without matrix items leave none."""
        if self._results is None:
            self._results = results.ResultsDir.create(self._results_opt)
        return self._results

    @property
    def used(self) -> bool:
        return self._results is not None or any(
            st.artifacts is not None or st.tests
            for st in self.state.values())

    # ------------------------------------------------------------- builds
    def artifacts(self, name: str) -> Artifacts:
        st = self.state[name]
        with st.building:
            if st.artifacts is None:
                st.artifacts = self.builder.check(st.arch) if \
                    st.role == "check" else self.builder.build(st.arch)
            return st.artifacts

    def prebuild(self, names: list[str]) -> None:
        """Build the targets named, in this order, in a thread of their
        own, in the background (log.background()): on the cores that the
        guests and builds of the tests leave idle, what a later test
        needs is built while the earlier ones run. A test that needs a
        target first waits for it, or builds it itself; a failure is the
        test's to report, as when it builds. NOPFN_PREBUILD=0: none."""
        if not names or os.environ.get("NOPFN_PREBUILD", "1") == "0":
            return

        def work() -> None:
            with log.background():
                for n in names:
                    if self._stopping.is_set():
                        return
                    try:
                        self.artifacts(n)
                    except Exception:       # noqa: BLE001
                        # not stored: the test that needs it builds it
                        # again and reports the error
                        pass

        self._prebuilder = threading.Thread(target=work, daemon=True,
                                            name="nopfn-prebuild")
        self._prebuilder.start()

    def stop_prebuild(self) -> None:
        """End the prebuild thread, killing what it runs."""
        t = self._prebuilder
        if t is None:
            return
        self._stopping.set()
        log.stop_background()
        t.join()
        self._prebuilder = None

    # ------------------------------------------------------------- guests
    def guest(self, name: str) -> Guest:
        st = self.state[name]
        if self.current is not None and self.current is not st:
            self._stop(self.current)
        self.current = st
        if st.guest is not None and st.guest.alive:
            return st.guest
        if st.boot_error:
            raise GuestError(f"guest did not boot earlier: {st.boot_error}")
        if st.boots >= self.max_boots:
            raise GuestError(f"{name}: guest died {st.boots} times; "
                             "not booting it again")
        art = self.artifacts(name)
        failed = [s for s in ("kernel", "modules", "tests", "busybox",
                              "initramfs") if s in art.errors]
        if failed or art.initramfs is None:
            first = art.errors[failed[0]] if failed else None
            st.boot_error = (f"nothing to boot: the {failed[0]} step failed: "
                             f"{str(first).splitlines()[0]}" if failed else
                             "nothing to boot: no initramfs")
            raise GuestError(st.boot_error)
        if st.guest is not None:        # a dead guest: count its time
            self._stop(st)
        st.boots += 1
        workdir = self.results.arch_dir(name) / f"boot{st.boots}"
        # local QEMU, or a board of --lg-env (matrix/remote.py)
        g = remote.guest_for(self.config, st.arch, art.kernel_image,
                             art.initramfs, workdir,
                             self.boot_timeout * st.arch.scale,
                             len(self.arches))
        g.max_output = self.max_output
        st.guest = g
        st.runs.clear()
        try:
            st.boot_times.append(g.boot())
        except GuestError as exc:
            st.boot_error = str(exc)
            st.guest_seconds += g.busy_seconds
            raise
        st.kernel_version = g.check("cat /proc/version").strip()
        self._load_modules(st, g)
        return g

    def _load_modules(self, st: ArchState, g: Guest) -> None:
        params = st.arch.module_params
        for name in self.modules:
            st.module_load[name] = g.run(
                f"insmod /modules/{name}.ko {params.get(name, '')}",
                timeout=self.test_timeout * st.arch.scale)

    def _stop(self, st: ArchState) -> None:
        if st.guest is not None:
            st.guest.stop()
            st.guest_seconds += st.guest.boot_seconds + st.guest.busy_seconds
            st.guest.boot_seconds = st.guest.busy_seconds = 0.0

    def stop_all(self) -> None:
        for st in self.state.values():
            self._stop(st)

    def run_program(self, name: str, prog) -> ProgramRun:
        st = self.state[name]
        g = self.guest(name)
        if prog.name in st.runs:
            return st.runs[prog.name]
        run = ProgramRun()
        st.runs[prog.name] = run
        n = max(1, len(prog.cases))
        scale = st.arch.scale
        args, info = self.program_args(prog, scale)
        st.programs[prog.name] = info
        try:
            run.output = g.run(f"/tests/{prog.name} {args}".strip(),
                               timeout=self.test_timeout * (n + 1) * scale,
                               line_timeout=self.test_timeout * scale)
            run.report = ktap.parse([(ln.t, ln.text)
                                     for ln in run.output.lines])
            name_results(run.report, prog.cases)
            figures = ktap.metrics(ln.text for ln in run.output.lines)
            if figures:
                st.metrics[prog.name] = figures
            info.update(rc=run.output.rc,
                        seconds=round(run.output.seconds, 3))
            out = g.workdir / (prog.name.replace("/", "-") + ".ktap")
            out.write_text(run.output.text + "\n")
        except GuestError as exc:
            run.error = str(exc)
            info["error"] = run.error.splitlines()[0] if run.error else ""
        return run

    def program_args(self, prog, scale: int) -> tuple[str, dict]:
        """A program's command line arguments, {seed} and {scale} filled
        in, and the record of them for the results."""
        info: dict = {}
        args = prog.args
        if "{seed}" in args:
            seed = self.seed if self.seed is not None else \
                random.SystemRandom().getrandbits(63)
            args = args.replace("{seed}", str(seed))
            info["seed"] = seed
        args = args.replace("{scale}", str(scale))
        if args:
            info["args"] = args
        return args, info


def name_results(report: ktap.Report, cases: list[str]) -> None:
    """kselftest_harness.h prints "ok N # SKIP reason" without the name:
    name such a result after the case the source puts at number N."""
    for res in report.results:
        if not res.name and 0 < res.number <= len(cases):
            res.name = cases[res.number - 1]


def pytest_configure(config):
    from .outcomes import OutcomeHooks
    config.pluginmanager.register(MatrixHooks(config), "nopfn-matrix")
    config.pluginmanager.register(OutcomeHooks(config), "nopfn-outcomes")


class MatrixHooks:
    def __init__(self, config):
        self.config = config
        self.matrix: Optional[Matrix] = None

    def get(self) -> Matrix:
        if self.matrix is None:
            self.matrix = Matrix(self.config)
        return self.matrix

    def pytest_generate_tests(self, metafunc):
        if "arch" not in metafunc.fixturenames:
            return
        m = self.get()
        ph = getattr(metafunc.function, "matrix_phase", NO_PHASE)
        arches = [a for a in m.arches if ph.role in ("run", "both") and
                  (a.bootable or not ph.guest)]
        arches += [a for a in m.checked if ph.role in ("check", "both")]
        user_only = ph.user
        if user_only:
            arches = [a for a in arches if a.user is not None]
        combos = []
        for a in arches:
            if "case" in metafunc.fixturenames:
                for p in m.programs:
                    for c in p.cases:
                        combos.append((a.name, p.name, c))
            elif "program" in metafunc.fixturenames:
                for p in m.programs:
                    combos.append((a.name, p.name))
            elif "module" in metafunc.fixturenames:
                for mod in m.modules:
                    combos.append((a.name, mod))
            elif "selftest" in metafunc.fixturenames:
                for t in m.selftests:
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
            ph = getattr(item.function, "matrix_phase", NO_PHASE)
            return (order.get(params.get("arch"), -1), ph.n,
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
        if m is None:
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
            status = "xfailed" if getattr(rep, "wasxfail", None) is not \
                None and rep.skipped else rep.outcome
            st.tests[item.name] = {"status": status,
                                   "duration": round(dur, 4),
                                   "nodeid": item.nodeid}
            if status == "xfailed":
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
        results.write(m, time.monotonic() - m.t0)

    def pytest_terminal_summary(self, terminalreporter):
        if self.matrix is None or not self.matrix.used:
            return
        for line in results.summary_lines(self.matrix):
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def matrix(request) -> Matrix:
    return request.config.pluginmanager.get_plugin("nopfn-matrix").get()


@dataclasses.dataclass(frozen=True)
class Phase:
    n: int
    sub: int
    guest: bool
    user: bool
    role: str = "run"


NO_PHASE = Phase(0, 0, False, False)


def phase(n: int, sub: int = 0, guest: bool = False, user: bool = False,
          role: str = "run"):
    """Decorator: where an item runs within its architecture's group, and
    for which targets: those the run builds ("run"), those it only
    compile-checks ("check"), or both."""
    assert role in ("run", "check", "both")

    def mark(fn):
        # one attribute: pytest makes each function attribute a keyword
        # that -k matches (a "needs_user" would match -k user)
        fn.matrix_phase = Phase(n, sub, guest, user, role)
        return fn
    return mark

