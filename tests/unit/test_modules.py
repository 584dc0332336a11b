"""The modules of a driver folder: which ones (its Kbuild, then the
build's modules.order), in which order they are loaded, and with which
parameters (the folder's module-params.yaml, else the architecture
file's)."""
import pathlib
import shutil
import types

import pytest

from matrix.build import modules
from matrix.build.builder import Builder
from matrix.build.cache import Cache
from matrix.build.log import BuildError
from matrix.session import plan
from matrix.session.guest import Output
from matrix.session.matrix import Matrix, OptionError, Options
from matrix.spec import arch as archspec

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_the_repositorys_driver_declares_its_two_modules():
    """driver/ has nopfn_bench and mspec; the series' test module is the
    kernel's (TREE_MODULES, CONFIG_TEST_NOPFN=m)."""
    assert modules.declared_modules() == ["nopfn_bench", "mspec"]
    assert modules.TREE_MODULES == ["test_nopfn"]
    config = (REPO / "kernel/config/common.config").read_text()
    assert "CONFIG_TEST_NOPFN=m\n" in config


def test_kbuild_order_continued_lines_subfolders_and_makefiles(tmp_path):
    (tmp_path / "Kbuild").write_text(
        "# comment: obj-m += not_me.o\n"
        "obj-m += first.o\n"
        "obj-m := second.o \\\n    third.o  # trailing comment.o\n"
        "first-y := a.o b.o\n"
        "obj-y += helper.o\n"           # built in, no module
        "obj-m += sub/\n"
        "obj-m += last.o\n")
    (tmp_path / "sub").mkdir()
    # a subfolder with a Makefile only, as many out-of-tree drivers have
    (tmp_path / "sub" / "Makefile").write_text(
        "ifneq ($(KERNELRELEASE),)\nobj-m += inner.o\nelse\nall:\n"
        "\t$(MAKE) -C $(KDIR) M=$(PWD)\nendif\n")
    assert modules.declared_modules(tmp_path) == [
        "first", "second", "third", "inner", "last"]
    assert modules.declared_modules(tmp_path / "nowhere") == []


def test_modules_order_of_6_1_and_of_later_kernels(tmp_path):
    order = tmp_path / "modules.order"
    order.write_text("nopfn_test.ko\nsub/mine.ko\n\n")
    assert modules.read_order(order) == ["nopfn_test", "mine"]
    order.write_text("nopfn_test.o\nsub/mine.o\n")
    assert modules.read_order(order) == ["nopfn_test", "mine"]
    assert modules.read_order(tmp_path / "none") == []


def test_params_file_per_module_target_and_architecture(tmp_path):
    targets = archspec.load_all()
    (tmp_path / modules.PARAMS_FILE).write_text(
        "mine: pages=8\n"
        "other:\n  default: debug=1\n  arm64: debug=2\n"
        "  x86_64-debug: debug=3\n"
        "test_nopfn:\n  arm64: carve_size=0\n")
    given = modules.driver_params(tmp_path, targets)
    x86, dbg, arm = (targets[n] for n in ("x86_64", "x86_64-debug",
                                          "arm64"))
    assert modules.params_for(x86, "mine", given) == "pages=8"
    assert modules.params_for(arm, "mine", given) == "pages=8"
    assert modules.params_for(x86, "other", given) == "debug=1"
    assert modules.params_for(arm, "other", given) == "debug=2"
    assert modules.params_for(dbg, "other", given) == "debug=3"
    # the folder's file wins for the targets it names ...
    assert modules.params_for(arm, "test_nopfn", given) == "carve_size=0"
    # ... and the architecture file gives the rest
    assert modules.params_for(x86, "test_nopfn", given) == \
        x86.module_params["test_nopfn"]
    assert modules.params_for(x86, "unknown", given) == ""
    assert modules.driver_params(tmp_path / "none", targets) == {}


