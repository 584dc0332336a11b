"""What the matrix needs from the machine, and how to get it.

Every requirement is a Debian package: for the host's tools with the
command or file that tells it is there, for a target the packages its
architecture file lists (packages: build, boot). A missing one is
reported with the exact `apt-get install` line; when running as root
with installation allowed, the matrix installs it itself.
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
    what: str        # command name, absolute path of a file, or "" for
    package: str     # the Debian package itself (installed or not)

    def present(self) -> bool:
        if not self.what:
            return installed(self.package)
        if self.what.startswith("/"):
            return pathlib.Path(self.what).exists()
        return shutil.which(self.what) is not None


def installed(package: str) -> bool:
    """Whether dpkg has the package installed."""
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", package],
                       capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.endswith(" installed")


class MissingTools(Exception):
    def __init__(self, missing: list[Need]):
        self.missing = missing
        pkgs = " ".join(sorted({n.package for n in missing}))
        what = ", ".join(n.what or n.package for n in missing)
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

# tests/test_coccicheck.py: spatch, and the OCaml compiler that the
# scripts with an OCaml part (badzero, check_bq27xxx_data) need
COCCI = [
    Need("spatch", "coccinelle"),
    Need("ocamlopt", "ocaml-nox"),
]

PYTHON = [
    Need("/usr/lib/python3/dist-packages/labgrid", "python3-labgrid"),
    Need("/usr/lib/python3/dist-packages/pytest", "python3-pytest"),
    Need("/usr/lib/python3/dist-packages/yaml", "python3-yaml"),
]

def for_arch(arch: Arch, boot: bool = True) -> list[Need]:
    """What building (and with boot, booting) a target needs: the Debian
    packages its architecture file lists, and its tree's source package
    (matrix/trees/TREE.yaml)."""
    from ..spec import tree as treespec
    pkgs = list(arch.packages.build)
    if boot and arch.bootable:
        pkgs += arch.packages.boot
    out = [Need("", p) for p in pkgs]
    spec = treespec.load_all().get(arch.tree)
    if spec is not None and spec.package:
        out.append(Need(str(spec.source), spec.package))
    return out


def missing(needs: Iterable[Need]) -> list[Need]:
    seen, out = set(), []
    for n in needs:
        key = n.what or n.package      # a package Need's what is ""
        if key not in seen and not n.present():
            out.append(n)
        seen.add(key)
    return out


# The dashboard's test renders the pages in a real browser.
BROWSER = [
    Need("chromium", "chromium"),
    Need("/usr/lib/python3/dist-packages/PIL", "python3-pil"),
]


# Beyond one machine (session/boards.py, lab/lava.py, report/kcidb.py and
# their tests):
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
