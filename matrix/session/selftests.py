"""The kernel's own mm selftests in the guests (matrix/build/selftests.py
builds them): tests/test_matrix.py runs each as one pytest item per
target, after our own programs: exit status 0 passes, 4 (KSFT_SKIP)
skips with the test's reason, anything else fails with the failing KTAP
sub-results and the output.
"""
from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Optional

from ..build.selftests import Selftest
from . import ktap
from .guest import GuestError

if TYPE_CHECKING:
    from .matrix import Matrix

KSFT_SKIP = 4


@dataclasses.dataclass
class Outcome:
    status: str                 # "passed", "failed" or "skipped"
    message: str
    counts: dict[str, int]      # KTAP sub-results by status
    seconds: float = 0.0        # in the guest


_SKIP_PLAN = re.compile(r"^1\.\.0\s*#\s*SKIP\s*(.*)$", re.I)


def judge(rc: Optional[int], lines: list[str]) -> Outcome:
    """Exit 0 passes and 4 (KSFT_SKIP) skips, unless a KTAP sub-result
    failed or a KTAP plan was left incomplete; anything else fails."""
    rep = ktap.parse(lines)
    counts: dict[str, int] = {}
    for r in rep.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    failing = [r for r in rep.results if r.status in (ktap.FAIL, ktap.ERROR)]
    text = "\n".join(lines)
    detail = "".join(
        f"\n  not ok {r.number} {r.name}"
        + (f" ({r.note})" if r.note else "") +
        "".join(f"\n      {d}" for d in r.diagnostics[-5:] if d.strip())
        for r in failing)
    if failing:
        return Outcome("failed", f"exit status {rc}; failing KTAP "
                       f"sub-results:{detail}\n\noutput:\n{text}", counts)
    if rc == 0:
        if rep.plan is not None and rep.plan > 0 and not rep.complete:
            return Outcome("failed", f"exit status 0 but incomplete KTAP "
                           f"({'; '.join(rep.problems) or 'bail out'})"
                           f":\n{text}", counts)
        return Outcome("passed", "", counts)
    if rc == KSFT_SKIP:
        return Outcome("skipped", skip_reason(lines, rep), counts)
    return Outcome("failed", f"exit status {rc}:\n{text}", counts)


def skip_reason(lines: list[str], rep: Optional[ktap.Report] = None) -> str:
    """What a test that exited KSFT_SKIP said about why."""
    for line in lines:
        m = _SKIP_PLAN.match(line.strip())
        if m and m.group(1).strip():
            return m.group(1).strip()
    rep = rep or ktap.parse(lines)
    for r in rep.results:
        if r.status == ktap.SKIP and r.directive[4:].strip():
            return r.directive[4:].strip()
    said = [ln.strip() for ln in lines if ln.strip()]
    if said:
        return " / ".join(said[-3:])
    return "exit status 4 (KSFT_SKIP) without a message"


# ------------------------------------------------------------------ guest

def run_in_guest(matrix: "Matrix", arch: str, test: Selftest) -> Outcome:
    """Run one selftest in arch's guest; keep its output in the results
    (<boot>/selftests-vm-NAME.ktap) and its outcome in the matrix's
    per-target summary. A guest that dies or hangs raises GuestError
    (the outcome is recorded as failed first)."""
    st = matrix.state[arch]
    limit = (test.timeout or matrix.options.test_timeout) * st.arch.scale
    try:
        g = matrix.guest(arch)
        out = g.run(test.command(), timeout=limit, line_timeout=limit)
    except GuestError as exc:
        record(matrix, arch, test.name, "failed", str(exc).splitlines()[0])
        raise
    (g.workdir / f"selftests-vm-{test.name}.ktap").write_text(
        out.text + "\n")
    res = judge(out.rc, [ln.text for ln in out.lines])
    first = res.message.splitlines()[0] if res.message else ""
    record(matrix, arch, test.name, res.status, first, rc=out.rc,
           seconds=round(out.seconds, 3), subtests=res.counts)
    res.seconds = out.seconds
    return res


def record(matrix: "Matrix", arch: str, name: str, status: str,
           reason: str = "",
           **more) -> None:
    """Keep a selftest's outcome for the target's results JSON."""
    per = matrix.selftest_results
    rec = {"status": status}
    if reason:
        rec["reason"] = reason
    rec.update(more)
    per.setdefault(arch, {})[name] = rec


def summary(records: dict[str, dict]) -> dict:
    """Per target: how many selftests passed, failed and were skipped,
    and each one's record."""
    counts = {s: sum(1 for r in records.values() if r["status"] == s)
              for s in ("passed", "failed", "skipped")}
    return {"counts": counts, "tests": records}
