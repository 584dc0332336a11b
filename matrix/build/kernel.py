"""A target's kernel built (KernelBuild), or only compile-checked
(CompileCheck), from the tree (tree.py) in a build folder of its own."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import time
from typing import Optional

from . import cache as cachemod
from . import progress
from ..spec.arch import Arch
from .log import BuildError, run_logged
from .tree import Tree
from ..spec.yamlfile import drop_config

REPO = pathlib.Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO / "kernel" / "config"
# Bump when the way a kernel is built changes, to invalidate old entries.
BUILDER_VERSION = 4


def compiler_id(cc: str) -> str:
    """First line of `cc --version`, which names the compiler and version."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"cannot run compiler {cc}: {exc}") from exc
    return out.splitlines()[0] if out else cc


def fragment_options(text: str) -> dict[str, str]:
    """CONFIG_X=v and '# CONFIG_X is not set' lines of a fragment."""
    opts = {}
    for line in text.splitlines():
        line = line.strip()
        m = re.fullmatch(r"(CONFIG_\w+)=(.*)", line)
        if m:
            opts[m.group(1)] = m.group(2)
            continue
        m = re.fullmatch(r"# (CONFIG_\w+) is not set", line)
        if m:
            opts[m.group(1)] = "n"
    return opts


def check_config(config_text: str, wanted: dict[str, str]) -> list[str]:
    """Options of the fragment that did not survive olddefconfig."""
    have = fragment_options(config_text)
    bad = []
    for opt, val in wanted.items():
        got = have.get(opt, "n")
        if got != val:
            bad.append(f"{opt}={val} (got {got})")
    return bad


_STABLE_OK: Optional[bool] = None


def stable_paths_available() -> bool:
    """Whether commands can run in a private mount namespace (root, with
    util-linux's unshare): then every kernel build sees its tree and its
    output folder at the same two paths, whatever their cache keys."""
    global _STABLE_OK
    if _STABLE_OK is None:
        if os.environ.get("NOPFN_STABLE_PATHS", "1") == "0" or \
                os.geteuid() != 0 or shutil.which("unshare") is None:
            _STABLE_OK = False
        else:
            r = subprocess.run(["unshare", "-m", "--propagation", "private",
                                "true"], capture_output=True)
            _STABLE_OK = r.returncode == 0
    return _STABLE_OK


# Binds $1 on $3 and $2 on $4 in a private mount namespace, then runs the
# rest of the arguments there.
_BIND = ('mount --bind "$1" "$3" && mount --bind "$2" "$4" && shift 4 && '
         'exec "$@"')


def is_warning(line: str) -> bool:
    return re.search(r"\bwarning:", line) is not None


def warnings_in(log_text: str) -> list[str]:
    return [line for line in log_text.splitlines() if is_warning(line)]


# The option that builds each C file the series touches (None: every
# configuration). A compile check compiles those its configuration
# builds; test_series_files_compiled holds a full build to the same list.
SERIES_C_FILES = {
    "mm/memory.c": None,
    "mm/util.c": None,
    "arch/riscv/mm/cacheflush.c": "CONFIG_RISCV",
    "arch/riscv/mm/fault.c": "CONFIG_RISCV",
    "arch/mips/mm/fault.c": "CONFIG_MIPS",
    "arch/mips/mm/cache.c": "CONFIG_MIPS",
    "arch/sparc/mm/fault_64.c": "CONFIG_SPARC64",
    "arch/ia64/mm/fault.c": "CONFIG_IA64",
    "drivers/char/mspec.c": "CONFIG_MSPEC",     # ia64's in-tree user
    "lib/test_nopfn.c": "CONFIG_TEST_NOPFN",    # the series' test module
}

# ARCH= values whose source folder under arch/ is named otherwise
SRCARCH = {"x86_64": "x86", "i386": "x86", "sparc64": "sparc",
           "sparc32": "sparc", "parisc64": "parisc"}

# kbuild's checkers, sparse and W=1's kernel-doc, on the series' files
# only (NOPFN_SPARSE_FILES); sparse's reports prefixed "sparse: "
SERIES_CHECK = pathlib.Path(__file__).resolve().parent / "tools" / \
    "series-check"

# a sparse line that points at no file and is no note: sparse could not
# run ("sh: sparse: not found") or gave up
SPARSE_NOWHERE = re.compile(r"^sparse: (?!\s|\S+:\d+:|.*\bnote: )")


def built_by(rel: str, config: dict[str, str], srcarch: str) -> bool:
    """Whether a configuration builds the C file @rel of the series:
    SERIES_C_FILES says by which option; a file it does not list is taken
    to be built when it is outside arch/ or in this architecture's
    folder (a wrong guess fails the compile with "No rule to make
    target": add the file to SERIES_C_FILES)."""
    if rel in SERIES_C_FILES:
        opt = SERIES_C_FILES[rel]
        return opt is None or config.get(opt, "n") in ("y", "m")
    parts = rel.split("/")
    return parts[0] != "arch" or parts[1] == srcarch


