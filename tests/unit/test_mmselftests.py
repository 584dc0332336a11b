"""The mm selftest list (tests/mm-selftests.yaml): parser, guest command,
and how a run's exit status and KTAP are judged."""
import pytest

from matrix.spec import arch as archspec
from matrix.build import selftests as mmselftests
from matrix.build.selftests import ListError, parse
from matrix.session.selftests import judge

ARCHES = ["x86_64", "arm64", "riscv64", "ia64"]


def test_defaults_and_settings():
    (plain, full) = parse("""
tests:
  map_populate:
  madv_populate:
    sources: [madv_populate.c, vm_util.c]
    args: -t 0
    sysctl: {vm.overcommit_memory: 1}
    user: 65534
    libs: [cap]
    timeout: 90
    cannot_run:
      riscv64: no soft-dirty here
""", ARCHES)
    assert plain.name == "map_populate"
    assert plain.sources == ["map_populate.c"]
    assert (plain.args, plain.sysctl, plain.user, plain.libs,
            plain.timeout, plain.cannot_run) == ("", {}, None, [], None, {})
    assert full.sources == ["madv_populate.c", "vm_util.c"]
    assert full.sysctl == {"vm.overcommit_memory": "1"}
    assert (full.args, full.user, full.libs, full.timeout) == \
        ("-t 0", 65534, ["cap"], 90.0)
    assert full.skip_reason("riscv64") == "no soft-dirty here"
    assert full.skip_reason("x86_64") is None


def test_all_and_arch_reasons():
    (t,) = parse("""
tests:
  x:
    cannot_run:
      all: no hugetlbfs
      arm64: arm64 reason
""", ARCHES)
    assert t.skip_reason("arm64") == "arm64 reason"
    assert t.skip_reason("x86_64") == "no hugetlbfs"


@pytest.mark.parametrize("text, words", [
    ("tests: [a, b]", "one key 'tests'"),
    ("other: {}", "one key 'tests'"),
    ("tests:\n  a:\n    source: [a.c]", "unknown keys ['source']"),
    ("tests:\n  a:\n    sources: a.c", "sources must be a list"),
    ("tests:\n  a:\n    sources: [../a.c]", "sources must be a list"),
    ("tests:\n  a:\n    sources: [a.h]", "sources must be a list"),
    ("tests:\n  a:\n    args: '-x; reboot'", "plain words"),
    ("tests:\n  a:\n    sysctl: {overcommit: 1}", "bad sysctl"),
    ("tests:\n  a:\n    sysctl: {vm.x: '1; reboot'}", "bad sysctl"),
    ("tests:\n  a:\n    user: 0", "uid from 1"),
    ("tests:\n  a:\n    user: nobody", "uid from 1"),
    ("tests:\n  a:\n    libs: [numa]", "libs must be a list of ['cap']"),
    ("tests:\n  a:\n    timeout: -1", "positive number"),
    ("tests:\n  a:\n    cannot_run: {sparc: x}", "unknown architecture "
     "'sparc'"),
    ("tests:\n  a:\n    cannot_run: {all: ''}", "give the reason"),
    ("tests:\n  'a b':", "not a program name"),
    ("tests:\n  a: [1]", "expected a mapping"),
    ("tests: {a: 1", "not valid YAML"),
])
def test_refused(text, words):
    with pytest.raises(ListError) as exc:
        parse(text, ARCHES, "list.yaml")
    assert words in str(exc.value)
    assert str(exc.value).startswith("list.yaml")


def test_command_plain_user_and_sysctl():
    a, b, c = parse("""
tests:
  a:
  b:
    user: 65534
    args: -p 3
  c:
    sysctl: {vm.overcommit_memory: 1, kernel.x: y}
""", ARCHES)
    assert a.command() == "/selftests/vm/a"
    assert b.command() == "/selftests/runas 65534 /selftests/vm/b -p 3"
    cmd = c.command()
    # in a subshell; each setting saved, set, then restored after the run
    assert cmd.startswith("( ") and cmd.endswith(" exit $r )")
    run = cmd.index("/selftests/vm/c;")
    for path, value in (("/proc/sys/vm/overcommit_memory", "1"),
                        ("/proc/sys/kernel/x", "y")):
        assert cmd.index(f"echo {value} >{path}") < run
        assert cmd.rindex(f'>{path}') > run
    assert "exit 125" in cmd[:run]


