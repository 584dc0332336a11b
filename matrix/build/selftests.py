"""The kernel's own mm selftests (tools/testing/selftests/vm, mm since
6.2), built.

tests/mm-selftests.yaml lists 6.1's (list_for(): a later tree's list is
tests/mm-selftests-VERSION.yaml): for each, its sources, arguments,
/proc/sys settings, the user to run it as, and per architecture the
reason it cannot run there. Those that can run are cross-compiled
statically with the architecture's user-space compiler, from the
extracted, patched tree (cached like the test programs), and go into the
initramfs under /selftests/vm/; matrix/session/selftests.py runs them.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import subprocess
from typing import Iterable, Optional

import yaml

from . import cache as cachemod
from ..spec.arch import Arch
from .kernel import compiler_id, warnings_in
from .tree import Tree
from .log import BuildError

REPO = pathlib.Path(__file__).resolve().parents[2]
LIST = REPO / "tests" / "mm-selftests.yaml"
HELPERS = REPO / "tests" / "mm-selftests"
VM_DIR = "tools/testing/selftests/vm"
MM_DIR = "tools/testing/selftests/mm"       # its name since 6.2
TOOLS_INCLUDE = "tools/include/uapi"        # -isystem, with MM_DIR


def list_for(version: str) -> pathlib.Path:
    """The selftest list of a tree's version (6.1: LIST)."""
    if version in ("", "6.1"):
        return LIST
    return REPO / "tests" / f"mm-selftests-{version}.yaml"


def folder_in(src: pathlib.Path) -> pathlib.Path:
    """The mm selftests' folder of a tree."""
    mm = src / MM_DIR
    return mm if mm.is_dir() else src / VM_DIR


def has_mm_folder(version: str) -> bool:
    """Whether a tree of that version ("": 6.1) has MM_DIR, as
    folder_in() finds once it is extracted (the cache key is made
    before)."""
    major, minor = (version or "6.1").split(".")[:2]
    return (int(major), int(minor)) >= (6, 2)


GUEST_DIR = "selftests/vm"             # in the initramfs
RUNAS = "selftests/runas"               # tests/mm-selftests/runas.c

# Libraries the selftests' Makefile links that the guests' cross
# toolchains lack: the matrix's own stand-in headers.
LIBS = {"cap": HELPERS / "include"}
# Calls the guests' kernels lack or refuse, replaced at link time
# (-Wl,--wrap=NAME) by tests/mm-selftests/wrap_NAME.c, which makes the
# real call first.
WRAPS = {"socketpair": HELPERS / "wrap_socketpair.c",
         "ioctl": HELPERS / "wrap_ioctl.c"}

# As the selftests' Makefile (CFLAGS = -Wall, LDLIBS = -lrt -lpthread),
# static and stripped for the initramfs.
CFLAGS = ["-static", "-s", "-O2", "-Wall"]
LDLIBS = ["-lrt", "-lpthread"]
HELPER_CFLAGS = ["-static", "-s", "-O2", "-Wall", "-Wextra"]


def includes(src: pathlib.Path, mm: bool) -> list[str]:
    """The tree's include options: -I<tree>, and with MM_DIR the tree's
    tools/include/uapi as its Makefile adds it; the other uapi headers
    are the toolchain's (Linux 6.1), where the Makefile puts the tree's
    installed ones (KHDR_INCLUDES) first.

    So <linux/types.h> is tools/include/uapi's stub, which includes
    <asm-generic/int-ll64.h> and not <asm/types.h> as the real one
    does: the last options include it (powerpc's and s390's
    __vector128, used by their <asm/elf.h> and <asm/sigcontext.h>), with
    ll64 types on ppc64 and mips64 too (as uffd-common.h and
    tools/include ask), not to conflict with the stub's __s64/__u64."""
    out = [f"-I{src}"]
    if mm:
        out += ["-isystem", str(src / TOOLS_INCLUDE),   # TOOLS_INCLUDES
                "-D__SANE_USERSPACE_TYPES__=", "-include", "asm/types.h"]
    return out


def command(cc: str, t: "Selftest", src: pathlib.Path, mm: bool,
            out: pathlib.Path) -> list[str]:
    """How build() compiles t from the tree at src into out."""
    folder = src / (MM_DIR if mm else VM_DIR)
    cmd = [cc, *CFLAGS, *t.cflags, *includes(src, mm)]
    cmd += [f"-I{LIBS[lib]}" for lib in t.libs]
    cmd += [f"-Wl,--wrap={fn}" for fn in t.wrap]
    cmd += ["-o", str(out)]
    cmd += [str(folder / s) for s in t.sources]
    return cmd + [str(WRAPS[fn]) for fn in t.wrap] + LDLIBS


_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_SOURCE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.c$")
_SYSCTL = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_-]+)+$")
_VALUE = re.compile(r"^[A-Za-z0-9_.:-]+$")
_ARGS = re.compile(r"^[A-Za-z0-9_.,:=/ +-]*$")
_CFLAG = re.compile(r"^[A-Za-z0-9_./=+-]+$")
KEYS = {"sources", "args", "sysctl", "user", "libs", "wrap", "cflags",
        "timeout", "cannot_run"}


