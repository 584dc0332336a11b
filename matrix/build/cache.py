"""Build cache outside the repository, keyed by the inputs of each step.

An entry is a folder named by a step and the hash of everything that
goes into it. It counts only once its stamp file exists; the stamp is
written last and records a checksum of the entry's important outputs, so
a partial or corrupted entry is detected, removed and rebuilt, never
used. A lock per entry keeps two runs from building the same thing at
once, and a machine-wide lock keeps heavy builds (kernels, compilers)
from running two at a time on a small machine.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import sys
import time
from typing import Any, Iterable, Iterator, Optional

STAMP = ".nopfn-complete.json"
DEFAULT_ROOT = pathlib.Path(os.environ.get(
    "NOPFN_CACHE", os.path.expanduser("~/.cache/nopfn-matrix")))
HEAVY_LOCK = pathlib.Path(os.environ.get("NOPFN_BUILD_LOCK",
                                         "/tmp/nopfn-kbuild.lock"))


def digest(value: Any) -> str:
    """A stable short hash of a JSON-able value."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def hash_files(paths: Iterable[pathlib.Path],
               root: Optional[pathlib.Path] = None) -> str:
    """Hash file names (relative to root) and contents, in sorted order."""
    h = hashlib.sha256()
    for p in sorted(paths):
        rel = p.relative_to(root) if root else p
        h.update(str(rel).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def tree_files(root: pathlib.Path, exclude_suffixes=(".o", ".ko", ".mod",
               ".cmd", ".order", ".symvers", ".mod.c")) -> list[pathlib.Path]:
    """Source files below root, without build outputs or hidden files."""
    out = []
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.name.endswith(exclude_suffixes):
            continue
        out.append(p)
    return out


def file_checksum(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def locked(path: pathlib.Path, wait_message: str = "") -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        if wait_message:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"matrix: {wait_message}", file=sys.stderr,
                      flush=True)
                fcntl.flock(f, fcntl.LOCK_EX)
        else:
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def held_by_ancestor(path: pathlib.Path) -> bool:
    """Whether a flock on @path is held by one of this process's
    ancestors (/proc/locks names the holder's pid and the inode)."""
    try:
        st = path.stat()
        locks = pathlib.Path("/proc/locks").read_text()
    except OSError:
        return False
    holders = set()
    for line in locks.splitlines():
        f = line.split()
        if "->" in f or len(f) < 6 or f[1] != "FLOCK":
            continue
        if f[5].split(":")[-1] == str(st.st_ino):
            holders.add(int(f[4]))
    pid = os.getppid()
    while pid > 1:
        if pid in holders:
            return True
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return False


class Entry:
    """One cache entry: root/step/name-key/."""

    def __init__(self, cache: "Cache", step: str, name: str, key: str):
        self.cache = cache
        self.step = step
        self.key = key
        self.path = cache.root / step / f"{name}-{key}"

    @property
    def stamp(self) -> pathlib.Path:
        return self.path / STAMP

    def meta(self) -> Optional[dict]:
        """The stamp's record when the entry is complete and intact."""
        try:
            meta = json.loads(self.stamp.read_text())
        except (OSError, ValueError):
            return None
        for rel, want in meta.get("checksums", {}).items():
            p = self.path / rel
            if not p.is_file() or file_checksum(p) != want:
                return None
        return meta

    def valid(self) -> bool:
        return self.meta() is not None

    def lock(self) -> contextlib.AbstractContextManager:
        return locked(self.cache.root / "locks" / self.step /
                      (self.path.name + ".lock"))

    def reset(self) -> None:
        """Remove whatever a failed or partial build left."""
        from . import progress
        progress.emit(f"building {self.step}/{self.path.name} "
                      "(not cached)")
        if self.path.exists():
            shutil.rmtree(self.path)
        self.path.mkdir(parents=True)

    def complete(self, outputs: Iterable[str], **meta: Any) -> dict:
        """Mark the entry complete: checksum outputs, write the stamp last."""
        record = dict(meta)
        record["key"] = self.key
        record["completed"] = time.time()
        record["checksums"] = {rel: file_checksum(self.path / rel)
                               for rel in outputs}
        tmp = self.path / (STAMP + ".tmp")
        tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
        os.replace(tmp, self.stamp)
        self.cache.built.append(f"{self.step}/{self.path.name}")
        return record


class Cache:
    def __init__(self, root: pathlib.Path = DEFAULT_ROOT):
        self.root = root
        self.built: list[str] = []      # entries this process (re)built
        root.mkdir(parents=True, exist_ok=True)

    def entry(self, step: str, name: str, inputs: Any) -> Entry:
        return Entry(self, step, name, digest(inputs))

    def heavy(self) -> contextlib.AbstractContextManager:
        """Held while a CPU-heavy build (kernel, compiler) runs. Not taken
        again when an ancestor process holds it already (a run started
        under `flock /tmp/nopfn-kbuild.lock ...`): that would deadlock.
        Not taken by a background build either (background.thread()): it
        runs on the time that the foreground leaves."""
        from . import background
        if background.active() or held_by_ancestor(HEAVY_LOCK):
            return contextlib.nullcontext()
        return locked(HEAVY_LOCK, wait_message="waiting for the build "
                      f"lock {HEAVY_LOCK} (another heavy build runs)")
