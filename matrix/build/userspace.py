"""What goes into a guest: busybox, the modules, the C tests, an initramfs."""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import time
from typing import Optional

from . import cache as cachemod
from . import cpio
from . import progress
from ..spec.arch import Arch
from .kernel import KernelBuild, compiler_id, is_warning, warnings_in
from .tree import Tree
from .log import BuildError, run_logged

REPO = pathlib.Path(__file__).resolve().parents[2]
DRIVER_DIR = REPO / "driver"
GUEST_TESTS = REPO / "tests" / "guest"
INIT = pathlib.Path(__file__).resolve().parent / "init"
APT_SOURCES = pathlib.Path("/etc/apt/sources.list.d/debian.sources")

# Applets linked in the initramfs; busybox --install is not needed.
APPLETS = """sh ash cat cp dd dmesg echo env false grep head insmod kill ls
lsmod mkdir mknod modprobe mount poweroff printf ps reboot rm rmmod sed
setsid cttyhack sleep stty sync tail tee test time timeout true umount uname
wc xargs awk cut sort uniq expr seq date id stat chmod ln tr""".split()


# ----------------------------------------------------------------- busybox

class PrivateApt:
    """apt-get with its own lists and sources, for foreign architectures.

    The machine's apt setup is left as it is: no dpkg --add-architecture,
    no deb-src line added to the system's sources.
    """

    def __init__(self, cache: cachemod.Cache, arch: str, kinds: str):
        # One state per architecture and index kind ("deb" or "deb-src"),
        # so an update fetches only the index that is needed.
        self.arch, self.kinds = arch, kinds
        self.root = cache.root / "apt" / f"{kinds}-{arch}"

    def _opts(self) -> list[str]:
        r = self.root
        return ["-o", f"Dir::Etc::SourceList={r}/sources.list",
                "-o", "Dir::Etc::SourceParts=-",
                "-o", f"Dir::State::Lists={r}/lists",
                "-o", f"Dir::Cache={r}/cache",
                "-o", f"APT::Architectures::={self.arch}",
                "-o", "Debug::NoLocking=1"]

    def _sources(self) -> str:
        """deb and deb-src lines for the machine's Debian mirrors."""
        lines = []
        text = APT_SOURCES.read_text() if APT_SOURCES.exists() else ""
        for stanza in text.split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith("#"):
                    k, v = line.split(":", 1)
                    fields[k.strip()] = v.strip()
            if "URIs" not in fields:
                continue
            signed = fields.get("Signed-By")
            opt = f"[signed-by={signed}] " if signed else ""
            for suite in fields.get("Suites", "").split():
                lines.append(f"{self.kinds} {opt}{fields['URIs']} {suite} "
                             f"{fields.get('Components', 'main')}")
        if not lines:
            lines = [f"{self.kinds} http://deb.debian.org/debian bookworm "
                     "main"]
        return "\n".join(lines) + "\n"

    def update(self, log: pathlib.Path) -> None:
        stamp = self.root / "updated"
        if stamp.exists() and time.time() - stamp.stat().st_mtime < 86400:
            return
        (self.root / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (self.root / "cache" / "archives" / "partial").mkdir(parents=True,
                                                             exist_ok=True)
        (self.root / "sources.list").write_text(self._sources())
        what = "apt-get update (private lists for foreign architectures)"
        try:
            run_logged(["apt-get", *self._opts(), "update"], log, what=what)
        except BuildError:
            # A mirror that serves one index inconsistently (seen: the
            # security suite's, "File has unexpected size ... Mirror sync
            # in progress?") fails the whole update. Once more; then go on
            # if the release suite's index for what is wanted arrived
            # (the download says so if the package is not in it), and try
            # the update again next time (no stamp).
            try:
                run_logged(["apt-get", *self._opts(), "update"], log,
                           what=what + ", again")
            except BuildError:
                if not self.have_main_index():
                    raise
                progress.emit("apt-get update: an index failed (see "
                              f"{log}); going on with the release "
                              "suite's")
                return
        stamp.touch()

    def have_main_index(self) -> bool:
        """Whether the lists hold the index of a release suite's main
        component for this state's kind and architecture."""
        want = (f"_main_binary-{self.arch}_Packages" if self.kinds == "deb"
                else "_main_source_Sources")
        return any(want in f.name and "-security_" not in f.name and
                   "-updates_" not in f.name
                   for f in (self.root / "lists").glob("*"))

    def run(self, args: list[str], log: pathlib.Path, cwd: pathlib.Path,
            what: str) -> None:
        self.update(log)
        run_logged(["apt-get", *self._opts(), *args], log, cwd=cwd, what=what)


def busybox(arch: Arch, cache: cachemod.Cache) -> pathlib.Path:
    """A static busybox binary for the architecture."""
    assert arch.user is not None
    how = arch.user.busybox
    inputs = {"arch": arch.debian_arch, "how": how}
    if how == "source":
        inputs["cc"] = compiler_id(arch.user.cc)
    entry = cache.entry("busybox", arch.base, inputs)
    with entry.lock():
        if entry.valid():
            return entry.path / "busybox"
        entry.reset()
        log = entry.path / "build.log"
        work = entry.path / "work"
        work.mkdir()
        if how == "debian":
            pkg = f"busybox-static:{arch.debian_arch}"
            try:    # the machine's own architecture: its apt lists will do
                run_logged(["apt-get", "download", pkg], log, cwd=work,
                           what=f"downloading {pkg}")
            except BuildError:
                PrivateApt(cache, arch.debian_arch, "deb").run(
                    ["download", pkg], log, work,
                    what=f"downloading {pkg}")
            deb = next(work.glob("busybox-static_*.deb"))
            run_logged(["dpkg-deb", "-x", str(deb), str(work / "x")], log,
                       what="unpacking busybox-static")
            shutil.copy2(work / "x/bin/busybox", entry.path / "busybox")
            version = deb.name
        else:
            PrivateApt(cache, "amd64", "deb-src").run(
                ["source", "--download-only", "busybox"], log, work,
                what="downloading the busybox source package")
            dsc = next(work.glob("busybox_*.dsc"))
            run_logged(["dpkg-source", "-x", dsc.name, "src"], log, cwd=work,
                       what="unpacking busybox source")
            src = work / "src"
            prefix = arch.user.cc[:-len("gcc")]
            mk = ["make", "-C", str(src), f"CROSS_COMPILE={prefix}"]
            run_logged(mk + ["defconfig"], log, what="busybox defconfig")
            cfg = src / ".config"
            text = cfg.read_text()
            text = re.sub(r"# CONFIG_STATIC is not set", "CONFIG_STATIC=y",
                          text)
            text = re.sub(r"CONFIG_TC=y", "# CONFIG_TC is not set", text)
            cfg.write_text(text)
            with cache.heavy():
                run_logged(mk + [f"-j{os.cpu_count() or 1}", "busybox"], log,
                           what="building busybox")
            shutil.copy2(src / "busybox", entry.path / "busybox")
            version = dsc.name
        shutil.rmtree(work)
        entry.complete(["busybox"], version=version)
    return entry.path / "busybox"


# ----------------------------------------------------------------- modules

@dataclasses.dataclass
class Modules:
    path: pathlib.Path
    names: list[str]            # module names, in load order
    warnings: list[str]         # the driver's: none is allowed
    log: pathlib.Path
    cached: bool


_MISSING_DIR = re.compile(r"^cc1: warning: (\S+): No such file or directory "
                          r"\[-Wmissing-include-dirs\]$")
_INCLUDED = re.compile(r"^(?:In file included from| +from) (\S+?):\d+[,:]$")


def split_module_warnings(log_text: str, src: pathlib.Path,
                          cwd: pathlib.Path) -> tuple[list[str], list[str]]:
    """The W=1 warnings of a module build in @src, run in @cwd (the
    kernel's build folder): (the driver's, the tree's).

    The tree's are those the driver's code has no part in: W=1's
    -Wmissing-include-dirs for a directory the architecture's Makefile
    adds and its tree lacks (sh's arch/sh/include/mach-r2d), and a
    warning in a header that a generated NAME.mod.c (modpost's, which
    includes only linux/module.h and friends) pulls in (sh's
    ARCH_DMA_MINALIGN, defined by linux/cache.h and again by asm/page.h
    in 6.1). Every other warning is the driver's, wherever it points.
    """
    mine: list[str] = []
    tree: list[str] = []
    chain: list[str] = []
    for line in log_text.splitlines():
        m = _INCLUDED.match(line)
        if m:
            chain = [] if line.startswith("In file") else chain
            chain.append(m.group(1))
            continue
        if is_warning(line):
            d = _MISSING_DIR.match(line)
            if d and src.resolve() not in \
                    (cwd / d.group(1)).resolve().parents:
                tree.append(line)
            elif chain and chain[-1].endswith(".mod.c"):
                tree.append(line)
            else:
                mine.append(line)
        if not line.startswith(" "):
            chain = []
    return mine, tree


def build_modules(kb: KernelBuild, cache: cachemod.Cache,
                  driver_dir: pathlib.Path = DRIVER_DIR) -> Modules:
    """The modules of driver_dir (the repository's driver/, or another
    copy of it, e.g. a mutated one) built against the kernel with W=1."""
    files = cachemod.tree_files(driver_dir) if driver_dir.exists() else []
    inputs = {"kernel": kb.key,
              "driver": cachemod.hash_files(files, driver_dir)}
    entry = cache.entry("modules", kb.entry.path.name.rsplit("-", 1)[0],
                        inputs)
    log = entry.path / "build.log"
    with entry.lock():
        meta = entry.meta()
        cached = meta is not None
        if meta is None:
            entry.reset()
            src = entry.path / "src"
            shutil.copytree(driver_dir, src) if driver_dir.exists() \
                else src.mkdir()
            names = []
            if (src / "Kbuild").exists() or (src / "Makefile").exists():
                run_logged(["make", "-C", str(kb.out), *kb.make_args()[1:],
                            f"M={src}", "W=1", f"-j{kb.jobs}", "modules"],
                           log, env=kb.make_env(), what="building the "
                           "modules in driver/")
                order = src / "modules.order"
                if order.exists():
                    names = [pathlib.PurePath(line.strip()).stem
                             for line in order.read_text().splitlines()
                             if line.strip()]
            else:
                log.write_text("no Kbuild in driver/: no modules\n")
            kos = []
            for n in names:
                found = list(src.rglob(f"{n}.ko"))
                if not found:
                    raise BuildError(f"module {n}.ko not found", log)
                shutil.copy2(found[0], entry.path / f"{n}.ko")
                kos.append(f"{n}.ko")
            mine, tree = split_module_warnings(log.read_text(),
                                               entry.path / "src", kb.out)
            meta = entry.complete(kos, names=names, warnings=mine,
                                  tree_warnings=tree)
    return Modules(entry.path, meta["names"], meta["warnings"], log, cached)


# ------------------------------------------------------------------- tests

@dataclasses.dataclass
class TestProgram:
    name: str                   # path below /tests in the guest
    source: pathlib.Path        # its C file, or its folder of C files
    kind: str                   # "ktap" (kselftest_harness) or "plain"
    cases: list[str]            # KTAP test names expected, in order
    binary: Optional[pathlib.Path]
    error: str                  # compiler output when it did not build
    warnings: list[str]
    args: str = ""              # from a "matrix-args:" line in the source


_TEST_RE = re.compile(
    r"^\s*(TEST|TEST_SIGNAL|TEST_F|TEST_F_SIGNAL|TEST_F_TIMEOUT)\s*\(\s*"
    r"(\w+)\s*(?:,\s*(\w+))?", re.M)
_FIXTURE_RE = re.compile(r"^\s*FIXTURE\s*\(\s*(\w+)\s*\)", re.M)
_VARIANT_RE = re.compile(r"^\s*FIXTURE_VARIANT_ADD\s*\(\s*(\w+)\s*,\s*(\w+)",
                         re.M)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"),
                  text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def ktap_cases(source: str) -> list[str]:
    """The KTAP names kselftest_harness.h prints for a source file.

    TEST(x) prints "global.x"; TEST_F(f, x) prints "f.x", or "f.v.x" for
    each FIXTURE_VARIANT_ADD(f, v). The harness runs the global fixture
    first, then fixtures in the order FIXTURE() declares them, variants
    and tests each in the order they are written.
    """
    text = _strip_comments(source)
    variants: dict[str, list[str]] = {}
    for m in _VARIANT_RE.finditer(text):
        variants.setdefault(m.group(1), []).append(m.group(2))
    fixtures: dict[str, list[str]] = {"global": []}
    for m in _FIXTURE_RE.finditer(text):
        fixtures.setdefault(m.group(1), [])
    for m in _TEST_RE.finditer(text):
        macro, a, b = m.group(1), m.group(2), m.group(3)
        if macro in ("TEST", "TEST_SIGNAL"):
            fixtures["global"].append(a)
        else:
            fixtures.setdefault(a, []).append(b)
    cases = []
    for fix, tests in fixtures.items():
        for v in variants.get(fix, [""]):
            for t in tests:
                cases.append(f"{fix}.{v}.{t}" if v else f"{fix}.{t}")
    return cases


# C files and headers that every test program of tests/guest/ may use:
# the files are linked from an archive, so a program gets only what it
# calls (a --user-tests program too, when it includes their headers).
GUEST_LIB = GUEST_TESTS / "lib"


def _programs_in(folder: pathlib.Path) -> list[tuple[str, pathlib.Path]]:
    """The test programs of a folder: each C file, and each subfolder of C
    files (a program of several files), but lib/."""
    out = [(p.stem, p) for p in folder.glob("*.c")]
    out += [(d.name, d) for d in folder.iterdir()
            if d.is_dir() and d != GUEST_LIB and any(d.glob("*.c"))]
    return sorted(out)


def discover_tests(user_dir: Optional[pathlib.Path]
                   ) -> list[tuple[str, pathlib.Path]]:
    progs = _programs_in(GUEST_TESTS)
    if user_dir is not None:
        if not user_dir.is_dir():
            raise BuildError(f"--user-tests {user_dir}: not a folder")
        progs += [(f"user/{n}", p) for n, p in _programs_in(user_dir)]
    return progs


def _header_dirs(progs: list[TestProgram]) -> set[pathlib.Path]:
    dirs = {GUEST_LIB}
    for p in progs:
        dirs.add(p.source.parent)
        if p.source.is_dir():
            dirs.add(p.source)
    return dirs


def sources(src: pathlib.Path) -> list[pathlib.Path]:
    """The C files of a program: its file, or its folder's files."""
    return sorted(src.glob("*.c")) if src.is_dir() else [src]


_ARGS_RE = re.compile(r"^\s*(?://|/?\*)\s*matrix-args:\s*(.*?)\s*(?:\*/)?$",
                      re.M)


def program_args(source: str) -> str:
    """The arguments a source asks to be run with: a line
    "// matrix-args: ARGS" (or " * matrix-args: ARGS" in a comment
    block). {seed} and {scale} in them are filled in at run time."""
    m = _ARGS_RE.search(source)
    return m.group(1) if m else ""


def program_cases(source: str) -> list[str]:
    """The KTAP cases a plain program (not the harness) declares that it
    prints, in order: "matrix-cases: A B ..." in a comment, continued on
    the comment lines below it that are indented further ("*   C D"). A
    plain program that declares none is one result: its exit status."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(?://|/?\*)\s*matrix-cases:\s*(.*?)\s*(?:\*/)?$",
                     line)
        if not m:
            continue
        names = m.group(1).split()
        for more in lines[i + 1:]:
            c = re.match(r"^\s*\*\s{2,}(\S.*?)\s*(?:\*/)?$", more)
            if not c:
                break
            names += c.group(1).split()
        return names
    return []


def describe(name: str, src: pathlib.Path) -> TestProgram:
    """A program's kind, KTAP cases and arguments, from its source (of a
    program of several files, from all of them: its TEST()s belong in
    one of them, whose order is then theirs)."""
    text = "\n".join(f.read_text(errors="replace") for f in sources(src))
    ktap = "kselftest_harness.h" in text
    return TestProgram(name, src, "ktap" if ktap else "plain",
                       ktap_cases(text) if ktap else program_cases(text),
                       None, "", [], program_args(text))


def build_tests(arch: Arch, tree: Tree, cache: cachemod.Cache,
                user_dir: Optional[pathlib.Path],
                driver_dir: pathlib.Path = DRIVER_DIR) -> list[TestProgram]:
    assert arch.user is not None
    progs = [describe(n, s) for n, s in discover_tests(user_dir)]
    headers = [tree.src / "tools/testing/selftests/kselftest_harness.h",
               tree.src / "tools/testing/selftests/kselftest.h"]
    # the user-space headers of the driver being built (a mutated copy's)
    uapi = driver_dir / "include" / "uapi"
    inc_files = cachemod.tree_files(uapi) if uapi.exists() else []
    lib = sorted(GUEST_LIB.glob("*.c")) if GUEST_LIB.is_dir() else []
    inputs = {"cc": compiler_id(arch.user.cc), "tree": tree.user_key,
              "progs": [(p.name, [(f.name, cachemod.file_checksum(f))
                                  for f in sources(p.source)])
                        for p in progs],
              "lib": [(f.name, cachemod.file_checksum(f)) for f in lib],
              "uapi": cachemod.hash_files(inc_files, uapi) if inc_files
              else "", "cflags": CFLAGS,
              # the headers beside the sources, in program folders and
              # in lib/ (by name and content: the clone's location must
              # not change the key)
              "headers": sorted({(str(h.relative_to(d.parent)),
                                  cachemod.file_checksum(h))
                                 for d in _header_dirs(progs)
                                 for h in d.glob("*.h")})}
    entry = cache.entry("tests", arch.base, inputs)
    with entry.lock():
        meta = entry.meta()
        if meta is None:
            tree.ensure()
            assert all(h.exists() for h in headers)
            entry.reset()
            # -isystem: the 6.1 harness's macros cast pointers to
            # uintmax_t, which -Wextra reports on every 32-bit target in
            # each ASSERT on a pointer; warnings of our own code are
            # still reported
            flags = [*CFLAGS, "-isystem",
                     f"{tree.src}/tools/testing/selftests", f"-I{uapi}",
                     f"-I{GUEST_LIB}"]
            results = {}
            built = []
            archive, lib_err = _guest_lib(arch, lib, flags, entry.path)
            for p in progs:
                out = entry.path / "bin" / p.name
                out.parent.mkdir(parents=True, exist_ok=True)
                if lib_err:
                    results[p.name] = {"error": lib_err,
                                       "warnings": warnings_in(lib_err)}
                    continue
                cmd = [arch.user.cc, *flags, "-o", str(out),
                       *map(str, sources(p.source))]
                if archive is not None:
                    cmd.append(str(archive))
                r = subprocess.run(cmd, capture_output=True, text=True)
                results[p.name] = {"error": r.stderr if r.returncode else "",
                                   "warnings": warnings_in(r.stderr)}
                if r.returncode == 0:
                    built.append(f"bin/{p.name}")
            meta = entry.complete(built, programs=results)
    for p in progs:
        rec = meta["programs"].get(p.name, {"error": "not built",
                                            "warnings": []})
        p.error, p.warnings = rec["error"], rec["warnings"]
        if not p.error:
            p.binary = entry.path / "bin" / p.name
    return progs


def _guest_lib(arch: Arch, files: list[pathlib.Path], flags: list[str],
               where: pathlib.Path) -> tuple[Optional[pathlib.Path], str]:
    """tests/guest/lib/*.c compiled into an archive for arch: (the
    archive or None when there are no files, the compiler's output when
    that failed: every program fails with it, warnings included)."""
    if not files:
        return None, ""
    objs = where / "lib"
    objs.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        o = objs / (f.stem + ".o")
        r = subprocess.run([arch.user.cc, *flags, "-c", "-o", str(o),
                            str(f)], capture_output=True, text=True)
        if r.returncode != 0 or warnings_in(r.stderr):
            return None, f"tests/guest/lib/{f.name}:\n{r.stderr}"
        out.append(o)
    ar = arch.user.cc[:-len("gcc")] + "ar"
    archive = objs / "libguest.a"
    r = subprocess.run([ar, "rcs", str(archive), *map(str, out)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{ar}: {r.stderr}"
    return archive, ""


# _FILE_OFFSET_BITS=64: a 64-bit off_t on the 32-bit targets too (pread()
# of /proc/self/mem above 2 GiB, mmap() offsets), as on the 64-bit ones.
CFLAGS = ["-static", "-s", "-O2", "-Wall", "-Wextra", "-pthread",
          "-D_GNU_SOURCE", "-D_FILE_OFFSET_BITS=64"]


# --------------------------------------------------------------- initramfs

def build_initramfs(arch: Arch, cache: cachemod.Cache, bb: pathlib.Path,
                    mods: Modules, progs: list[TestProgram],
                    extra: Optional[dict[str, pathlib.Path]] = None
                    ) -> pathlib.Path:
    """extra: more executables, by path in the initramfs (the mm
    selftests under selftests/vm/)."""
    extra = extra or {}
    inputs = {"busybox": cachemod.file_checksum(bb),
              "modules": mods.path.name,
              "tests": [(p.name, cachemod.file_checksum(p.binary))
                        for p in progs if p.binary],
              "init": cachemod.file_checksum(INIT),
              "applets": APPLETS}
    if extra:
        inputs["extra"] = [(n, cachemod.file_checksum(f))
                           for n, f in sorted(extra.items())]
    entry = cache.entry("initramfs", arch.name, inputs)
    with entry.lock():
        if entry.valid():
            return entry.path / "initramfs.cpio"
        entry.reset()
        w = cpio.Writer()
        for d in ("bin", "sbin", "dev", "proc", "sys", "tmp", "etc",
                  "modules", "tests", "tests/user", "root"):
            w.directory(d)
        w.device("dev/console", 0o600, 5, 1)
        w.device("dev/null", 0o666, 1, 3)
        w.file("init", INIT.read_bytes(), 0o755)
        w.file("bin/busybox", bb.read_bytes(), 0o755)
        for a in APPLETS:
            w.symlink(f"bin/{a}", "busybox")
        for n in mods.names:
            w.file(f"modules/{n}.ko", (mods.path / f"{n}.ko").read_bytes(),
                   0o644)
        w.file("modules/order", ("\n".join(mods.names) + "\n").encode(),
               0o644)
        for p in progs:
            if p.binary:
                w.file(f"tests/{p.name}", p.binary.read_bytes(), 0o755)
        dirs = sorted({str(parent) for n in extra
                       for parent in pathlib.PurePosixPath(n).parents
                       if str(parent) != "."})
        for d in dirs:
            w.directory(d)
        for n, f in sorted(extra.items()):
            w.file(n, f.read_bytes(), 0o755)
        (entry.path / "initramfs.cpio").write_bytes(w.finish())
        entry.complete(["initramfs.cpio"])
    return entry.path / "initramfs.cpio"
