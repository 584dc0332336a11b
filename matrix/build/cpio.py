"""A minimal writer for the cpio "newc" format the kernel unpacks."""
from __future__ import annotations


class Writer:
    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._ino = 1

    def _entry(self, name: str, mode: int, data: bytes = b"",
               rdev: tuple[int, int] = (0, 0)) -> None:
        nameb = name.encode() + b"\0"
        fields = [self._ino, mode, 0, 0, 1, 0, len(data), 0, 0,
                  rdev[0], rdev[1], len(nameb), 0]
        self._ino += 1
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        blob = hdr + nameb
        blob += b"\0" * (-len(blob) % 4)
        blob += data
        blob += b"\0" * (-len(blob) % 4)
        self._parts.append(blob)

    def directory(self, name: str, perm: int = 0o755) -> None:
        self._entry(name, 0o040000 | perm)

    def file(self, name: str, data: bytes, perm: int = 0o644) -> None:
        self._entry(name, 0o100000 | perm, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, 0o120777, target.encode())

    def device(self, name: str, perm: int, major: int, minor: int) -> None:
        self._entry(name, 0o020000 | perm, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        out = b"".join(self._parts)
        return out + b"\0" * (-len(out) % 512)