@pytest.mark.parametrize("text, says", [
    ("mine:\n  amd65: pages=8\n", "unknown targets ['amd65']"),
    ("mine: [pages=8]\n", "give its parameters"),
    ("- mine\n", "expected a mapping"),
    ("mine: {a: [1]}\n", "give its parameters"),
    ("mine: 'x\n", "not valid YAML"),
])
def test_a_bad_params_file_says_what_is_wrong(tmp_path, text, says):
    (tmp_path / modules.PARAMS_FILE).write_text(text)
    with pytest.raises(BuildError, match=r".*" + says.replace(
            "[", r"\[").replace("]", r"\]")):
        modules.driver_params(tmp_path, archspec.load_all())


def _driver_copy(tmp_path) -> pathlib.Path:
    """driver/'s Kbuild (no sources needed to collect) plus a module."""
    d = tmp_path / "driver"
    d.mkdir()
    shutil.copy(REPO / "driver" / "Kbuild", d / "Kbuild")
    with (d / "Kbuild").open("a") as f:
        f.write("\nobj-m += mine.o\n")
    (d / modules.PARAMS_FILE).write_text("mine: pages=8\n")
    return d


class FakeGuest:
    def __init__(self):
        self.commands = []

    def run(self, cmd, timeout=0.0):
        self.commands.append(cmd)
        return Output([], 0, 0.0)


def test_driver_folder_modules_are_the_items_and_load_in_order(tmp_path):
    """--driver DIR: the items are DIR's modules; the guest loads what
    the build put in modules.order, in that order, each with its
    parameters (the issue: only the repository's were loaded)."""
    arches = archspec.load_all()
    m = Matrix(Options(arch="x86_64", driver=_driver_copy(tmp_path)),
               Builder(Cache(tmp_path / "cache")),
               plan.Plan([arches["x86_64"]], [], {}))
    assert m.modules == ["test_nopfn", "nopfn_bench", "mspec", "mine"]
    g = FakeGuest()
    st = m.state["x86_64"]
    m._load_modules(st, g, ["mine", "test_nopfn", "mspec", "nopfn_bench"])
    carve = arches["x86_64"].module_params["test_nopfn"]
    assert g.commands == ["insmod /modules/mine.ko pages=8",
                          f"insmod /modules/test_nopfn.ko {carve}",
                          "insmod /modules/mspec.ko",
                          "insmod /modules/nopfn_bench.ko"]
    assert list(st.module_load) == ["mine", "test_nopfn", "mspec",
                                    "nopfn_bench"]
    assert m.module_params("x86_64", "mine") == "pages=8"


def test_without_driver_the_repositorys_modules(tmp_path):
    arches = archspec.load_all()
    m = Matrix(Options(arch="arm64"), Builder(Cache(tmp_path / "cache")),
               plan.Plan([arches["arm64"]], [], {}))
    assert m.modules == modules.TREE_MODULES + \
        modules.declared_modules(REPO / "driver")
    assert m.module_params("arm64", "test_nopfn") == \
        arches["arm64"].module_params["test_nopfn"]


def test_a_driver_folder_without_modules_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(OptionError, match="no Kbuild or Makefile"):
        Options(driver=empty).check()
    (empty / "Kbuild").write_text("ccflags-y += -DX\n")
    with pytest.raises(OptionError, match="declares no module"):
        Options(driver=empty).check()
    d = _driver_copy(tmp_path)
    (d / modules.PARAMS_FILE).write_text("mine:\n  nowhere: x=1\n")
    arches = archspec.load_all()
    with pytest.raises(OptionError, match="unknown targets"):
        Matrix(Options(arch="x86_64", driver=d),
               Builder(Cache(tmp_path / "cache")),
               plan.Plan([arches["x86_64"]], [], {}))


def _build_inputs(tmp_path, step: str, driver) -> dict:
    """The inputs build_modules() keys its cache entry by, for a build of
    @driver against a kernel (@step "kernels") or a compile check
    ("checks"): the entry is asked for, nothing is built."""
    kb = types.SimpleNamespace(key="k", STEP=step,
                               entry=types.SimpleNamespace(
                                   path=tmp_path / step / "x86_64-k"))
    cache = Cache(tmp_path / "cache")
    seen = []

    def entry(step, name, inputs):
        seen.append(inputs)
        raise RuntimeError("stop here")
    cache.entry = entry
    with pytest.raises(RuntimeError):
        modules.build_modules(kb, cache, driver)
    return seen[0]


