"""The C test programs of tests/guest/ (and --user-tests), their KTAP
cases known from the source, cross-compiled statically for a target with
the guest library (tests/guest/lib/)."""
from __future__ import annotations

import dataclasses
import pathlib
import re
import subprocess
from typing import Optional

from . import cache as cachemod
from ..spec.arch import Arch
from .kernel import compiler_id, warnings_in
from .log import BuildError
from .modules import DRIVER_DIR
from .tree import Patch, Tree, added_file

REPO = pathlib.Path(__file__).resolve().parents[2]
GUEST_TESTS = REPO / "tests" / "guest"


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
    tree: bool = False          # a selftest of the patched tree (TREE_PROGRAMS)


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
        progs += [(USER_PREFIX + n, p) for n, p in _programs_in(user_dir)]
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


def describe(name: str, src: pathlib.Path,
             text: Optional[str] = None) -> TestProgram:
    """A program's kind, KTAP cases and arguments, from its source (of a
    program of several files, from all of them: its TEST()s belong in
    one of them, whose order is then theirs), or from @text."""
    if text is None:
        text = "\n".join(f.read_text(errors="replace")
                         for f in sources(src))
    ktap = "kselftest_harness.h" in text
    return TestProgram(name, src, "ktap" if ktap else "plain",
                       ktap_cases(text) if ktap else program_cases(text),
                       None, "", [], program_args(text))


# The kselftests that the series adds to the tree and that run as test
# programs, with a result per case: name in the guest -> its file in the
# tree (selftests/vm until 6.2 renamed it mm; the first a series adds).
# Compiled as the tree's Makefile compiles them (no OWN_DEFINES, no guest
# library), from the patched tree.
TREE_PROGRAMS = {"nopfn-tests": ("tools/testing/selftests/vm/nopfn-tests.c",
                                 "tools/testing/selftests/mm/nopfn-tests.c")}


def tree_programs(patches: list[Patch],
                  root: Optional[pathlib.Path] = None) -> list[TestProgram]:
    """The TREE_PROGRAMS that a series (@patches) adds, described from the
    patch that adds each (no tree needs extracting to name their cases);
    their source is under @root, the patched tree, when given (else the
    path in the tree)."""
    out = []
    for name, rels in TREE_PROGRAMS.items():
        found = [(rel, added_file(patches, rel)) for rel in rels]
        found = [(rel, text) for rel, text in found if text is not None]
        if not found:
            continue
        rel, text = found[0]
        p = describe(name, (root or pathlib.Path()) / rel, text)
        p.tree = True
        out.append(p)
    return out


def all_programs(user_dir: Optional[pathlib.Path], patches: list[Patch],
                 root: Optional[pathlib.Path] = None) -> list[TestProgram]:
    """Ours (tests/guest/), the series' (tree_programs()) and the user's,
    by name: the order they run in."""
    progs = [describe(n, s) for n, s in discover_tests(user_dir)]
    progs += tree_programs(patches, root)
    return sorted(progs, key=lambda p: p.name)


def build_tests(arch: Arch, tree: Tree, cache: cachemod.Cache,
                user_dir: Optional[pathlib.Path],
                driver_dir: pathlib.Path = DRIVER_DIR) -> list[TestProgram]:
    assert arch.user is not None
    progs = all_programs(user_dir, tree.patches, tree.src)
    own = [p for p in progs if not p.tree]
    headers = [tree.src / "tools/testing/selftests/kselftest_harness.h",
               tree.src / "tools/testing/selftests/kselftest.h"]
    # the user-space headers of the driver being built (a mutated copy's)
    uapi = driver_dir / "include" / "uapi"
    inc_files = cachemod.tree_files(uapi) if uapi.exists() else []
    lib = sorted(GUEST_LIB.glob("*.c")) if GUEST_LIB.is_dir() else []
    inputs = {"cc": compiler_id(arch.user.cc), "tree": tree.user_key,
              "progs": [(p.name, [(f.name, cachemod.file_checksum(f))
                                  for f in sources(p.source)])
                        for p in own],
              # a tree program's source is in the tree's user_key
              "tree_progs": [p.name for p in progs if p.tree],
              "lib": [(f.name, cachemod.file_checksum(f)) for f in lib],
              "uapi": cachemod.hash_files(inc_files, uapi) if inc_files
              else "", "cflags": [CFLAGS, OWN_DEFINES],
              # the headers beside the sources, in program folders and
              # in lib/ (by name and content: the clone's location must
              # not change the key)
              "headers": sorted({(str(h.relative_to(d.parent)),
                                  cachemod.file_checksum(h))
                                 for d in _header_dirs(own)
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
            # lib/test_nopfn_uapi.h: the series' test module's interface
            inc = ["-isystem", f"{tree.src}/tools/testing/selftests",
                   f"-I{uapi}", f"-I{GUEST_LIB}",
                   "-idirafter", f"{tree.src}/lib"]
            results = {}
            built = []
            archive, lib_err = _guest_lib(arch, lib, [*CFLAGS, *OWN_DEFINES,
                                                      *inc], entry.path)
            for p in progs:
                out = entry.path / "bin" / p.name
                out.parent.mkdir(parents=True, exist_ok=True)
                if lib_err:
                    results[p.name] = {"error": lib_err,
                                       "warnings": warnings_in(lib_err)}
                    continue
                if p.tree:      # as the tree's Makefile builds it
                    cmd = [arch.user.cc, *CFLAGS, "-o", str(out),
                           str(p.source)]
                else:
                    cmd = [arch.user.cc, *cflags(p.name), *inc, "-o",
                           str(out), *map(str, sources(p.source))]
                    if archive is not None:
                        cmd.append(str(archive))
                r = subprocess.run(cmd, capture_output=True, text=True)
                warned = warnings_in(r.stderr)
                if p.tree:      # the tree's harness warns on its own
                    warned = [w for w in warned
                              if not HARNESS_WARNING.match(w)]
                results[p.name] = {"error": r.stderr if r.returncode else "",
                                   "warnings": warned}
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


# A warning located in the tree's kselftest_harness.h, which a tree
# program includes by its relative path (no -isystem): 6.1's casts
# pointers to uintmax_t in every ASSERT on one, a warning on each 32-bit
# target, and its timeout handler has an unused parameter (-Wextra). Our
# programs get the header as a system one; a warning in the program's
# own lines still counts.
HARNESS_WARNING = re.compile(r"^\S*/kselftest_harness\.h:\d+:\d+: warning:")

# Every program: static (the initramfs has no libraries), stripped,
# optimised, warnings on (a warning fails its test_program_builds item).
CFLAGS = ["-static", "-s", "-O2", "-Wall", "-Wextra", "-pthread"]
# The project's own programs (tests/guest/ and its lib/) only: a
# --user-tests program is compiled as its author wrote it, and one that
# says "#define _GNU_SOURCE" itself would otherwise be told that gcc's
# -D_GNU_SOURCE (=1) was redefined, a warning. _FILE_OFFSET_BITS=64: a
# 64-bit off_t on the 32-bit targets too (pread() of /proc/self/mem above
# 2 GiB, mmap() offsets), as on the 64-bit ones; a user's program that
# needs it defines it.
OWN_DEFINES = ["-D_GNU_SOURCE", "-D_FILE_OFFSET_BITS=64"]
USER_PREFIX = "user/"       # a --user-tests program's name in the guest


def cflags(name: str) -> list[str]:
    """The compiler flags of the program @name (without the include
    folders): CFLAGS, and OWN_DEFINES unless it is a user's."""
    return CFLAGS + ([] if name.startswith(USER_PREFIX) else OWN_DEFINES)
