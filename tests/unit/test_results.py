"""Results folder: per-architecture JSON and the summary."""
import json
import pathlib
import types

from matrix.build.builder import Builder
from matrix.build.cache import Cache
from matrix.report import results
from matrix.session import plan
from matrix.session.matrix import ArchState, Matrix, Options, ResultsDir
from matrix.session import matrix as session
from matrix.spec import arch as archspec


def fake_matrix(tmp_path):
    """A run of arm64 and ia64, with results of its own (nothing built)."""
    arches = archspec.load_all()
    m = Matrix(Options(arch="arm64,ia64", results=str(tmp_path / "run")),
               Builder(Cache(tmp_path / "cache")),
               plan.Plan([arches["arm64"], arches["ia64"]], [], {}))
    state = m.state
    arm = state["arm64"]
    arm.artifacts = types.SimpleNamespace(
        kernel_meta={"release": "6.1.192-nopfn", "build_seconds": 180.0,
                     "config_sha": "abc", "compiler": "gcc 12",
                     "key": "k1", "cached": True},
        seconds={"kernel": 0.1}, errors={})
    arm.boots, arm.boot_times, arm.guest_seconds = 1, [0.9], 2.5
    arm.kernel_version = "Linux version 6.1.192-nopfn (nopfn@k-k1)"
    arm.tests = {"test_boot[arm64]": {"status": "passed", "duration": 0.1},
                 "test_case[arm64-p-c]": {"status": "failed",
                                          "duration": 0.2}}
    ia = state["ia64"]
    ia.artifacts = types.SimpleNamespace(kernel_meta={}, seconds={},
                                         errors={})
    ia.tests = {"test_kernel_build[ia64]": {"status": "passed",
                                            "duration": 1.0}}
    return m


def test_write_per_arch_and_summary(tmp_path):
    m = fake_matrix(tmp_path)
    tmp_path = m.results.path
    summary = results.write(m, wall=4.0)
    arm = json.loads((tmp_path / "arm64.json").read_text())
    assert arm["status"] == "failed"
    assert arm["kernel"]["release"] == "6.1.192-nopfn"
    assert arm["kernel"]["build_seconds"] == 180.0
    assert arm["boot_seconds"] == [0.9]
    assert arm["tests"]["test_case[arm64-p-c]"]["status"] == "failed"
    assert arm["counts"] == {"passed": 1, "failed": 1, "skipped": 0,
                             "flaky": 0, "xfailed": 0,
                             "xpassed": 0}
    assert arm["qemu_version"].startswith("QEMU emulator version")
    ia = json.loads((tmp_path / "ia64.json").read_text())
    assert ia["status"] == "build-only" and ia["qemu_version"] is None
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["guest_seconds"] == 2.5 and s["overhead_seconds"] == 1.5
    lines = results.summary_lines(summary)
    assert any("ia64" in ln and "build-only" in ln for ln in lines)


def test_build_only_never_reads_as_booted(tmp_path):
    m = fake_matrix(tmp_path)
    tmp_path = m.results.path
    m.state["ia64"].tests["test_kernel_build[ia64]"]["status"] = "failed"
    results.write(m, wall=1.0)
    ia = json.loads((tmp_path / "ia64.json").read_text())
    assert ia["status"] == "failed"
    assert ia["boot_seconds"] == [] and not ia["bootable"]


def test_results_dirs_do_not_collide(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "RESULTS_ROOT", tmp_path)
    a = ResultsDir.create(None)
    b = ResultsDir.create(str(tmp_path / "explicit"))
    assert a.path != b.path and a.path.is_dir() and b.path.is_dir()
    assert (tmp_path / "latest").resolve() == a.path


def test_headline_figures_keep_exact_seeds():
    from matrix.report import results
    rec = {"metrics": {
        "mspec_stress": {"stress.ops": {"value": 1234, "unit": "ops"},
                         "stress.seconds": {"value": 10.04, "unit": "s"},
                         "stress.seed": {"value": 8.835576515471267e18,
                                         "unit": ""}},
        "fault_bench": {"ratio.nopfn_vs_vmf.dense": {"value": 1.0123,
                                                     "unit": ""}}},
        "programs": {"mspec_stress": {"seed": 8835576515471267191}}}
    f = results.headline_figures(rec)
    assert f["mspec_stress:stress.seed"] == "8835576515471267191"
    line = results.figure_line(f)
    assert line == ("stress 1234 ops in 10.0 s, seed 8835576515471267191, "
                    "nopfn/vmf dense 1.012")


