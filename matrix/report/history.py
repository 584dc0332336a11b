"""The history of matrix runs: one SQLite file beside the run folders.

Every run adds a row to `runs` (keyed by its results folder's name, with
the git commit, the hash of the kernel series and when it started), one
row per target (architecture or architecture-variant on a kernel tree,
such as `x86_64-debug@6.12`, with its `tree` in a column of its own;
rows of histories from before the tree axis are migrated to 6.1, the
one tree they ran, when the history is opened) with its kernel config
hash, build and boot times and
what the run did with it (matrix/session/plan.py: `role` "run" or "check", and
`why` it is not booted, NULL for a booted one), one row per test result
and one per metric its programs printed. The targets a run left out (not
selected, no compiler, candidates) have a row too, with status "not run",
role "left" and the reason, and no results: a run names every target it
did not boot. Log paths are stored relative to the run's results folder.
A metric that is an integer keeps its exact digits beside the REAL
(`exact`): a 64-bit seed does not fit a double. A seed that reached the
records through a float (`*.seed` metrics, parsed by matrix/session/ktap.py) is
restored from the seed the harness gave the program (the record's
`programs`), when the two agree as doubles.

A test's key leaves the target out of the pytest item name, so the same
test lines up across targets and runs: `test_case[x86_64-prog-case]` on
target x86_64 is `test_case[prog-case]`, `test_boot[arm64]` is
`test_boot`.

Classification of a run against history, per target and test:
  regression  failed now; passed (or was flaky) in the reference
  flaky       failed, then passed when rerun once
  failed      failed now and in the reference, or nothing to compare with
  fixed       passes now; failed in the reference
  xpassed     a case its target is known to miss (known_failures) passed
  xfailed     the target's documented miss of that case
  passed, skipped
The reference is the named baseline run when there is one, otherwise the
most recent earlier run in which that test on that target passed, failed
or was flaky (a run narrowed with -k, or a skip, does not hide it).
"""
from __future__ import annotations

import dataclasses
import datetime
import pathlib
import re
import sqlite3
from typing import Iterable, Optional

from . import schema
from .schema import FIRST_TREE, LEFT


PASSING = ("passed", "flaky", "xpassed")
DECISIVE = ("passed", "failed", "flaky", "xpassed")
# Display order: what needs a look first.
ORDER = {"regression": 0, "flaky": 1, "failed": 2, "xpassed": 3, "fixed": 4,
         "passed": 5, "xfailed": 6, "skipped": 7}


class HistoryError(Exception):
    pass


def test_key(item: str, target: str) -> str:
    """The pytest item name without its target."""
    m = re.fullmatch(r"([^\[]+)\[(.*)\]", item)
    if not m:
        return item
    func, params = m.groups()
    if params == target:
        return func
    if params.startswith(target + "-"):
        return f"{func}[{params[len(target) + 1:]}]"
    return item


def split_target(target: str) -> tuple[str, str]:
    """(architecture, variant) of a target's name: x86_64-debug@6.12 is
    (x86_64, debug); an architecture's name has no "-"."""
    arch, _, variant = target.split("@", 1)[0].partition("-")
    return arch, variant


def tree_of(target: str) -> str:
    """The tree of a target's name (LABEL@TREE)."""
    return target.split("@", 1)[1] if "@" in target else FIRST_TREE


def is_seed(name: str) -> bool:
    """A metric that names a seed (`fuzz.seed`): a value to copy, not a
    figure to plot."""
    return name.rsplit(".", 1)[-1] == "seed"


