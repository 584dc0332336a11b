"""The private apt state for foreign architectures' busybox; whose
a module build's W=1 warnings are; the flags a test program is compiled
with, ours and a user's."""
import pathlib

from matrix.build import cache as cachemod
from matrix.build.busybox import PrivateApt
from matrix.build.modules import split_module_warnings


def test_main_index_is_the_release_suites(tmp_path):
    c = cachemod.Cache(tmp_path)
    apt = PrivateApt(c, "ppc64el", "deb")
    lists = apt.root / "lists"
    lists.mkdir(parents=True)
    assert not apt.have_main_index()
    # what an update that failed on the security suite leaves
    for name in ("bookworm-updates_main_binary-ppc64el_Packages.lz4",
                 "bookworm-security_main_binary-ppc64el_Packages.lz4",
                 "bookworm_main_binary-amd64_Packages.lz4"):
        (lists / f"deb.debian.org_debian_dists_{name}").touch()
    assert not apt.have_main_index()
    (lists / "deb.debian.org_debian_dists_bookworm_main_binary-ppc64el_"
     "Packages.lz4").touch()
    assert apt.have_main_index()
    src = PrivateApt(c, "amd64", "deb-src")
    (src.root / "lists").mkdir(parents=True)
    assert not src.have_main_index()
    (src.root / "lists" / "deb.debian.org_debian_dists_bookworm_main_"
     "source_Sources.lz4").touch()
    assert src.have_main_index()


BUILD = pathlib.Path("/c/kernels/sh4-1/build")
SRC = pathlib.Path("/c/modules/sh4-2/src")
TREE = "../../../trees/linux-3/src"

# what sh4's module build printed (6.1, r2d), shortened
SH4_LOG = f"""\
  CC [M]  /c/modules/sh4-2/src/mspec_core.o
cc1: warning: {TREE}/arch/sh/include/mach-r2d: No such file or directory \
[-Wmissing-include-dirs]
  MODPOST /c/modules/sh4-2/src/Module.symvers
In file included from {TREE}/include/linux/mm_types_task.h:16,
                 from {TREE}/include/linux/module.h:14,
                 from ../../../modules/sh4-2/src/mspec.mod.c:1:
{TREE}/arch/sh/include/asm/page.h:184: warning: "ARCH_DMA_MINALIGN" \
redefined
  184 | #define ARCH_DMA_MINALIGN       L1_CACHE_BYTES
      |
In file included from {TREE}/include/linux/time.h:5,
                 from {TREE}/include/linux/module.h:13:
{TREE}/include/linux/cache.h:104: note: this is the location of the \
previous definition
"""


def test_the_trees_own_module_warnings_are_set_apart():
    mine, tree = split_module_warnings(SH4_LOG, SRC, BUILD)
    assert mine == []
    assert len(tree) == 2
    assert "mach-r2d" in tree[0] and "ARCH_DMA_MINALIGN" in tree[1]


def test_the_drivers_warnings_count_wherever_they_point():
    log = f"""\
/c/modules/sh4-2/src/mspec_core.c:10:5: warning: no previous prototype \
for 'f' [-Wmissing-prototypes]
In file included from {TREE}/include/linux/mm.h:5,
                 from /c/modules/sh4-2/src/mspec_core.c:3:
{TREE}/include/linux/minmax.h:20:28: warning: comparison of distinct \
pointer types lacks a cast
cc1: warning: /c/modules/sh4-2/src/include/gone: No such file or \
directory [-Wmissing-include-dirs]
{TREE}/include/linux/x.h:1: warning: after a chain that ended
"""
    mine, tree = split_module_warnings(log, SRC, BUILD)
    assert tree == []
    assert len(mine) == 4


