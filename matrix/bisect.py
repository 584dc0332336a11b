"""python3 -m matrix bisect: the first patch of the series at which a test
goes from passing to failing on one target.

  python3 -m matrix bisect --arch A --test T [--series DIR] [--good N]
                           [--bad N] [--driver DIR] [--user-tests DIR]
                           [--results DIR] [--no-install] [-- pytest args]

T is a pytest item of the matrix, by its name
(test_case[x86_64-nopfn-tests-api.revoke_racing_fault]), judged by that
item's result, or any -k expression (nopfn_faults), judged by every item
it selects: a step is bad when one of them failed (a flaky or a known
failure, xfailed, counts as failed: the test did fail), good when the
others passed and none failed, and cannot be judged when nothing ran
or everything was skipped.

A step is the prefix of the series (quilt order: its series file) of n
patches: a folder with those patches and a series file listing them,
run with `python3 -m matrix run --arch A --series FOLDER -- -k T` in a
process of its own, its results in a folder of its own (results/bisect-
<date>-<pid>/step-NNN). Its kernel is built from the cached build of a
shorter prefix when there is one (kernel.TreeBuild.seed()), recompiling
only what the other patches change, so that a step costs a kernel
relink, the modules and a boot rather than a kernel build.

The endpoints are checked first: the bad one, the whole series (or
--bad N patches), must fail T; the good one, no patch at all (or --good
N, a prefix known to pass: driver/'s modules need all of the ->nopfn()
interface, patches 9 to 12 of today's series, and the kernels'
configuration its test module, CONFIG_TEST_NOPFN of patch 14, so a
kernel builds and its tests pass from 14 patches on) must pass it;
anything else is refused, saying which.
Then the range between them is halved until the first bad patch is
found: about log2(bad - good) more steps.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from typing import Callable, Optional

from .build.log import BuildError
from .build.tree import Patch, parse_series
from .spec import arch as archspec
from .spec import tree as treespec

REPO = pathlib.Path(__file__).resolve().parent.parent
GOOD, BAD, ERROR = "good", "bad", "cannot tell"
# a result that is the test failing
FAILED = ("failed", "flaky", "xfailed")
_ITEM = re.compile(r"^\w+\[[^\[\]]+\]$")


class BisectError(Exception):
    """Why the bisection cannot go on (or start): a sentence for the user."""


@dataclasses.dataclass
class Step:
    n: int                  # patches of the series applied
    verdict: str            # GOOD, BAD, or ERROR
    message: str = ""       # the failure, or why it cannot be judged
    log: Optional[pathlib.Path] = None      # the failing item's log
    results: Optional[pathlib.Path] = None  # the step's results folder


def is_item(test: str) -> bool:
    """Whether T names one pytest item (else it is a -k expression)."""
    return bool(_ITEM.match(test))


def k_expression(test: str) -> str:
    """-k's expression for T: an item's name split at its target's "@",
    which pytest's -k does not take (each half is a substring of the
    name; the run's --arch has chosen the target); an expression as it
    is."""
    if not is_item(test):
        return test
    return " and ".join(test.split("@"))


def judge(record: dict, test: str) -> tuple[str, str, Optional[str]]:
    """(verdict, message, log relative to the results folder) of a step,
    from its target's record (<target>.json)."""
    tests = record.get("tests") or {}
    if is_item(test):
        if test not in tests:
            return (ERROR, f"{test} did not run (not an item of this run? "
                    "names are pytest's, as `-- --collect-only -q` lists "
                    "them)", None)
        items = {test: tests[test]}
    else:
        items = tests
    for name, r in items.items():
        if r["status"] in FAILED:
            msg = (r.get("message") or "").strip()
            return (BAD, f"{name} {r['status']}" + (f": {msg}" if msg
                                                     else ""), r.get("log"))
    if not any(r["status"] == "passed" for r in items.values()):
        what = "nothing ran" if not items else "every item was skipped"
        return ERROR, f"-k {test}: {what}", None
    return GOOD, "", None