def exact_integer(value) -> Optional[str]:
    """The digits of an integer that are certainly its own: not those of
    a double it was rounded to on the way (above 2**53 a double that is
    an integer may be one; an int no double equals cannot be)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        v = value.strip()
        return str(int(v)) if re.fullmatch(r"[-+]?\d+", v) else None
    if not isinstance(value, int):
        return None
    try:
        through_float = float(value) == value
    except OverflowError:
        through_float = False
    if abs(value) <= 2 ** 53 or not through_float:
        return str(value)
    return None


def series_hash(series_dirs: Optional[list[pathlib.Path]] = None) -> str:
    """Hash of the run's series (default kernel/patches/6.1): each series
    file and every patch's content (of several series, their hashes)."""
    from ..build import cache as cachemod
    from ..build.tree import SERIES_DIR, parse_series
    out = []
    for d in series_dirs or [SERIES_DIR]:
        try:
            files = [d / "series"] + [p for p, _ in parse_series(d)]
            out.append(cachemod.hash_files([f for f in files
                                            if f.is_file()], d))
        except Exception:       # a broken series: the run says so itself
            out.append("unknown")
    return out[0] if len(out) == 1 else cachemod.digest(out)


@dataclasses.dataclass
class Run:
    id: int
    key: str
    started: str
    git_commit: str
    series_hash: str
    results_path: str
    wall_seconds: Optional[float]
    baseline: Optional[str]

    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path(self.results_path)


@dataclasses.dataclass
class Verdict:
    target: str
    test: str              # key without the target
    item: str              # the pytest item name
    status: str            # as recorded: passed, failed, skipped, flaky
    category: str          # see the module docstring
    log: Optional[str]
    rerun_log: Optional[str]
    ref_status: Optional[str] = None
    ref_run: Optional[str] = None     # key of the reference run


@dataclasses.dataclass
class Classification:
    run: Run
    baseline: Optional[Run]
    verdicts: dict[str, list[Verdict]]      # target -> in display order

    def of(self, category: str) -> list[Verdict]:
        return [v for vs in self.verdicts.values() for v in vs
                if v.category == category]

    @property
    def regressions(self) -> list[Verdict]:
        return self.of("regression")

    @property
    def flaky(self) -> list[Verdict]:
        return self.of("flaky")


def categorise(status: str, ref: Optional[str]) -> str:
    if status == "failed":
        return "regression" if ref in PASSING else "failed"
    if status == "flaky":
        return "flaky"
    if status == "passed" and ref == "failed":
        return "fixed"
    return status if status in ORDER else "skipped"


