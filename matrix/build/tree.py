"""A kernel tree (matrix/spec/tree.py: Debian's linux-source-6.1 or
-6.12, or a user's tree or tarball) extracted, with a quilt series
applied (kernel/patches/VERSION/, or a copy of it), cached by both."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
from typing import Optional

from . import cache as cachemod
from .log import BuildError, run_logged
from ..spec import tree as treespec
from ..spec.tree import TreeSpec

REPO = pathlib.Path(__file__).resolve().parents[2]
# the default tree (treespec.DEFAULT), as results name it ("tree")
TREE = treespec.DEFAULT
TARBALL = pathlib.Path(f"/usr/src/linux-source-{TREE}.tar.xz")
SERIES_DIR = REPO / "kernel" / "patches" / TREE


def default_spec() -> TreeSpec:
    """The default tree, its source TARBALL (which unit tests replace)."""
    return TreeSpec(name=TREE, version=TREE, source=TARBALL,
                    package=f"linux-source-{TREE}",
                    path=treespec.TREE_DIR / f"{TREE}.yaml")


_digests: dict[TreeSpec, list] = {}


def source_inputs(spec: TreeSpec) -> list:
    """treespec.source_digest(), once per run."""
    if spec not in _digests:
        if not spec.source.exists():
            how = f"apt-get install {spec.package}" if spec.package else \
                "give an existing tree or tarball"
            raise BuildError(f"tree {spec.name}: {spec.source} is missing "
                             f"({how}; ./matrix/setup installs the "
                             "matrix's trees)")
        _digests[spec] = treespec.source_digest(spec)
    return _digests[spec]


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


Patch = tuple[pathlib.Path, int]      # a patch file and its -pN


def patch_sections(patch: pathlib.Path, strip: int) -> dict[str, str]:
    """A patch's text per file it writes (relative to the tree)."""
    out: dict[str, list[str]] = {}
    cur: list[str] = []
    pending: list[str] = []
    for line in patch.read_text(errors="replace").splitlines():
        if line.startswith("--- "):
            pending = [line]
            continue
        if line.startswith("+++ ") and pending:
            name = line[4:].split("\t")[0].strip()
            if name == "/dev/null":     # a removal: name it by its old path
                name = pending[0][4:].split("\t")[0].strip()
            rel = "/".join(name.split("/")[strip:])
            cur = out.setdefault(rel, [])
            cur += pending + [line]
            pending = []
            continue
        if pending:
            pending.append(line)
        else:
            cur.append(line)
    return {f: "\n".join(lines) for f, lines in out.items()}


def _creates(section: str) -> bool:
    """Whether a patch's section of a file (patch_sections()) creates it."""
    return "\n--- /dev/null" in "\n" + section


def created_files(patch: pathlib.Path, strip: int) -> list[str]:
    """The files a patch creates, relative to the tree."""
    return [f for f, text in patch_sections(patch, strip).items()
            if _creates(text)]


def added_file(patches: list[Patch], rel: str) -> Optional[str]:
    """The text of @rel as a series writes it, read from the patch that
    adds it, without extracting the tree: None unless one patch creates
    @rel and no later one changes it."""
    found = None
    for patch, strip in patches:
        text = patch_sections(patch, strip).get(rel)
        if text is None:
            continue
        if found is not None or not _creates(text):
            return None
        body = text.split("\n@@", 1)[1].split("\n", 1)[1] \
            if "\n@@" in text else ""
        found = [ln[1:] for ln in body.splitlines() if ln.startswith("+")]
    return None if found is None else "\n".join(found) + "\n"


def tree_inputs(patches: list[Patch], spec: Optional[TreeSpec] = None
                ) -> dict:
    return {
        "tarball": source_inputs(spec or default_spec()),
        "series": [(p.name, s, cachemod.file_checksum(p))
                   for p, s in patches],
    }


def _user_part(rel: str) -> bool:
    """Whether user-space builds read @rel of the tree: the kselftest
    harness and the mm selftests under tools/, the uapi headers, and a
    test module's user-space header (lib/test_nopfn_uapi.h)."""
    parts = rel.split("/")
    return parts[0] == "tools" or parts[:2] == ["include", "uapi"] or (
        parts[0] == "arch" and parts[2:4] == ["include", "uapi"]) or (
        parts[0] == "lib" and rel.endswith("_uapi.h"))


