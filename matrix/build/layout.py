"""What the series costs struct vm_fault, on one target.

Every fault in the system builds a struct vm_fault on its stack, so the
series must not make it bigger where that can be helped. The probe is one
translation unit that defines a struct vm_fault, compiled with the command
kbuild used for the target's mm/memory.o (its flags, its configuration's
generated headers in the build folder), once against the patched tree and
once against the pristine 6.1 tree; the size of the probe's symbol (nm -S)
is sizeof(struct vm_fault) in each.
"""
from __future__ import annotations

import dataclasses
import pathlib
import shlex
import shutil
import subprocess
import tempfile

from .log import BuildError

PROBE = ("#include <linux/mm.h>\n"
         "struct vm_fault nopfn_probe_vm_fault;\n")
SYMBOL = "nopfn_probe_vm_fault"


@dataclasses.dataclass(frozen=True)
class Sizes:
    pristine: int
    patched: int

    @property
    def growth(self) -> int:
        return self.patched - self.pristine


def memory_o_command(build: pathlib.Path) -> list[str]:
    """kbuild's compiler command for mm/memory.o in the build folder,
    without its dependency output, its input and its output."""
    cmd_file = build / "mm" / ".memory.o.cmd"
    if not cmd_file.is_file():
        raise BuildError(f"{cmd_file} is missing: mm/memory.o was not "
                         "compiled in this build folder")
    first = cmd_file.read_text().splitlines()[0]
    _, _, cmd = first.partition(":=")
    cmd = cmd.split(" ; ")[0]           # objtool, when there is one
    words = shlex.split(cmd)
    if words and words[0] == "ccache":
        words = words[1:]
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w == "-o":
            skip = True
            continue
        if w.startswith("-Wp,-MMD") or w == "-c" or w.endswith(".c"):
            continue
        out.append(w)
    if not out or not out[0].endswith("gcc"):
        raise BuildError(f"no compiler command in {cmd_file}: {first[:200]}")
    return out


def probe_size(command: list[str], build: pathlib.Path, src_in_cmd: str,
               src: pathlib.Path) -> int:
    """sizeof(struct vm_fault) with command's tree src_in_cmd swapped for
    src."""
    cmd = [w.replace(src_in_cmd, str(src)) for w in command]
    nm = cmd[0][:-len("gcc")] + "nm"
    if not shutil.which(nm):        # a built compiler, Debian's binutils
        nm = pathlib.Path(nm).name
    with tempfile.TemporaryDirectory(prefix="nopfn-layout-") as tmp:
        c = pathlib.Path(tmp, "probe.c")
        o = pathlib.Path(tmp, "probe.o")
        c.write_text(PROBE)
        r = subprocess.run([*cmd, "-c", "-o", str(o), str(c)], cwd=build,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise BuildError(f"the struct vm_fault probe did not compile "
                             f"against {src}:\n{r.stderr[-3000:]}")
        r = subprocess.run([nm, "-S", str(o)], capture_output=True,
                           text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] == SYMBOL:
            return int(f[1], 16)
    raise BuildError(f"{nm} -S found no {SYMBOL}:\n{r.stdout}{r.stderr}")


def vm_fault_sizes(build: pathlib.Path, patched: pathlib.Path,
                   pristine: pathlib.Path,
                   aliases: tuple[pathlib.Path, ...] = ()) -> Sizes:
    """struct vm_fault's size, pristine and patched, for the target whose
    build folder is build; aliases: other paths the build's commands may
    name the patched tree by (the stable path of kernel.TreeBuild)."""
    cmd = memory_o_command(build)
    joined = " ".join(cmd)
    named = [str(p) for p in (*aliases, patched) if f"{p}/include" in joined]
    if not named:
        raise BuildError(f"the mm/memory.o command of {build} names none of "
                         f"{[str(p) for p in (*aliases, patched)]}")
    src_in_cmd = named[0]
    return Sizes(pristine=probe_size(cmd, build, src_in_cmd, pristine),
                 patched=probe_size(cmd, build, src_in_cmd, patched))
