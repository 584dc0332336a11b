"""The kernel trees a run tests, the matrix's second axis.

A tree is one small file under matrix/trees/ (name, the Debian package
that installs it, its source tarball), or a tree a user names by path:
an extracted kernel tree (a folder) or a source tarball. Either way the
series applied is kernel/patches/VERSION/, VERSION the tree's
major.minor, and an architecture file's `trees: {VERSION: ...}`
overrides apply to it (matrix/spec/arch.py).

A target is named ARCH[-VARIANT]@TREE (x86_64-debug@6.12).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re
from typing import Optional

from .yamlfile import load_mapping

TREE_DIR = pathlib.Path(__file__).resolve().parents[1] / "trees"
REPO = TREE_DIR.parent.parent
PATCH_DIR = REPO / "kernel" / "patches"
# the tree of a run that names none (./tests/run, the pytest plugin)
DEFAULT = "6.1"

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


class TreeError(Exception):
    """A bad tree name, file or path, with what to do about it."""


@dataclasses.dataclass(frozen=True)
class TreeSpec:
    name: str                   # as targets and results name it: "6.12"
    version: str                # major.minor: the series, arch overrides
    source: pathlib.Path        # a source tarball, or an extracted tree
    package: str = ""           # the Debian package that installs source
    path: Optional[pathlib.Path] = None   # the file under matrix/trees/
    # sparse reports at the series' lines that the tree gives for its own
    # code of the same kind: (regular expression, why)
    sparse_known: tuple[tuple[str, str], ...] = ()
    # CONFIG_ symbols of the shared fragments (kernel/config/) that the
    # tree does not have, and why: their lines are left out there
    config_drop: tuple[tuple[str, str], ...] = ()
    # lines a variant's fragment (kernel/config/VARIANT.config) needs in
    # this tree: (variant, config lines)
    variant_config: tuple[tuple[str, str], ...] = ()

    @property
    def series_dir(self) -> pathlib.Path:
        return PATCH_DIR / self.version

    @property
    def is_dir(self) -> bool:
        return self.source.is_dir()

    @property
    def user(self) -> bool:
        """Given by path rather than by a file of matrix/trees/."""
        return self.path is None


def _version_of(text: str) -> Optional[str]:
    m = re.search(r"(?<![0-9.])(\d+)\.(\d+)(?:\.\d+)?(?![0-9])", text)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def makefile_version(top: pathlib.Path) -> Optional[str]:
    """major.minor from a kernel tree's top Makefile (None: not one)."""
    mk = top / "Makefile"
    if not mk.is_file():
        return None
    fields = dict(re.findall(r"^(VERSION|PATCHLEVEL) = (\d+)\s*$",
                             mk.read_text(errors="replace"), re.M))
    if "VERSION" not in fields or "PATCHLEVEL" not in fields:
        return None
    return f"{fields['VERSION']}.{fields['PATCHLEVEL']}"


def parse(path: pathlib.Path) -> TreeSpec:
    """Read and check one tree file of matrix/trees/."""
    raw = load_mapping(path, TreeError)
    known = {"name", "package", "source", "sparse_known", "config_drop",
             "variant_config"}
    if set(raw) - known or "name" not in raw or "source" not in raw:
        raise TreeError(f"{path}: keys must be {sorted(known)} (name and "
                        f"source required), not {sorted(raw)}")
    name = str(raw["name"])
    if name != path.stem:
        raise TreeError(f"{path}: name '{name}' must match the file name")
    version = _version_of(name)
    if version is None:
        raise TreeError(f"{path}: a tree's name starts with its version")
    sk = raw.get("sparse_known") or {}
    if not isinstance(sk, dict) or not all(
            isinstance(r, str) and r.strip() for r in sk.values()):
        raise TreeError(f"{path}: sparse_known must map a regular "
                        "expression to the reason the tree reports it")
    for pat in sk:
        try:
            re.compile(pat)
        except re.error as exc:
            raise TreeError(f"{path}: sparse_known: '{pat}': {exc}") \
                from exc
    cd = raw.get("config_drop") or {}
    if not isinstance(cd, dict) or not all(
            re.fullmatch(r"CONFIG_[A-Z0-9_]+", str(k)) and isinstance(v, str)
            and v.strip() for k, v in cd.items()):
        raise TreeError(f"{path}: config_drop must map a CONFIG_ symbol to "
                        "the reason the tree has it no more")
    return TreeSpec(name=name, version=version,
                    source=pathlib.Path(str(raw["source"])),
                    package=str(raw.get("package") or ""), path=path,
                    sparse_known=tuple((str(k), " ".join(v.split()))
                                       for k, v in sk.items()),
                    config_drop=tuple((str(k), " ".join(v.split()))
                                      for k, v in cd.items()),
                    variant_config=_variant_config(raw, path))


