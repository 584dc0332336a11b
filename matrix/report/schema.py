"""The history database's tables (matrix/report/history.py), and how an
older history is brought up to them when it is opened."""
from __future__ import annotations

import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    started TEXT NOT NULL,
    git_commit TEXT,
    series_hash TEXT,
    results_path TEXT NOT NULL,
    wall_seconds REAL,
    baseline TEXT
);
CREATE TABLE IF NOT EXISTS targets (
    run_id INTEGER NOT NULL,
    target TEXT NOT NULL,
    arch TEXT,
    variant TEXT,
    status TEXT,
    config_sha TEXT,
    kernel_key TEXT,
    kernel_release TEXT,
    kernel_cached INTEGER,
    build_seconds REAL,
    boot_seconds REAL,
    guest_seconds REAL,
    role TEXT,
    why TEXT,
    PRIMARY KEY (run_id, target)
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL,
    target TEXT NOT NULL,
    test TEXT NOT NULL,
    item TEXT NOT NULL,
    status TEXT NOT NULL,
    duration REAL,
    log TEXT,
    rerun_log TEXT,
    PRIMARY KEY (run_id, target, test)
);
CREATE INDEX IF NOT EXISTS results_by_test ON results (target, test, run_id);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL,
    target TEXT NOT NULL,
    program TEXT NOT NULL,
    name TEXT NOT NULL,
    value REAL,
    unit TEXT,
    exact TEXT,
    PRIMARY KEY (run_id, target, program, name)
);
"""
# Columns added since a history was first written: (table, column, type).
ADDED = (("metrics", "exact", "TEXT"), ("targets", "role", "TEXT"),
         ("targets", "why", "TEXT"), ("targets", "tree", "TEXT"))
# the one tree of the runs recorded before trees were an axis
FIRST_TREE = "6.1"
# The role of a target the run left out (matrix/session/plan.py's Plan.left).
LEFT = "left"


def create_or_migrate(db: sqlite3.Connection) -> None:
    """The tables, columns added since (ADDED), rows migrated."""
    db.executescript(SCHEMA)
    for table, column, kind in ADDED:
        have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if column in have:
            continue
        try:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        except sqlite3.OperationalError as exc:
            # another run opening the same history added it
            if "duplicate column" not in str(exc):
                raise
    migrate_trees(db)


def migrate_trees(db: sqlite3.Connection) -> None:
    """Rows from before the tree axis: their targets ran on 6.1 and
    are named LABEL@6.1 now, so that they line up with new runs."""
    old = db.execute("SELECT COUNT(*) FROM targets WHERE tree IS NULL AND "
                     "instr(target, '@') = 0").fetchone()[0]
    if not old:
        return
    suffix = "@" + FIRST_TREE
    # (a candidate's row, left out, stays as it is: on no tree)
    for table in ("results", "metrics"):
        db.execute(
            f"UPDATE {table} SET target = target || ? WHERE instr("
            "target, '@') = 0 AND run_id IN (SELECT run_id FROM "
            "targets WHERE tree IS NULL)", (suffix,))
    db.execute("UPDATE targets SET target = target || ?, tree = ? "
               "WHERE tree IS NULL AND instr(target, '@') = 0 AND "
               "NOT (COALESCE(role, '') = ? AND COALESCE(why, '') LIKE "
               "'candidate%')", (suffix, FIRST_TREE, LEFT))
    db.execute("UPDATE targets SET tree = '' WHERE tree IS NULL")
