"""Find the reports a kernel log must not contain.

A report is a WARN/BUG splat ("------------[ cut here ]------------" to
"---[ end trace ... ]---"), or a single line that names a BUG, oops,
KASAN, kmemleak, lockdep or hung-task report. A splat is allowed when
one of its lines matches a regular expression of the expected-warnings
list (the warnings a test provokes on purpose); nothing else is.

- A splat cut short (the guest died, or another splat began before its
  end line) is still a report, up to where it stopped.
- Inside a splat, the first line that names a report is the splat's
  own ("WARNING: CPU: ..."); any further one is another report printed
  in the middle of it (another CPU, or a report the splat triggered),
  reported on its own and never allowed by the splat's pattern.
- An allocation failure the kernel warns about ("page allocation
  failure", "Huh VM_FAULT_OOM leaked out") is a report unless the
  kernel's fault injection forced it: the line comes right after a
  "FAULT_INJECTION: forcing a failure" dump (its "name ..." line and,
  with verbose=2, its stack dump), which it uses up, or while a test
  has the injection on and says so in the log (INJECTION_ON to
  INJECTION_OFF: tests/guest/mspec_stress, with verbose=0). The debug
  guests inject failures on purpose; a real one fails the run.

tests/guest/lib/kmsg_check.h is the same scan inside a guest: a pattern
added here goes there too.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Iterable

_TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
CUT = re.compile(r"-+\[ cut here \]-+")
END = re.compile(r"---\[ end (trace|Kernel panic)")
# A WARN's own header line, after its message: "WARNING: CPU: 0 PID: 131
# at lib/list_debug.c:27 __list_add_valid+0x71/0xa0"
WARN_HEADER = re.compile(r"^WARNING: CPU: \d+ PID: \d+ at ")
BAD = re.compile(
    r"\bBUG[: ]|WARNING:|Oops|Kernel panic|general protection fault|"
    r"Unable to handle kernel|KASAN|kmemleak:.*(suspected|new) memory leak|"
    r"unreferenced object|possible (circular|recursive) locking|"
    r"inconsistent lock state|irq lock inversion|DEBUG_LOCKS_WARN_ON|"
    r"suspicious RCU usage|lockdep is turned off|turning off the locking "
    r"correctness validator|INFO: task .* blocked|"
    r"INFO: rcu_.* stall|soft lockup|hard LOCKUP|UBSAN|list_(add|del) "
    r"corruption|Bad page (state|map)|bad page|refcount_t: |"
    # MIPS die() of a BUG(): "Kernel bug detected[#1]:"
    r"Kernel bug detected|"
    # m68k bad_super_trap(): "BAD KERNEL TRAP: 00000000"
    r"BAD KERNEL TRAP|"
    # p?d_ERROR() of every architecture, p?d_clear_bad():
    # "mm/pgtable-generic.c:51: bad pmd 00000000c0ffee00(800000000d2ae067)"
    r"\bbad (pte|pmd|pud|p4d|pgd)\b|"
    # the OOM killer: no guest of the suite may run out of memory
    r"invoked oom-killer|oom-kill:constraint|"
    r"[Oo]ut of memory.*: Killed process|"
    # x86 PAT (arch/x86/mm/pat/memtype*.c), every one of its errors
    r"x86/PAT: .*(conflicting memory types|map pfn|freeing invalid memtype|"
    r"(memtype_reserve|reserve_ram_pages_type|ioremap_change_attr) failed)|"
    # driver/mspec_core.c: a page whose linear map stayed uncached
    r"kept back, its kernel mapping could not be restored")

# Allocation failures the kernel warns about: warn_alloc() of the page
# allocator's slow path, and a fault handler's VM_FAULT_OOM that reached
# pagefault_out_of_memory() (which, since 5.16, kills nothing and lets
# the access fault again). A report unless fault injection forced it.
FAILED_ALLOC = re.compile(
    r"page allocation failure|Huh VM_FAULT_OOM leaked out")
# What a test logs right before it turns the kernel's fault injection on
# and right after it turns it off (kmsg_check.h's kmsg_injection())
INJECTION_ON = re.compile(r"nopfn-test: kernel fault injection on$")
INJECTION_OFF = re.compile(r"nopfn-test: kernel fault injection off$")
# lib/fault-inject.c fail_dump() of an injected failure (verbose >= 1)
FAULT_INJECTION = re.compile(r"FAULT_INJECTION: forcing a failure")
# The rest of that dump: its "name" line, and with verbose=2 the header
# and frames of dump_stack() (x86, arm64, riscv formats; a line of any
# other kind ends the dump, and a failure after it is a report).
FAULT_INJECTION_DUMP = re.compile(
    r"^name \S+, interval \d+, probability \d+, space -?\d+, "
    r"times -?\d+$|"
    r"^CPU: \d+ PID: \d+ Comm: |^Hardware name: |^Call [Tt]race:$|"
    r"^\s*</?[A-Z]+>$|"
    # x86: the user registers where the stack of a user fault ends
    r"^(RIP|RSP|RAX|RDX|RBP|R10|R13): |^Code: |"
    r"^\s*(\? )?(\[<[0-9a-f]+>\] )?[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+"
    r"( \[\w+\])?$")


@dataclasses.dataclass
class Report:
    lines: list[str]
    allowed_by: str = ""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def load_expected(path: pathlib.Path) -> list[re.Pattern]:
    if not path.exists():
        return []
    pats = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            pats.append(re.compile(line))
    return pats


def reports(log: Iterable[str], expected: list[re.Pattern]) -> list[Report]:
    """Every report in the log, with the pattern that allows it if any."""
    out: list[Report] = []
    cur: list[str] = []
    inside = own = header = False
    injected = False        # the lines since a fault injection are its dump
    injecting = False       # a test has the injection on
    for raw in log:
        line = _TS.sub("", raw.rstrip("\r\n"))
        bad = bool(BAD.search(line))
        if INJECTION_ON.search(line):
            injecting = True
        elif INJECTION_OFF.search(line):
            injecting = False
        if FAILED_ALLOC.search(line):
            bad = bad or not (injected or injecting)
            injected = False    # one injected failure, one warning
        elif FAULT_INJECTION.search(line):
            injected = True
        elif not FAULT_INJECTION_DUMP.search(line):
            injected = False
        if CUT.search(line):
            if inside:              # the one before never ended
                out.append(Report(cur))
            inside, own, header, cur = True, False, False, [line]
            continue
        if inside:
            if END.search(line):
                cur.append(line)
                out.append(Report(cur))
                inside, cur = False, []
                continue
            if bad:
                # a WARN's message is a report of its own (list_add
                # corruption, ...): the WARNING line after it is the
                # same splat's header, not another report
                first_header = not header and WARN_HEADER.search(line)
                header = header or bool(first_header)
                if own and not first_header:    # a report inside
                    out.append(Report([line]))
                    continue
                own = True
            cur.append(line)
            continue
        if bad:
            out.append(Report([line]))
    if inside:
        out.append(Report(cur))
    for rep in out:
        for pat in expected:
            if any(pat.search(line) for line in rep.lines):
                rep.allowed_by = pat.pattern
                break
    return out


def unexpected(log: Iterable[str], expected: list[re.Pattern]) -> list[Report]:
    return [r for r in reports(log, expected) if not r.allowed_by]
