"""The out-of-tree modules (driver/, or a copy of it) built against a
target's kernel, or the compile check's prepared tree, with W=1."""
from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil

from . import cache as cachemod
from .kernel import TreeBuild, is_warning
from .log import BuildError, run_logged

REPO = pathlib.Path(__file__).resolve().parents[2]
DRIVER_DIR = REPO / "driver"


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


def build_modules(kb: TreeBuild, cache: cachemod.Cache,
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