def test_judge_pass_skip_fail():
    ok = judge(0, ["TAP version 13", "1..2", "ok 1 a",
                   "ok 2 b # SKIP not here"])
    assert ok.status == "passed" and ok.counts == {"pass": 1, "skip": 1}
    assert judge(0, ["mmap() ok", "OK"]).status == "passed"

    skip = judge(4, ["TAP version 13", "1..0 # SKIP soft-dirty is not "
                     "support"])
    assert skip.status == "skipped"
    assert skip.message == "soft-dirty is not support"
    said = judge(4, ["No kernel support for MREMAP_DONTUNMAP"])
    assert (said.status, said.message) == \
        ("skipped", "No kernel support for MREMAP_DONTUNMAP")
    assert judge(4, []).message.startswith("exit status 4")

    bad = judge(1, ["TAP version 13", "1..2", "# mremap failed: ENOMEM",
                    "not ok 1 2GB mremap", "ok 2 b"])
    assert bad.status == "failed"
    assert "not ok 1 2GB mremap" in bad.message
    assert "mremap failed: ENOMEM" in bad.message
    assert judge(1, ["[FAIL] x"]).status == "failed"
    assert judge(139, []).message.startswith("exit status 139")


def test_judge_is_strict():
    # a failing sub-result fails even with exit 0 or KSFT_SKIP
    assert judge(0, ["1..1", "not ok 1 a"]).status == "failed"
    assert judge(4, ["1..2", "not ok 1 a"]).status == "failed"
    # exit 0 with a plan left short (the test stopped early)
    short = judge(0, ["TAP version 13", "1..3", "ok 1 a"])
    assert short.status == "failed" and "incomplete" in short.message
    # expected failures are fine
    assert judge(0, ["1..1", "not ok 1 a # XFAIL fine"]).status == "passed"


def test_the_list():
    """The repository's list parses, names only known architectures,
    and runs the tests the issue asks for on every booted one."""
    arches = archspec.load_all()
    tests = mmselftests.load(arches={a.base or a.name
                                     for a in arches.values()})
    names = {t.name for t in tests}
    assert len(names) == len(tests)
    must = {"map_fixed_noreplace", "mremap_test", "mremap_dontunmap",
            "mlock2-tests", "map_populate"}
    # mremap_test is a 64-bit test (2 GiB regions): on the 32-bit targets
    # it is listed as cannot_run, saying so
    bits32 = {"armhf", "armel", "i386", "mipsel", "m68k"}
    # and where the data cache has aliases, its MAP_SHARED sources at
    # 4 KiB offsets are refused (EINVAL), saying so
    colour = {"mips64el"}
    for a in arches.values():
        if a.bootable:
            base = a.base or a.name
            runs = {t.name for t in tests if t.skip_reason(base) is None}
            want = must - {"mremap_test"} if base in bits32 | colour \
                else must
            assert want <= runs, (a.name, want - runs)
            if base in colour:
                why = next(t for t in tests if t.name == "mremap_test"
                           ).skip_reason(base)
                assert why and "colour" in why, base
            if base in bits32:
                why = next(t for t in tests if t.name == "mremap_test"
                           ).skip_reason(base)
                assert why and "32-bit" in why, base


def test_virtual_address_range_skips_on_32_bit():
    """Its 16 GiB chunk is 0 in a 32-bit size_t: every mmap() is EINVAL
    and it exits 0 having checked nothing. On the 32-bit targets it is
    listed as cannot_run (a skip with the reason, never a pass); on the
    64-bit ones it runs (riscv64 aside: its own reason)."""
    arches = archspec.load_all()
    tests = mmselftests.load(arches={a.base or a.name
                                     for a in arches.values()})
    (var,) = [t for t in tests if t.name == "virtual_address_range"]
    # the architecture files give no word size: every file is in one set
    bits32 = {"armhf", "armel", "i386", "mipsel", "m68k"}
    bits64 = {"x86_64", "arm64", "riscv64", "ia64", "mips64el", "ppc64",
              "ppc64el", "s390x"}
    for a in arches.values():
        base = a.base or a.name
        assert base in bits32 | bits64, (
            f"{base}: new architecture; say whether virtual_address_range "
            "can run there (32-bit: cannot)")
        why = var.skip_reason(base)
        if base in bits32:
            assert why and "32-bit size_t" in why and "EINVAL" in why, base
        elif base != "riscv64":
            assert why is None, (base, why)