class Tree:
    """An extracted kernel tree with a series applied.

    A tree whose series extends one already in the cache (the series with
    a mutation at its end, a prefix of the series when bisecting) is made
    from that one: a hard-linked copy with only the remaining patches
    applied, so every file they do not write keeps its time stamp, and a
    build seeded from the shorter series' build recompiles only what they
    change (KernelBuild.seed())."""

    def __init__(self, cache: cachemod.Cache,
                 series_dir: Optional[pathlib.Path] = None,
                 patches: Optional[list[Patch]] = None,
                 spec: Optional[TreeSpec] = None):
        self.cache = cache
        self.spec = spec or default_spec()
        self.series_dir = series_dir or self.spec.series_dir
        self.patches = parse_series(self.series_dir) if patches is None \
            else patches
        self.inputs = tree_inputs(self.patches, self.spec)
        self.entry = cache.entry("trees", "linux", self.inputs)
        self.src = self.entry.path / "src"

    @property
    def key(self) -> str:
        return self.entry.key

    @property
    def user_key(self) -> str:
        """The key of what user-space builds read of this tree
        (_user_part()): a series change elsewhere keeps the test programs
        and mm selftests built for it."""
        sections = [(p.name, rel, cachemod.digest(text))
                    for p, s in self.patches
                    for rel, text in sorted(patch_sections(p, s).items())
                    if _user_part(rel)]
        return cachemod.digest({"tarball": self.inputs["tarball"],
                                "user": sections})

    def prefix(self, n: int) -> "Tree":
        """The tree of the first n patches of this series (not built)."""
        return Tree(self.cache, self.series_dir, self.patches[:n],
                    self.spec)

    def pristine(self) -> pathlib.Path:
        """The extracted tree without the series (extracted if needed)."""
        return self._pristine()

    def _pristine(self) -> pathlib.Path:
        """The source, extracted (a tarball) or copied without .git (a
        folder, so that the cache does not change under the user's
        edits), once per source: its top folder."""
        entry = self.cache.entry("trees", "pristine", self.inputs["tarball"])
        src = self.spec.source
        with entry.lock():
            meta = entry.meta()
            if meta is not None:     # its one checksum: TOP/Makefile
                return entry.path / next(iter(meta["checksums"])).split(
                    "/")[0]
            entry.reset()
            log = entry.path / "extract.log"
            if src.is_dir():
                top = src.name
                (entry.path / top).mkdir()
                run_logged(["sh", "-c", 'tar -C "$1" --exclude=.git -cf - . '
                            '| tar -C "$2" -xf -', "copy", str(src),
                            str(entry.path / top)], log,
                           what=f"copying {src}")
            else:
                run_logged(["tar", "-C", str(entry.path), "-xf", str(src)],
                           log, what=f"extracting {src}")
                tops = [p.name for p in entry.path.iterdir() if p.is_dir()]
                if len(tops) != 1:
                    raise BuildError(f"{src}: expected one top folder in "
                                     f"the tarball, found {sorted(tops)}")
                top = tops[0]
            found = treespec.makefile_version(entry.path / top)
            if self.spec.user and found != self.spec.version:
                raise BuildError(f"tree {self.spec.name}: {src} is Linux "
                                 f"{found}, not {self.spec.version} as "
                                 "its name says")
            entry.complete([f"{top}/Makefile"])
        return entry.path / top

    def _base(self) -> tuple[pathlib.Path, int]:
        """The cached tree to start from and how many patches it has:
        the longest proper prefix of the series that is in the cache,
        else the pristine tree."""
        for n in range(len(self.patches) - 1, 0, -1):
            t = self.prefix(n)
            if t.entry.valid():
                return t.src, n
        return self._pristine(), 0

    def ensure(self) -> pathlib.Path:
        with self.entry.lock():
            if self.entry.valid():
                return self.src
            base, done = self._base()
            self.entry.reset()
            log = self.entry.path / "patch.log"
            # Hard links make the copy cheap; every file a patch touches is
            # first replaced by a real copy (time stamp kept) so the tree
            # it comes from stays as it is.
            subprocess.run(["cp", "-al", str(base), str(self.src)],
                           check=True)
            for patch, strip in self.patches[done:]:
                for rel in patched_files(patch, strip):
                    f = self.src / rel
                    if f.is_file():
                        tmp = f.with_name(f.name + ".nopfn-cow")
                        shutil.copy2(f, tmp)
                        os.replace(tmp, f)
                run_logged(["patch", f"-p{strip}", "--batch", "--forward",
                            "--fuzz=0", "--no-backup-if-mismatch",
                            "-d", str(self.src), "-i", str(patch)],
                           log, what=f"applying {patch.name}")
            self.entry.complete(["src/Makefile"],
                                patches=[p.name for p, _ in self.patches],
                                based_on=done)
        return self.src

    def touched_files(self, start: int = 0) -> list[str]:
        """The files that the series (from its patch number start on)
        writes."""
        out = []
        for patch, strip in self.patches[start:]:
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
        """The kernel's C files that the series writes (not the user-space
        ones of tools/: the selftests)."""
        return [f for f in self.touched_files()
                if f.endswith(".c") and not f.startswith("tools/")]