def series_diagnostics(log_text: str, files: list[str],
                       roots: list[str]) -> tuple[list[str], list[str]]:
    """The compiler's (W=1) and sparse's warnings and errors in a build
    log that point into one of @files, with the tree's path (any of
    @roots) taken off: (compiler's, sparse's), each once. A sparse line
    that points nowhere (sparse could not run, or gave up) is sparse's
    too."""
    where = re.compile(r"^(sparse: )?(" + "|".join(map(re.escape, files)) +
                       r"):\d+:(?:\d+:)? (?:warning|error):")
    cc: dict[str, None] = {}
    sp: dict[str, None] = {}
    for line in log_text.splitlines():
        for root in roots:
            line = line.replace(root.rstrip("/") + "/", "")
        m = where.match(line) if files else None
        if m:
            (sp if m.group(1) else cc)[line] = None
        elif SPARSE_NOWHERE.match(line):
            sp[line] = None
    return list(cc), list(sp)


class TreeBuild:
    """A build folder of one architecture's configuration of the tree: the
    kernel built (KernelBuild) or only compile-checked (CompileCheck)."""

    STEP = ""        # the cache step: "kernels", "checks"
    SECONDS = ""     # the stamp's record of the time it took

    def __init__(self, arch: Arch, tree: Tree, cache: cachemod.Cache,
                 toolchain_prefix: str, jobs: Optional[int] = None):
        self.arch = arch
        self.tree = tree
        self.cache = cache
        self.prefix = toolchain_prefix      # full CROSS_COMPILE
        self.variant = arch.variant
        self.jobs = jobs or (os.cpu_count() or 1) + 1
        self.fragment = self._fragment()
        self.cc_id = compiler_id(self.prefix + "gcc")
        self.inputs = {"tree": tree.key, "arch": arch.fingerprint(),
                       "fragment": self.fragment, "cc": self.cc_id,
                       "builder": BUILDER_VERSION,
                       # what it reports is part of the entry's record
                       "checker": cachemod.file_checksum(SERIES_CHECK)}
        self.entry = cache.entry(self.STEP, arch.label, self.inputs)
        self.out = self.entry.path / "build"
        # Where make sees the tree and the build folder.  Every cache key
        # has its own folders, so a new series would otherwise change the
        # include paths of every compiler command and ccache would miss
        # them all; at stable paths (bind mounts in a private mount
        # namespace, see stable_paths_available()) only the files whose
        # preprocessed source changed are compiled again.
        self.stable = stable_paths_available()
        mnt = cache.root / "stable"
        self.src_path = mnt / "src" if self.stable else tree.src
        self.out_path = mnt / "build" if self.stable else self.out
        if self.stable:
            for d in (self.src_path, self.out_path):
                d.mkdir(parents=True, exist_ok=True)

    def _fragment(self) -> str:
        parts = [(CONFIG_DIR / "common.config").read_text(),
                 self.arch.kernel.config]
        if self.variant:
            frag = CONFIG_DIR / f"{self.variant}.config"
            if not frag.exists():
                known = sorted(p.stem for p in CONFIG_DIR.glob("*.config")
                               if p.stem != "common")
                raise BuildError(f"unknown variant '{self.variant}'; "
                                 f"known: {', '.join(known) or 'none'}")
            parts.append(frag.read_text())
            # what the variant needs in this tree (matrix/trees/TREE.yaml)
            extra = dict(self.tree.spec.variant_config).get(self.variant)
            if extra:
                parts.append(extra)
        parts.append('CONFIG_LOCALVERSION="-nopfn"\n'
                     "# CONFIG_LOCALVERSION_AUTO is not set\n")
        text = "\n".join(parts)
        # the symbols of the shared fragments that the tree has no more
        # (matrix/trees/TREE.yaml: config_drop)
        return drop_config(text, (sym for sym, _ in
                                  self.tree.spec.config_drop))

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def srcarch(self) -> str:
        return SRCARCH.get(self.arch.kernel.arch, self.arch.kernel.arch)

    def make_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "ARCH": self.arch.kernel.arch,
            "CROSS_COMPILE": self.prefix,
            "KBUILD_BUILD_TIMESTAMP": "nopfn matrix",
            "KBUILD_BUILD_USER": "nopfn",
            "KBUILD_BUILD_HOST": f"k-{self.key}",
            "CCACHE_DIR": str(self.cache.root / "ccache"),
            "CCACHE_NOHASHDIR": "1",
            "CCACHE_BASEDIR": str(self.cache.root),
            "NOPFN_SPARSE_FILES": " ".join(self.tree.touched_c_files()),
        })
        return env

    def make_args(self) -> list[str]:
        args = [f"O={self.out_path}"]
        if shutil.which("ccache"):
            # the host's tools too (kconfig, fixdep, modpost, ...): every
            # build folder compiles them again
            args += [f"CC=ccache {self.prefix}gcc", "HOSTCC=ccache gcc"]
        return args

    def command(self, cmd: list[str]) -> list[str]:
        """cmd as run for this build: where self.src_path and
        self.out_path are stable, in a mount namespace that binds the
        tree and the build folder there."""
        if not self.stable:
            return cmd
        return ["unshare", "-m", "--propagation", "private", "sh", "-c",
                _BIND, "sh", str(self.tree.src), str(self.out),
                str(self.src_path), str(self.out_path), *cmd]

    def make(self) -> list[str]:
        """make in the tree, for this build folder."""
        return ["make", "-C", str(self.src_path), *self.make_args()]

    @staticmethod
    def checked(c: str) -> list[str]:
        """make's arguments for W=1 on what it compiles, and sparse and
        kernel-doc on the series' files among them (SERIES_CHECK); c:
        kbuild's C= (1: what is compiled, 2: every file named)."""
        return ["W=1", f"C={c}", f"CHECK={SERIES_CHECK} sparse",
                f"cmd_checkdoc={SERIES_CHECK} kernel-doc $(srctree) $<"]

    def _point_at_tree(self) -> None:
        """Make the build folder name the tree by its real path, as if it
        had been configured there: the modules are built against it
        outside the mount namespace (`make -C build M=...`)."""
        mk = self.out / "Makefile"
        mk.write_text(mk.read_text().replace(str(self.src_path),
                                             str(self.tree.src)))
        link = self.out / "source"
        if link.is_symlink():
            link.unlink()
            link.symlink_to(self.tree.src)

    def meta(self) -> Optional[dict]:
        return self.entry.meta()

    def configure(self, log: pathlib.Path) -> None:
        """tinyconfig, the fragments merged on it, olddefconfig; fails
        when an option of the fragments did not stick."""
        env, make, cmd = self.make_env(), self.make(), self.command
        run_logged(cmd(make + ["tinyconfig"]), log, env=env,
                   what="make tinyconfig")
        frag = self.out / "matrix.config"
        frag.write_text(self.fragment)
        run_logged([str(self.tree.src / "scripts/kconfig/merge_config.sh"),
                    "-m", "-O", str(self.out), str(self.out / ".config"),
                    str(frag)], log, env=env, cwd=self.tree.src,
                   what="merging the config fragments")
        run_logged(cmd(make + ["olddefconfig"]), log, env=env,
                   what="make olddefconfig")
        bad = check_config((self.out / ".config").read_text(),
                           fragment_options(self.fragment))
        if bad:
            raise BuildError("config options did not stick (a dependency "
                             "is missing from the fragment): " +
                             ", ".join(bad), log)

    def seed(self) -> Optional[tuple[cachemod.Entry, int]]:
        """A cached build of the same configuration for a prefix of the
        series (the longest), from which this one is made by recompiling
        what the rest of the series changes, and that prefix's length.

        make tells what to recompile by time stamps, so every file the
        rest of the series writes must be newer than the seed's build
        (Tree.ensure() keeps the time stamps of the others). A tree made
        before the seed was built (a cached tree, a seed rebuilt since)
        has its files of the rest touched: that only ever makes make
        compile more, in whichever build uses the tree."""
        if not self.stable or not self.tree.entry.valid():
            return None
        patches = self.tree.patches
        for n in range(len(patches) - 1, 0, -1):
            t = self.tree.prefix(n)
            entry = self.cache.entry(self.STEP, self.arch.label,
                                     dict(self.inputs, tree=t.key))
            meta = entry.meta()
            if meta is None or not meta.get("stable"):
                continue
            for rel in self.tree.touched_files(n):
                f = self.tree.src / rel
                if f.exists() and f.stat().st_mtime <= meta["completed"]:
                    os.utime(f)
            return entry, n
        return None

    def _copy_seed(self, seed: cachemod.Entry, n: int,
                   log: pathlib.Path) -> None:
        progress.emit(f"from {seed.step}/{seed.path.name}, the build of "
                      f"the first {n} patches: recompiling what the "
                      "others change")
        with log.open("a") as f:
            f.write(f"# seeded from {seed.path} (the first {n} patches "
                    "of the series)\n")
        subprocess.run(["cp", "-a", "--reflink=auto", str(seed.path /
                                                          "build"),
                        str(self.out)], check=True)

    def series_objects(self) -> list[str]:
        """The objects of the series' C files that this configuration
        builds."""
        config = fragment_options((self.out / ".config").read_text())
        return [f[:-2] + ".o" for f in self.tree.touched_c_files()
                if built_by(f, config, self.srcarch)]

    def diagnostics(self, log: pathlib.Path) -> tuple[list[str], list[str]]:
        return series_diagnostics(log.read_text(errors="replace"),
                                  self.tree.touched_files(),
                                  [str(self.src_path), str(self.tree.src)])


    def ensure(self) -> dict:
        """Build unless an intact entry exists; returns the stamp record.

        The build folder starts as a copy of a seed's (seed()) or is
        configured anew; the subclass's make() runs (under the heavy-build
        lock) and its stamp() completes the entry."""
        with self.entry.lock():
            meta = self.entry.meta()
            if meta is not None:
                meta["cached"] = True
                return meta
            self.tree.ensure()
            seed = self.seed()
            self.entry.reset()
            log = self.entry.path / "build.log"
            with self.cache.heavy():
                t0 = time.monotonic()
                if seed is not None:
                    self._copy_seed(*seed, log)
                else:
                    self.out.mkdir()
                    self.configure(log)
                made = self.run_make(log, seed is not None)
                seconds = round(time.monotonic() - t0, 1)
                if self.stable:
                    self._point_at_tree()
            w1, sparse = self.diagnostics(log)
            release = (self.out / "include/config/kernel.release"
                       ).read_text().strip()
            return self.stamp(
                log, made, arch=self.arch.name, release=release,
                compiler=self.cc_id, w1_warnings=w1, sparse_warnings=sparse,
                stable=self.stable,
                seeded_from=seed[0].path.name if seed else None,
                **{self.SECONDS: seconds})

    def run_make(self, log: pathlib.Path, seeded: bool) -> list[str]:
        """The build's make, in the configured (or seeded) folder; returns
        the objects of the series' files it compiled."""
        raise NotImplementedError

    def stamp(self, log: pathlib.Path, made: list[str], **meta) -> dict:
        raise NotImplementedError


