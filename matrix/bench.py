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

  python3 -m matrix bench --dashboard [RUNS TARGETS TESTS]

times what a run's results add on top of a long history (record the
run, classify it, write its pages), with synthetic records.
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

from .report import dashboard
from .report.figures import BENCH, RATIO_ORDER
from .report.history import History
from .spec import arch as archspec

REPO = pathlib.Path(__file__).resolve().parent.parent
TOUCH = REPO / "driver" / "nopfn_bench.c"


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
    ap.add_argument("--dashboard", nargs="*", type=int, metavar="N",
                    help="time the results' share on a long history: "
                    "RUNS TARGETS TESTS (default 500 6 150)")
    args = ap.parse_args(argv)
    if args.dashboard is not None:
        print(dashboard_bench(*args.dashboard[:3]))
        return 0
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


def bench_metrics(i: int) -> tuple[dict, dict]:
    """Run i's metrics and programs, as many as fault_bench, mspec_stress
    and mmap_fuzz print: 10 ratios with their spread, 13 times, 20
    counts and rates, two seeds."""
    seeds = {"mspec_stress": 2221493935565901272 + i,
             "mmap_fuzz": 2194960933338486915 + i}
    fb = {}
    for k, name in enumerate(RATIO_ORDER):
        v = 0.5 + (i + k) % 7 / 4
        fb[name] = {"value": v, "unit": ""}
        fb[name + ".min"] = {"value": v / 2, "unit": ""}
        fb[name + ".max"] = {"value": v * 2, "unit": ""}
    for k in range(13):
        fb[f"ns_per_page.p{k}"] = {"value": 1e5 + 997.5 * ((i * k) % 13),
                                   "unit": "ns"}
    stress = {f"stress.op.o{k}": {"value": 100 + (i * k) % 50,
                                  "unit": "ops"} for k in range(16)}
    stress.update({"stress.ops": {"value": 1600 + i % 50, "unit": "ops"},
                   "stress.seconds": {"value": 10.5, "unit": "s"}})
    fuzz = {"fuzz.ops": {"value": 300 + i % 9, "unit": "ops"},
            "fuzz.ops_per_s": {"value": 27.9, "unit": "ops/s"}}
    # seeds as matrix/session/ktap.py passes them on: through a double
    stress["stress.seed"] = {"value": int(float(seeds["mspec_stress"])),
                             "unit": ""}
    fuzz["fuzz.seed"] = {"value": int(float(seeds["mmap_fuzz"])), "unit": ""}
    return ({BENCH: fb, "mspec_stress": stress, "mmap_fuzz": fuzz},
            {p: {"seed": s} for p, s in seeds.items()})


def dashboard_bench(runs: int = 500, targets: int = 6, tests: int = 150
                    ) -> str:
    """Time what a run adds on top of a long history: record the run,
    classify it, write its pages (synthetic records, in a temp folder)."""
    names = ["x86_64", "x86_64-debug", "arm64", "arm64-debug", "riscv64",
             "ia64", "t6", "t7"][:targets]

    def recs(i: int) -> dict:
        metrics, programs = bench_metrics(i)
        return {t: {"arch": t, "status": "passed",
                    "kernel": {"build_seconds": 300.0},
                    "boot_seconds": [1.0], "guest_seconds": 30.0,
                    "tests": {f"test_case[{t}-p{j // 10}-c{j}]": {
                        "status": "failed" if (i + j) % 97 == 0
                        else "passed", "duration": 0.1,
                        "log": f"{t}/boot1/p{j // 10}.ktap"}
                        for j in range(tests)},
                    "metrics": metrics, "programs": programs}
                for t in names}
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        with History(root / "history.sqlite") as h:
            for i in range(runs - 1):
                h.record(f"run{i:04d}", root / f"run{i:04d}", recs(i))
            d = root / "last"
            d.mkdir()
            t0 = time.monotonic()
            run = h.record("last", d, recs(runs))
            pages = dashboard.write(h, h.classify(run.id), root)
            took = time.monotonic() - t0
            size = (root / "history.sqlite").stat().st_size
            kib = sum(p.stat().st_size for p in pages) >> 10
    return (f"{runs} runs x {targets} targets x {tests} tests: record, "
            f"classify and pages of the last run {took:.2f} s (history "
            f"{size >> 20} MiB, pages {kib} KiB)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
