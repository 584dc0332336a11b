"""The out-of-tree modules (driver/, or a copy of it) built against a
target's kernel, or the compile check's prepared tree, with W=1."""
from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil

from typing import Optional

import yaml

from . import cache as cachemod
from ..spec.arch import Arch
from .kernel import TreeBuild, is_warning
from .log import BuildError, run_logged

REPO = pathlib.Path(__file__).resolve().parents[2]
DRIVER_DIR = REPO / "driver"
# module parameters that a driver folder gives its modules (its own, or
# the architecture files' for the repository's): see driver_params()
PARAMS_FILE = "module-params.yaml"
# The modules the kernel itself builds (=m in kernel/config/common.config),
# loaded before the driver folder's: the series' test module, which its
# kselftest (tools/testing/selftests/vm/nopfn-tests) drives.
TREE_MODULES = ["test_nopfn"]


@dataclasses.dataclass
class Modules:
    path: pathlib.Path
    names: list[str]            # module names, in load order
    warnings: list[str]         # the driver's: none is allowed
    log: pathlib.Path
    cached: bool
    # the kernel's own modules among names (TREE_MODULES; none for a
    # compile check, which builds no module of the tree), and where
    # modules_install puts each (lib/modules/RELEASE/kernel/...)
    tree: list[str] = dataclasses.field(default_factory=list)
    installed: dict[str, str] = dataclasses.field(default_factory=dict)


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


_OBJ_LINE = re.compile(r"^obj-([my])\s*[+:]?=\s*(.*)$")


def _kbuild_file(folder: pathlib.Path) -> Optional[pathlib.Path]:
    """The file kbuild reads in a module folder: Kbuild, else Makefile."""
    for name in ("Kbuild", "Makefile"):
        if (folder / name).is_file():
            return folder / name
    return None


def declared_modules(driver_dir: pathlib.Path = DRIVER_DIR,
                     _depth: int = 0) -> list[str]:
    """The modules a driver folder declares, in the order of its Kbuild
    (or Makefile): each "obj-m += name.o" (continued lines included),
    and those of each subfolder it names ("obj-m += sub/", or obj-y),
    in place. That is the order make writes to modules.order, known
    here without building, so that a run can name its items first."""
    f = _kbuild_file(driver_dir)
    if f is None or _depth > 8:
        return []
    text = re.sub(r"\\\n", " ", f.read_text(errors="replace"))
    names: list[str] = []
    for line in text.splitlines():
        m = _OBJ_LINE.match(line.strip())
        if not m:
            continue
        for w in m.group(2).split("#", 1)[0].split():
            if w.endswith("/"):
                names += declared_modules(driver_dir / w, _depth + 1)
            elif w.endswith(".o") and m.group(1) == "m":
                names.append(pathlib.PurePath(w).stem)
    return names


def read_order(order: pathlib.Path) -> list[str]:
    """The module names of a modules.order, in its order (6.1 lists
    "sub/name.ko", later kernels "sub/name.o")."""
    if not order.is_file():
        return []
    return [pathlib.PurePath(line.strip()).stem
            for line in order.read_text().splitlines() if line.strip()]