class KernelBuild(TreeBuild):
    """One kernel configured and built for one architecture.

    One make builds the kernel and its modules with W=1, and sparse and
    kernel-doc on the series' files (SERIES_CHECK): the reports in those
    files are the stamp's w1_warnings and sparse_warnings."""

    STEP = "kernels"
    SECONDS = "build_seconds"

    @property
    def image(self) -> pathlib.Path:
        return self.out / self.arch.kernel.image

    def run_make(self, log: pathlib.Path, seeded: bool) -> list[str]:
        if seeded:      # compiled again, so that their reports are in the log
            for obj in self.series_objects():
                (self.out / obj).unlink(missing_ok=True)
        target = pathlib.PurePath(self.arch.kernel.image).name
        run_logged(self.command(self.make() + self.checked("1") + [
            f"-j{self.jobs}", target, "modules"]), log, env=self.make_env(),
            what="building the kernel")
        return [o for o in self.series_objects() if (self.out / o).is_file()]

    def stamp(self, log: pathlib.Path, made: list[str], **meta) -> dict:
        config = (self.out / ".config").read_text()
        return self.entry.complete(
            [f"build/{self.arch.kernel.image}", "build/Module.symvers",
             "build/.config"], config_sha=cachemod.digest(config),
            w1_files=made, build_host=f"k-{self.key}", **meta)


