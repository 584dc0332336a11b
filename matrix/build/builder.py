"""Everything one architecture needs, built (or found in the cache)."""
from __future__ import annotations

import dataclasses
import functools
import pathlib
import threading
import time
from typing import Optional

from . import cache as cachemod
from . import deps
from . import selftests as mmselftests
from . import progress
from . import toolchain
from ..spec.arch import Arch
from .kernel import CompileCheck, KernelBuild, TreeBuild
from .tree import SERIES_DIR, Tree, parse_series
from ..spec import tree as treespec
from ..spec.tree import TreeSpec
from .log import BuildError
from .busybox import busybox
from .initramfs import build_initramfs
from .modules import DRIVER_DIR, Modules, build_modules
from .programs import TestProgram, all_programs, build_tests


@dataclasses.dataclass
class Artifacts:
    arch: Arch
    kernel_meta: Optional[dict] = None
    kernel_image: Optional[pathlib.Path] = None
    kernel_log: Optional[pathlib.Path] = None
    modules: Optional[Modules] = None
    programs: list[TestProgram] = dataclasses.field(default_factory=list)
    initramfs: Optional[pathlib.Path] = None
    selftests: Optional[mmselftests.Built] = None     # the kernel's mm ones
    check_meta: Optional[dict] = None       # a compile check's stamp record
    errors: dict[str, BuildError] = dataclasses.field(default_factory=dict)
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)

    def error(self, *steps: str) -> Optional[BuildError]:
        for s in steps:
            if s in self.errors:
                return self.errors[s]
        return None


# Builder.cache_state()'s answers
KERNEL_CACHED = "kernel built"
CHECK_CACHED = "compile-checked only"
NOT_CACHED = "not built"
NO_COMPILER = "no compiler yet"


def expected_programs(user_dir: Optional[pathlib.Path],
                      series_dir: Optional[pathlib.Path] = None
                      ) -> list[TestProgram]:
    """The test programs and their KTAP cases, known before any build
    (series_dir: the series of the tree, default the default tree's)."""
    return all_programs(user_dir, parse_series(series_dir or SERIES_DIR))