def _variant_config(raw: dict, path: pathlib.Path
                    ) -> tuple[tuple[str, str], ...]:
    vc = raw.get("variant_config") or {}
    if not isinstance(vc, dict) or not all(
            isinstance(v, str) and re.match(r"^(# )?CONFIG_", v.strip())
            for v in vc.values()):
        raise TreeError(f"{path}: variant_config must map a variant to "
                        "its config lines")
    return tuple((str(k), v) for k, v in vc.items())


def load_all(tree_dir: pathlib.Path = TREE_DIR) -> dict[str, TreeSpec]:
    """Every tree file, by name, oldest version first."""
    specs = [parse(p) for p in tree_dir.glob("*.yaml")]
    specs.sort(key=lambda s: tuple(int(x) for x in s.version.split(".")))
    return {s.name: s for s in specs}


def from_path(path: pathlib.Path) -> TreeSpec:
    """A user's tree: an extracted kernel tree or a source tarball. Its
    name is the folder's or tarball's (linux-6.12.118), its version the
    Makefile's (a tarball's from its name: checked against the Makefile
    once extracted)."""
    path = path.resolve()
    if path.is_dir():
        version = makefile_version(path)
        if version is None:
            raise TreeError(f"--tree {path}: a folder must be a kernel tree "
                            "(no Makefile with VERSION and PATCHLEVEL)")
        if (path / ".config").exists():
            raise TreeError(f"--tree {path}: the tree has been configured "
                            "or built in place (.config): the matrix builds "
                            "out of tree; run `make mrproper` in it first")
        stem = path.name
    elif path.is_file():
        stem = re.sub(r"\.tar(\.[a-z0-9]+)?$|\.tgz$", "", path.name)
        if stem == path.name:
            raise TreeError(f"--tree {path}: not a folder nor a .tar[.xz|"
                            ".gz|.bz2] source tarball")
        version = _version_of(stem)
        if version is None:
            raise TreeError(f"--tree {path}: the tarball's name does not "
                            "say its version (e.g. linux-6.12.118.tar.xz)")
    else:
        raise TreeError(f"--tree {path}: no such file or folder (give a "
                        "tree name of matrix/trees/, a kernel tree's folder "
                        "or a source tarball)")
    name = re.sub(r"[^A-Za-z0-9_.+-]", "_", stem)
    if not _NAME.match(name):
        name = "tree-" + name
    # the sparse reports its series' tree of that version knows
    same = [t for t in load_all().values() if t.version == version]
    return TreeSpec(name=name, version=version, source=path,
                    sparse_known=same[0].sparse_known if same else (),
                    config_drop=same[0].config_drop if same else (),
                    variant_config=same[0].variant_config if same else ())


def select(names: Optional[str], tree_dir: pathlib.Path = TREE_DIR
           ) -> list[TreeSpec]:
    """The trees of a comma list: names of matrix/trees/ files or paths;
    None means DEFAULT, "all" every file's tree."""
    known = load_all(tree_dir)
    if names is None or names == "":
        names = DEFAULT
    if names == "all":
        return list(known.values())
    out: list[TreeSpec] = []
    for n in (s.strip() for s in names.split(",")):
        if not n:
            continue
        if n in known:
            spec = known[n]
        elif "/" in n or n.startswith(".") or os.path.exists(n):
            spec = from_path(pathlib.Path(n))
        else:
            raise TreeError(f"unknown tree '{n}'; known: "
                            f"{', '.join(known)} (one file each in "
                            f"{tree_dir}), all, or a kernel tree's folder "
                            "or source tarball by path")
        if not spec.series_dir.is_dir():
            raise TreeError(
                f"tree {spec.name} is Linux {spec.version}: the matrix has "
                f"no series for it (kernel/patches/{spec.version}/); "
                f"series exist for {', '.join(series_versions())}")
        if spec.name in {s.name for s in out}:
            continue
        out.append(spec)
    if not out:
        raise TreeError("no tree selected; known: " + ", ".join(known))
    return out


def series_versions() -> list[str]:
    return sorted((p.name for p in PATCH_DIR.iterdir()
                   if (p / "series").is_file()),
                  key=lambda v: tuple(int(x) for x in v.split(".")))


def source_digest(spec: TreeSpec) -> list:
    """What identifies the source's content for the cache: a tarball's
    path, size and time stamp; a folder's every file's (path, size, time
    stamp), .git left out, digested (about a second for a kernel)."""
    src = spec.source
    if not src.is_dir():
        st = src.stat()
        return [str(src), st.st_size, st.st_mtime_ns]
    h = hashlib.sha256()
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for f in sorted(files):
            p = os.path.join(root, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            h.update(f"{os.path.relpath(p, src)}\0{st.st_size}\0"
                     f"{st.st_mtime_ns}\n".encode())
    return [str(src), "folder", h.hexdigest()]
