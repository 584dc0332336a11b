"""Kernel log scanning: what fails a run and what a test may provoke."""
import pathlib
import re
import shutil
import subprocess

import pytest

from matrix.build import tree as treemod
from matrix.session import kernlog

REPO = pathlib.Path(__file__).resolve().parents[2]

CLEAN = """\
[    0.000000] Linux version 6.1.192-nopfn
[    0.004000] x86/PAT: Configuration [0-7]: WB  WC  UC- UC  WB  WP  UC- WT
[    0.512000] nopfn_test: loaded
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


# Recorded logs of three holes the scan had.

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
    from matrix.spec import arch as archspec
    from matrix.session import guest
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


# Recorded logs of reports the scan had no pattern for. Each must be a
# report of the host's scan and of the guests' (tests/guest/lib/
# kmsg_check.h; test_kmsg_check_agrees below runs every excerpt through
# both).

# mips64el: BUG() is "break BRK_BUG", do_bp() calls die_if_kernel("Kernel
# bug detected"), and die() prints "%s[#%d]:" and the registers: no line
# of it said BUG, oops or WARNING.
MIPS_BUG = """\
[   14.207310] Kernel bug detected[#1]:
[   14.207540] CPU: 0 PID: 97 Comm: nopfn_api Tainted: G           O       6.1.192-nopfn #1
[   14.207780] $ 0   : 0000000000000000 0000000000000001 ffffffffc0012345 0000000000000000
[   14.208010] epc   : ffffffffc0012f3c nopfn_test_nopfn+0x3c/0x1a0 [nopfn_test]
[   14.208200] ra    : ffffffff802c5e8c do_nopfn+0x8c/0x2a0
[   14.208400] Process nopfn_api (pid: 97, threadinfo=000000006a0b9e44, task=00000000b8b3c2a1, tls=000000000049a7a0)
[   14.208600] Call Trace:
[   14.208700] [<ffffffffc0012f3c>] nopfn_test_nopfn+0x3c/0x1a0 [nopfn_test]
[   14.208800] [<ffffffff802c5e8c>] do_nopfn+0x8c/0x2a0
[   14.209000] Code: 00000000  0000000d  24020001 <0000000d> 10000003
[   14.209200] ---[ end trace 0000000000000000 ]---
"""

# m68k (virt, 68040): a trap in supervisor mode that has no handler.
M68K_TRAP = """\
[   22.480110] *** ADDRESS ERROR ***   FORMAT=7
[   22.480220] Current process id is 101
[   22.480330] BAD KERNEL TRAP: 00000000
[   22.480440] PC: [<0003a8e2>] do_nopfn+0x36/0x1b4
[   22.480550] SR: 2704  SP: 00f3de6c  a2: 00e1a340
[   22.480660] Process nopfn_faults (pid: 101, task=00e1a340)
"""

# p?d_clear_bad() of mm/pgtable-generic.c, in the p?d_ERROR() formats of
# the architectures (x86_64 "%p(%016lx)", arm64, riscv64 and s390x
# "%016lx."), and a pte_ERROR() (no caller in 6.1's mm/, mips64 format).
BAD_PAGE_TABLES = """\
[   30.100001] mm/pgtable-generic.c:51: bad pmd 00000000c0ffee00(800000000d2ae067)
[   30.100002] mm/pgtable-generic.c:39: bad pud 0068000041a2bf43.
[   30.100003] mm/pgtable-generic.c:31: bad p4d 0000000000000420.
[   30.100004] mm/pgtable-generic.c:24: bad pgd 0000000020a3c801.
[   30.100005] mm/memory.c:1234: bad pte 00000000deadbeef.
"""

# x86_64: what the OOM killer prints (tinyconfig: no memcg, no cpusets).
OOM_KILL = """\
[   41.002310] mspec_stress invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
[   41.002890] CPU: 1 PID: 133 Comm: mspec_stress Tainted: G           O       6.1.192-nopfn #1
[   41.003100] Call Trace:
[   41.003200]  <TASK>
[   41.003300]  dump_stack_lvl+0x45/0x5e
[   41.003400]  dump_header+0x4a/0x1f4
[   41.003500]  oom_kill_process.cold+0xb/0x10
[   41.003600]  out_of_memory+0x1ed/0x2e0
[   41.003700]  __alloc_pages_slowpath.constprop.0+0xc2e/0xd50
[   41.003800]  __alloc_pages+0x21b/0x240
[   41.003900]  </TASK>
[   41.004000] Mem-Info:
[   41.004100] active_anon:60012 inactive_anon:12 isolated_anon:0
[   41.005000] Tasks state (memory values in pages):
[   41.005100] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name
[   41.005200] [    133]     0   133   120345    60110   528384        0             0 mspec_stress
[   41.005300] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=mspec_stress,pid=133,uid=0
[   41.005400] Out of memory: Killed process 133 (mspec_stress) total-vm:481380kB, anon-rss:240440kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:516kB oom_score_adj:0
"""

# x86_64: each error of arch/x86/mm/pat/memtype*.c in 6.1.
PAT_ERRORS = """\
[   61.204511] x86/PAT: mspec_stress:140 conflicting memory types 12345000-12346000 write-back<->uncached-minus
[   61.204600] x86/PAT: memtype_reserve failed [mem 0x12345000-0x12345fff], track uncached-minus, req write-back
[   61.204700] x86/PAT: mspec_stress:140 map pfn expected mapping type write-back for [mem 0x12345000-0x12345fff], got uncached-minus
[   61.204800] x86/PAT: mspec_stress:140 map pfn RAM range req uncached-minus for [mem 0x12345000-0x12345fff], got write-back
[   61.204900] x86/PAT: reserve_ram_pages_type failed [mem 0x12345000-0x12345fff], track 0x2, req 0x2
[   61.205000] x86/PAT: mmap_fuzz:150 freeing invalid memtype [mem 0x12345000-0x12345fff]
[   61.205100] x86/PAT: mmap_fuzz:150 ioremap_change_attr failed uncached-minus for [mem 0xfebf0000-0xfebfffff]
"""

# driver/mspec_core.c mspec_free_page() when set_memory_wb() failed.
MSPEC_KEPT_BACK = """\
[   70.310000] mspec_uncached: page 0xffff888004a3c000 kept back, its kernel mapping could not be restored
"""

# x86_64: a user fault whose allocation failed; pagefault_out_of_memory()
# kills nothing since 5.16, it retries the fault for ever.
VM_FAULT_OOM = """\
[   33.120004] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
"""

# arm64: the page allocator's slow path gave up on an atomic allocation.
PAGE_ALLOC_FAILURE = """\
[   52.311402] kworker/0:2: page allocation failure: order:0, mode:0xa20(GFP_ATOMIC), nodemask=(null)
[   52.311990] CPU: 0 PID: 57 Comm: kworker/0:2 Tainted: G           O       6.1.192-nopfn #1
[   52.312120] Hardware name: linux,dummy-virt (DT)
[   52.312300] Call trace:
[   52.312410]  dump_backtrace+0xe4/0x140
[   52.312520]  show_stack+0x20/0x30
[   52.312630]  dump_stack_lvl+0x64/0x80
[   52.312740]  dump_stack+0x18/0x34
[   52.312850]  warn_alloc+0x120/0x1a0
[   52.312960]  __alloc_pages_slowpath.constprop.0+0x8c4/0x9a0
[   52.313070]  __alloc_pages+0x26c/0x2a0
[   52.313500] Mem-Info:
[   52.313610] active_anon:0 inactive_anon:10 isolated_anon:0
"""

# What the debug kernels print since UBSAN and DEBUG_LIST are in
# kernel/config/debug.config, in 6.1's formats: lib/ubsan.c's
# ubsan_prologue() (a rule, "UBSAN: <check> in <file>:<line>:<col>", the
# stack, a rule), and lib/list_debug.c's CHECK_DATA_CORRUPTION(), a WARN
# without BUG_ON_DATA_CORRUPTION.
UBSAN_SHIFT = """\
[   41.502113] ================================================================================
[   41.502420] UBSAN: shift-out-of-bounds in mm/memory.c:4987:32
[   41.502611] shift exponent 64 is too large for 64-bit type 'long unsigned int'
[   41.502890] CPU: 1 PID: 118 Comm: nopfn-tests Tainted: G           O       6.1.192-nopfn #1
[   41.503100] Call Trace:
[   41.503210]  <TASK>
[   41.503320]  dump_stack_lvl+0x5b/0x77
[   41.503430]  __ubsan_handle_shift_out_of_bounds.cold+0x53/0x10d
[   41.503540]  do_nopfn+0x2f1/0x560
[   41.503650]  </TASK>
[   41.503760] ================================================================================
"""

LIST_CORRUPTION = """\
[   63.200100] ------------[ cut here ]------------
[   63.200210] list_add corruption. next->prev should be prev (ffff888004b2c1a8), but was dead000000000122. (next=ffff888004b2c1a8).
[   63.200450] WARNING: CPU: 0 PID: 131 at lib/list_debug.c:27 __list_add_valid+0x71/0xa0
[   63.200560] Modules linked in: test_nopfn mspec nopfn_bench
[   63.200670] CPU: 0 PID: 131 Comm: mspec_stress Tainted: G           O       6.1.192-nopfn #1
[   63.200780] RIP: 0010:__list_add_valid+0x71/0xa0
[   63.200890] Call Trace:
[   63.201000]  <TASK>
[   63.201110]  mspec_open+0x5e/0xa0 [mspec]
[   63.201220]  </TASK>
[   63.201330] ---[ end trace 0000000000000000 ]---
"""

NEW_REPORTS = {
    "mips_bug": (MIPS_BUG, ["Kernel bug detected[#1]:"]),
    "m68k_trap": (M68K_TRAP, ["BAD KERNEL TRAP: 00000000"]),
    "page_tables": (BAD_PAGE_TABLES,
                    [ln[15:] for ln in BAD_PAGE_TABLES.splitlines()]),
    "oom_kill": (OOM_KILL, [
        "mspec_stress invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), "
        "order=0, oom_score_adj=0",
        "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),"
        "task=mspec_stress,pid=133,uid=0",
        OOM_KILL.splitlines()[-1][15:]]),
    "pat": (PAT_ERRORS, [ln[15:] for ln in PAT_ERRORS.splitlines()]),
    "mspec_kept_back": (MSPEC_KEPT_BACK, [MSPEC_KEPT_BACK[15:-1]]),
    "vm_fault_oom": (VM_FAULT_OOM, [VM_FAULT_OOM[15:-1]]),
    "page_alloc_failure": (PAGE_ALLOC_FAILURE,
                           [PAGE_ALLOC_FAILURE.splitlines()[0][15:]]),
    "ubsan": (UBSAN_SHIFT, [UBSAN_SHIFT.splitlines()[1][15:]]),
    # one report, the whole splat: its WARNING line is its header
    "list_corruption": (LIST_CORRUPTION, ["\n".join(
        ln[15:] for ln in LIST_CORRUPTION.splitlines())]),
}


@pytest.mark.parametrize("name", NEW_REPORTS)
def test_issue26_reports_are_found(name):
    log, want = NEW_REPORTS[name]
    bad = kernlog.unexpected(log.splitlines(), [])
    assert [r.text for r in bad] == want
    # not allowed by anything a test provokes on purpose
    expected = kernlog.load_expected(
        REPO / "tests/guest/expected-warnings.txt")
    assert len(kernlog.unexpected(log.splitlines(), expected)) == len(want)


def test_mspec_kept_back_pattern_is_the_drivers_message():
    """A reworded driver message would slip past the scan unnoticed."""
    src = (REPO / "driver/mspec_core.c").read_text()
    assert ('"%s: page %#lx kept back, its kernel mapping could not be '
            'restored\\n"') in src


# The near misses: lines that must stay quiet.
NEAR_MISSES = """\
[    0.004000] x86/PAT: Configuration [0-7]: WB  WC  UC- UC  WB  WP  UC- WT
[    0.004100] x86/PAT: MTRRs disabled, skipping PAT initialization too.
[    5.000001]  ? pmd_clear_bad+0x2c/0x40
[    5.000002]  print_bad_pte+0x1a4/0x260
[    5.000003] oom_reaper: reaped process 133 (mspec_stress), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
"""


def test_issue26_near_misses_are_quiet():
    assert kernlog.unexpected(NEAR_MISSES.splitlines(), []) == []


# The debug guests inject allocation failures on purpose (mspec_stress's
# hammer threads: fail_page_alloc with task-filter). With the attribute
# "verbose" at 1 or more, lib/fault-inject.c fail_dump() logs each
# injected failure; a user fault that got it ends in
# pagefault_out_of_memory().
INJECTED_VM_FAULT_OOM = """\
[   33.120001] FAULT_INJECTION: forcing a failure.
[   33.120001] name fail_page_alloc, interval 1, probability 5, space 0, times 999912
[   33.120004] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
"""

# The same with verbose=2: fail_dump() dumps the stack, which for a user
# fault on x86 ends with the user registers.
INJECTED_VERBOSE2 = """\
[   33.200001] FAULT_INJECTION: forcing a failure.
[   33.200001] name fail_page_alloc, interval 1, probability 5, space 0, times 999911
[   33.200002] CPU: 1 PID: 140 Comm: mspec_stress Tainted: G           O       6.1.192-nopfn #1
[   33.200003] Call Trace:
[   33.200004]  <TASK>
[   33.200005]  dump_stack_lvl+0x5b/0x77
[   33.200006]  should_fail_ex.cold+0x5/0xa
[   33.200007]  __alloc_pages+0x10d/0x2b0
[   33.200008]  __pte_alloc+0x2a/0x150
[   33.200009]  handle_mm_fault+0xa5e/0xf30
[   33.200010]  do_user_addr_fault+0x1c9/0x650
[   33.200011]  exc_page_fault+0x6c/0x150
[   33.200012]  asm_exc_page_fault+0x22/0x30
[   33.200013] RIP: 0033:0x401a2c
[   33.200014] Code: 48 8b 45 f8 48 89 c7 e8 7b fe ff ff 90 c9 c3 55 48 89 e5 <89> 38 90 5d c3 55 48 89 e5
[   33.200015] RSP: 002b:00007f3a1c7fde38 EFLAGS: 00010246
[   33.200016] RAX: 00007f3a1e400000 RBX: 00007f3a1c7fe640 RCX: 0000000000000000
[   33.200017] RDX: 0000000000000001 RSI: 0000000000000000 RDI: 00007f3a1e400000
[   33.200018] RBP: 00007f3a1c7fde40 R08: 0000000000000000 R09: 0000000000000000
[   33.200019] R10: 0000000000000000 R11: 0000000000000246 R12: 00007f3a1c7fe640
[   33.200020] R13: 0000000000000000 R14: 00000000004018f0 R15: 00007ffd8d8e9a60
[   33.200021]  </TASK>
[   33.200022] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
"""

# The rule as it stands for "page allocation failure" too. 6.1 itself
# never prints this pair: an injected page allocation returns NULL before
# the slow path, the only caller of that warn_alloc().
INJECTED_PAGE_ALLOC = """\
[   34.000001] FAULT_INJECTION: forcing a failure.
[   34.000001] name fail_page_alloc, interval 1, probability 5, space 0, times 999900
[   34.000002] mspec_stress: page allocation failure: order:0, mode:0xcc0(GFP_KERNEL), nodemask=(null)
[   34.000003] CPU: 1 PID: 140 Comm: mspec_stress Tainted: G           O       6.1.192-nopfn #1
[   34.000004] Call Trace:
[   34.000005]  <TASK>
[   34.000006]  dump_stack_lvl+0x5b/0x77
[   34.000007]  warn_alloc+0x13a/0x1b0
[   34.000008]  </TASK>
"""

# mspec_stress's way (verbose=0, no dump): it logs when its injection is
# on; the failures in between, from any of its threads, are its own.
INJECTION_WINDOW = """\
[   35.000000] nopfn-test: kernel fault injection on
[   35.100000] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
[   35.100001] mspec_stress[141]: segfault at 0 ip 0000000000401a2c sp 00007f3a1c7fde38 error 6
[   35.200000] Huh VM_FAULT_OOM leaked out to the #PF handler. Retrying PF
[   35.300000] nopfn-test: kernel fault injection off
"""

INJECTED = {"vm_fault_oom": INJECTED_VM_FAULT_OOM,
            "window": INJECTION_WINDOW,
            "verbose2": INJECTED_VERBOSE2,
            "page_alloc": INJECTED_PAGE_ALLOC}


@pytest.mark.parametrize("name", INJECTED)
def test_injected_allocation_failure_is_not_a_report(name):
    assert kernlog.unexpected(INJECTED[name].splitlines(), []) == []


_INJ = INJECTED_VM_FAULT_OOM.splitlines(keepends=True)
NOT_INJECTED = {
    # a second failure: the injection was used up by the first
    "used_up": "".join(_INJ) + VM_FAULT_OOM,
    # a line of another kind in between: not the injected failure's
    "interrupted": "".join(_INJ[:2]) + "[   33.120002] mspec_stress[140]: "
    "segfault at 0 ip 0000000000401a2c sp 00007f3a1c7fde38 error 6\n"
    + VM_FAULT_OOM,
    # a real failure long after an injection
    "later": "".join(_INJ[:2]) + CLEAN + PAGE_ALLOC_FAILURE,
    # after the test turned its injection off
    "after_window": INJECTION_WINDOW + VM_FAULT_OOM,
}


def test_an_injection_window_excuses_no_other_report():
    log = INJECTION_WINDOW.replace(
        "[   35.300000]", "[   35.250000] BUG: Bad rss-counter state "
        "mm:000000001 type:MM_FILEPAGES val:1\n[   35.300000]")
    (rep,) = kernlog.unexpected(log.splitlines(), [])
    assert "Bad rss-counter" in rep.text


@pytest.mark.parametrize("name", NOT_INJECTED)
def test_fault_injection_excuses_only_the_failure_right_after_it(name):
    (rep,) = kernlog.unexpected(NOT_INJECTED[name].splitlines(), [])
    assert kernlog.FAILED_ALLOC.search(rep.text), rep.text


# tests/guest/lib/kmsg_check.h and the series' copy of it in nopfn-tests.c,
# each compiled for the host: each excerpt, fed as the message texts
# /dev/kmsg gives, has the same reports there.
KMSG_DRIVER = r"""
#define _GNU_SOURCE
#include "kmsg_check.h"
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct kmsg_check k;
	char *line = NULL;
	size_t size = 0;

	memset(&k, 0, sizeof(k));
	k.fd = -1;
	while (getline(&line, &size, stdin) > 0) {
		line[strcspn(line, "\n")] = 0;
		kmsg_line(&k, line, (const char * const *)argv + 1);
	}
	free(line);
	printf("%lu\n%s\n", k.reports, k.first);
	return argc < 1;
}
"""


# the series' own selftest carries a copy of the checker (an in-tree test
# cannot include tests/guest/lib/): its kernel-log section, as patch 15
# writes it, behind the includes and ARRAY_SIZE() the file has above it
SELFTEST = "tools/testing/selftests/vm/nopfn-tests.c"
SECTION = re.compile(r"^/\* -+ the kernel log \*/$(.*?)^/\* -+ \w",
                     re.M | re.S)
SELFTEST_PRELUDE = """\
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
"""


def selftest_checker() -> str:
    text = treemod.added_file(treemod.parse_series(), SELFTEST)
    assert text is not None, f"the series no longer adds {SELFTEST}"
    m = SECTION.search(text)
    assert m, f"{SELFTEST} has no kernel-log section"
    # kmsg_open(), kmsg_scan() and friends are not called by the driver
    return (SELFTEST_PRELUDE + "#pragma GCC diagnostic ignored "
            "\"-Wunused-function\"\n" + m.group(1))


@pytest.fixture(scope="module", params=["kmsg_check.h", "nopfn-tests.c"])
def kmsg_check(request, tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        pytest.skip("no host C compiler")
    d = tmp_path_factory.mktemp("kmsg")
    if request.param == "nopfn-tests.c":
        (d / "kmsg_check.h").write_text(selftest_checker())
    else:
        shutil.copy(REPO / "tests/guest/lib/kmsg_check.h", d)
    (d / "t.c").write_text(KMSG_DRIVER)
    exe = d / "t"
    r = subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-Werror",
                        f"-I{d}", "-o", str(exe), str(d / "t.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{request.param}'s checker:\n{r.stderr}"

    def scan(log: str) -> tuple[int, str]:
        text = "".join(kernlog._TS.sub("", ln) + "\n"
                       for ln in log.splitlines())
        out = subprocess.run([str(exe)], input=text, capture_output=True,
                             text=True, check=True).stdout.split("\n")
        return int(out[0]), out[1]
    scan.source = request.param     # type: ignore[attr-defined]
    return scan


AGREE = {**{n: v[0] for n, v in NEW_REPORTS.items()},
         **{"injected_" + n: v for n, v in INJECTED.items()},
         **{"not_injected_" + n: v for n, v in NOT_INJECTED.items()},
         "near_misses": NEAR_MISSES, "clean": CLEAN,
         "unterminated_then_cut": UNTERMINATED_THEN_CUT,
         "killed_with_lockdep": KILLED_WITH_LOCKDEP}


# messages of driver/, which the series' selftest never loads: its copy of
# the checker does not know them (and says nothing of them)
OUT_OF_TREE = {"mspec_kept_back"}


@pytest.mark.parametrize("name", AGREE)
def test_kmsg_check_agrees(kmsg_check, name):
    want = kernlog.unexpected(AGREE[name].splitlines(), [])
    n, first = kmsg_check(AGREE[name])
    if kmsg_check.source == "nopfn-tests.c" and name in OUT_OF_TREE:
        assert want and (n, first) == (0, "")
        return
    assert n == len(want)
    # a splat's: its report line ("WARNING: ..."), not its "cut here"
    assert first in want[0].lines if want else first == ""


def test_kmsg_check_injection_record(kmsg_check):
    """/dev/kmsg gives fail_dump()'s two lines as one record, its newline
    escaped."""
    one = ("FAULT_INJECTION: forcing a failure.\\x0aname fail_page_alloc, "
           "interval 1, probability 5, space 0, times 999912\n")
    assert kmsg_check(one + VM_FAULT_OOM) == (0, "")
    assert kmsg_check(one + VM_FAULT_OOM + VM_FAULT_OOM)[0] == 1
