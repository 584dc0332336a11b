"""The results folder of a run: JUnit XML, a JSON file per architecture."""
from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import time
from typing import Optional, TYPE_CHECKING

from . import dashboard
from . import history
from ..build.tree import TREE, parse_series
from ..session import selftests
from ..session.guest import qemu_version

if TYPE_CHECKING:
    from ..session.matrix import Matrix

REPO = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_ROOT = REPO / "results"


def git_commit() -> str:
    r = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def arch_record(m: "Matrix", name: str) -> dict:
    st = m.state[name]
    art = st.artifacts
    km = (art.kernel_meta or {}) if art else {}
    # a flaky test fails its target unless the run tolerates it
    bad = ("failed",) if m.options.tolerate_flaky else \
        ("failed", "flaky")
    failed = [t for t, r in st.tests.items() if r["status"] in bad]
    if not st.tests:
        status = "not run"
    elif failed:
        status = "failed"
    elif st.role == "check":
        status = "compile-checked"
    elif not st.arch.bootable:
        status = "build-only"
    else:
        status = "passed"
    rec = {
        "arch": name,           # the target: LABEL@TREE
        "label": st.arch.label,  # the target without its tree
        "tree": st.arch.tree or TREE,   # the kernel tree (matrix/trees/)
        "bootable": st.arch.bootable,
        "status": status,
        # "run" (built, booted where it can be) or "check" (compile-
        # checked only), and why it is not booted (matrix/session/plan.py)
        "role": st.role,
        "why": m.plan.why(st.arch),
        "kernel": {
            "release": km.get("release"),
            "version": st.kernel_version or None,
            "build_seconds": km.get("build_seconds"),
            "cached": bool(km.get("cached")),
            "config_sha": km.get("config_sha"),
            "compiler": km.get("compiler"),
            "key": km.get("key"),
        },
        "build_step_seconds": art.seconds if art else {},
        "build_errors": {k: str(v) for k, v in art.errors.items()}
        if art else {},
        "qemu_version": qemu_version(st.arch.qemu.binary)
        if st.arch.qemu else None,
        "boots": st.boots,
        "boot_seconds": [round(b, 3) for b in st.boot_times],
        "guest_seconds": round(st.guest_seconds, 3),
        "tests": st.tests,
        "variant": st.arch.variant,
        "base": st.arch.base,
        "programs": st.programs,
        "metrics": st.metrics,
        # the kernel's mm selftests (tests/mm-selftests.yaml)
        "mm_selftests": selftests.summary(
            m.selftest_results.get(name, {})),
        "counts": {s: sum(1 for r in st.tests.values() if r["status"] == s)
                   for s in ("passed", "failed", "skipped", "flaky",
                             "xfailed", "xpassed")},
    }
    return rec


def write(m: "Matrix", wall: float) -> dict:
    """Write the run's results folder (a record per target, summary.json)
    and publish it (history, dashboard); returns the summary."""
    summary = {"wall_seconds": round(wall, 3), "commit": git_commit(),
               "arches": {}, "results": str(m.results.path),
               "rebuilt": list(m.rebuilt), "trees": trees_record(m)}
    recs = {}
    for name in m.state:
        rec = recs[name] = arch_record(m, name)
        (m.results.arch_dir(name) / "result.json").write_text(
            json.dumps(rec, indent=1, sort_keys=True))
        (m.results.path / f"{name}.json").write_text(
            json.dumps(rec, indent=1, sort_keys=True))
        summary["arches"][name] = {k: rec[k] for k in
                                   ("status", "tree", "guest_seconds",
                                    "counts")}
        figures = headline_figures(rec)
        if figures:
            summary["arches"][name]["figures"] = figures
    summary["not_booted"] = not_booted(m, recs)
    guest = sum(a["guest_seconds"] for a in summary["arches"].values())
    summary["guest_seconds"] = round(guest, 3)
    summary["overhead_seconds"] = round(wall - guest, 3)
    publish(m, recs, summary, wall)
    (m.results.path / "summary.json").write_text(
        json.dumps(summary, indent=1, sort_keys=True))
    return summary


