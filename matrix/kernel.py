"""The kernel tree (extracted, patched) and the per-architecture builds."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import time
from typing import Optional

from . import cache as cachemod
from .archspec import Arch
from .log import BuildError, run_logged

REPO = pathlib.Path(__file__).resolve().parent.parent
TARBALL = pathlib.Path("/usr/src/linux-source-6.1.tar.xz")
SERIES_DIR = REPO / "kernel" / "patches"
CONFIG_DIR = REPO / "kernel" / "config"
# Bump when the way a kernel is built changes, to invalidate old entries.
BUILDER_VERSION = 3


def parse_series(series_dir: pathlib.Path = SERIES_DIR
                 ) -> list[tuple[pathlib.Path, int]]:
    """Quilt series: one patch per line, optional -pN, # comments."""
    series = series_dir / "series"
    if not series.exists():
        return []
    out = []
    for lineno, line in enumerate(series.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        strip = 1
        for opt in parts[1:]:
            m = re.fullmatch(r"-p(\d+)", opt)
            if not m:
                raise BuildError(f"{series}:{lineno}: unsupported option "
                                 f"'{opt}' (only -pN)")
            strip = int(m.group(1))
        patch = series_dir / parts[0]
        if not patch.is_file():
            raise BuildError(f"{series}:{lineno}: no such patch {patch}")
        out.append((patch, strip))
    return out


def patched_files(patch: pathlib.Path, strip: int) -> list[str]:
    """The files a patch writes, relative to the tree."""
    files = []
    for line in patch.read_text(errors="replace").splitlines():
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null":
                continue
            files.append("/".join(name.split("/")[strip:]))
    return files


def tree_inputs(series_dir: pathlib.Path = SERIES_DIR) -> dict:
    st = TARBALL.stat()
    return {
        "tarball": [str(TARBALL), st.st_size, st.st_mtime_ns],
        "series": [(p.name, s, cachemod.file_checksum(p))
                   for p, s in parse_series(series_dir)],
    }


class Tree:
    """The extracted linux-source-6.1 with the series applied."""

    def __init__(self, cache: cachemod.Cache,
                 series_dir: pathlib.Path = SERIES_DIR):
        self.cache = cache
        self.series_dir = series_dir
        self.inputs = tree_inputs(series_dir)
        self.entry = cache.entry("trees", "linux", self.inputs)
        self.src = self.entry.path / "src"

    @property
    def key(self) -> str:
        return self.entry.key

    def _pristine(self) -> pathlib.Path:
        entry = self.cache.entry("trees", "pristine", self.inputs["tarball"])
        top = entry.path / "linux-source-6.1"
        with entry.lock():
            if entry.valid():
                return top
            entry.reset()
            run_logged(["tar", "-C", str(entry.path), "-xf", str(TARBALL)],
                       entry.path / "extract.log", what="extracting "
                       f"{TARBALL}")
            entry.complete(["linux-source-6.1/Makefile"])
        return top

    def ensure(self) -> pathlib.Path:
        with self.entry.lock():
            if self.entry.valid():
                return self.src
            pristine = self._pristine()
            self.entry.reset()
            log = self.entry.path / "patch.log"
            # Hard links make the copy cheap; every file a patch touches is
            # first replaced by a real copy so the pristine tree stays so.
            subprocess.run(["cp", "-al", str(pristine), str(self.src)],
                           check=True)
            for patch, strip in parse_series(self.series_dir):
                for rel in patched_files(patch, strip):
                    f = self.src / rel
                    if f.is_file():
                        tmp = f.with_name(f.name + ".nopfn-cow")
                        shutil.copy2(f, tmp)
                        os.replace(tmp, f)
                run_logged(["patch", f"-p{strip}", "--batch", "--forward",
                            "--fuzz=0", "--no-backup-if-mismatch",
                            "-d", str(self.src), "-i", str(patch)],
                           log, what=f"applying {patch.name} (it does not "
                           "apply to the pristine linux-source-6.1 tree)")
            self.entry.complete(["src/Makefile"],
                                patches=[p.name for p, _ in
                                         parse_series(self.series_dir)])
        return self.src

    def touched_files(self) -> list[str]:
        out = []
        for patch, strip in parse_series(self.series_dir):
            out += patched_files(patch, strip)
        return sorted(set(out))

    def changed_lines(self, rel: str) -> set[int]:
        """The lines (1-based) of @rel in the patched tree that the series
        wrote or changed, against the pristine tree."""
        import difflib
        old = (self._pristine() / rel)
        new = self.ensure() / rel
        a = old.read_text(errors="replace").splitlines() if old.exists() \
            else []
        b = new.read_text(errors="replace").splitlines()
        out: set[int] = set()
        sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, _i1, _i2, j1, j2 in sm.get_opcodes():
            if tag in ("replace", "insert"):
                out.update(range(j1 + 1, j2 + 1))
        return out

    def touched_c_files(self) -> list[str]:
        out = []
        for patch, strip in parse_series(self.series_dir):
            out += [f for f in patched_files(patch, strip)
                    if f.endswith(".c")]
        return sorted(set(out))


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


class KernelBuild:
    """One kernel configured and built for one architecture."""

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
        inputs = {"tree": tree.key, "arch": arch.fingerprint(),
                  "fragment": self.fragment, "cc": self.cc_id,
                  "builder": BUILDER_VERSION}
        self.entry = cache.entry("kernels", arch.name, inputs)
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
        parts.append('CONFIG_LOCALVERSION="-nopfn"\n'
                     "# CONFIG_LOCALVERSION_AUTO is not set\n")
        return "\n".join(parts)

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def image(self) -> pathlib.Path:
        return self.out / self.arch.kernel.image

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
        })
        return env

    def make_args(self) -> list[str]:
        args = [f"O={self.out_path}"]
        if shutil.which("ccache"):
            args.append(f"CC=ccache {self.prefix}gcc")
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

    def ensure(self) -> dict:
        """Build unless an intact entry exists; returns the stamp record."""
        with self.entry.lock():
            meta = self.entry.meta()
            if meta is not None:
                meta["cached"] = True
                return meta
            src = self.tree.ensure()
            self.entry.reset()
            self.out.mkdir()
            log = self.entry.path / "build.log"
            env = self.make_env()
            make = self.make()
            cmd = self.command
            with self.cache.heavy():
                t0 = time.monotonic()
                run_logged(cmd(make + ["tinyconfig"]), log, env=env,
                           what="make tinyconfig")
                frag = self.out / "matrix.config"
                frag.write_text(self.fragment)
                run_logged([str(src / "scripts/kconfig/merge_config.sh"),
                            "-m", "-O", str(self.out),
                            str(self.out / ".config"), str(frag)],
                           log, env=env, cwd=src, what="merging the "
                           "config fragments")
                run_logged(cmd(make + ["olddefconfig"]), log, env=env,
                           what="make olddefconfig")
                bad = check_config((self.out / ".config").read_text(),
                                   fragment_options(self.fragment))
                if bad:
                    raise BuildError(
                        "config options did not stick (a dependency is "
                        "missing from the fragment): " + ", ".join(bad),
                        log)
                target = pathlib.PurePath(self.arch.kernel.image).name
                run_logged(cmd(make + [f"-j{self.jobs}", target, "modules"]),
                           log, env=env, what="building the kernel")
                build_s = time.monotonic() - t0
                # W=1 over the files the series touches: any warning there
                # is one the series brought in.
                w1_log = self.entry.path / "w1.log"
                # ... those of them that this configuration builds (the
                # series also touches other architectures' and drivers'
                # files, which cannot be compiled here)
                touched = [f[:-2] + ".o" for f in self.tree.touched_c_files()
                           if (self.out / (f[:-2] + ".o")).is_file()]
                w1 = []
                if touched:
                    run_logged(cmd(make + ["W=1", f"-j{self.jobs}",
                                           *touched]),
                               w1_log, env=env, what="W=1 build of the "
                               "files the series touches")
                    w1 = warnings_in(w1_log.read_text())
                if self.stable:
                    self._point_at_tree()
            release = (self.out / "include/config/kernel.release"
                       ).read_text().strip()
            config = (self.out / ".config").read_text()
            return self.entry.complete(
                [f"build/{self.arch.kernel.image}", "build/Module.symvers",
                 "build/.config"],
                arch=self.arch.name, build_seconds=round(build_s, 1),
                release=release, compiler=self.cc_id,
                config_sha=cachemod.digest(config), w1_files=touched,
                w1_warnings=w1, build_host=f"k-{self.key}")
