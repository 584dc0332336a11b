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
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Iterable

_TS = re.compile(r"^\[\s*\d+\.\d+\]\s?")
CUT = re.compile(r"-+\[ cut here \]-+")
END = re.compile(r"---\[ end (trace|Kernel panic)")
BAD = re.compile(
    r"\bBUG[: ]|WARNING:|Oops|Kernel panic|general protection fault|"
    r"Unable to handle kernel|KASAN|kmemleak:.*(suspected|new) memory leak|"
    r"unreferenced object|possible (circular|recursive) locking|"
    r"inconsistent lock state|irq lock inversion|DEBUG_LOCKS_WARN_ON|"
    r"suspicious RCU usage|lockdep is turned off|turning off the locking "
    r"correctness validator|INFO: task .* blocked|"
    r"INFO: rcu_.* stall|soft lockup|hard LOCKUP|UBSAN|list_(add|del) "
    r"corruption|Bad page (state|map)|bad page|refcount_t: ")


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
    inside = own = False
    for raw in log:
        line = _TS.sub("", raw.rstrip("\r\n"))
        if CUT.search(line):
            if inside:              # the one before never ended
                out.append(Report(cur))
            inside, own, cur = True, False, [line]
            continue
        if inside:
            if END.search(line):
                cur.append(line)
                out.append(Report(cur))
                inside, cur = False, []
                continue
            if BAD.search(line):
                if own:             # a report inside the splat
                    out.append(Report([line]))
                    continue
                own = True
            cur.append(line)
            continue
        if BAD.search(line):
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
