"""python3 -m matrix parse LOG...: the results of a saved log, as a run
shows them.

A LOG is a program's output (<program>.ktap of a results folder) or a
guest's whole console log (<target>/bootN/console.log), which holds
every program that ran in that boot (matrix/session/ktap.py split()s
it). Each KTAP document is named after the program whose cases it
reports (tests/guest/'s, or --user-tests DIR's), else after the file;
then each case's status, the diagnostic lines of a case that failed,
and the counts. Exit status: 0 when every case passed or skipped, 1
when a case failed or a program did not run to its end (incomplete
KTAP, or a non-zero exit status in a console log), 2 when a log cannot
be read or holds no KTAP.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Optional

from .build.programs import TestProgram, all_programs
from .build.tree import parse_series
from .session import ktap
from .session.matrix import name_results

# how a case's status reads (pytest's words)
WORDS = {ktap.PASS: "PASSED", ktap.FAIL: "FAILED", ktap.SKIP: "SKIPPED",
         ktap.XFAIL: "XFAIL", ktap.ERROR: "ERROR"}
BAD = (ktap.FAIL, ktap.ERROR)
DIAG_LINES = 20         # of a failed case, the last ones


def identify(report: ktap.Report, programs: list[TestProgram]
             ) -> Optional[TestProgram]:
    """The program whose cases a report's results are: every named
    result one of its cases, the most of them."""
    names = {r.name for r in report.results if r.name}
    best, score = None, 0
    for p in programs:
        if names and names <= set(p.cases) and len(names) > score:
            best, score = p, len(names)
    return best


def counts(results: list[ktap.Result]) -> dict[str, int]:
    out = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0}
    for r in results:
        out[{ktap.PASS: "passed", ktap.SKIP: "skipped",
             ktap.XFAIL: "xfailed"}.get(r.status, "failed")] += 1
    return out


def count_line(c: dict[str, int]) -> str:
    return (f"{c['passed']} passed, {c['failed']} failed, "
            f"{c['skipped']} skipped"
            + (f", {c['xfailed']} xfailed" if c["xfailed"] else ""))


def describe_stream(st: ktap.Stream, where: str,
                    programs: list[TestProgram]) -> tuple[list[str], bool]:
    """The lines that show one KTAP document, and whether it is bad (a
    failed case, incomplete, a non-zero exit status)."""
    rep = st.report
    assert rep is not None
    prog = identify(rep, programs)
    if prog is not None:
        name_results(rep, prog.cases)
    title = prog.name if prog else where
    info = [f"{where}:{st.line}" if prog else f"line {st.line}"]
    if st.rc is not None:
        info.append(f"exit {st.rc}")
    lines = [f"{title} ({', '.join(info)})"]
    for r in rep.results:
        word = WORDS.get(r.status, r.status.upper())
        why = f": {r.note or r.directive}" if (r.note or r.directive) \
            and r.status != ktap.PASS else ""
        lines.append(f"  {word:8} {r.name or f'#{r.number}'}{why}")
        if r.status in BAD:
            diag = [d for d in r.diagnostics if d.strip()][-DIAG_LINES:]
            lines += [f"             {d}" for d in diag]
        for sub in r.subtests:
            lines.append(f"    {WORDS.get(sub.status, sub.status):8} "
                         f"{sub.name or f'#{sub.number}'}")
    c = counts(rep.results)
    problems = list(rep.problems)
    if rep.bail_out is not None:
        problems.append(f"bail out: {rep.bail_out}")
    if rep.plan is None:
        problems.append("no plan line")
    if prog is not None and rep.complete:
        missing = [x for x in prog.cases
                   if x not in {r.name for r in rep.results}]
        if missing:
            problems.append(f"cases the source has and the log lacks: "
                            f"{', '.join(missing)}")
    bad = bool(c["failed"] or problems or (st.rc not in (None, 0)))
    tail = f"  {len(rep.results)} cases: {count_line(c)}"
    if problems:
        tail += f"; incomplete ({'; '.join(problems)})"
    lines.append(tail)
    return lines, bad


def show(path: pathlib.Path, programs: list[TestProgram]
         ) -> tuple[list[str], int, dict[str, int], int]:
    """(lines, documents, counts, bad documents) of one log; ValueError
    for a log without KTAP."""
    streams = ktap.split(path.read_text(errors="replace"))
    if not streams:
        raise ValueError(f"{path}: no KTAP in it (no 'TAP version' or "
                         "'KTAP version' line)")
    where = path.name
    lines: list[str] = []
    total = counts([])
    bad = 0
    for st in streams:
        out, is_bad = describe_stream(st, where, programs)
        lines += out
        bad += is_bad
        for k, v in counts(st.report.results).items():
            total[k] += v
    return lines, len(streams), total, bad


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(
        prog="matrix parse", description="the results of a saved console "
        "log or .ktap, as a run shows them; exit 1 when a case failed or "
        "a program did not run to its end")
    ap.add_argument("logs", nargs="+", metavar="LOG",
                    help="a results folder's <program>.ktap or "
                    "<target>/bootN/console.log")
    ap.add_argument("--user-tests", metavar="DIR", help="your programs' "
                    "folder, to name their documents by their cases")
    args = ap.parse_args(argv)
    try:
        user = pathlib.Path(args.user_tests) if args.user_tests else None
        programs = all_programs(user, parse_series())
    except Exception as exc:      # noqa: BLE001 - a bad --user-tests
        print(f"matrix parse: {exc}", file=sys.stderr)
        return 2
    rc = 0
    docs, bad = 0, 0
    total = counts([])
    for log in args.logs:
        path = pathlib.Path(log)
        try:
            lines, n, c, b = show(path, programs)
        except (OSError, ValueError) as exc:
            print(f"matrix parse: {exc}", file=sys.stderr)
            rc = 2
            continue
        print("\n".join(lines))
        docs, bad = docs + n, bad + b
        for k, v in c.items():
            total[k] += v
    if docs > 1:
        print(f"total: {docs} programs, {count_line(total)}"
              + (f"; {bad} bad" if bad else ""))
    if rc:
        return rc
    return 1 if bad else 0