class ListError(BuildError):
    """A bad entry in the selftest list, with where it is."""


@dataclasses.dataclass
class Selftest:
    name: str
    sources: list[str]
    args: str = ""
    sysctl: dict[str, str] = dataclasses.field(default_factory=dict)
    user: Optional[int] = None
    libs: list[str] = dataclasses.field(default_factory=list)
    wrap: list[str] = dataclasses.field(default_factory=list)
    cflags: list[str] = dataclasses.field(default_factory=list)
    timeout: Optional[float] = None
    cannot_run: dict[str, str] = dataclasses.field(default_factory=dict)

    def skip_reason(self, arch: str) -> Optional[str]:
        """Why it cannot run on arch (a base architecture name), or None."""
        return self.cannot_run.get(arch) or self.cannot_run.get("all")

    def command(self) -> str:
        """The shell command that runs it in the guest.

        Each sysctl is saved, set, and restored after the run in a
        subshell; a setting that cannot be made exits 125 without
        running the test.
        """
        run = f"/{GUEST_DIR}/{self.name}"
        if self.user is not None:
            run = f"/{RUNAS} {self.user} {run}"
        if self.args:
            run += f" {self.args}"
        if not self.sysctl:
            return run
        save, restore = [], []
        for i, (key, value) in enumerate(sorted(self.sysctl.items())):
            path = "/proc/sys/" + key.replace(".", "/")
            save.append(f"o{i}=$(cat {path}) && echo {value} >{path} || "
                        f"{{ echo 'cannot set {key}={value}'; exit 125; }}")
            restore.append(f'echo "$o{i}" >{path}')
        return "( " + "; ".join(save + [run, "r=$?"] + restore +
                                ["exit $r"]) + " )"


