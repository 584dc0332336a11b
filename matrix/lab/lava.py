"""LAVA job definitions for the matrix: one per booted architecture.

  ./matrix/run --lava-jobs DIR [--lava-url URL]        after a run
  python3 -m matrix lava-jobs DIR [--arch a,b] [--lava-url URL]
                                                       build only

DIR/<target>.yaml is a job for LAVA's `qemu` device type: a tmpfs deploy
of the kernel and the initramfs the matrix built, the modules as a tar
overlay of that initramfs (at /modules, where the harness loads them
from), a QEMU boot with the machine, CPU, memory and options of
matrix/arches/<arch>.yaml and the kernel command line of the local path,
and an inline test definition that loads each module and runs each guest
program, reporting the program's exit status and every KTAP case as a
LAVA test case. The artifacts are copied to DIR/<target>/, and the jobs
name them by URL: file://DIR/... by default (a LAVA dispatcher on this
machine), or --lava-url BASE where DIR is served (BASE/<target>/kernel).

Each job is checked with lava_common.schemas.validate, the validator LAVA
runs on submission (Debian's lava-common), before it is written.
"""
from __future__ import annotations

import hashlib
import io
import pathlib
import shlex
import shutil
import tarfile
from typing import Iterable, Optional

import yaml

from ..spec.arch import Arch
from ..session.guest import PROMPT, labgrid_env

# LAVA's names for QEMU architectures (its qemu device type's `arch`).
LAVA_ARCH = {"x86_64": "amd64", "arm64": "arm64", "riscv64": "riscv64",
             "armhf": "arm", "armel": "arm", "i386": "i386",
             "ppc64el": "ppc64le", "ppc64": "ppc64", "s390x": "s390x",
             "mips64el": "mips64el", "mipsel": "mipsel"}
# What the matrix's init prints when it has mounted everything (the
# guests boot with loglevel=5, which keeps the kernel's own banner off
# the console).
INIT_DONE = "nopfn-guest: init done"

# Run in the guest by the test definition: one program, its output, its
# exit status as a test case, each KTAP result as a test case.
KTAP_SH = r"""nopfn_run() {
  name=$1; shift
  case_prefix=$(echo "$name" | tr -c 'A-Za-z0-9_.\n-' _)
  out=/tmp/$case_prefix.ktap
  /tests/$name "$@" >$out 2>&1; rc=$?
  cat $out
  awk -v p="$case_prefix" '
    /^[ \t]*(not )?ok [0-9]+/ {
      res = ($1 == "not") ? "fail" : "pass"
      line = $0; sub(/^[ \t]*(not )?ok [0-9]+[ \t]*(- )?/, "", line)
      if (line ~ /#[ \t]*(SKIP|skip)/) res = "skip"
      sub(/[ \t]*#.*/, "", line); gsub(/[^A-Za-z0-9_.-]/, "_", line)
      if (line != "") print p "." line, res
    }' $out | while read -r tc res; do
      lava-test-case "$tc" --result "$res"
    done
  if [ $rc -eq 0 ]; then lava-test-case "$case_prefix" --result pass
  else lava-test-case "$case_prefix" --result fail; fi
}"""


class LavaError(Exception):
    """A job could not be written (or did not validate)."""


def sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def modules_tar(mod_dir: pathlib.Path, names: Iterable[str],
                out: pathlib.Path) -> None:
    """modules.tar.gz with modules/<name>.ko, reproducible (no times,
    owners)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        d = tarfile.TarInfo("modules")
        d.type, d.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(d)
        for n in names:
            data = (mod_dir / f"{n}.ko").read_bytes()
            info = tarfile.TarInfo(f"modules/{n}.ko")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    import gzip
    out.write_bytes(gzip.compress(buf.getvalue(), mtime=0))


def test_definition(arch: Arch, modules: list[str], programs: list,
                    args_of) -> dict:
    """The inline Lava-Test definition: load the modules, run each
    program (args_of(prog) gives its command line arguments)."""
    steps = [KTAP_SH]
    for m in modules:
        params = arch.module_params.get(m, "")
        steps.append(f"lava-test-case insmod-{m} --shell insmod "
                     f"/modules/{m}.ko {params}".rstrip())
    for p in programs:
        args = args_of(p)
        steps.append(f"nopfn_run {shlex.quote(p.name)} {args}".rstrip())
    for m in reversed(modules):
        steps.append(f"lava-test-case rmmod-{m} --shell rmmod {m}")
    return {
        "metadata": {
            "format": "Lava-Test Test Definition 1.0",
            "name": "nopfn-matrix",
            "description": "the nopfn matrix's modules and guest "
                           f"programs on {arch.name}",
            "os": ["oe"],
            "scope": ["functional"],
        },
        "run": {"steps": steps},
    }


def job(arch: Arch, urls: dict[str, str], sums: dict[str, str],
        modules: list[str], programs: list, args_of,
        metadata: Optional[dict] = None) -> dict:
    """One LAVA job for arch, its artifacts at urls (kernel, ramdisk,
    modules)."""
    q = arch.qemu
    if q is None:
        raise LavaError(f"{arch.name} does not boot under QEMU: no job")
    local = labgrid_env(arch, pathlib.Path("KERNEL"), pathlib.Path("INITRD"),
                        pathlib.Path("console.log"), 60)
    cmdline = local["targets"][arch.name]["drivers"]["MatrixQEMUDriver"][
        "boot_args"]
    # the local path's options without -initrd (the ramdisk's image_arg)
    extra = shlex.split(q.extra_args)
    # LAVA's qemu device type sets -machine and -cpu from the context for
    # some architectures only (arm, arm64, riscv64, i386, ...; not amd64),
    # and -cpu host -enable-kvm unless no_kvm: name both again here (the
    # last -cpu wins, -machine options merge) and turn KVM off, as the
    # matrix runs under TCG.
    options = [f"-machine {q.machine}", f"-cpu {q.cpu}", f"-smp {q.smp}"] \
        + ([shlex.join(extra)] if extra else [])
    base = arch.base or arch.name
    # deploy, boot and test, slower kernels (debug) scaled, and a margin
    minutes = 5 + 5 * arch.scale + 20 * arch.scale + 5
    memory = int(q.memory.rstrip("M")) if q.memory.endswith("M") else \
        int(q.memory.rstrip("G")) * 1024
    return {
        "device_type": "qemu",
        "job_name": f"nopfn matrix {arch.name}",
        "timeouts": {"job": {"minutes": minutes},
                     "action": {"minutes": 10},
                     "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
        "context": {"arch": LAVA_ARCH.get(base, base), "machine": q.machine,
                    "cpu": q.cpu, "memory": memory, "no_kvm": True,
                    "extra_options": options},
        "metadata": dict(metadata or {}, **{"nopfn.target": arch.name,
                                            "nopfn.tree": arch.tree}),
        "actions": [
            {"deploy": {
                "to": "tmpfs", "os": "oe", "timeout": {"minutes": 5},
                "images": {
                    "kernel": {"url": urls["kernel"],
                               "sha256sum": sums["kernel"],
                               "image_arg": "-kernel {kernel} -append "
                               + shlex.quote(cmdline)},
                    "ramdisk": {"url": urls["ramdisk"],
                                "sha256sum": sums["ramdisk"],
                                "image_arg": "-initrd {ramdisk}",
                                "format": "cpio.newc",
                                "overlays": {
                                    "lava": True,
                                    "modules": {"url": urls["modules"],
                                                "format": "tar",
                                                "compression": "gz",
                                                "sha256sum":
                                                    sums["modules"],
                                                "path": "/"}}},
                }}},
            {"boot": {
                "method": "qemu", "media": "tmpfs",
                "timeout": {"minutes": 5 * arch.scale},
                "parameters": {"kernel-start-message": INIT_DONE},
                "prompts": [PROMPT.rstrip()]}},
            {"test": {
                "timeout": {"minutes": 20 * arch.scale},
                "definitions": [{
                    "from": "inline", "name": "nopfn-matrix",
                    "path": "inline/nopfn-matrix.yaml",
                    "repository": test_definition(arch, modules, programs,
                                                  args_of)}]}},
        ],
    }


def validate(job_def: dict) -> None:
    """LAVA's own submission check (lava_common.schemas.validate)."""
    try:
        from lava_common.schemas import validate as lava_validate
    except ImportError as exc:
        raise LavaError("lava_common is missing: apt-get install "
                        "lava-common (./matrix/setup installs it)") from exc
    from voluptuous import Invalid
    try:
        lava_validate(job_def, strict=True)
    except Invalid as exc:
        raise LavaError(f"{job_def.get('job_name')}: LAVA rejects the job: "
                        f"{exc}") from exc


def write_jobs(out: pathlib.Path, builds: list, args_of,
               base_url: Optional[str] = None,
               metadata: Optional[dict] = None) -> dict[str, pathlib.Path]:
    """For each (arch, artifacts) of builds that boots under QEMU and
    built: copy its artifacts to out/<target>/, write out/<target>.yaml.
    Returns the job files by target."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    base = (base_url or out.as_uri()).rstrip("/")
    written = {}
    for arch, art in builds:
        if arch.qemu is None or art.initramfs is None or \
                art.kernel_image is None or art.modules is None:
            continue
        d = out / arch.name
        d.mkdir(exist_ok=True)
        files = {"kernel": d / pathlib.PurePath(art.kernel_image).name,
                 "ramdisk": d / "initramfs.cpio",
                 "modules": d / "modules.tar.gz"}
        shutil.copyfile(art.kernel_image, files["kernel"])
        shutil.copyfile(art.initramfs, files["ramdisk"])
        modules_tar(art.modules.path, art.modules.names, files["modules"])
        urls = {k: f"{base}/{arch.name}/{p.name}" for k, p in files.items()}
        sums = {k: sha256(p) for k, p in files.items()}
        meta = dict(metadata or {})
        if art.kernel_meta:
            meta.update({"kernel.release": art.kernel_meta.get("release"),
                         "kernel.key": art.kernel_meta.get("key")})
        j = job(arch, urls, sums, list(art.modules.names),
                [p for p in art.programs if p.binary is not None],
                lambda p, a=arch: args_of(p, a), meta)
        validate(j)
        path = out / f"{arch.name}.yaml"
        path.write_text(yaml.safe_dump(j, sort_keys=False, width=1000))
        written[arch.name] = path
    return written
