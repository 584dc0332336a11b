"""The initramfs writer produces what the kernel (and cpio) unpack."""
import shutil
import subprocess

import pytest

from matrix.build import cpio


def test_newc_roundtrip(tmp_path):
    w = cpio.Writer()
    w.directory("bin")
    w.file("bin/hello", b"#!/bin/sh\necho hi\n", 0o755)
    w.symlink("bin/sh", "busybox")
    w.device("dev-console", 0o600, 5, 1)
    data = w.finish()
    assert len(data) % 512 == 0
    assert data.startswith(b"070701")
    assert b"TRAILER!!!" in data
    if shutil.which("cpio") is None:
        pytest.skip("cpio(1) not installed; header layout checked above")
    out = tmp_path / "x"
    out.mkdir()
    r = subprocess.run(["cpio", "-t", "-v"], input=data, capture_output=True)
    assert r.returncode == 0, r.stderr
    listing = r.stdout.decode()
    assert "bin/hello" in listing and "bin/sh -> busybox" in listing


def test_header_fields():
    w = cpio.Writer()
    w.file("a", b"xyz", 0o644)
    blob = w.finish()
    hdr = blob[:110]
    fields = [int(hdr[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
    assert fields[1] == 0o100644          # mode
    assert fields[6] == 3                 # file size
    assert fields[11] == 2                # name size incl. NUL
    assert blob[110:112] == b"a\0"
    assert blob[112:115] == b"xyz"        # 110 + 2 is 4-aligned
