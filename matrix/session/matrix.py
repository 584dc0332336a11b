"""A run of the matrix: its targets, their builds and guests, and what
each program printed, free of pytest (the plugin, matrix/plugin/, makes
the items and the options; the reports, matrix/report/, read this).

Options are the run's settings (./matrix/run's and pytest's options);
Matrix holds a run's plan (matrix/session/plan.py), one ArchState per
target it runs or checks, and the results folder; it builds a target
when first asked (or in the background, prebuild()), boots its guest
(local QEMU, or a board of a labgrid env file: boards.py), loads the
modules, and runs a program once per boot.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import pathlib
import random
import threading
import time
from typing import Optional

from ..build import background
from ..build import modules
from ..build import selftests as mmselftests
from ..build.builder import Artifacts, Builder, expected_programs
from ..build.cache import Cache
from ..build.log import BuildError
from ..spec import arch as archspec
from ..spec import tree as treespec
from . import boards, kernlog, ktap, plan
from .guest import Guest, GuestError, Output

REPO = pathlib.Path(__file__).resolve().parents[2]
EXPECTED_WARNINGS = REPO / "tests" / "guest" / "expected-warnings.txt"
RESULTS_ROOT = REPO / "results"
MAX_BOOTS = 5       # a death, its rerun, and another death, with room


class OptionError(ValueError):
    """A bad option: what is wrong and what to give instead."""


@dataclasses.dataclass(frozen=True)
class Options:
    """A run's settings: ./matrix/run's and pytest's options."""
    arch: str = "default"       # comma list, "all", or "default"
    variant: str = "all"
    tree: str = ""              # comma list of trees or paths, "all";
                                # "": treespec.DEFAULT
    driver: Optional[pathlib.Path] = None       # a copy of driver/
    series: Optional[pathlib.Path] = None       # a copy of a tree's series
    user_tests: Optional[pathlib.Path] = None
    results: Optional[str] = None
    test_timeout: float = 60.0
    boot_timeout: int = 60
    reruns: int = 1
    tolerate_flaky: bool = False
    max_boots: int = MAX_BOOTS
    max_output: int = 1 << 20
    seed: Optional[int] = None
    install: bool = True
    baseline: Optional[str] = None
    history: Optional[str] = None
    # boards (matrix/session/boards.py): a labgrid env file
    lg_env: Optional[str] = None
    lg_target: Optional[str] = None
    lg_coordinator: Optional[str] = None

    def check(self) -> None:
        """OptionError for a folder option that is not what it should be."""
        if self.driver and not any((self.driver / f).is_file()
                                   for f in ("Kbuild", "Makefile")):
            raise OptionError(f"--driver {self.driver}: no Kbuild or "
                              "Makefile there (give a folder of modules, "
                              "e.g. a copy of driver/ with yours added)")
        if self.driver and not modules.declared_modules(self.driver):
            raise OptionError(f"--driver {self.driver}: its Kbuild "
                              "declares no module (obj-m += NAME.o)")
        if self.series and not (self.series / "series").is_file():
            raise OptionError(f"--series {self.series}: no series file "
                              "there (give a copy of kernel/patches/"
                              "VERSION/)")