def trees_record(m: "Matrix") -> dict[str, dict]:
    """The run's kernel trees: version, source, the series applied (a
    copy of which the results folder keeps, series/TREE/, for KCIDB's
    patchset_files and whoever reads the results later)."""
    import shutil
    out = {}
    for t in getattr(m, "trees", []):
        series = m.options.series or t.series_dir
        patches = parse_series(series)
        kept = m.results.path / "series" / t.name
        kept.mkdir(parents=True, exist_ok=True)
        for f in [series / "series"] + [p for p, _ in patches]:
            shutil.copy2(f, kept / f.name)
        out[t.name] = {"version": t.version, "source": str(t.source),
                       "package": t.package or None, "user": t.user,
                       "series": str(series),
                       "kernel_version": kernel_version(m, t.name),
                       "patches": [p.name for p, _ in patches]}
    return out


def kernel_version(m: "Matrix", tree: str) -> Optional[str]:
    """The tree's full kernel version (its Makefile's), once extracted."""
    import re
    try:
        src = m.builder.tree_of(tree).src
        text = (src / "Makefile").read_text(errors="replace")[:2000]
    except Exception:       # noqa: BLE001 - not extracted, no tarball
        return None
    f = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)", text,
                        re.M))
    if "VERSION" not in f or "PATCHLEVEL" not in f:
        return None
    return ".".join([f["VERSION"], f["PATCHLEVEL"]] +
                    ([f["SUBLEVEL"]] if f.get("SUBLEVEL") else []))


def not_booted(m: "Matrix", recs: dict[str, dict]) -> dict[str, dict]:
    """Every target the run knows of and did not boot, with its status
    and why: build-only and compile-checked targets of the run, and
    those it left out (not selected, no compiler, candidates)."""
    out = {name: {"status": rec["status"], "why": rec["why"]}
           for name, rec in recs.items() if rec.get("why")}
    for name, why in m.plan.left.items():
        out[name] = {"status": "not run", "why": why}
    return out


# (label, program, metric, format) of the figures the summary shows
HEADLINE = [("stress", "mspec_stress", "stress.ops", "{:.0f} ops"),
            ("in", "mspec_stress", "stress.seconds", "{:.1f} s"),
            ("seed", "mspec_stress", "stress.seed", "{}"),
            ("fuzz", "mmap_fuzz", "fuzz.ops", "{:.0f} ops"),
            ("in", "mmap_fuzz", "fuzz.seconds", "{:.1f} s"),
            ("seed", "mmap_fuzz", "fuzz.seed", "{}"),
            ("nopfn/vmf dense", "fault_bench", "ratio.nopfn_vs_vmf.dense",
             "{:.3f}"),
            ("eager/lazy sparse", "fault_bench",
             "ratio.eager_vs_lazy.sparse", "{:.1f}")]


def headline_figures(rec: dict) -> dict[str, str]:
    """The stress, fuzz and benchmark figures of one target, formatted,
    keyed "program:metric" (absent ones left out)."""
    out = {}
    metrics = rec.get("metrics") or {}
    seeds = {p: i.get("seed") for p, i in (rec.get("programs") or {}).items()}
    for _, prog, metric, fmt in HEADLINE:
        m = (metrics.get(prog) or {}).get(metric)
        if m is None:
            continue
        value = m["value"]
        if metric.endswith(".seed") and seeds.get(prog) is not None:
            value = seeds[prog]     # the exact seed the harness gave it
        out[f"{prog}:{metric}"] = fmt.format(value)
    return out


def figure_line(figures: dict[str, str]) -> str:
    parts = []
    for label, prog, metric, _ in HEADLINE:
        v = figures.get(f"{prog}:{metric}")
        if v is not None:
            parts.append(f"{label} {v}")
    return ", ".join(parts).replace(", in ", " in ")


