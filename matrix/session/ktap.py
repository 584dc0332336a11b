"""A parser for KTAP (and the TAP 13 that kselftest_harness.h prints).

Reads the lines of one program's output and returns its plan and test
results, each with the diagnostic lines printed since the previous
result. Nested (indented) subtests are kept under their parent.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Iterable, Optional

PASS, FAIL, SKIP, XFAIL, ERROR = "pass", "fail", "skip", "xfail", "error"

_VERSION = re.compile(r"^(K?TAP) version (\d+)")
_PLAN = re.compile(r"^1\.\.(\d+)")
_RESULT = re.compile(r"^(not ok|ok) (\d+)(?: -)? ?([^#]*?)\s*(?:#\s*(.*))?$")


@dataclasses.dataclass
class Result:
    number: int
    name: str
    status: str
    directive: str = ""
    diagnostics: list[str] = dataclasses.field(default_factory=list)
    subtests: list["Result"] = dataclasses.field(default_factory=list)
    t: Optional[float] = None       # when the line arrived, if known
    started: Optional[float] = None  # when the test's first line arrived
    note: str = ""                  # why the status is not the line's


@dataclasses.dataclass
class Report:
    version: Optional[str] = None
    plan: Optional[int] = None
    results: list[Result] = dataclasses.field(default_factory=list)
    bail_out: Optional[str] = None
    problems: list[str] = dataclasses.field(default_factory=list)

    def by_name(self) -> dict[str, Result]:
        return {r.name: r for r in self.results}

    @property
    def complete(self) -> bool:
        return (self.plan is not None and len(self.results) == self.plan
                and self.bail_out is None)


def _status(ok: str, directive: str) -> str:
    d = directive.upper()
    if d.startswith("SKIP"):
        return SKIP
    if d.startswith("XFAIL"):
        return XFAIL
    if ok == "ok":
        return PASS
    if d.startswith("ERROR") or d.startswith("error"):
        return ERROR
    return FAIL


# kselftest_harness.h (6.1) logs a failed EXPECT_*/ASSERT_* as
# "# FILE:LINE:TEST:Expected ..." (__TH_LOG), and SKIP() as
# "#      SKIP      reason". SKIP() sets passed = 1 after a failed
# EXPECT, and a TEST_SIGNAL case that dies by its signal passes: the
# result line is "ok N # SKIP reason" or "ok N name" all the same.
_EXPECTED = re.compile(r"^#\s*\S.*?:\d+:\w+:Expected\b")
_SKIP_LOG = re.compile(r"^#\s+SKIP\s")


def _expectation_failed(res: "Result") -> None:
    """An ok or SKIP result after a failed expectation of its case is a
    failure; note says so."""
    if res.status not in (PASS, SKIP):
        return
    failed = [i for i, d in enumerate(res.diagnostics)
              if _EXPECTED.match(d.strip())]
    if not failed:
        return
    first = res.diagnostics[failed[0]].strip()
    if res.status == SKIP:
        skips = [i for i, d in enumerate(res.diagnostics)
                 if _SKIP_LOG.match(d.strip())]
        when = "before" if not skips or failed[0] < skips[0] else "after"
        res.note = (f"an expectation failed {when} the skip "
                    f"({res.directive}): {first}")
    else:
        res.note = f"reported ok, but an expectation failed: {first}"
    res.status = FAIL


# A measured case's miss of its bar (tests/guest/fault_bench.c): one
# failed EXPECT, the figure on its own line, and the case ran to its end.
_MISS = re.compile(r"\bmedian ([0-9.]+) (over|under) the bar ([0-9.]+)")
# an EXPECT failed and the case went on to its end: 6.1's harness names
# the step, 6.12's does not
_FAILED_STEP = re.compile(r"^#\s*\w+: Test failed(?: at step #\d+)?$")


def measured_miss(res: "Result") -> Optional[str]:
    """The miss line if @res failed only by missing its bar, else None.

    A known failure of a target (its file's known_failures) covers that
    and nothing else: the case reported "not ok", exactly one expectation
    failed, one line gives the median on the wrong side of the bar
    ("median 10.5 under the bar 32.0"), and the case ended by failing a
    step, not terminated by an assertion, a signal or a timeout."""
    if res.status != FAIL:
        return None
    lines = [d.strip() for d in res.diagnostics]
    expected = [ln for ln in lines if _EXPECTED.match(ln)]
    misses = [(ln, m) for ln in lines for m in [_MISS.search(ln)] if m]
    if len(expected) != 1 or len(misses) != 1:
        return None
    if not any(_FAILED_STEP.match(ln) for ln in lines) or \
            any("Test terminated" in ln for ln in lines):
        return None
    line, m = misses[0]
    figure, side, bar = float(m.group(1)), m.group(2), float(m.group(3))
    if (side == "under") != (figure < bar) or figure == bar:
        return None
    msg = re.search(r":\d+:\w+:(.*)$", line)     # "# FILE:LINE:TEST:msg"
    return msg.group(1).strip() if msg else line.lstrip("# ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def parse(lines: Iterable, level: int = 0) -> Report:
    """Parse KTAP. lines: strings, or (time, string) pairs."""
    items = [(x if isinstance(x, tuple) else (None, x)) for x in lines]
    return _parse(items, 0)


def _parse(items: list[tuple[Optional[float], str]], indent: int) -> Report:
    rep = Report()
    pending: list[str] = []
    started: Optional[float] = None
    nested: list[tuple[Optional[float], str]] = []
    for t, raw in items:
        line = raw.rstrip("\r\n")
        if line.strip() and _indent(line) > indent and (
                _RESULT.match(line.strip()) or _PLAN.match(line.strip())
                or _VERSION.match(line.strip())):
            nested.append((t, line))
            continue
        body = line[indent:] if _indent(line) >= indent else line.lstrip()
        m = _VERSION.match(body)
        if m:
            rep.version = f"{m.group(1)} {m.group(2)}"
            continue
        m = _PLAN.match(body)
        if m:
            if rep.plan is not None:
                rep.problems.append(f"second plan line: {body}")
            rep.plan = int(m.group(1))
            continue
        if body.startswith("Bail out!"):
            rep.bail_out = body[len("Bail out!"):].strip()
            continue
        m = _RESULT.match(body)
        if m:
            directive = (m.group(4) or "").strip()
            res = Result(number=int(m.group(2)), name=m.group(3).strip(),
                         status=_status(m.group(1), directive),
                         directive=directive, diagnostics=pending, t=t,
                         started=started)
            _expectation_failed(res)
            if nested:
                sub = _parse(nested, _indent(nested[0][1]))
                res.subtests = sub.results
                nested = []
            expected = len(rep.results) + 1
            if res.number != expected:
                rep.problems.append(f"test number {res.number}, expected "
                                    f"{expected}")
            rep.results.append(res)
            pending, started = [], None
            continue
        if nested:
            nested.append((t, line))
            continue
        if started is None and body.strip():
            started = t
        pending.append(body)
    if rep.plan is not None and len(rep.results) != rep.plan:
        rep.problems.append(f"plan 1..{rep.plan} but {len(rep.results)} "
                            "results")
    return rep


_METRIC = re.compile(r"^\s*#\s*METRIC\s+([A-Za-z0-9_.:-]+)\s+"
                     r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
                     r"(?:\s+(\S+))?\s*$")


def metrics(lines: Iterable[str]) -> dict[str, dict]:
    """Figures a program reports as "# METRIC <name> <number> [unit]".

    A name printed twice keeps its last value; lines that look like a
    metric but are not well formed are ignored (they stay diagnostics).
    """
    out: dict[str, dict] = {}
    for line in lines:
        m = _METRIC.match(line)
        if m:
            text = m.group(2)
            # an integer keeps every digit (a 64-bit seed is no double)
            value: float = int(text) if re.fullmatch(r"[-+]?\d+", text) \
                else float(text)
            out[m.group(1)] = {"value": value, "unit": m.group(3) or ""}
    return out


# A console log (a guest's console.log) holds every command the harness
# ran: each program's output follows the shell prompt (guest.PROMPT) and
# ends with the marker line the harness has the shell echo, ten capital
# letters and the exit status (guest.Guest.run()).
_PROMPTS = re.compile(r"^(?:nopfn-guest# )+")
_END = re.compile(r"^[A-Z]{10} (-?\d+)$")


@dataclasses.dataclass
class Stream:
    """One KTAP document of a log: where it starts (1-based line of its
    version line), its lines, the program's exit status when the log
    has it, and the parsed report."""
    line: int
    lines: list[str]
    rc: Optional[int] = None
    report: Optional[Report] = None


def split(text: str) -> list[Stream]:
    """The KTAP documents of a log: a program's .ktap is one; a console
    log has one per program that printed KTAP, from its "TAP version"
    or "KTAP version" line (behind a prompt or not) to the harness's end
    marker, or to the next version line."""
    out: list[Stream] = []
    cur: Optional[Stream] = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = _PROMPTS.sub("", raw.rstrip("\r"))
        if _VERSION.match(line):
            cur = Stream(n, [line])
            out.append(cur)
            continue
        if cur is None:
            continue
        m = _END.match(line.strip())
        if m:
            cur.rc = int(m.group(1))
            cur = None
            continue
        cur.lines.append(line)
    for st in out:
        st.report = parse(st.lines)
    return out