def test_a_program_of_several_files_and_the_guest_library(tmp_path,
                                                          monkeypatch):
    """A folder of C files is one program, its TEST()s its cases; the
    guest library (tests/guest/lib/) is linked from an archive, so a
    program gets only the library's files it calls into, and one that
    defines a function of the library keeps its own."""
    import subprocess
    import types

    from matrix.spec import arch as archspec
    from matrix.build import programs as userspace
    lib = tmp_path / "guest" / "lib"
    lib.mkdir(parents=True)
    (lib / "shared.h").write_text("int twice(int x);\nint thrice(int x);\n")
    (lib / "twice.c").write_text(
        '#include "shared.h"\nint twice(int x) { return 2 * x; }\n')
    (lib / "thrice.c").write_text(
        '#include "shared.h"\nint thrice(int x) { return 3 * x; }\n')
    monkeypatch.setattr(userspace, "GUEST_TESTS", tmp_path / "guest")
    monkeypatch.setattr(userspace, "GUEST_LIB", lib)
    (tmp_path / "guest" / "one.c").write_text(
        '#include <stdio.h>\n#include "shared.h"\n'
        'int thrice(int x) { return x; }\n'
        'int main(void) { printf("%d %d\\n", twice(2), thrice(2));'
        ' return 0; }\n')
    prog = tmp_path / "guest" / "two"
    prog.mkdir()
    (prog / "helper.c").write_text("int helper(void);\n"
                                   "int helper(void) { return 0; }\n")
    (prog / "main.c").write_text(
        '#include "kselftest_harness.h"\n#include "shared.h"\n'
        "int helper(void);\n"
        "TEST(first) { ASSERT_EQ(0, helper()); }\n"
        "TEST(second) { ASSERT_EQ(6, thrice(2)); }\n"
        "TEST_HARNESS_MAIN\n")
    assert [n for n, _ in userspace.discover_tests(None)] == ["one", "two"]
    two = userspace.describe("two", prog)
    assert two.kind == "ktap" and two.cases == ["global.first",
                                                "global.second"]
    sel = tmp_path / "tree" / "tools" / "testing" / "selftests"
    sel.mkdir(parents=True)
    for h in ("kselftest_harness.h", "kselftest.h"):
        (sel / h).write_text(f"/* {h} */\n")
    (sel / "kselftest_harness.h").write_text(
        "#include <stdio.h>\n#define TEST(n) static void n(void)\n"
        "#define ASSERT_EQ(a, b) ((void)((a) == (b)))\n"
        "#define TEST_HARNESS_MAIN int main(void) "
        "{ first(); second(); return 0; }\n")
    tree = types.SimpleNamespace(src=tmp_path / "tree", user_key="k",
                                 patches=[],
                                 ensure=lambda: tmp_path / "tree")
    x86 = archspec.load_all()["x86_64"]
    progs = userspace.build_tests(x86, tree,
                                  cachemod.Cache(tmp_path / "cache"), None,
                                  tmp_path / "nodriver")
    by = {p.name: p for p in progs}
    assert not by["one"].error and not by["two"].error, by
    assert not by["one"].warnings and not by["two"].warnings, by
    out = subprocess.run([str(by["one"].binary)], capture_output=True,
                         text=True).stdout
    assert out == "4 2\n"         # the library's twice(), its own thrice()


def test_a_users_program_is_compiled_as_its_author_wrote_it():
    """Our defines go to tests/guest/'s programs only; every program
    gets the same static, optimising, warning flags."""
    from matrix.build import programs
    own, user = programs.cflags("nopfn_faults"), programs.cflags("user/mine")
    for flag in ("-static", "-O2", "-Wall", "-Wextra", "-pthread"):
        assert flag in own and flag in user
    assert "-D_GNU_SOURCE" in own and "-D_FILE_OFFSET_BITS=64" in own
    assert not [f for f in user if f.startswith("-D")]
    assert programs.cflags("mspec_stress") == own     # a folder program


def test_a_user_program_that_defines_gnu_source_builds_clean(tmp_path,
                                                             monkeypatch):
    """A --user-tests program that says #define _GNU_SOURCE builds
    without a warning (with -D_GNU_SOURCE, gcc warned that it was
    redefined, and test_program_builds failed); one that leaves it out
    is not given GNU declarations behind its back, while the project's
    own programs still are."""
    import types

    from matrix.spec import arch as archspec
    from matrix.build import programs
    guest = tmp_path / "guest"
    (guest / "lib").mkdir(parents=True)
    monkeypatch.setattr(programs, "GUEST_TESTS", guest)
    monkeypatch.setattr(programs, "GUEST_LIB", guest / "lib")
    gnu = ('#include <string.h>\n'
           'int main(void) { return memmem("ab", 2, "b", 1) == 0; }\n')
    (guest / "ours.c").write_text(gnu)            # -D_GNU_SOURCE given
    user = tmp_path / "user"
    user.mkdir()
    (user / "defines.c").write_text("#define _GNU_SOURCE\n" + gnu)
    (user / "forgets.c").write_text(gnu)
    sel = tmp_path / "tree" / "tools" / "testing" / "selftests"
    sel.mkdir(parents=True)
    for h in ("kselftest_harness.h", "kselftest.h"):
        (sel / h).write_text(f"/* {h} */\n")
    tree = types.SimpleNamespace(src=tmp_path / "tree", user_key="k",
                                 patches=[],
                                 ensure=lambda: tmp_path / "tree")
    progs = programs.build_tests(archspec.load_all()["x86_64"], tree,
                                 cachemod.Cache(tmp_path / "cache"), user,
                                 tmp_path / "nodriver")
    by = {p.name: p for p in progs}
    assert set(by) == {"ours", "user/defines", "user/forgets"}
    assert not by["ours"].error and not by["ours"].warnings, by["ours"]
    d = by["user/defines"]
    assert not d.error and not d.warnings, d
    # memmem() is a GNU extension: without _GNU_SOURCE it is undeclared
    f = by["user/forgets"]
    assert any("memmem" in w for w in f.warnings) or "memmem" in f.error, f


