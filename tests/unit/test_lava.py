"""LAVA job definitions (matrix/lab/lava.py), checked by LAVA's own validator
(lava_common.schemas, Debian's lava-common), not by comparing strings."""
import gzip
import hashlib
import io
import os
import pathlib
import subprocess
import tarfile

import pytest
import yaml

from matrix.spec import arch as archspec
from matrix.lab import lava
from matrix.build.builder import Artifacts
from matrix.build.modules import Modules
from matrix.build.programs import TestProgram as Program

def _lava_validate(job):
    from lava_common.schemas import validate
    validate(job, strict=True)


def fake_build(tmp: pathlib.Path, arch):
    d = tmp / arch.name
    d.mkdir()
    (d / "Image").write_bytes(b"kernel " + arch.name.encode())
    (d / "initramfs.cpio").write_bytes(b"070701 cpio")
    mods = d / "mods"
    mods.mkdir()
    for n in ("mspec", "test_nopfn"):
        (mods / f"{n}.ko").write_bytes(f"module {n}".encode())
    progs = [Program("nopfn_faults", tmp / "nopfn_faults.c", "ktap",
                         ["global.a", "global.b"], d / "nopfn_faults", "",
                         []),
             Program("mspec_stress", tmp / "s.c", "ktap", ["x"],
                         d / "mspec_stress", "", [],
                         "--seconds 10 --seed {seed} --scale {scale}"),
             Program("broken", tmp / "b.c", "plain", [], None,
                         "error", [])]
    return Artifacts(arch, kernel_meta={"release": "6.1.0-nopfn",
                                        "key": "k1"},
                     kernel_image=d / "Image",
                     modules=Modules(mods, ["mspec", "test_nopfn"], [],
                                     mods / "log", True),
                     programs=progs, initramfs=d / "initramfs.cpio")


def args_of(prog, arch):
    return prog.args.replace("{seed}", "7").replace("{scale}",
                                                    str(arch.scale))


def test_jobs_for_every_booted_target_validate(tmp_path):
    """One job per booted target; each passes LAVA's submission schema;
    the artifacts are copied and named by URL with their sha256; the
    modules are a tar overlay of the ramdisk."""
    arches = [a for a in archspec.load_all().values() if a.bootable]
    builds = [(a, fake_build(tmp_path, a)) for a in arches]
    ia64 = archspec.load_all().get("ia64")
    if ia64 is not None:        # build-only: no job
        builds.append((ia64, Artifacts(ia64)))
    out = tmp_path / "jobs"
    written = lava.write_jobs(out, builds, args_of,
                              "https://lab.example.org/nopfn")
    assert sorted(written) == sorted(a.name for a in arches)
    for a in arches:
        job = yaml.safe_load(written[a.name].read_text())
        _lava_validate(job)             # LAVA's own validator
        assert job["device_type"] == "qemu"
        ctx = job["context"]
        assert ctx["machine"] == a.qemu.machine and ctx["no_kvm"] is True
        # LAVA's qemu template sets -machine only for some architectures
        assert f"-machine {a.qemu.machine}" in ctx["extra_options"]
        assert f"-cpu {a.qemu.cpu}" in ctx["extra_options"]
        images = job["actions"][0]["deploy"]["images"]
        for key, name in (("kernel", "Image"), ("ramdisk",
                                                "initramfs.cpio")):
            f = out / a.name / name
            assert images[key]["url"] == \
                f"https://lab.example.org/nopfn/{a.name}/{name}"
            assert images[key]["sha256sum"] == \
                hashlib.sha256(f.read_bytes()).hexdigest()
        mod = images["ramdisk"]["overlays"]["modules"]
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(
                (out / a.name / "modules.tar.gz").read_bytes()))) as t:
            assert sorted(t.getnames()) == [
                "modules", "modules/mspec.ko", "modules/test_nopfn.ko"]
        assert mod["path"] == "/" and mod["format"] == "tar"
        steps = job["actions"][2]["test"]["definitions"][0][
            "repository"]["run"]["steps"]
        assert any(s.startswith("nopfn_run nopfn_faults") for s in steps)
        assert f"nopfn_run mspec_stress --seconds 10 --seed 7 --scale " \
               f"{a.scale}" in steps
        assert not any("broken" in s for s in steps)   # did not build
        params = a.module_params.get("test_nopfn", "")
        assert f"lava-test-case insmod-test_nopfn --shell insmod " \
               f"/modules/test_nopfn.ko {params}".rstrip() in steps


def test_default_urls_are_file_urls(tmp_path):
    a = archspec.load_all()["x86_64"]
    written = lava.write_jobs(tmp_path / "j", [(a, fake_build(tmp_path, a))],
                              args_of)
    job = yaml.safe_load(written["x86_64"].read_text())
    url = job["actions"][0]["deploy"]["images"]["kernel"]["url"]
    assert url == (tmp_path / "j" / "x86_64" / "Image").as_uri()


@pytest.mark.parametrize("breakage", [
    lambda j: j.pop("timeouts"),
    lambda j: j.update(visibility="everyone"),
    lambda j: j["actions"][1]["boot"].update(method="qemu-magic"),
    lambda j: j["actions"][0]["deploy"].update(to="floppy"),
    lambda j: j["actions"][2]["test"]["definitions"][0]["repository"][
        "metadata"].pop("format"),
    lambda j: j["context"].update(no_such_variable=1),
])
def test_the_validator_rejects_broken_jobs(tmp_path, breakage):
    """The check is LAVA's: a job it would refuse fails here."""
    a = archspec.load_all()["arm64"]
    art = fake_build(tmp_path, a)
    job = lava.job(a, {"kernel": "file:///k", "ramdisk": "file:///r",
                       "modules": "file:///m"},
                   {"kernel": "0" * 64, "ramdisk": "1" * 64,
                    "modules": "2" * 64},
                   art.modules.names, art.programs[:2],
                   lambda p: args_of(p, a))
    lava.validate(job)
    breakage(job)
    with pytest.raises(lava.LavaError, match="LAVA rejects"):
        lava.validate(job)


def test_ktap_to_lava_test_cases(tmp_path):
    """The test definition's shell turns a program's KTAP into LAVA test
    cases (pass, fail, skip) plus the program's exit status; run here by
    /bin/sh with a lava-test-case that records its calls."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "calls"
    (bindir / "lava-test-case").write_text(
        f"#!/bin/sh\necho \"$@\" >> {calls}\n")
    (bindir / "lava-test-case").chmod(0o755)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "prog").write_text(
        "#!/bin/sh\necho 'TAP version 13'\necho '1..3'\n"
        "echo '# diagnostic'\necho 'ok 1 global.first'\n"
        "echo 'not ok 2 fix.v.second'\n"
        "echo 'ok 3 global.third # SKIP no carve-out'\nexit 1\n")
    (tests / "prog").chmod(0o755)
    script = lava.KTAP_SH.replace("/tests/", f"{tests}/") + \
        "\nnopfn_run prog --seed 1\n"
    r = subprocess.run(["sh", "-c", script], capture_output=True,
                       text=True, env=dict(os.environ, PATH=f"{bindir}:"
                                           + os.environ["PATH"]))
    assert r.returncode == 0, r.stderr
    assert "not ok 2 fix.v.second" in r.stdout       # the log is kept
    assert calls.read_text().splitlines() == [
        "prog.global.first --result pass",
        "prog.fix.v.second --result fail",
        "prog.global.third --result skip",
        "prog --result fail"]