def search(good: int, bad: int, step: Callable[[int], Step]
           ) -> tuple[int, list[Step]]:
    """The first bad number of patches in (good, bad], step(n) judging
    each prefix; the endpoints first. BisectError when an endpoint is
    not what it should be or a step cannot be judged."""
    if not 0 <= good < bad:
        raise BisectError(f"the good prefix ({good} patches) must be "
                          f"shorter than the bad one ({bad})")
    done: list[Step] = []

    def run(n: int) -> Step:
        s = step(n)
        done.append(s)
        if s.verdict == ERROR:
            raise BisectError(f"cannot judge the prefix of {n} patches: "
                              f"{s.message}")
        return s

    if run(bad).verdict != BAD:
        raise BisectError(f"the test passes with {bad} patches (the bad "
                          "end): nothing to bisect")
    first = run(good)
    if first.verdict != GOOD:
        raise BisectError(
            f"the test fails already with {good} patches (the good end: "
            f"{first.message.splitlines()[0] if first.message else ''}); "
            "give --good N, a prefix at which it passes (the kernels "
            "build only with the series' test module, patch 14 of "
            "kernel/patches/6.1/, and driver/'s modules only with all of "
            "the ->nopfn() interface, patches 9 to 12)")
    lo, hi = good, bad
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(mid).verdict == GOOD:
            lo = mid
        else:
            hi = mid
    return hi, done


def prefix_folder(patches: list[Patch], n: int,
                  dest: pathlib.Path) -> pathlib.Path:
    """A series folder with the first n patches: copies of them and a
    series file listing them (the tree's cache key is their names and
    contents, wherever the folder is)."""
    dest.mkdir(parents=True, exist_ok=True)
    lines = []
    for p, strip in patches[:n]:
        shutil.copy2(p, dest / p.name)
        lines.append(p.name + (f" -p{strip}" if strip != 1 else ""))
    (dest / "series").write_text("".join(f"{ln}\n" for ln in lines))
    return dest


def subject(patch: pathlib.Path) -> str:
    """A patch's subject: its Subject: line without [PATCH ...], or its
    first line."""
    text = patch.read_text(errors="replace")
    m = re.search(r"^Subject:\s*(?:\[[^\]]*\]\s*)?(.+)$", text, re.M)
    if m:
        return m.group(1).strip()
    return next((ln for ln in text.splitlines() if ln.strip()), "")


class Runner:
    """Runs one step as `python3 -m matrix run` on a prefix of the
    series, in a folder of the bisection's."""

    def __init__(self, arch: str, test: str, patches: list[Patch],
                 root: pathlib.Path, run_args: list[str],
                 pytest_args: list[str], say: Callable[[str], None],
                 tree: str = ""):
        self.arch, self.test, self.patches = arch, test, patches
        self.tree = tree or arch.split("@")[-1]
        self.root, self.run_args = root, run_args
        self.pytest_args, self.say = pytest_args, say

    def __call__(self, n: int) -> Step:
        series = prefix_folder(self.patches, n,
                               self.root / f"series-{n:03d}")
        res = self.root / f"step-{n:03d}"
        last = self.patches[n - 1][0].name if n else "no patch"
        self.say(f"  {n:3} patches (up to {last}): running")
        r = subprocess.run(
            [sys.executable, "-m", "matrix", "run", "--arch", self.arch,
             "--tree", self.tree,
             "--series", str(series), "--results", str(res),
             *self.run_args, "--", "-k", k_expression(self.test),
             *self.pytest_args],
            cwd=REPO, capture_output=True, text=True)
        (self.root / f"step-{n:03d}.log").write_text(r.stdout + r.stderr)
        try:
            record = json.loads((res / f"{self.arch}.json").read_text())
        except (OSError, ValueError):
            tail = "\n".join((r.stdout + r.stderr).splitlines()[-15:])
            return Step(n, ERROR, "the run left no results (exit status "
                        f"{r.returncode}):\n{tail}", results=res)
        verdict, message, log = judge(record, self.test)
        step = Step(n, verdict, message, res / log if log else None, res)
        first = message.splitlines()[0] if message else ""
        self.say(f"  {n:3} patches: {verdict}" +
                 (f" ({first[:100]})" if first else ""))
        return step


def report(first_bad: int, steps: list[Step], patches: list[Patch],
           test: str) -> list[str]:
    """What the bisection found, for the terminal."""
    by_n = {s.n: s for s in steps}
    bad = by_n[first_bad]
    patch = patches[first_bad - 1][0]
    good = max(s.n for s in steps if s.verdict == GOOD)
    msg = bad.message.splitlines()
    out = ["", f"first bad patch: {first_bad} of {len(patches)}, "
           f"{patch.name}", f"  {subject(patch)}",
           f"  {test} fails there; with {good} patches it passes",
           "  failure:"]
    out += [f"    {ln}" for ln in msg[:12]]
    if len(msg) > 12:
        out.append(f"    ... ({len(msg) - 12} more lines)")
    out.append(f"  log: {bad.log or '(none recorded)'}")
    out.append(f"  results: {bad.results}")
    out.append(f"  steps: {len(steps)} ({', '.join(str(s.n) for s in steps)}"
               " patches)")
    return out