class Builder:
    def __init__(self, cache: cachemod.Cache,
                 user_tests: Optional[pathlib.Path] = None,
                 install: bool = True,
                 driver_dir: Optional[pathlib.Path] = None,
                 series_dir: Optional[pathlib.Path] = None,
                 trees: Optional[list[TreeSpec]] = None):
        self.cache = cache
        self.driver_dir = driver_dir or DRIVER_DIR
        self.series_dir = series_dir    # replaces the (one) tree's series
        self.user_tests = user_tests
        self.install = install
        self.specs = {t.name: t for t in trees} if trees else {}
        if series_dir and len(self.specs) > 1:
            raise BuildError("--series replaces one tree's series: choose "
                             "one tree (--tree)")
        self._trees: dict[str, Tree] = {}
        self._tree_lock = threading.Lock()

    def tree_of(self, name: str = "") -> Tree:
        """The tree of that name (a target's arch.tree; "": the default
        tree, or the one tree of the run)."""
        with self._tree_lock:       # the prebuild thread and the tests'
            if not name:
                name = next(iter(self.specs), treespec.DEFAULT)
            if name not in self._trees:
                spec = self.specs.get(name)
                if spec is None and name != treespec.DEFAULT:
                    spec = treespec.select(name)[0]
                if spec is not None and spec.name == treespec.DEFAULT \
                        and not spec.user:
                    spec = None      # tree.default_spec(): TARBALL
                self._trees[name] = Tree(self.cache, self.series_dir,
                                         spec=spec)
            return self._trees[name]

    @property
    def tree(self) -> Tree:
        """The run's first tree (the default tree when none given)."""
        return self.tree_of()

    def kernel_cached(self, arch: Arch) -> bool:
        """Whether arch's kernel is already built in the cache (nothing
        is built to find out: a missing compiler, or a compiler that the
        matrix would build itself and has not yet, counts as not
        cached)."""
        return self.cache_state(arch, check=False) == KERNEL_CACHED

    def cache_state(self, arch: Arch, check: bool = True) -> str:
        """What the cache holds of arch for this series, found without
        building anything: its kernel (KERNEL_CACHED), only its compile
        check (CHECK_CACHED; not looked for unless check), neither
        (NOT_CACHED), or not even its compiler (NO_COMPILER: one the
        matrix builds and has not yet, or a Debian one not installed)."""
        try:
            prefix = toolchain.cached_prefix(arch, self.cache)
            if prefix is None:
                return NO_COMPILER
            kb = KernelBuild(arch, self.tree_of(arch.tree), self.cache,
                             prefix)
            if kb.meta() is not None:
                return KERNEL_CACHED
            if not check:
                return NOT_CACHED
            cc = CompileCheck(arch, self.tree_of(arch.tree), self.cache,
                              prefix)
        except BuildError:
            return NO_COMPILER
        return CHECK_CACHED if cc.meta() is not None else NOT_CACHED

    def compiler_cached(self, arch: Arch) -> bool:
        """Whether arch's kernel compiler is there without building one
        (a Debian package counts: installing it takes seconds)."""
        try:
            return toolchain.cached_prefix(arch, self.cache) is not None
        except BuildError:
            return False

    def _deps(self, art: Artifacts, boot: bool = True) -> bool:
        """Install what the target needs; False (the kernel step's error
        recorded) if that failed."""
        try:
            deps.ensure([art.arch], install=self.install, boot=boot)
        except deps.MissingTools as exc:
            art.errors["kernel"] = BuildError(str(exc))
            return False
        except Exception as exc:  # apt-get failed
            art.errors["kernel"] = BuildError(f"installing packages: {exc}")
            return False
        return True

    def step(self, art: Artifacts, name: str, fn, label: str = ""):
        """Run one build step of art's target: its result, or None with
        the error recorded in art."""
        t0 = time.monotonic()
        built = len(self.cache.built)
        with progress.step(art.arch.name, label or name):
            try:
                return fn()
            except BuildError as exc:
                art.errors[name] = exc
                return None
            finally:
                art.seconds[name] = round(time.monotonic() - t0, 3)
                progress.step_done(art.seconds[name],
                                   len(self.cache.built) > built,
                                   name in art.errors)

    def _tree_build(self, art: Artifacts, kind: type, name: str
                    ) -> tuple[Optional[TreeBuild], Optional[dict]]:
        """The target's TreeBuild of kind (its compiler found or built
        first) and its stamp record, as the build step name; None for
        what failed (the error recorded in art)."""
        tb = self.step(art, name, lambda: kind(
            art.arch, self.tree_of(art.arch.tree), self.cache,
            toolchain.cross_prefix(art.arch, self.cache)), "toolchain")
        if tb is None:
            return None, None
        art.kernel_log = tb.entry.path / "build.log"
        return tb, self.step(art, name, tb.ensure)

    def check(self, arch: Arch) -> Artifacts:
        """Compile-check a target instead of building its kernel
        (kernel.CompileCheck), then build the modules against the
        prepared folder and the test programs."""
        art = Artifacts(arch)
        if not self._deps(art, boot=False):
            return art
        step = functools.partial(self.step, art)
        cc, art.check_meta = self._tree_build(art, CompileCheck, "check")
        if art.check_meta is not None:
            art.modules = step("modules", lambda: build_modules(
                cc, self.cache, self.driver_dir))
        if arch.user is not None:
            art.programs = step("tests", lambda: build_tests(
                arch, self.tree_of(arch.tree), self.cache, self.user_tests,
                self.driver_dir)) or []
        return art

    def build(self, arch: Arch) -> Artifacts:
        """Build each step; a failed step is recorded, later ones skipped."""
        art = Artifacts(arch)
        if not self._deps(art):
            return art
        step = functools.partial(self.step, art)
        kb, art.kernel_meta = self._tree_build(art, KernelBuild, "kernel")
        if art.kernel_meta is None:
            return art
        art.kernel_image = kb.image
        art.modules = step("modules", lambda: build_modules(
            kb, self.cache, self.driver_dir))
        if arch.user is None:
            return art
        progs = step("tests", lambda: build_tests(
            arch, self.tree_of(arch.tree), self.cache, self.user_tests,
            self.driver_dir))
        art.programs = progs or []
        if arch.bootable:
            art.selftests = step("mm-selftests", lambda: mmselftests.build(
                arch, self.tree_of(arch.tree), self.cache))
        bb = step("busybox", lambda: busybox(arch, self.cache))
        if arch.bootable and bb is not None and art.modules is not None \
                and progs is not None:
            extra = art.selftests.files() if art.selftests else None
            art.initramfs = step("initramfs", lambda: build_initramfs(
                arch, self.cache, bb, art.modules, progs, extra))
        return art