def _adding_patch(rel: str, text: str) -> str:
    """A git patch that adds @rel with @text."""
    lines = text.splitlines()
    return (f"Subject: add {rel}\n---\ndiff --git a/{rel} b/{rel}\n"
            "new file mode 100644\n--- /dev/null\n"
            f"+++ b/{rel}\n@@ -0,0 +1,{len(lines)} @@\n" +
            "".join(f"+{ln}\n" for ln in lines) + "-- \n2.39.5\n")


def test_a_selftest_the_series_adds_is_a_program_built_from_the_tree(
        tmp_path, monkeypatch):
    """tools/testing/selftests/vm/nopfn-tests.c, added by the series, is a
    test program: its cases are named from the patch before any tree is
    extracted, it runs in name order with ours, and it is compiled from
    the patched tree as the tree's Makefile does (no -D of ours: it
    defines _GNU_SOURCE itself, which -D_GNU_SOURCE would make a
    warning). A series without the patch (a bisect's prefix) has no such
    program."""
    import types

    from matrix.build import programs, tree as treemod
    from matrix.spec import arch as archspec
    monkeypatch.setattr(programs, "GUEST_TESTS", tmp_path / "guest")
    monkeypatch.setattr(programs, "GUEST_LIB", tmp_path / "guest" / "lib")
    (tmp_path / "guest" / "lib").mkdir(parents=True)
    (tmp_path / "guest" / "zz_last.c").write_text("int main(void) "
                                                  "{ return 0; }\n")
    rel = programs.TREE_PROGRAMS["nopfn-tests"][0]     # 6.1's selftests/vm
    src = ('#define _GNU_SOURCE\n#include <string.h>\n'
           '#include "../kselftest_harness.h"\n'
           'TEST(one) { ASSERT_EQ(0, !memmem("ab", 2, "b", 1)); }\n'
           'TEST(two) { }\nTEST_HARNESS_MAIN\n')
    series = tmp_path / "series"
    series.mkdir()
    (series / "0001-x.patch").write_text(_adding_patch(rel, src))
    (series / "series").write_text("0001-x.patch\n")
    patches = treemod.parse_series(series)
    assert treemod.added_file(patches, rel) == src
    progs = programs.all_programs(None, patches)
    assert [p.name for p in progs] == ["nopfn-tests", "zz_last"]
    assert progs[0].tree and progs[0].cases == ["global.one", "global.two"]
    assert programs.all_programs(None, patches[:0])[0].name == "zz_last"
    # a later patch changes it: only the extracted tree knows the text
    (series / "0002-y.patch").write_text(_adding_patch(rel, src).replace(
        "--- /dev/null", f"--- a/{rel}"))
    assert treemod.added_file(treemod.parse_series(series) +
                              [(series / "0002-y.patch", 1)], rel) is None

    root = tmp_path / "tree"
    sel = root / "tools" / "testing" / "selftests"
    (sel / "vm").mkdir(parents=True)
    (sel / "kselftest.h").write_text("/* kselftest.h */\n")
    (sel / "kselftest_harness.h").write_text(
        "#include <stdio.h>\n#define TEST(n) static void n(void)\n"
        "#define ASSERT_EQ(a, b) ((void)((a) == (b)))\n"
        "#define TEST_HARNESS_MAIN int main(void) "
        "{ one(); two(); return 0; }\n")
    (root / rel).write_text(src)
    tree = types.SimpleNamespace(src=root, user_key="k", patches=patches,
                                 ensure=lambda: root)
    built = {p.name: p for p in programs.build_tests(
        archspec.load_all()["x86_64"], tree,
        cachemod.Cache(tmp_path / "cache"), None, tmp_path / "nodriver")}
    t = built["nopfn-tests"]
    assert not t.error and not t.warnings and t.binary.is_file(), t
