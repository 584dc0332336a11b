"""matrix/build/layout.py: the mm/memory.o command it reuses, and the
size it reads (test_series_vm_fault_size)."""
import pathlib
import shutil
import subprocess

import pytest

from matrix.build import layout
from matrix.build.log import BuildError

CMD = ("cmd_mm/memory.o := ccache gcc -Wp,-MMD,mm/.memory.o.d -nostdinc "
       "-I/s/src/arch/x86/include -I./arch/x86/include/generated "
       "-I/s/src/include -I./include -D__KERNEL__ "
       "-DKBUILD_MODFILE='\"mm/memory\"' -Os -c -o mm/memory.o "
       "/s/src/mm/memory.c   ; ./tools/objtool/objtool --orc mm/memory.o\n"
       "\nsource_mm/memory.o := ../src/mm/memory.c\n")


def build_dir(tmp: pathlib.Path, text: str = CMD) -> pathlib.Path:
    (tmp / "mm").mkdir()
    (tmp / "mm" / ".memory.o.cmd").write_text(text)
    return tmp


def test_the_command_loses_its_input_output_and_dependency_file(tmp_path):
    cmd = layout.memory_o_command(build_dir(tmp_path))
    assert cmd[0] == "gcc"
    assert "-Os" in cmd and "-I/s/src/include" in cmd
    assert "-DKBUILD_MODFILE=\"mm/memory\"" in cmd
    for gone in ("ccache", "-c", "-o", "mm/memory.o", "/s/src/mm/memory.c",
                 "-Wp,-MMD,mm/.memory.o.d", ";", "--orc"):
        assert gone not in cmd, gone


def test_no_memory_o_is_a_clear_error(tmp_path):
    with pytest.raises(BuildError, match="mm/memory.o was not compiled"):
        layout.memory_o_command(tmp_path)


def test_a_command_without_a_compiler_is_refused(tmp_path):
    with pytest.raises(BuildError, match="no compiler command"):
        layout.memory_o_command(build_dir(tmp_path, "cmd_x := true\n"))


def test_a_build_that_names_neither_tree_is_refused(tmp_path):
    b = build_dir(tmp_path)
    with pytest.raises(BuildError, match="names none of"):
        layout.vm_fault_sizes(b, pathlib.Path("/elsewhere"),
                              pathlib.Path("/pristine"))


@pytest.mark.skipif(not shutil.which("gcc"), reason="needs the host gcc")
def test_the_size_is_the_symbol_size(tmp_path):
    """A stand-in tree whose linux/mm.h defines struct vm_fault: the
    probe's symbol has its size, with each tree swapped in."""
    trees = {}
    for name, body in (("pristine", "long a[14];"),
                       ("patched", "long a[16];")):
        inc = tmp_path / name / "include" / "linux"
        inc.mkdir(parents=True)
        (inc / "mm.h").write_text(f"struct vm_fault {{ {body} }};\n")
        trees[name] = tmp_path / name
    b = tmp_path / "build"
    b.mkdir()
    build_dir(b, f"cmd_mm/memory.o := gcc -I{trees['patched']}/include "
                 f"-c -o mm/memory.o {trees['patched']}/mm/memory.c\n")
    sizes = layout.vm_fault_sizes(b, trees["patched"], trees["pristine"])
    word = int(subprocess.run(["gcc", "-dM", "-E", "-"], input="",
                              capture_output=True, text=True).stdout
               .split("__SIZEOF_LONG__ ")[1].split()[0])
    assert (sizes.pristine, sizes.patched) == (14 * word, 16 * word)
    assert sizes.growth == 2 * word
