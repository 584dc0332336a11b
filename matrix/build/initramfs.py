"""A target's initramfs: busybox and its applets, the init script, the
modules, the test programs and the mm selftests, as a newc cpio."""
from __future__ import annotations

import pathlib
from typing import Optional

from . import cache as cachemod
from . import cpio
from ..spec.arch import Arch
from .modules import Modules
from .programs import TestProgram

INIT = pathlib.Path(__file__).resolve().parent / "init"

# Applets linked in the initramfs; busybox --install is not needed.
APPLETS = """sh ash cat cp dd dmesg echo env false grep head insmod kill ls
lsmod mkdir mknod modprobe mount poweroff printf ps reboot rm rmmod sed
setsid cttyhack sleep stty sync tail tee test time timeout true umount uname
wc xargs awk cut sort uniq expr seq date id stat chmod ln tr""".split()


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
    entry = cache.entry("initramfs", arch.label, inputs)
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
        dirs = sorted({str(parent)
                       for n in [*extra, *mods.installed.values()]
                       for parent in pathlib.PurePosixPath(n).parents
                       if str(parent) != "."})
        for d in dirs:
            w.directory(d)
        for n, f in sorted(extra.items()):
            w.file(n, f.read_bytes(), 0o755)
        # the kernel's own modules also where modules_install puts them,
        # where their selftests look for them (nopfn-tests reloads
        # test_nopfn)
        for n, path in sorted(mods.installed.items()):
            w.symlink(path, f"/modules/{n}.ko")
        (entry.path / "initramfs.cpio").write_bytes(w.finish())
        entry.complete(["initramfs.cpio"])
    return entry.path / "initramfs.cpio"
