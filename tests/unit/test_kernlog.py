"""Kernel log scanning: what fails a run and what a test may provoke."""
import re

from matrix import kernlog

CLEAN = """\
[    0.000000] Linux version 6.1.192-nopfn
[    0.512000] nopfn_test: loaded
[    1.000000] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
"""

WARN = """\
[    2.000000] ------------[ cut here ]------------
[    2.000001] nopfn_test_nopfn [nopfn_test]: ->nopfn on a mapping that is not VM_PFNMAP
[    2.000002] WARNING: CPU: 0 PID: 80 at mm/memory.c:4700 do_nopfn+0x5c/0x1a0
[    2.000003] Call Trace:
[    2.000004] ---[ end trace 0000000000000000 ]---
"""


def test_clean_log():
    assert kernlog.unexpected(CLEAN.splitlines(), []) == []


def test_warning_fails_unless_expected():
    log = (CLEAN + WARN).splitlines()
    (rep,) = kernlog.unexpected(log, [])
    assert "WARNING: CPU: 0" in rep.text and "Call Trace" in rep.text
    allowed = [re.compile(r"->nopfn on a mapping that is not VM_PFNMAP")]
    assert kernlog.unexpected(log, allowed) == []
    (rep,) = kernlog.reports(log, allowed)
    assert rep.allowed_by


def test_expected_pattern_does_not_hide_other_reports():
    log = (WARN + "[ 3.0] BUG: KASAN: use-after-free in mspec_close\n"
           "[ 4.0] kmemleak: 2 new suspected memory leaks\n").splitlines()
    allowed = [re.compile(r"->nopfn on a mapping")]
    bad = kernlog.unexpected(log, allowed)
    assert [r.lines[0] for r in bad] == [
        "BUG: KASAN: use-after-free in mspec_close",
        "kmemleak: 2 new suspected memory leaks"]


def test_single_line_reports():
    for line in ("Unable to handle kernel paging request at virtual address 0",
                 "WARNING: possible circular locking dependency detected",
                 "INFO: task a.out:90 blocked for more than 120 seconds.",
                 "Kernel panic - not syncing: Fatal exception",
                 "BUG: Bad page state in process x"):
        assert kernlog.unexpected([line], []), line


def test_unterminated_splat_is_reported():
    log = WARN.splitlines()[:3]
    (rep,) = kernlog.unexpected(log, [])
    assert len(rep.lines) == 3


def test_load_expected(tmp_path):
    p = tmp_path / "e.txt"
    p.write_text("# comment\n\nfoo.*bar\n")
    assert [x.pattern for x in kernlog.load_expected(p)] == ["foo.*bar"]
    assert kernlog.load_expected(tmp_path / "none") == []


def test_debug_kernel_boot_banners_are_not_reports():
    banners = ["[    0.000000] rcu: \tRCU lockdep checking is enabled.",
               "[    0.000000] Lock dependency validator: Copyright (c) "
               "2006 Red Hat, Inc., Ingo Molnar",
               "[    0.000000] ... MAX_LOCKDEP_SUBCLASSES:  8",
               "[    0.000000] kasan: KernelAddressSanitizer initialized",
               "[    0.010000] kmemleak: Kernel memory leak detector "
               "initialized (mem pool available: 15999)",
               "[    0.020000] kfence: initialized - using 2097152 bytes "
               "for 255 objects"]
    assert kernlog.unexpected(banners, []) == []


def test_debug_kernel_reports_are_found():
    for line in ["BUG: KASAN: use-after-free in mspec_close+0x1/0x2",
                 "BUG: KFENCE: out-of-bounds read in foo+0x1/0x2",
                 "WARNING: possible circular locking dependency detected",
                 "DEBUG_LOCKS_WARN_ON(1)",
                 "WARNING: suspicious RCU usage",
                 "INFO: task stress:123 blocked for more than 60 seconds.",
                 "unreferenced object 0xffff888003 (size 64):",
                 "kmemleak: 2 new suspected memory leaks (see "
                 "/sys/kernel/debug/kmemleak)",
                 "watchdog: BUG: soft lockup - CPU#0 stuck for 22s!"]:
        assert len(kernlog.unexpected([line], [])) == 1, line


