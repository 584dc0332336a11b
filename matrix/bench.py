"""Harness benchmarks: the figures docs/benchmarks.md states.

  python3 -m matrix bench [--arch a,b] [--rounds N]

Runs the main job three ways and prints, per run, the external wall time
beside the guests' own time (boot plus tests) from the results:

  warm    nothing changed: nothing may be rebuilt; wall - guests is the
          harness's cost
  driver  one file in driver/ touched (a comment appended, then removed):
          modules and initramfs rebuild, per architecture on its own
  boot    boot-to-shell per architecture, from the same results

Cold figures (the harness's share of a build from nothing) come from a
run with an empty cache: `NOPFN_CACHE=$(mktemp -d) python3 -m matrix
bench --cold` compares the run's wall time with the time spent in make.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from .spec import arch as archspec

REPO = pathlib.Path(__file__).resolve().parent.parent
TOUCH = REPO / "driver" / "nopfn_test.c"


def run_matrix(arch: str, results: pathlib.Path) -> tuple[float, dict, int]:
    t0 = time.monotonic()
    rc = subprocess.run([str(REPO / "matrix" / "run"), "--arch", arch,
                         "--results", str(results), "--", "-q"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    wall = time.monotonic() - t0
    summary = json.loads((results / "summary.json").read_text())
    return wall, summary, rc


def arch_figures(results: pathlib.Path, arch: str) -> dict:
    rec = json.loads((results / f"{arch}.json").read_text())
    return {"boot": rec["boot_seconds"], "guest": rec["guest_seconds"],
            "status": rec["status"], "counts": rec["counts"],
            "build_steps": rec["build_step_seconds"]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="matrix bench")
    ap.add_argument("--arch", default="x86_64,arm64,riscv64,ia64")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cold", action="store_true")
    args = ap.parse_args(argv)
    out = pathlib.Path(tempfile.mkdtemp(prefix="nopfn-bench-"))
    report: dict = {"arch": args.arch, "warm": [], "driver": {}}

    if args.cold:
        wall, s, rc = run_matrix(args.arch, out / "cold")
        make = 0.0
        for a in args.arch.split(","):
            rec = json.loads((out / "cold" / f"{a}.json").read_text())
            make += rec["kernel"]["build_seconds"] or 0.0
        report["cold"] = {"wall": round(wall, 1), "kernel_make": round(
            make, 1), "guests": s["guest_seconds"], "rc": rc,
            "harness_share": round((wall - make - s["guest_seconds"]) /
                                   make, 3) if make else None}
        print(json.dumps(report, indent=1))
        return 0

    run_matrix(args.arch, out / "prime")          # make sure all is built
    report["booted"] = [a.name for a in archspec.select(args.arch)
                        if a.bootable]
    for i in range(args.rounds):
        wall, s, rc = run_matrix(args.arch, out / f"warm{i}")
        report["warm"].append({
            "wall": round(wall, 2), "guests": s["guest_seconds"],
            "over": round(wall - s["guest_seconds"], 2),
            "rebuilt": s["rebuilt"], "rc": rc,
            "boot": {a: arch_figures(out / f"warm{i}", a)["boot"]
                     for a in s["arches"]}})
    text = TOUCH.read_text()
    try:
        for a in report["booted"]:
            TOUCH.write_text(text + f"/* bench {time.time()} */\n")
            wall, s, rc = run_matrix(a, out / f"driver-{a}")
            report["driver"][a] = {"wall": round(wall, 2), "rc": rc,
                                   "rebuilt": s["rebuilt"]}
    finally:
        TOUCH.write_text(text)
    overs = [w["over"] for w in report["warm"]]
    report["warm_over_median"] = statistics.median(overs)
    report["results"] = str(out)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