def test_the_params_file_is_no_input_of_the_module_build(tmp_path):
    """Changing a parameter rebuilds nothing: only insmod reads it."""
    d = _driver_copy(tmp_path)
    (d / "mine.c").write_text("/* a module */\n")
    seen = []
    for text in ("mine: pages=8\n", "mine: pages=9\n"):
        (d / modules.PARAMS_FILE).write_text(text)
        seen.append(_build_inputs(tmp_path, "kernels", d))
    assert seen[0] == seen[1]


def test_modules_of_a_compile_check_are_not_the_kernels(tmp_path):
    """A check and the kernel of a target share their key; the check
    builds none of the tree's modules, so what was built against it must
    not be taken for the kernel's modules (a booted armhf once found
    test_nopfn missing that way)."""
    d = _driver_copy(tmp_path)
    assert _build_inputs(tmp_path, "checks", d) != \
        _build_inputs(tmp_path, "kernels", d)


EXAMPLE = REPO / "docs" / "examples"


def test_the_worked_example_as_readme_makes_it(tmp_path):
    """README's "Test your own driver": driver/ copied, the example's
    module and parameters file added, its Kbuild appended; the module is
    an item after driver/'s, given pages=8 on every target, and its
    program (which defines _GNU_SOURCE before any include) expects the
    same."""
    d = tmp_path / "mydriver"
    shutil.copytree(REPO / "driver", d)
    mine = EXAMPLE / "mydriver"
    shutil.copy(mine / "nopfn_example.c", d)
    shutil.copy(mine / modules.PARAMS_FILE, d)
    with (d / "Kbuild").open("a") as f:
        f.write("\n" + (mine / "Kbuild").read_text())
    assert modules.declared_modules(d) == ["nopfn_bench", "mspec",
                                           "nopfn_example"]
    arches = archspec.load_all()
    given = modules.driver_params(d, arches)
    for a in arches.values():
        assert modules.params_for(a, "nopfn_example", given) == "pages=8"
        assert modules.params_for(a, "test_nopfn", given) == \
            a.module_params.get("test_nopfn", "")
    src = (EXAMPLE / "tests" / "nopfn_example.c").read_text()
    first = src.index("#include")
    assert "#define _GNU_SOURCE\n" in src[:first]
    assert "#define PAGES\t\t8\t" in src


def _kernel_build(tmp_path, order: list[str]):
    out = tmp_path / "build"
    (out / "include/config").mkdir(parents=True)
    (out / "include/config/kernel.release").write_text("6.1.192-nopfn\n")
    for rel in order:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("ko")
    (out / "modules.order").write_text(
        "".join(r.replace(".ko", ".o") + "\n" for r in order))
    return types.SimpleNamespace(STEP="kernels", out=out)


def test_tree_modules_beside_an_architectures_own(tmp_path):
    """ppc64el's configuration builds two PowerNV modules besides
    test_nopfn: test_nopfn is taken, they are left alone."""
    kb = _kernel_build(tmp_path, ["drivers/misc/cxl/cxl.ko",
                                  "lib/test_nopfn.ko",
                                  "drivers/char/powernv-op-panel.ko"])
    where = tmp_path / "where"
    where.mkdir()
    names, installed = modules.tree_modules(kb, where)
    assert names == ["test_nopfn"]
    assert installed == {"test_nopfn":
                         "lib/modules/6.1.192-nopfn/kernel/lib/test_nopfn.ko"}
    assert sorted(p.name for p in where.iterdir()) == ["test_nopfn.ko"]


def test_tree_modules_missing_is_an_error(tmp_path):
    kb = _kernel_build(tmp_path, ["drivers/misc/cxl/cxl.ko"])
    with pytest.raises(BuildError, match=r"did not build the modules "
                       r"\['test_nopfn'\]"):
        modules.tree_modules(kb, tmp_path)
