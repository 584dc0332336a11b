"""A static busybox for a target's guest: Debian's busybox-static where
Debian 12 has the architecture, else built from Debian's source package;
both through apt-get with private lists (PrivateApt), the machine's apt
setup left as it is."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import time

from . import cache as cachemod
from . import progress
from ..spec.arch import Arch
from .kernel import compiler_id
from .log import BuildError, run_logged

APT_SOURCES = pathlib.Path("/etc/apt/sources.list.d/debian.sources")


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
    inputs = {"arch": arch.debian, "how": how}
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
            pkg = f"busybox-static:{arch.debian}"
            try:    # the machine's own architecture: its apt lists will do
                run_logged(["apt-get", "download", pkg], log, cwd=work,
                           what=f"downloading {pkg}")
            except BuildError:
                PrivateApt(cache, arch.debian, "deb").run(
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