def driver_params(driver_dir: pathlib.Path, targets: dict[str, Arch]
                  ) -> dict[str, dict[str, str]]:
    """A driver folder's module parameters, from its PARAMS_FILE (none:
    {}): module -> {key: parameters}, key a target ("x86_64-debug"), an
    architecture ("x86_64") or "default". In the file, a module maps to
    its parameters for every target, or to such keys:

        mine: pages=8
        other:
          default: debug=1
          arm64: debug=1 size=0x1000

    BuildError, naming what is wrong, for a file that says otherwise."""
    f = driver_dir / PARAMS_FILE
    if not f.is_file():
        return {}
    try:
        raw = yaml.safe_load(f.read_text()) or {}
    except yaml.YAMLError as exc:
        raise BuildError(f"{f}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise BuildError(f"{f}: expected a mapping of module to parameters")
    known = {"default"} | set(targets) | {a.base for a in targets.values()}
    out: dict[str, dict[str, str]] = {}
    for mod, v in raw.items():
        v = {"default": v} if isinstance(v, (str, int, float)) else v
        if not isinstance(v, dict) or not all(
                isinstance(x, (str, int, float)) for x in v.values()):
            raise BuildError(f"{f}: {mod}: give its parameters, or a "
                             "mapping of target to parameters")
        bad = sorted(str(k) for k in v if str(k) not in known)
        if bad:
            others = ", ".join(sorted(known - {"default"}))
            raise BuildError(f"{f}: {mod}: unknown targets {bad}; known: "
                             f"default, {others}")
        out[str(mod)] = {str(k): str(x) for k, x in v.items()}
    return out


def params_for(arch: Arch, module: str,
               given: dict[str, dict[str, str]]) -> str:
    """insmod's parameters for @module on @arch's target: the driver
    folder's (driver_params()) for the target, its architecture or
    "default", in that order, else the architecture file's
    module_params."""
    mine = given.get(module, {})
    for key in (arch.label, arch.base or arch.label, "default"):
        if key in mine:
            return mine[key]
    return arch.module_params.get(module, "")


def tree_modules(kb: TreeBuild, where: pathlib.Path
                 ) -> tuple[list[str], dict[str, str]]:
    """The kernel's own modules (TREE_MODULES), built with it, copied to
    @where: (their names, the path of each below / as modules_install
    puts it). None for a compile check; BuildError when the kernel's
    modules.order lacks one of TREE_MODULES. Other modules that an
    architecture's configuration builds (ppc64el's PowerNV drivers, cxl
    and powernv-op-panel) are left where they are: nothing loads them."""
    if kb.STEP != "kernels":
        return [], {}
    order = kb.out / "modules.order"
    rels = [ln.strip() for ln in order.read_text().splitlines()
            if ln.strip()] if order.is_file() else []
    built = {pathlib.PurePath(r).stem: r for r in rels}
    missing = sorted(set(TREE_MODULES) - set(built))
    if missing:
        raise BuildError(f"the kernel did not build the modules {missing} "
                         f"(it built {sorted(built)}): set them =m in "
                         "kernel/config/common.config, or take them out "
                         "of matrix/build/modules.py TREE_MODULES")
    release = (kb.out / "include/config/kernel.release").read_text().strip()
    installed = {}
    for n in TREE_MODULES:
        rel = str(pathlib.PurePath(built[n]).with_suffix(".ko"))
        shutil.copy2(kb.out / rel, where / f"{n}.ko")
        installed[n] = f"lib/modules/{release}/kernel/{rel}"
    return list(TREE_MODULES), installed


def build_modules(kb: TreeBuild, cache: cachemod.Cache,
                  driver_dir: pathlib.Path = DRIVER_DIR) -> Modules:
    """The modules of driver_dir (the repository's driver/, or another
    copy of it, e.g. a mutated one) built against the kernel with W=1,
    after the kernel's own (tree_modules())."""
    # the parameters file is no input of the build: insmod reads it
    files = [f for f in cachemod.tree_files(driver_dir)
             if f != driver_dir / PARAMS_FILE] if driver_dir.exists() else []
    # a compile check has its kernel's key but builds none of the tree's
    # modules (tree_modules()): what was built against one is no build
    # for the kernel that boots later ("against")
    inputs = {"kernel": kb.key, "against": kb.STEP,
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
                names = read_order(src / "modules.order")
            else:
                log.write_text("no Kbuild in driver/: no modules\n")
            tree, installed = tree_modules(kb, entry.path)
            clash = sorted(set(tree) & set(names))
            if clash:
                raise BuildError(f"driver modules {clash}: the kernel has "
                                 "modules of these names", log)
            kos = [f"{n}.ko" for n in tree]
            for n in names:
                found = list(src.rglob(f"{n}.ko"))
                if not found:
                    raise BuildError(f"module {n}.ko not found", log)
                shutil.copy2(found[0], entry.path / f"{n}.ko")
                kos.append(f"{n}.ko")
            mine, tree_w = split_module_warnings(log.read_text(),
                                                 entry.path / "src", kb.out)
            meta = entry.complete(kos, names=tree + names, warnings=mine,
                                  tree_warnings=tree_w, tree=tree,
                                  installed=installed)
    return Modules(entry.path, meta["names"], meta["warnings"], log, cached,
                   meta.get("tree", []), meta.get("installed", {}))
