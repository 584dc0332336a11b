"""Compilers: Debian's cross gcc, or one the matrix builds (ia64)."""
from __future__ import annotations

import pathlib
import subprocess
import time
from typing import Optional

from . import cache as cachemod
from ..spec.arch import Arch
from .log import BuildError, run_logged

HERE = pathlib.Path(__file__).resolve().parent
SCRIPTS = {"ia64-gcc": HERE / "toolchains" / "ia64-gcc.sh"}
VERSION_OF = {"ia64-gcc": ["gcc-12-source", "binutils-ia64-linux-gnu"]}


def _package_versions(pkgs: list[str]) -> list[str]:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package}=${Version}\n",
                          *pkgs], capture_output=True, text=True)
    if out.returncode != 0:
        raise BuildError(f"packages missing: {' '.join(pkgs)}; run: "
                         f"apt-get install {' '.join(pkgs)}")
    return out.stdout.split()


def _entry(arch: Arch, cache: cachemod.Cache) -> cachemod.Entry:
    """The cache entry of the compiler the matrix builds for arch."""
    k = arch.kernel
    script = SCRIPTS.get(k.toolchain or "")
    if script is None:
        raise BuildError(f"{arch.path}: unknown toolchain '{k.toolchain}'; "
                         f"known: {', '.join(SCRIPTS)}")
    inputs = {"script": cachemod.file_checksum(script),
              "packages": _package_versions(VERSION_OF[k.toolchain])}
    return cache.entry("toolchains", k.toolchain, inputs)


def cached_prefix(arch: Arch, cache: cachemod.Cache) -> Optional[str]:
    """The CROSS_COMPILE prefix if the compiler needs no building (a
    Debian one, or one whose cache entry is intact), else None; builds
    nothing."""
    k = arch.kernel
    if not k.toolchain:
        return k.cross_compile
    entry = _entry(arch, cache)
    if not entry.valid():
        return None
    return str(entry.path / "install" / "bin" / k.cross_compile)


def cross_prefix(arch: Arch, cache: cachemod.Cache) -> str:
    """The CROSS_COMPILE prefix for the arch's kernel, building if needed."""
    k = arch.kernel
    if not k.toolchain:
        return k.cross_compile
    entry = _entry(arch, cache)
    gcc = f"bin/{k.cross_compile}gcc"
    with entry.lock():
        if not entry.valid():
            entry.reset()
            prefix = entry.path / "install"
            with cache.heavy():
                t0 = time.monotonic()
                run_logged([str(SCRIPTS[k.toolchain]), str(prefix)],
                           entry.path / "build.log",
                           what=f"building the {k.toolchain} cross compiler "
                           "(about 13 minutes on 2 cores, cached afterwards)")
            entry.complete([f"install/{gcc}"],
                           build_seconds=round(time.monotonic() - t0, 1))
    bindir = entry.path / "install" / "bin"
    _link_binutils(bindir, k.cross_compile)
    return str(bindir / k.cross_compile)


def _link_binutils(bindir: pathlib.Path, prefix: str) -> None:
    """Put Debian's binutils beside the built gcc, so CROSS_COMPILE works."""
    for tool in pathlib.Path("/usr/bin").glob(prefix + "*"):
        link = bindir / tool.name
        if not link.exists():
            link.symlink_to(tool)