def summary_lines(s: dict) -> list[str]:
    """The run's summary (write()'s) as the terminal's lines."""
    out = ["", "nopfn matrix:"]
    for name, a in s["arches"].items():
        c = a["counts"]
        out.append(f"  {name:16} {a['status']:10} {c['passed']} passed, "
                   f"{c['failed']} failed, {c['skipped']} skipped"
                   + (f", {c['flaky']} flaky" if c.get("flaky") else "")
                   + (f", {c['xfailed']} known failures (xfail)"
                      if c.get("xfailed") else "")
                   + (f", {c['xpassed']} known failures passed (xpass)"
                      if c.get("xpassed") else "") +
                   "; guest "
                   f"{a['guest_seconds']:.2f} s")
        if a.get("figures"):
            out.append(f"  {'':16} {figure_line(a['figures'])}")
    out += not_booted_lines(s)
    out.append(f"  wall {s['wall_seconds']:.2f} s, guests "
               f"{s['guest_seconds']:.2f} s, harness "
               f"{s['overhead_seconds']:.2f} s")
    rebuilt = s.get("rebuilt") or []
    out.append(f"  rebuilt: {', '.join(rebuilt) if rebuilt else 'nothing'}")
    out.append(f"  results: {s['results']}")
    out += verdict_lines(s)
    return out


def not_booted_lines(s: dict) -> list[str]:
    """The targets the run did not boot, grouped by why."""
    nb = s.get("not_booted") or {}
    if not nb:
        return []
    groups: dict[tuple[str, str], list[str]] = {}
    for name, t in nb.items():
        groups.setdefault((t["status"], t["why"]), []).append(name)
    out = [f"  not booted ({len(nb)}):"]
    for (status, why), names in groups.items():
        out.append(f"    {', '.join(names)}: {status} ({why})")
    return out


def history_path(results_dir: pathlib.Path,
                 option: Optional[str] = None) -> pathlib.Path:
    """--history, or history.sqlite beside the run folders."""
    if option:
        return pathlib.Path(option).resolve()
    return results_dir.parent / "history.sqlite"


def publish(m: "Matrix", recs: dict, summary: dict, wall: float) -> None:
    """Record the run in the history, classify it, write the pages.

    A failure here is reported in the summary; it loses no result."""
    t0 = time.monotonic()
    d = m.results.path
    info: dict = {}
    summary["dashboard"] = info
    try:
        with history.History(history_path(d, m.options.history)) as h:
            info["history"] = str(h.path)
            ref = m.options.baseline
            base = h.find(ref) if ref else None
            if ref and base is None:
                info["error"] = (f"baseline {ref}: no such run in {h.path}; "
                                 "compared with earlier results instead")
            started = (datetime.datetime.now() - datetime.timedelta(
                seconds=wall)).isoformat(timespec="seconds")
            # the targets the run left out have no record: their why
            left = {t: nb["why"] for t, nb in
                    (summary.get("not_booted") or {}).items()
                    if t not in recs}
            run = h.record(d.name, d, recs, commit=summary["commit"],
                           series=history.series_hash(
                               [pathlib.Path(t["series"]) for t in
                                summary.get("trees", {}).values()] or None),
                           started=started,
                           wall=round(wall, 3),
                           baseline=base.key if base else None, left=left)
            cls = h.classify(run.id, base)
            pages = dashboard.write(h, cls, d.parent)
    except Exception as exc:     # noqa: BLE001 - reported, not fatal
        info["error"] = f"{type(exc).__name__}: {exc}"
        info["seconds"] = round(time.monotonic() - t0, 3)
        return
    info.update(index=str(pages[0]), baseline=base.key if base else None,
                seconds=round(time.monotonic() - t0, 3))
    for cat, vs in (("regressions", cls.regressions),
                    ("flaky", cls.flaky)):
        summary[cat] = [{"target": v.target, "test": v.item,
                         "reference": v.ref_run, "log": v.log,
                         "rerun_log": v.rerun_log} for v in vs]


def verdict_lines(s: dict) -> list[str]:
    """Regressions and flaky tests, by target, for the exit summary."""
    out = []
    regs, flaky = s.get("regressions") or [], s.get("flaky") or []
    if regs:
        out.append(f"  REGRESSIONS ({len(regs)}): failed now, passed in "
                   "the run named")
        out += [f"    {r['target']:14} {r['test']}  (passed in "
                f"{r['reference']})" for r in regs]
    if flaky:
        out.append(f"  flaky ({len(flaky)}): failed, then passed when "
                   "rerun once")
        out += [f"    {r['target']:14} {r['test']}" for r in flaky]
    d = s.get("dashboard") or {}
    if d.get("error"):
        out.append(f"  dashboard: {d['error']}")
    if d.get("index"):
        out.append(f"  dashboard: {d['index']} ({d.get('seconds', 0):.2f} s)")
    return out