class CompileCheck(TreeBuild):
    """A target's kernel configured and prepared (`make modules_prepare`),
    and the series' C files that its configuration builds compiled with
    W=1 and sparse: what a run does for a target whose kernel it does not
    build (a default run, for a full-tier target not in the cache). The
    modules are built against the prepared folder (build_modules())."""

    STEP = "checks"
    SECONDS = "check_seconds"

    def run_make(self, log: pathlib.Path, seeded: bool) -> list[str]:
        env = self.make_env()
        run_logged(self.command(self.make() + [
            f"-j{self.jobs}", "modules_prepare"]), log, env=env,
            what="make modules_prepare")
        objs = self.series_objects()
        for obj in objs:
            (self.out / obj).unlink(missing_ok=True)
        if objs:
            run_logged(self.command(self.make() + self.checked("2") +
                                    [f"-j{self.jobs}", *objs]),
                       log, env=env, what="compiling the series' files "
                       "with W=1 and sparse")
        missing = [o for o in objs if not (self.out / o).is_file()]
        if missing:
            raise BuildError(f"not compiled: {', '.join(missing)}", log)
        return objs

    def stamp(self, log: pathlib.Path, made: list[str], **meta) -> dict:
        return self.entry.complete(
            ["build/.config", "build/include/config/auto.conf"],
            w1_files=made, **meta)