def main(argv: list[str], pytest_args: list[str],
         caller_path: Callable[[str], pathlib.Path] = pathlib.Path) -> int:
    """The command; caller_path makes a path argument absolute as the
    caller meant it (./matrix/run's cwd: __main__.caller_path)."""
    ap = argparse.ArgumentParser(
        prog="matrix bisect", description="the first patch of the series "
        "(quilt order) at which a test goes from passing to failing on "
        "one target", epilog="Arguments after -- go to each step's "
        "pytest (e.g. -- --reruns 0). Exit status: 0 found, 1 refused "
        "(an endpoint is not what it should be, or a step could not be "
        "judged), 2 a bad argument.")
    ap.add_argument("--arch", required=True, help="the target, by name "
                    "or alias")
    ap.add_argument("--test", required=True, metavar="T", help="a pytest "
                    "item's name, test_case[x86_64-nopfn-tests-api."
                    "revoke_racing_fault], or a -k expression")
    ap.add_argument("--tree", default=None, help="the kernel tree, a "
                    "name of matrix/trees/ or a path, as run's (default "
                    "6.1)")
    ap.add_argument("--series", help="the series to bisect (default the "
                    "tree's, kernel/patches/VERSION/)")
    ap.add_argument("--good", type=int, default=0, metavar="N",
                    help="a prefix of N patches at which T passes "
                    "(default 0: the kernel without the series)")
    ap.add_argument("--bad", type=int, metavar="N", help="a prefix of N "
                    "patches at which T fails (default: the whole series)")
    ap.add_argument("--driver", help="the modules' folder, as run's")
    ap.add_argument("--user-tests", help="your programs, as run's")
    ap.add_argument("--results", help="the bisection's folder (default "
                    "results/bisect-<date>-<pid>)")
    ap.add_argument("--no-install", action="store_true", help="report "
                    "missing packages instead of installing them")
    args = ap.parse_args(argv)
    try:
        trees = treespec.select(str(caller_path(args.tree)) if args.tree
                                and args.tree not in treespec.load_all()
                                else args.tree)
        if len(trees) != 1:
            raise BisectError(f"--tree {args.tree}: give one tree")
        targets = archspec.select(args.arch, trees=trees)
        if len(targets) != 1:
            raise BisectError(f"--arch {args.arch}: give one target, not "
                              f"{len(targets)}")
        arch = targets[0].name
        series_dir = caller_path(args.series) if args.series else \
            trees[0].series_dir
        patches = parse_series(series_dir)
        bad = len(patches) if args.bad is None else args.bad
        if not 0 <= args.good < bad <= len(patches):
            raise BisectError(f"--good {args.good} --bad {bad}: give 0 <= "
                              f"good < bad <= {len(patches)} (the patches "
                              f"of {series_dir}/series)")
        if is_item(args.test) and f"[{arch}-" not in args.test and \
                f"[{arch}]" not in args.test:
            raise BisectError(f"--test {args.test} is not an item of "
                              f"{arch}")
    except (archspec.ArchError, treespec.TreeError, BisectError,
            BuildError, OSError) as exc:
        print(f"matrix bisect: {exc}", file=sys.stderr)
        return 2
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    root = caller_path(args.results) if args.results else \
        REPO / "results" / f"bisect-{stamp}-{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    run_args = ["--no-install"] if args.no_install else []
    for opt in ("driver", "user_tests"):
        if getattr(args, opt):
            run_args += [f"--{opt.replace('_', '-')}",
                         str(caller_path(getattr(args, opt)))]

    def say(line: str) -> None:
        print(line, flush=True)
    say(f"bisecting {arch}, {args.test}: {bad - args.good} patches "
        f"({args.good + 1} to {bad}) of {series_dir}; steps in {root}")
    runner = Runner(arch, args.test, patches, root, run_args, pytest_args,
                    say, str(trees[0].source) if trees[0].user
                    else trees[0].name)
    try:
        first_bad, steps = search(args.good, bad, runner)
    except BisectError as exc:
        print(f"matrix bisect: {exc}", file=sys.stderr)
        return 1
    for line in report(first_bad, steps, patches, args.test):
        print(line)
    return 0