class History:
    def __init__(self, path: pathlib.Path):
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=60)
        self.db.row_factory = sqlite3.Row
        with self.db:
            schema.create_or_migrate(self.db)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "History":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------- writing
    def record(self, key: str, results_path: pathlib.Path,
               records: dict[str, dict], *, commit: str = "",
               series: str = "", started: Optional[str] = None,
               wall: Optional[float] = None,
               baseline: Optional[str] = None,
               left: Optional[dict[str, str]] = None) -> Run:
        """Add (or replace, for a reused results folder) a run.

        records: target -> its record (matrix/report/results.py's
        arch_record()); left: target -> why the run left it out, for the
        targets that have no record (a record wins)."""
        started = started or datetime.datetime.now().isoformat(
            timespec="seconds")
        with self.db:
            old = self.db.execute("SELECT id FROM runs WHERE key = ?",
                                  (key,)).fetchone()
            if old is not None:
                for table in ("targets", "results", "metrics"):
                    self.db.execute(f"DELETE FROM {table} WHERE run_id = ?",
                                    (old["id"],))
                self.db.execute("DELETE FROM runs WHERE id = ?", (old["id"],))
            cur = self.db.execute(
                "INSERT INTO runs (key, started, git_commit, series_hash, "
                "results_path, wall_seconds, baseline) VALUES (?,?,?,?,?,?,?)",
                (key, started, commit, series, str(results_path), wall,
                 baseline))
            run_id = cur.lastrowid
            for target, rec in records.items():
                self._record_target(run_id, target, rec)
            for target, why in (left or {}).items():
                if target not in records:
                    self._record_left(run_id, target, why)
        return self.run(run_id)

    def _insert_target(self, row: dict) -> None:
        # named columns: a history gains columns (ADDED) at the end
        cols = ", ".join(row)
        marks = ",".join("?" * len(row))
        self.db.execute(f"INSERT INTO targets ({cols}) VALUES ({marks})",
                        tuple(row.values()))

    def _record_left(self, run_id: int, target: str, why: str) -> None:
        """A target the run left out: its row says why, with no results."""
        arch, variant = split_target(target)
        self._insert_target({"run_id": run_id, "target": target,
                             "arch": arch, "variant": variant,
                             "status": "not run", "role": LEFT,
                             "why": why,
                             # a candidate is on no tree ("", not
                             # NULL: that is a row from before trees)
                             "tree": target.split("@", 1)[1]
                             if "@" in target else ""})

    def _record_target(self, run_id: int, target: str, rec: dict) -> None:
        k = rec.get("kernel") or {}
        boots = rec.get("boot_seconds") or []
        arch = rec.get("base") or split_target(rec.get("arch") or target)[0]
        variant = rec.get("variant")
        if variant is None:         # records from before variants
            variant = split_target(target)[1]
        self._insert_target({
            "run_id": run_id, "target": target, "arch": arch,
            "variant": variant, "status": rec.get("status"),
            "config_sha": k.get("config_sha"), "kernel_key": k.get("key"),
            "kernel_release": k.get("release"),
            "kernel_cached": int(bool(k.get("cached"))),
            "build_seconds": k.get("build_seconds"),
            "boot_seconds": boots[0] if boots else None,
            "guest_seconds": rec.get("guest_seconds"),
            # records from before roles have neither
            "role": rec.get("role"), "why": rec.get("why"),
            "tree": rec.get("tree") or tree_of(target)})
        rows = []
        for item, t in (rec.get("tests") or {}).items():
            rows.append((run_id, target, test_key(item, target), item,
                         t.get("status", "failed"), t.get("duration"),
                         t.get("log"), t.get("rerun_log")))
        self.db.executemany("INSERT OR REPLACE INTO results VALUES "
                            "(?,?,?,?,?,?,?,?)", rows)
        mrows = []
        programs = rec.get("programs") or {}
        for prog, names in (rec.get("metrics") or {}).items():
            seed = (programs.get(prog) or {}).get("seed")
            for name, m in (names or {}).items():
                value = m.get("value") if isinstance(m, dict) else m
                unit = m.get("unit") if isinstance(m, dict) else None
                exact = exact_integer(value)
                if is_seed(name) and isinstance(seed, int) and \
                        not isinstance(seed, bool):
                    try:
                        if float(seed) == float(value):
                            exact = str(int(seed))
                    except (TypeError, ValueError, OverflowError):
                        pass
                try:
                    value = float(value)
                except (TypeError, ValueError, OverflowError):
                    continue
                mrows.append((run_id, target, prog, name, value, unit, exact))
        self.db.executemany(
            "INSERT OR REPLACE INTO metrics (run_id, target, program, name, "
            "value, unit, exact) VALUES (?,?,?,?,?,?,?)", mrows)

    # ----------------------------------------------------------- reading
    @staticmethod
    def _run(row) -> Run:
        return Run(row["id"], row["key"], row["started"], row["git_commit"],
                   row["series_hash"], row["results_path"],
                   row["wall_seconds"], row["baseline"])

    def run(self, run_id: int) -> Run:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?",
                              (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no run {run_id} in {self.path}")
        return self._run(row)

    def find(self, ref: str) -> Optional[Run]:
        """A run by id, by key (its results folder's name) or folder path."""
        ref = str(ref).rstrip("/")
        row = self.db.execute("SELECT * FROM runs WHERE key = ?",
                              (pathlib.PurePath(ref).name,)).fetchone()
        if row is None and ref.isdigit():
            row = self.db.execute("SELECT * FROM runs WHERE id = ?",
                                  (int(ref),)).fetchone()
        return self._run(row) if row is not None else None

    def runs(self, target: Optional[str] = None, upto: Optional[int] = None,
             limit: int = 1000) -> list[Run]:
        """Runs (that built or checked that target: not those that left
        it out), newest first, up to run id `upto`."""
        sql = "SELECT runs.* FROM runs"
        args: list = []
        where = []
        if target is not None:
            sql += " JOIN targets ON targets.run_id = runs.id"
            where.append("targets.target = ? AND targets.role IS NOT ?")
            args += [target, LEFT]
        if upto is not None:
            where.append("runs.id <= ?")
            args.append(upto)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY runs.id DESC LIMIT ?"
        args.append(limit)
        return [self._run(r) for r in self.db.execute(sql, args)]

    def targets(self, run_id: int) -> dict[str, sqlite3.Row]:
        """Every target of the run, those it left out (role "left")
        included, in the order recorded."""
        return {r["target"]: r for r in self.db.execute(
            "SELECT * FROM targets WHERE run_id = ? ORDER BY rowid",
            (run_id,))}

    def results(self, run_id: int, target: str) -> list[sqlite3.Row]:
        return list(self.db.execute(
            "SELECT * FROM results WHERE run_id = ? AND target = ? "
            "ORDER BY rowid", (run_id, target)))

    def results_of(self, run_ids: Iterable[int], target: str
                   ) -> dict[tuple[int, str], sqlite3.Row]:
        ids = list(run_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {(r["run_id"], r["test"]): r for r in self.db.execute(
            f"SELECT * FROM results WHERE target = ? AND run_id IN ({marks})",
            [target, *ids])}

    def target_rows(self, run_ids: Iterable[int], target: str
                    ) -> dict[int, sqlite3.Row]:
        ids = list(run_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {r["run_id"]: r for r in self.db.execute(
            f"SELECT * FROM targets WHERE target = ? AND run_id IN ({marks})",
            [target, *ids])}

    def metrics_of(self, run_ids: Iterable[int], target: str
                   ) -> list[sqlite3.Row]:
        ids = list(run_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return list(self.db.execute(
            f"SELECT * FROM metrics WHERE target = ? AND run_id IN ({marks}) "
            "ORDER BY program, name, run_id", [target, *ids]))

    def reference(self, run_id: int, target: str,
                  baseline: Optional[Run] = None
                  ) -> dict[str, tuple[str, str]]:
        """test -> (status, run key) that run `run_id` is compared with
        (without a baseline: for the tests that pass or fail now)."""
        if baseline is not None:
            rows = self.db.execute(
                "SELECT r.test, r.status, runs.key FROM results r "
                "JOIN runs ON runs.id = r.run_id "
                "WHERE r.run_id = ? AND r.target = ?", (baseline.id, target))
            return {r["test"]: (r["status"], r["key"]) for r in rows}
        # Per test, walk its results backwards (the index) to the first
        # decisive one: one or two rows for most. Only tests that pass or
        # fail now need one; a skip's history is never walked.
        out = {}
        keys: dict[int, str] = {}
        for (test,) in self.db.execute(
                "SELECT test FROM results WHERE run_id = ? AND target = ? "
                "AND status IN ('passed', 'failed')", (run_id, target)):
            row = self.db.execute(
                "SELECT run_id, status FROM results WHERE target = ? AND "
                "test = ? AND run_id < ? AND status IN ('passed', "
                "'failed', 'flaky') ORDER BY run_id DESC LIMIT 1",
                (target, test, run_id)).fetchone()
            if row is None:
                continue
            if row["run_id"] not in keys:
                keys[row["run_id"]] = self.run(row["run_id"]).key
            out[test] = (row["status"], keys[row["run_id"]])
        return out

    def classify(self, run_id: int, baseline: Optional[Run] = None
                 ) -> Classification:
        run = self.run(run_id)
        verdicts: dict[str, list[Verdict]] = {}
        for target in self.targets(run_id):
            ref = self.reference(run_id, target, baseline)
            vs = []
            for r in self.results(run_id, target):
                rs, rk = ref.get(r["test"], (None, None))
                vs.append(Verdict(target, r["test"], r["item"], r["status"],
                                  categorise(r["status"], rs), r["log"],
                                  r["rerun_log"], rs, rk))
            vs.sort(key=lambda v: ORDER.get(v.category, 9))  # stable
            verdicts[target] = vs
        return Classification(run, baseline, verdicts)