def parse(text: str, arches: Optional[Iterable[str]] = None,
          where: str = "mm-selftests.yaml") -> list[Selftest]:
    """Read and check the list. arches: the known architecture names
    (cannot_run keys are checked against them and "all")."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ListError(f"{where}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict) or set(raw) != {"tests"} or \
            not isinstance(raw["tests"], dict):
        raise ListError(f"{where}: expected one key 'tests' mapping each "
                        "selftest's name to its settings")
    known = set(arches) | {"all"} if arches is not None else None
    out = []
    for name, entry in raw["tests"].items():
        w = f"{where}: {name}"
        if not isinstance(name, str) or not _NAME.match(name):
            raise ListError(f"{w}: not a program name")
        entry = entry or {}
        if not isinstance(entry, dict):
            raise ListError(f"{w}: expected a mapping of settings")
        bad = set(entry) - KEYS
        if bad:
            raise ListError(f"{w}: unknown keys {sorted(bad)}; known: "
                            f"{sorted(KEYS)}")
        sources = entry.get("sources", [f"{name}.c"])
        if not isinstance(sources, list) or not sources or not all(
                isinstance(s, str) and _SOURCE.match(s) for s in sources):
            raise ListError(f"{w}: sources must be a list of .c files of "
                            f"{VM_DIR} (or {MM_DIR})")
        args = entry.get("args", "") or ""
        if not isinstance(args, str) or not _ARGS.match(args):
            raise ListError(f"{w}: args must be plain words (no shell "
                            "syntax)")
        sysctl = entry.get("sysctl", {}) or {}
        if not isinstance(sysctl, dict):
            raise ListError(f"{w}: sysctl must map a name to a value")
        for k, v in sysctl.items():
            if not (isinstance(k, str) and _SYSCTL.match(k)) or \
                    isinstance(v, bool) or not _VALUE.match(str(v)):
                raise ListError(f"{w}: bad sysctl {k}: {v}")
        user = entry.get("user")
        if user is not None and (isinstance(user, bool) or
                                 not isinstance(user, int) or
                                 not 0 < user < 65536):
            raise ListError(f"{w}: user must be a uid from 1 to 65535")
        libs = entry.get("libs", []) or []
        if not isinstance(libs, list) or set(libs) - set(LIBS):
            raise ListError(f"{w}: libs must be a list of {sorted(LIBS)}")
        wrap = entry.get("wrap", []) or []
        if not isinstance(wrap, list) or set(wrap) - set(WRAPS):
            raise ListError(f"{w}: wrap must be a list of {sorted(WRAPS)}")
        cflags = entry.get("cflags", []) or []
        if not isinstance(cflags, list) or not all(
                isinstance(f, str) and _CFLAG.match(f) for f in cflags):
            raise ListError(f"{w}: cflags must be a list of compiler "
                            "options")
        timeout = entry.get("timeout")
        if timeout is not None and (isinstance(timeout, bool) or
                                    not isinstance(timeout, (int, float))
                                    or timeout <= 0):
            raise ListError(f"{w}: timeout must be a positive number of "
                            "seconds")
        cannot = entry.get("cannot_run", {}) or {}
        if not isinstance(cannot, dict):
            raise ListError(f"{w}: cannot_run must map an architecture "
                            "(or all) to a reason")
        for a, reason in cannot.items():
            if known is not None and a not in known:
                raise ListError(f"{w}: cannot_run: unknown architecture "
                                f"'{a}'; known: {', '.join(sorted(known))}")
            if not isinstance(reason, str) or not reason.strip():
                raise ListError(f"{w}: cannot_run {a}: give the reason")
        out.append(Selftest(name=name, sources=list(sources), args=args,
                            sysctl={k: str(v) for k, v in sysctl.items()},
                            user=user, libs=list(libs), wrap=list(wrap),
                            cflags=list(cflags),
                            timeout=float(timeout) if timeout else None,
                            cannot_run={str(a): r.strip()
                                        for a, r in cannot.items()}))
    return out


def load(path: pathlib.Path = LIST,
         arches: Optional[Iterable[str]] = None) -> list[Selftest]:
    """The list, or none when the file is absent."""
    if not path.exists():
        return []
    return parse(path.read_text(), arches, str(path))


# ------------------------------------------------------------------ build

@dataclasses.dataclass
class Built:
    path: pathlib.Path          # the cache entry
    results: dict[str, dict]    # name: {"error": ..., "warnings": [...]}
    runas: Optional[pathlib.Path]
    cached: bool

    def binary(self, name: str) -> Optional[pathlib.Path]:
        rec = self.results.get(name)
        if rec is None or rec["error"]:
            return None
        return self.path / "bin" / name

    def files(self) -> dict[str, pathlib.Path]:
        """Initramfs path: built file."""
        out = {f"{GUEST_DIR}/{n}": self.path / "bin" / n
               for n, r in sorted(self.results.items()) if not r["error"]}
        if self.runas is not None:
            out[RUNAS] = self.runas
        return out


def build(arch: Arch, tree: Tree, cache: cachemod.Cache,
          tests: Optional[list[Selftest]] = None,
          list_path: Optional[pathlib.Path] = None) -> Built:
    """Cross-compile the selftests that can run on arch, and runas (the
    list: that of arch's tree, unless given)."""
    assert arch.user is not None
    base = arch.base or arch.name
    if list_path is None:
        list_path = list_for(arch.version)
    if tests is None:
        tests = load(list_path)
    runnable = [t for t in tests if t.skip_reason(base) is None]
    helpers = cachemod.tree_files(HELPERS) if HELPERS.exists() else []
    inputs = {"cc": compiler_id(arch.user.cc), "tree": tree.user_key,
              "list": cachemod.file_checksum(list_path)
              if list_path.exists() else "",
              "helpers": cachemod.hash_files(helpers, HELPERS)
              if helpers else "",
              "cflags": CFLAGS, "ldlibs": LDLIBS,
              "helper_cflags": HELPER_CFLAGS, "arch": base}
    mm = has_mm_folder(arch.version)
    if mm:          # its flags, tree path as TREE (a vm folder: key unchanged)
        inputs["includes"] = includes(pathlib.Path("TREE"), mm)
    entry = cache.entry("mm-selftests", base, inputs)
    with entry.lock():
        meta = entry.meta()
        cached = meta is not None
        if meta is None:
            tree.ensure()
            entry.reset()
            (entry.path / "bin").mkdir()
            if (folder_in(tree.src).name == "mm") != mm:
                raise BuildError(f"{tree.src}: Linux {arch.version or '6.1'}"
                                 f" without its {MM_DIR if mm else VM_DIR}")
            results, built = {}, []
            for t in runnable:
                r = _compile(command(arch.user.cc, t, tree.src, mm,
                                     entry.path / "bin" / t.name))
                results[t.name] = r
                if not r["error"]:
                    built.append(f"bin/{t.name}")
            runas_err = ""
            if any(t.user is not None for t in runnable):
                r = _compile([arch.user.cc, *HELPER_CFLAGS, "-o",
                              str(entry.path / "runas"),
                              str(HELPERS / "runas.c")])
                runas_err = r["error"] or "\n".join(r["warnings"])
                if not r["error"]:
                    built.append("runas")
            meta = entry.complete(built, selftests=results,
                                  runas_error=runas_err,
                                  runas="runas" in built)
    runas = entry.path / "runas" if meta.get("runas") else None
    results = dict(meta["selftests"])
    if meta.get("runas_error"):
        # the tests that need it cannot run without it
        for t in runnable:
            if t.user is not None and not results[t.name]["error"]:
                results[t.name] = {"error": "tests/mm-selftests/runas.c: "
                                   + meta["runas_error"], "warnings": []}
    return Built(entry.path, results, runas, cached)


def _compile(cmd: list[str]) -> dict:
    r = subprocess.run(cmd, capture_output=True, text=True)
    return {"error": (" ".join(cmd) + "\n" + r.stderr) if r.returncode
            else "", "warnings": warnings_in(r.stderr)}