class ResultsDir:
    def __init__(self, path: pathlib.Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    @classmethod
    def create(cls, where: Optional[str]) -> "ResultsDir":
        if where:
            return cls(pathlib.Path(where).resolve())
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        rd = cls(RESULTS_ROOT / f"{stamp}-{os.getpid()}")
        latest = RESULTS_ROOT / "latest"
        tmp = RESULTS_ROOT / f".latest-{os.getpid()}"
        try:
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(rd.path.name)
            os.replace(tmp, latest)
        except OSError:
            pass
        return rd

    def arch_dir(self, arch: str) -> pathlib.Path:
        d = self.path / arch
        d.mkdir(parents=True, exist_ok=True)
        return d


@dataclasses.dataclass
class ProgramRun:
    output: Optional[Output] = None
    report: Optional[ktap.Report] = None
    error: str = ""


@dataclasses.dataclass
class ArchState:
    arch: archspec.Arch
    role: str = "run"       # "run" or "check" (matrix/session/plan.py)
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
    """One run: its options, plan, targets' state and results folder.

    builder and the run's plan are made from the options unless given
    (a unit test gives its own); a bad option or architecture file is an
    OptionError (or archspec.ArchError, mmselftests.ListError)."""

    def __init__(self, options: Options, builder: Optional[Builder] = None,
                 run_plan: Optional[plan.Plan] = None):
        options.check()
        self.options = options
        try:
            self.trees = treespec.select(options.tree or None)
        except treespec.TreeError as exc:
            raise OptionError(str(exc)) from exc
        if options.series and len(self.trees) > 1:
            raise OptionError("--series replaces one tree's series: choose "
                              "that tree with --tree")
        # per tree: its series' test programs, and its mm selftests
        # (tests/mm-selftests*.yaml)
        known = {a.base or a.name for a in archspec.load_all().values()}
        self.tree_programs = {
            t.name: expected_programs(options.user_tests,
                                      options.series or t.series_dir)
            for t in self.trees}
        self.tree_selftests = {
            t.name: mmselftests.load(mmselftests.list_for(t.version),
                                     arches=known) for t in self.trees}
        # every program by name, in the order they run
        self.programs = sorted(
            {p.name: p for progs in self.tree_programs.values()
             for p in progs}.values(), key=lambda p: p.name)
        # the kernel's own modules (modules.TREE_MODULES), then those of
        # the driver folder (driver/, or --driver's) as its Kbuild
        # declares them: the items' names before any build; they are
        # loaded in that order (the driver's in its modules.order's)
        driver = options.driver or modules.DRIVER_DIR
        self.modules = modules.TREE_MODULES + \
            modules.declared_modules(driver)
        try:
            self.driver_params = modules.driver_params(
                driver, archspec.load_all())
        except BuildError as exc:
            raise OptionError(str(exc)) from exc
        self.selftests = self.tree_selftests[self.trees[0].name]
        self.selftest_results: dict[str, dict] = {}
        self.builder = builder or Builder(Cache(), options.user_tests,
                                          options.install, options.driver,
                                          options.series, self.trees)
        if run_plan is None:
            if options.arch == "default":
                run_plan = plan.default_plan(
                    self.builder.kernel_cached, self.builder.compiler_cached,
                    variant=options.variant, trees=self.trees)
            else:
                run_plan = plan.chosen_plan(options.arch,
                                            variant=options.variant,
                                            trees=self.trees)
        self.plan = run_plan
        self.arches = run_plan.run          # built, and booted if they can
        self.checked = run_plan.check       # compile-checked only
        self.board = boards.board_for(options)
        self._results: Optional[ResultsDir] = None
        self.expected = kernlog.load_expected(EXPECTED_WARNINGS)
        self.state = {a.name: ArchState(a) for a in self.arches}
        self.state.update((a.name, ArchState(a, role="check"))
                          for a in self.checked)
        self.current: Optional[ArchState] = None
        self.rebuilt: list[str] = []
        self.t0 = time.monotonic()
        self._prebuilder: Optional[threading.Thread] = None
        self._stopping = threading.Event()

    def programs_of(self, tree: str) -> list:
        """The test programs of a target's tree (arch.tree)."""
        return self.tree_programs.get(tree, self.programs)

    def selftests_of(self, tree: str) -> list:
        """The mm selftests of a target's tree (arch.tree)."""
        return self.tree_selftests.get(tree, self.selftests)

    @property
    def results(self) -> ResultsDir:
        """Created on first use, so runs without matrix items leave none."""
        if self._results is None:
            self._results = ResultsDir.create(self.options.results)
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
        own, in the background (background.thread()): on the cores that the
        guests and builds of the tests leave idle, what a later test
        needs is built while the earlier ones run. A test that needs a
        target first waits for it, or builds it itself; a failure is the
        test's to report, as when it builds. NOPFN_PREBUILD=0: none."""
        if not names or os.environ.get("NOPFN_PREBUILD", "1") == "0":
            return

        def work() -> None:
            with background.thread():
                for n in names:
                    if self._stopping.is_set():
                        return
                    try:
                        self.artifacts(n)
                    except Exception:       # noqa: BLE001
                        # not stored: the test that needs it builds it
                        # again and reports the error
                        pass

        if threading.current_thread() is threading.main_thread():
            background.stop_on_signals()
        self._prebuilder = threading.Thread(target=work, daemon=True,
                                            name="nopfn-prebuild")
        self._prebuilder.start()

    def stop_prebuild(self) -> None:
        """End the prebuild thread, killing what it runs."""
        t = self._prebuilder
        if t is None:
            return
        self._stopping.set()
        background.stop()
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
        if st.boots >= self.options.max_boots:
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
        # local QEMU, or a board of --lg-env (boards.py)
        g = boards.guest_for(self.board, st.arch, art.kernel_image,
                             art.initramfs, workdir,
                             self.options.boot_timeout * st.arch.scale,
                             len(self.arches))
        g.max_output = self.options.max_output
        st.guest = g
        st.runs.clear()
        try:
            st.boot_times.append(g.boot())
        except GuestError as exc:
            st.boot_error = str(exc)
            st.guest_seconds += g.busy_seconds
            raise
        st.kernel_version = g.check("cat /proc/version").strip()
        self._load_modules(st, g, art.modules.names if art.modules
                           else [])
        return g

    def module_params(self, name: str, module: str) -> str:
        """insmod's parameters for a module on the target @name: the
        driver folder's module-params.yaml, else its architecture
        file's module_params (modules.params_for())."""
        return modules.params_for(self.state[name].arch, module,
                                  self.driver_params)

    def _load_modules(self, st: ArchState, g: Guest,
                      order: list[str]) -> None:
        """Load what the driver folder built, in modules.order's order."""
        for mod in order:
            params = self.module_params(st.arch.name, mod)
            st.module_load[mod] = g.run(
                f"insmod /modules/{mod}.ko {params}".strip(),
                timeout=self.options.test_timeout * st.arch.scale)

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
            t = self.options.test_timeout
            run.output = g.run(f"/tests/{prog.name} {args}".strip(),
                               timeout=t * (n + 1) * scale,
                               line_timeout=t * scale)
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
            seed = self.options.seed if self.options.seed is not None else \
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
