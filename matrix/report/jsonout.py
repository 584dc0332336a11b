"""A run's results as one JSON document (--json FILE, "-" for stdout):
every result with its target, tree, status and duration, and each
target's status and counts, for a tool to read.

It is made from the records the results folder holds when the run ends
(results.write(): summary.json and each <target>.json), so it agrees
with them; document() reads any results folder, a saved one too.

    {"format": "nopfn-matrix-results/1", "results_dir": "...",
     "commit": "...", "wall_seconds": 61.2,
     "targets": {"x86_64": {"status": "passed", "tree": "6.1",
                            "arch": "x86_64", "variant": null,
                            "counts": {"passed": 150, ...}, ...}},
     "results": [{"target": "x86_64", "tree": "6.1",
                  "test": "test_boot[x86_64]", "status": "passed",
                  "duration": 2.41, "log": "x86_64/boot1/console.log"},
                 ...],
     "not_booted": {...}, "regressions": [...], "flaky": [...]}

A result's status is the results folder's: passed, failed, skipped,
flaky, xfailed (the target's documented miss) or xpassed (a pass of a
case its target is known to miss); one that did not pass has its
"message".
"""
from __future__ import annotations

import json
import pathlib
import sys

from ..build.tree import TREE

FORMAT = "nopfn-matrix-results/1"
# what a result carries beyond its target, tree, test, status, duration
RESULT_KEYS = ("message", "log", "rerun_log", "nodeid")


def document(results_dir: pathlib.Path) -> dict:
    """The run of a results folder as one JSON-able document."""
    d = pathlib.Path(results_dir)
    summary = json.loads((d / "summary.json").read_text())
    targets: dict[str, dict] = {}
    out: list[dict] = []
    for name, s in summary["arches"].items():
        rec = json.loads((d / f"{name}.json").read_text())
        tree = rec.get("tree") or s.get("tree") or TREE
        targets[name] = {
            "status": s["status"], "tree": tree,
            "arch": rec.get("base") or name,
            "variant": rec.get("variant") or None,
            "role": rec.get("role"), "why": rec.get("why"),
            "counts": s["counts"], "guest_seconds": s["guest_seconds"],
            "kernel_release": (rec.get("kernel") or {}).get("release"),
        }
        for test, t in rec["tests"].items():
            r = {"target": name, "tree": tree, "test": test,
                 "status": t["status"], "duration": t["duration"]}
            r.update((k, t[k]) for k in RESULT_KEYS if t.get(k))
            out.append(r)
    return {"format": FORMAT, "results_dir": str(d),
            "commit": summary.get("commit"),
            "wall_seconds": summary.get("wall_seconds"),
            "targets": targets, "results": out,
            "not_booted": summary.get("not_booted") or {},
            "regressions": summary.get("regressions") or [],
            "flaky": summary.get("flaky") or []}


def write(dest: str, results_dir: pathlib.Path) -> dict:
    """Write document() to the file dest, or to stdout for "-"."""
    doc = document(results_dir)
    text = json.dumps(doc, indent=1) + "\n"
    if dest == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        path = pathlib.Path(dest)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return doc