# Recorded logs of the three holes issue 12 named.

UNTERMINATED_THEN_CUT = """\
[   5.100000] ------------[ cut here ]------------
[   5.100001] WARNING: CPU: 1 PID: 91 at mm/memory.c:4800 do_nopfn+0x80/0x1c0
[   5.100002] Modules linked in: nopfn_test mspec
[   5.100100] ------------[ cut here ]------------
[   5.100101] nopfn_test_nopfn [nopfn_test]: ->nopfn on a mapping that is not VM_PFNMAP
[   5.100102] WARNING: CPU: 0 PID: 90 at mm/memory.c:4700 do_nopfn+0x5c/0x1a0
[   5.100103] ---[ end trace 0000000000000000 ]---
"""


def test_unterminated_splat_followed_by_another_is_reported():
    allowed = [re.compile(r"->nopfn on a mapping that is not VM_PFNMAP")]
    bad = kernlog.unexpected(UNTERMINATED_THEN_CUT.splitlines(), allowed)
    assert len(bad) == 1
    assert "memory.c:4800" in bad[0].text, bad[0].text
    assert len(kernlog.reports(UNTERMINATED_THEN_CUT.splitlines(),
                               allowed)) == 2


ALLOWED_WITH_REPORT_INSIDE = """\
[   7.000000] ------------[ cut here ]------------
[   7.000001] nopfn_test_nopfn [nopfn_test]: ->nopfn on a mapping that is not VM_PFNMAP
[   7.000002] WARNING: CPU: 0 PID: 90 at mm/memory.c:4700 do_nopfn+0x5c/0x1a0
[   7.000003] BUG: KASAN: slab-use-after-free in mspec_close+0x30/0x90
[   7.000004] Call Trace:
[   7.000005] ---[ end trace 0000000000000000 ]---
"""


def test_allowed_splat_does_not_swallow_a_report_inside_it():
    allowed = [re.compile(r"->nopfn on a mapping that is not VM_PFNMAP")]
    bad = kernlog.unexpected(ALLOWED_WITH_REPORT_INSIDE.splitlines(), allowed)
    assert [r.text for r in bad] == [
        "BUG: KASAN: slab-use-after-free in mspec_close+0x30/0x90"]


# The console log of a guest killed while it printed a lockdep splat: no
# end line, no dmesg read afterwards.
KILLED_WITH_LOCKDEP = """\
nopfn-guest# /tests/nopfn_api
TAP version 13
1..21
# Starting 21 tests from 2 test cases.
#  RUN           api.gate_unlocked ...
[  12.000000] ======================================================
[  12.000001] WARNING: possible circular locking dependency detected
[  12.000002] 6.1.192-nopfn #1 Not tainted
[  12.000003] ------------------------------------------------------
[  12.000004] nopfn_api/95 is trying to acquire lock:
"""


def test_lockdep_splat_of_a_killed_guest_is_reported():
    bad = kernlog.unexpected(KILLED_WITH_LOCKDEP.splitlines(), [])
    assert len(bad) == 1
    assert "possible circular locking dependency" in bad[0].text


def test_guests_boot_with_warnings_on_the_console():
    """quiet would keep WARN and lockdep splats (KERN_WARNING) off the
    console: a guest killed before its dmesg was read left no trace."""
    from matrix import archspec, guest
    import pathlib
    for arch in archspec.load_all().values():
        if not arch.bootable:
            continue
        env = guest.labgrid_env(arch, pathlib.Path("k"), pathlib.Path("i"),
                                pathlib.Path("t"), 60)
        drv = env["targets"][arch.name]["drivers"]["MatrixQEMUDriver"]
        args = drv["boot_args"].split()
        assert "quiet" not in args, arch.name
        levels = [int(a.split("=")[1]) for a in args
                  if a.startswith("loglevel=")]
        # console_loglevel N prints levels below N; KERN_WARNING is 4
        assert levels and levels[-1] > 4, (arch.name, args)