def fake_plan_matrix(tmp_path):
    """fake_matrix() with a plan: arm64 and ia64 run, riscv64 compile-
    checked, two targets left out (matrix/session/plan.py)."""
    m = fake_matrix(tmp_path)
    arches = archspec.load_all()
    rv = m.state["riscv64"] = ArchState(arches["riscv64"], role="check")
    rv.artifacts = types.SimpleNamespace(kernel_meta={}, seconds={
        "check": 40.0}, errors={})
    rv.tests = {"test_compile_check[riscv64]": {"status": "passed",
                                                "duration": 40.0}}
    m.plan = plan.Plan(run=[arches["arm64"], arches["ia64"]],
                       check=[arches["riscv64"]],
                       left={"x86_64-debug": "not selected: --arch arm64",
                             "sh4": "candidate, not in the matrix"})
    return m


def test_not_booted_names_every_target_with_why(tmp_path):
    from matrix.report import history
    m = fake_plan_matrix(tmp_path)
    recs = {n: results.arch_record(m, n) for n in m.state}
    assert (recs["riscv64"]["status"], recs["riscv64"]["role"],
            recs["riscv64"]["why"]) == ("compile-checked", "check",
                                        plan.NOT_CACHED)
    assert recs["arm64"]["why"] is None
    nb = results.not_booted(m, recs)
    assert nb == {
        "ia64": {"status": "build-only", "why": plan.BUILD_ONLY},
        "riscv64": {"status": "compile-checked", "why": plan.NOT_CACHED},
        "x86_64-debug": {"status": "not run",
                         "why": "not selected: --arch arm64"},
        "sh4": {"status": "not run", "why": "candidate, not in the matrix"}}
    # nothing left out: the records' own
    m.plan = plan.Plan(m.plan.run, m.plan.check, {})
    assert set(results.not_booted(m, recs)) == {"ia64", "riscv64"}
    lines = results.not_booted_lines({"not_booted": nb})
    assert lines == [
        "  not booted (4):",
        f"    ia64: build-only ({plan.BUILD_ONLY})",
        f"    riscv64: compile-checked ({plan.NOT_CACHED})",
        "    x86_64-debug: not run (not selected: --arch arm64)",
        "    sh4: not run (candidate, not in the matrix)"]
    # grouped by status and why
    nb["mips64el"] = dict(nb["riscv64"])
    assert results.not_booted_lines({"not_booted": nb})[2] == \
        f"    riscv64, mips64el: compile-checked ({plan.NOT_CACHED})"
    assert results.not_booted_lines({"not_booted": {}}) == []
    assert results.not_booted_lines({}) == []

    # through write(): the summary, its lines, and the history's rows
    m = fake_plan_matrix(tmp_path / "w")
    summary = results.write(m, wall=4.0)
    s = json.loads((m.results.path / "summary.json").read_text())
    assert s["not_booted"] == results.not_booted(
        m, {n: results.arch_record(m, n) for n in m.state})
    out = results.summary_lines(summary)
    assert "  not booted (4):" in out
    assert out.index("  not booted (4):") > max(
        i for i, ln in enumerate(out) if ln.startswith("  riscv64 "))
    assert "error" not in s["dashboard"], s["dashboard"]
    with history.History(pathlib.Path(s["dashboard"]["history"])) as h:
        (run,) = h.runs()
        t = h.targets(run.id)
        assert {n: (r["status"], r["role"], r["why"]) for n, r in
                t.items()} == {
            "arm64": ("failed", "run", None),
            "ia64": ("build-only", "run", plan.BUILD_ONLY),
            "riscv64": ("compile-checked", "check", plan.NOT_CACHED),
            "x86_64-debug": ("not run", "left",
                             "not selected: --arch arm64"),
            "sh4": ("not run", "left", "candidate, not in the matrix")}
    page = (m.results.path / "index.html").read_text()
    assert "Not booted in this run (4)" in page
