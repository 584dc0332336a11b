"""What the matrix needs from the machine, and how to get it.

Every requirement is a command or a file together with the Debian
package that provides it. A missing one is reported with the exact
`apt-get install` line; when running as root with installation allowed,
the matrix installs it itself.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import threading
from typing import Iterable

from ..spec.arch import Arch
from .cache import locked


@dataclasses.dataclass(frozen=True)
class Need:
    what: str        # command name, or absolute path of a file
    package: str     # Debian package that provides it

    def present(self) -> bool:
        if self.what.startswith("/"):
            return pathlib.Path(self.what).exists()
        return shutil.which(self.what) is not None


class MissingTools(Exception):
    def __init__(self, missing: list[Need]):
        self.missing = missing
        pkgs = " ".join(sorted({n.package for n in missing}))
        what = ", ".join(n.what for n in missing)
        super().__init__(
            f"missing: {what}\n  fix: apt-get update && "
            f"apt-get install -y --no-install-recommends {pkgs}\n"
            f"  (or run ./matrix/setup as root)")


HOST = [
    Need("make", "make"), Need("gcc", "gcc"), Need("g++", "g++"),
    Need("flex", "flex"), Need("bison", "bison"), Need("bc", "bc"),
    Need("perl", "perl"), Need("xz", "xz-utils"), Need("patch", "patch"),
    Need("rsync", "rsync"), Need("ccache", "ccache"),
    Need("sparse", "sparse"),   # kernel.SERIES_CHECK, on the series' files
    Need("/usr/include/libelf.h", "libelf-dev"),
    Need("/usr/include/openssl/ssl.h", "libssl-dev"),
    Need("/usr/src/linux-source-6.1.tar.xz", "linux-source-6.1"),
    Need("dpkg-source", "dpkg-dev"),
    Need("apt-get", "apt"),
]

PYTHON = [
    Need("/usr/lib/python3/dist-packages/labgrid", "python3-labgrid"),
    Need("/usr/lib/python3/dist-packages/pytest", "python3-pytest"),
    Need("/usr/lib/python3/dist-packages/yaml", "python3-yaml"),
]

# Cross compiler -> (compiler package, static libc package, libc.a path)
CROSS = {
    "aarch64-linux-gnu-": ("gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross"),
    "riscv64-linux-gnu-": ("gcc-riscv64-linux-gnu", "libc6-dev-riscv64-cross"),
    "arm-linux-gnueabihf-": ("gcc-arm-linux-gnueabihf",
                             "libc6-dev-armhf-cross"),
    "powerpc64le-linux-gnu-": ("gcc-powerpc64le-linux-gnu",
                               "libc6-dev-ppc64el-cross"),
    "s390x-linux-gnu-": ("gcc-s390x-linux-gnu", "libc6-dev-s390x-cross"),
    "i686-linux-gnu-": ("gcc-i686-linux-gnu", "libc6-dev-i386-cross"),
    "arm-linux-gnueabi-": ("gcc-arm-linux-gnueabi", "libc6-dev-armel-cross"),
    "mips64el-linux-gnuabi64-": ("gcc-mips64el-linux-gnuabi64",
                                 "libc6-dev-mips64el-cross"),
    "mipsel-linux-gnu-": ("gcc-mipsel-linux-gnu", "libc6-dev-mipsel-cross"),
    "powerpc64-linux-gnu-": ("gcc-powerpc64-linux-gnu",
                             "libc6-dev-ppc64-cross"),
    "m68k-linux-gnu-": ("gcc-m68k-linux-gnu", "libc6-dev-m68k-cross"),
    "hppa-linux-gnu-": ("gcc-hppa-linux-gnu", "libc6-dev-hppa-cross"),
    "sparc64-linux-gnu-": ("gcc-sparc64-linux-gnu",
                           "libc6-dev-sparc64-cross"),
    "powerpc-linux-gnu-": ("gcc-powerpc-linux-gnu",
                           "libc6-dev-powerpc-cross"),
    "sh4-linux-gnu-": ("gcc-sh4-linux-gnu", "libc6-dev-sh4-cross"),
}

QEMU = {
    "qemu-system-x86_64": "qemu-system-x86",
    "qemu-system-aarch64": "qemu-system-arm",
    "qemu-system-arm": "qemu-system-arm",
    "qemu-system-riscv64": "qemu-system-misc",
    "qemu-system-ppc64": "qemu-system-ppc",
    "qemu-system-s390x": "qemu-system-misc",
    "qemu-system-i386": "qemu-system-x86",
    "qemu-system-mips64el": "qemu-system-mips",
    "qemu-system-mipsel": "qemu-system-mips",
    "qemu-system-m68k": "qemu-system-misc",
    "qemu-system-hppa": "qemu-system-misc",
    "qemu-system-sparc64": "qemu-system-sparc",
    "qemu-system-ppc": "qemu-system-ppc",
    "qemu-system-sh4": "qemu-system-misc",
}

IA64_GCC = [
    Need("ia64-linux-gnu-as", "binutils-ia64-linux-gnu"),
    Need("/usr/src/gcc-12/gcc-12.2.0-dfsg.tar.xz", "gcc-12-source"),
    Need("/usr/include/x86_64-linux-gnu/gmp.h", "libgmp-dev"),
    Need("/usr/include/mpfr.h", "libmpfr-dev"),
    Need("/usr/include/mpc.h", "libmpc-dev"),
]


def for_arch(arch: Arch, boot: bool = True) -> list[Need]:
    """What building (and with boot, booting) a target needs."""
    needs: list[Need] = []
    k = arch.kernel
    if k.toolchain == "ia64-gcc":
        needs += IA64_GCC
    elif k.cross_compile:
        pkg, _ = CROSS.get(k.cross_compile, (None, None))
        needs.append(Need(k.cross_compile + "gcc",
                          pkg or f"gcc-{k.cross_compile.rstrip('-')}"))
    if arch.user is not None:
        prefix = arch.user.cc[:-len("gcc")]
        if prefix in CROSS:
            needs.append(Need(f"/usr/{prefix.rstrip('-')}/lib/libc.a",
                              CROSS[prefix][1]))
        elif not prefix:
            needs.append(Need("/usr/lib/x86_64-linux-gnu/libc.a",
                              "libc6-dev"))
    if arch.qemu is not None and boot:
        q = arch.qemu.binary
        needs.append(Need(q, QEMU.get(q, "qemu-system")))
        needs.append(Need("/usr/share/qemu/opensbi-riscv64-generic-"
                          "fw_dynamic.bin", "qemu-system-data"))
    return needs


def missing(needs: Iterable[Need]) -> list[Need]:
    seen, out = set(), []
    for n in needs:
        if n.what not in seen and not n.present():
            out.append(n)
        seen.add(n.what)
    return out


# The dashboard's test renders the pages in a real browser.
BROWSER = [
    Need("chromium", "chromium"),
    Need("/usr/lib/python3/dist-packages/PIL", "python3-pil"),
]


# Beyond one machine (matrix/remote.py, lava.py, kcidb.py and their tests):
# ser2net in front of a board's serial port, LAVA's own job validator
# (lava-common; lava-dispatcher would add systemd-sysv and libguestfs,
# 134 packages, for nothing the validation uses), the KCIDB schema
# check.
LAB = [
    Need("ser2net", "ser2net"),
    Need("/usr/lib/python3/dist-packages/lava_common/schemas", "lava-common"),
    Need("/usr/lib/python3/dist-packages/jsonschema", "python3-jsonschema"),
]


def ensure(arches: Iterable[Arch], install: bool = True,
           boot: bool = True) -> None:
    """Check every requirement; install what is missing when allowed."""
    needs = HOST + PYTHON
    for a in arches:
        needs += for_arch(a, boot)
    ensure_needs(needs, install)


def ensure_needs(needs: Iterable[Need], install: bool = True) -> None:
    """Install what is missing of `needs` (as root, when allowed), or
    raise MissingTools naming the packages."""
    gone = missing(needs)
    if not gone:
        return
    if install and os.geteuid() == 0:
        # one apt-get at a time: the prebuild thread, the tests' runs
        with _APT_THREADS, locked(APT_LOCK):
            gone = missing(gone)
            if gone:
                _install(gone)
        gone = missing(gone)
    if gone:
        raise MissingTools(gone)


_APT_THREADS = threading.Lock()
APT_LOCK = pathlib.Path("/tmp/nopfn-apt.lock")


def _install(gone: list[Need]) -> None:
    pkgs = sorted({n.package for n in gone})
    print(f"matrix: installing {' '.join(pkgs)}", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-q",
                    "--no-install-recommends", *pkgs], check=True,
                   env=env, stdout=subprocess.DEVNULL)
