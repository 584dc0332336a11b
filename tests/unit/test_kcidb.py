"""KCIDB export (matrix/report/kcidb.py), validated by python3-jsonschema
against matrix/report/schemas/kcidb-io-v5.json (written from kcidb-io's
v5 definition)."""
import copy
import json
import pathlib
import subprocess

import jsonschema
import pytest

from matrix.report import kcidb

REPO = pathlib.Path(__file__).resolve().parents[2]


def write_run(d: pathlib.Path) -> pathlib.Path:
    """A results folder as matrix/report/results.py writes it: two targets,
    one of them with a failed build."""
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({
        "wall_seconds": 120.5, "commit": "0123456789abcdef" * 2 + "01234567",
        "arches": {"x86_64": {}, "x86_64-debug": {}, "ia64": {}}}))
    boot = "x86_64/boot1"
    (d / "x86_64.json").write_text(json.dumps({
        "arch": "x86_64", "base": "x86_64", "variant": "", "status":
        "failed", "qemu_version": "QEMU emulator version 7.2.15",
        "kernel": {"release": "6.1.192-nopfn", "build_seconds": 181.2,
                   "cached": True, "config_sha": "abc", "compiler":
                   "gcc (Debian 12.2.0-14) 12.2.0", "key": "4f0c"},
        "build_step_seconds": {"kernel": 0.1, "modules": 0.2},
        "build_errors": {},
        "tests": {
            "test_kernel_build[x86_64]": {"status": "passed",
                                          "duration": 0.1},
            "test_boot[x86_64]": {"status": "passed", "duration": 2.1,
                                  "log": f"{boot}/console.log"},
            "test_module_load[x86_64-mspec]": {"status": "passed",
                                               "duration": 0.0},
            "test_case[x86_64-nopfn_faults-global.sigbus]": {
                "status": "passed", "duration": 0.01,
                "log": f"{boot}/nopfn_faults.ktap"},
            "test_case[x86_64-nopfn_faults-fix.v.carve]": {
                "status": "skipped", "duration": 0.0,
                "log": f"{boot}/nopfn_faults.ktap",
                "message": "no carve-out"},
            "test_case[x86_64-user/my-test-global.x]": {
                "status": "failed", "duration": 0.3,
                "log": f"{boot}/user-my-test.ktap",
                "message": "global.x: FAIL\nnot ok 1 global.x"},
            "test_program[x86_64-mspec_stress]": {
                "status": "flaky", "duration": 10.0,
                "log": f"{boot}/mspec_stress.ktap",
                "rerun_log": f"{boot}/mspec_stress.rerun.ktap"},
            "test_mm_selftest[x86_64-mremap_test]": {"status": "passed",
                                                     "duration": 1.0},
        },
        "programs": {"mspec_stress": {"seed": 99}},
        "metrics": {"fault_bench": {
            "ratio.nopfn_vs_vmf.dense": {"value": 1.01},
            "fault.ns": {"value": 1234.5, "unit": "ns"}},
            "mspec_stress": {"stress.seed": {"value": 99.0}}},
    }))
    (d / "x86_64-debug.json").write_text(json.dumps({
        "arch": "x86_64-debug", "base": "x86_64", "variant": "debug",
        "status": "failed", "kernel": {},
        "build_errors": {"kernel": "building the kernel failed (exit 2)"},
        "tests": {"test_kernel_build[x86_64-debug]": {
            "status": "failed", "duration": 300.0,
            "message": "kernel build failed"}}}))
    (d / "ia64.json").write_text(json.dumps({
        "arch": "ia64", "status": "build-only", "kernel": {
            "release": "6.1.192-nopfn"}, "tests": {}}))
    return d


@pytest.fixture
def run(tmp_path):
    return write_run(tmp_path / "20261204-190000-1")


def test_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(kcidb.load_schema())


def test_export_validates_and_says_what_ran(run):
    data = kcidb.export(run)
    kcidb.validate(data)
    assert data["version"] == {"major": 5, "minor": 3}
    (checkout,) = data["checkouts"]
    assert checkout["id"].startswith("nopfn:")
    builds = {b["misc"]["target"]: b for b in data["builds"]}
    assert sorted(builds) == ["ia64", "x86_64", "x86_64-debug"]
    assert builds["x86_64"]["status"] == "PASS"
    assert builds["x86_64-debug"]["status"] == "FAIL"
    assert builds["x86_64-debug"]["architecture"] == "x86_64"
    assert builds["x86_64-debug"]["config_name"].endswith("+debug")
    assert all(b["checkout_id"] == checkout["id"] for b in builds.values())
    tests = {t["path"]: t for t in data["tests"]}
    case = tests["nopfn.nopfn_faults.global.sigbus"]
    assert case["status"] == "PASS"
    assert case["log_url"] == (run / "x86_64/boot1/nopfn_faults.ktap"
                               ).as_uri()
    assert case["misc"]["ktap"] == "x86_64/boot1/nopfn_faults.ktap"
    assert case["build_id"] == builds["x86_64"]["id"]
    assert tests["nopfn.nopfn_faults.fix.v.carve"]["status"] == "SKIP"
    assert tests["nopfn.user.my-test.global.x"]["status"] == "FAIL"
    assert "not ok 1" in tests["nopfn.user.my-test.global.x"]["log_excerpt"]
    stress = tests["nopfn.mspec_stress"]
    assert stress["status"] == "FAIL"          # flaky is not a pass
    assert stress["output_files"][0]["name"] == "mspec_stress.rerun.ktap"
    assert tests["mm_selftests.mremap_test"]["status"] == "PASS"
    assert tests["nopfn.harness.boot"]["log_url"].endswith("console.log")
    assert "nopfn.harness.module_load.mspec" in tests
    bench = tests["nopfn.fault_bench.metric.ratio.nopfn_vs_vmf.dense"]
    assert bench["status"] == "DONE" and bench["number"] == {"value": 1.01}
    assert tests["nopfn.fault_bench.metric.fault.ns"]["number"]["unit"] \
        == "ns"
    assert not any("seed" in p for p in tests)     # seeds are no figures
    ids = [t["id"] for t in data["tests"]]
    assert len(ids) == len(set(ids))


NOT_CACHED = "kernel not cached for this series: compile-checked only"
BUILD_ONLY = "build-only: QEMU has no machine for it"


def write_not_booted_run(d: pathlib.Path) -> pathlib.Path:
    """write_run()'s folder, with what matrix/report/results.py adds for the
    targets the run did not boot: ia64 build-only, riscv64 compile-
    checked, mips64el's check failed, arm64-debug and sh4 left out."""
    write_run(d)
    s = json.loads((d / "summary.json").read_text())
    s["arches"].update({"riscv64": {}, "mips64el": {}})
    s["not_booted"] = {
        "ia64": {"status": "build-only", "why": BUILD_ONLY},
        "riscv64": {"status": "compile-checked", "why": NOT_CACHED},
        "mips64el": {"status": "failed", "why": NOT_CACHED},
        "arm64-debug": {"status": "not run",
                        "why": "not selected: --arch x86_64"},
        "sh4": {"status": "not run", "why": "candidate, not in the "
                "matrix: candidates/sh4.yaml says why"}}
    (d / "summary.json").write_text(json.dumps(s))
    ia = json.loads((d / "ia64.json").read_text())
    ia.update(role="run", why=BUILD_ONLY)
    (d / "ia64.json").write_text(json.dumps(ia))
    for target, status, test in (("riscv64", "compile-checked", "passed"),
                                 ("mips64el", "failed", "failed")):
        (d / f"{target}.json").write_text(json.dumps({
            "arch": target, "base": target, "variant": "",
            "status": status, "role": "check", "why": NOT_CACHED,
            "qemu_version": "QEMU emulator version 7.2.15",
            "kernel": {"compiler": "gcc 12", "cached": False},
            "build_step_seconds": {"check": 40.0, "modules": 5.0},
            "build_errors": {},
            "tests": {f"test_compile_check[{target}]": {
                "status": test, "duration": 40.0},
                f"test_modules_build[{target}]": {"status": "passed",
                                                  "duration": 5.0}}}))
    return d


def test_export_names_every_target_not_booted(tmp_path):
    data = kcidb.export(write_not_booted_run(tmp_path / "r1"))
    kcidb.validate(data)
    builds = {b["misc"]["target"]: b for b in data["builds"]}
    assert sorted(builds) == ["arm64-debug", "ia64", "mips64el", "riscv64",
                              "sh4", "x86_64", "x86_64-debug"]
    # compile-checked: said so, and why; the check's outcome its status
    rv, mips = builds["riscv64"], builds["mips64el"]
    assert rv["comment"].startswith("riscv64: compile-checked only")
    assert rv["comment"].endswith(NOT_CACHED)
    assert rv["status"] == "PASS" and mips["status"] == "FAIL"
    assert "compile-checked only" in mips["comment"]
    assert rv["misc"]["why"] == NOT_CACHED and rv["misc"]["role"] == "check"
    # build-only: built, not booted
    assert builds["ia64"]["status"] == "PASS"
    assert builds["ia64"]["comment"].endswith("not booted: " + BUILD_ONLY)
    # left out: a build of their own, architecture and why, no status
    dbg, sh4 = builds["arm64-debug"], builds["sh4"]
    assert (dbg["architecture"], dbg["misc"]["variant"]) == ("arm64",
                                                             "debug")
    assert sh4["architecture"] == "sh4"
    assert "status" not in dbg and "status" not in sh4
    assert dbg["comment"] == ("arm64-debug: not run: not selected: "
                              "--arch x86_64")
    assert dbg["checkout_id"] == data["checkouts"][0]["id"]
    # one missed boot test per target not booted, as a booted one's path
    boots = {t["misc"]["target"]: t for t in data["tests"]
             if t["path"] == "nopfn.harness.boot"}
    assert sorted(boots) == sorted(set(builds) - {"x86_64-debug"})
    assert boots["x86_64"]["status"] == "PASS"      # booted: unchanged
    for target in ("ia64", "riscv64", "mips64el", "arm64-debug", "sh4"):
        t = boots[target]
        assert t["status"] == "MISS", t
        assert t["build_id"] == builds[target]["id"]
        assert t["id"] == f"nopfn:r1:{target}:test_boot[{target}]"
    assert boots["riscv64"]["comment"] == ("not booted (compile-checked): "
                                           + NOT_CACHED)
    assert boots["sh4"]["comment"].startswith("not booted (not run): "
                                              "candidate")
    # the checks' own items are tests as ever
    tests = {(t["build_id"], t["path"]): t for t in data["tests"]}
    assert tests[(mips["id"], "nopfn.harness.compile_check")]["status"] \
        == "FAIL"
    ids = [t["id"] for t in data["tests"]] + [b["id"] for b in
                                              data["builds"]]
    assert len(ids) == len(set(ids))


def test_export_without_not_booted_is_as_before(run):
    """A summary from before "not_booted": no MISS, no left build."""
    data = kcidb.export(run)
    assert not [t for t in data["tests"] if t["status"] == "MISS"]
    assert len(data["builds"]) == 3


def test_environment_names_the_board(run):
    """Tests that ran on a board of --lg-env say so; QEMU ones name it."""
    boot = run / "x86_64" / "boot1"
    boot.mkdir(parents=True)
    (boot / "labgrid-env.yaml").write_text(
        "targets:\n  x86_64:\n    resources:\n      NetworkSerialPort:\n"
        "        {host: h, port: 1}\n    drivers:\n      SerialDriver: {}\n"
        "      ExternalPowerDriver: {cmd_on: a, cmd_off: b}\n")
    data = kcidb.export(run)
    env = next(t for t in data["tests"] if t["misc"].get("target") ==
               "x86_64")["environment"]
    assert env["comment"] == "labgrid board x86_64"
    assert env["misc"]["resources"] == ["NetworkSerialPort"]
    (boot / "labgrid-env.yaml").write_text(
        "targets:\n  x86_64:\n    drivers:\n      MatrixQEMUDriver: {}\n"
        "      ShellDriver: {}\n")
    env = next(t for t in kcidb.export(run)["tests"]
               if t["misc"].get("target") == "x86_64")["environment"]
    assert env["comment"].startswith("QEMU QEMU emulator version 7.2")


def test_patchset_hash_is_kcidb_s():
    """As the definition says: sha256sum *.patch | cut -c-64 | sha256sum
    | cut -c-64, over the series in order."""
    patches = kcidb.series_patches()
    assert patches, "kernel/patches/6.1/series lists no patch"
    sh = subprocess.run(
        ["bash", "-c", 'sha256sum "$@" | cut -c-64 | sha256sum | '
         'cut -c-64', "sh", *map(str, patches)],
        check=True, capture_output=True, text=True)
    assert kcidb.patchset_hash(patches) == sh.stdout.strip()
    assert kcidb.patchset_hash([]) == ""


@pytest.mark.parametrize("breakage,where", [
    (lambda d: d.pop("version"), "version"),
    (lambda d: d["version"].update(major=4), "major"),
    (lambda d: d["builds"][0].pop("checkout_id"), "checkout_id"),
    (lambda d: d["tests"][0].pop("build_id"), "build_id"),
    (lambda d: d["tests"][0].update(id="no-origin-prefix"), "id"),
    (lambda d: d["tests"][0].update(origin="Not Valid"), "origin"),
    (lambda d: d["tests"][0].update(status="passed"), "status"),
    (lambda d: d["tests"][0].update(path="nopfn..x"), "path"),
    (lambda d: d["tests"][0].update(comment=None), "comment"),
    (lambda d: d["tests"][0].update(colour="red"), "colour"),
    (lambda d: d["checkouts"][0].update(patchset_hash="abc"),
     "patchset_hash"),
    (lambda d: d["builds"][0].update(architecture="x86-64"),
     "architecture"),
    (lambda d: d.update(issues=[{"id": "nopfn:1", "origin": "nopfn"}]),
     "version"),
    (lambda d: d["checkouts"][0].update(start_time="yesterday"),
     "start_time"),
    (lambda d: d["builds"][0].update(start_time="2026-12-04 19:00"),
     "start_time"),
    (lambda d: d["tests"][0].update(log_url="x86_64/boot1/a.ktap"),
     "log_url"),
])
def test_schema_rejects(run, breakage, where):
    data = kcidb.export(run)
    breakage(data)
    with pytest.raises(kcidb.KcidbError, match=where):
        kcidb.validate(data)


def _examples(node, path=()):
    """(subschema, example, path) for every "examples" in the schema."""
    if isinstance(node, dict):
        for ex in node.get("examples", []):
            yield node, ex, path
        for k, v in node.items():
            if k != "examples":
                yield from _examples(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _examples(v, path + (i,))


def test_schema_examples_validate():
    """Each example the schema gives is valid where it is given."""
    schema = kcidb.load_schema()
    found = list(_examples(schema))
    assert len(found) > 20
    for sub, ex, path in found:
        s = dict(sub, **{"$defs": schema["$defs"]})
        s.pop("examples")
        v = jsonschema.Draft202012Validator(
            s, format_checker=kcidb.format_checker())
        errors = list(v.iter_errors(ex))
        assert not errors, f"{'/'.join(map(str, path))}: {ex!r}: {errors}"


def test_round_trip_through_the_schema_examples(run):
    """The run's export stays valid with each field the schema has
    examples for set to each example, and through JSON and back."""
    schema = kcidb.load_schema()
    data = kcidb.export(run)
    kinds = {"checkout": "checkouts", "build": "builds", "test": "tests"}
    tried = 0
    for kind, key in kinds.items():
        props = schema["$defs"][kind]["properties"]
        for field, sub in props.items():
            target = sub
            if "$ref" in sub:
                target = schema["$defs"][sub["$ref"].split("/")[-1]]
            for ex in target.get("examples", []) + sub.get("examples", []):
                d = copy.deepcopy(data)
                d[key][0][field] = ex
                back = json.loads(json.dumps(d))
                assert back == d
                kcidb.validate(back)
                tried += 1
    # examples of the nested objects: a resource, a number, the
    # environment's compatible list
    res = schema["$defs"]["resource"]["examples"]
    num = schema["$defs"]["test"]["properties"]["number"]["examples"]
    compat = schema["$defs"]["test"]["properties"]["environment"][
        "properties"]["compatible"]["examples"]
    d = copy.deepcopy(data)
    d["tests"][0]["output_files"] = res
    d["builds"][0]["output_files"] = res
    d["checkouts"][0]["patchset_files"] = res
    d["tests"][0]["environment"] = {"compatible": compat[0]}
    for n in num:
        d["tests"][1]["number"] = n
        kcidb.validate(json.loads(json.dumps(d)))
        tried += 1
    assert tried > 15


def test_write_and_cli(run, tmp_path):
    out = tmp_path / "k" / "kcidb.json"
    r = subprocess.run(["/usr/bin/python3", "-m", "matrix", "kcidb",
                        str(run), str(out), "--origin", "mylab",
                        "--url", "https://lab.example.org/runs/1"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    kcidb.validate(data)
    assert all(t["id"].startswith("mylab:") for t in data["tests"])
    urls = [t["log_url"] for t in data["tests"] if "log_url" in t]
    assert urls and all(u.startswith("https://lab.example.org/runs/1/")
                        for u in urls)


def test_one_checkout_per_tree_with_its_series_served(tmp_path):
    """A run of two trees: a checkout each (tree_name, the kernel version
    as git_commit_name, the tree's patchset from the copy the results
    keep, its files under --kcidb-url), each target's build in its
    tree's checkout."""
    import shutil
    d = tmp_path / "run2"
    d.mkdir()
    trees = {}
    for name in ("6.1", "6.12"):
        src = REPO / "kernel" / "patches" / name
        kept = d / "series" / name
        shutil.copytree(src, kept)
        trees[name] = {"version": name, "package": f"linux-source-{name}",
                       "source": f"/usr/src/linux-source-{name}.tar.xz",
                       "series": str(src), "kernel_version":
                       {"6.1": "6.1.158", "6.12": "6.12.118"}[name]}
    (d / "summary.json").write_text(json.dumps({
        "wall_seconds": 1.0, "commit": "c" * 40, "trees": trees,
        "arches": {"x86_64@6.1": {}, "x86_64@6.12": {}},
        "not_booted": {"ia64@6.12": {"status": "not run",
                                     "why": "not in this tree: gone"}}}))
    for target in ("x86_64@6.1", "x86_64@6.12"):
        (d / f"{target}.json").write_text(json.dumps({
            "arch": target, "base": "x86_64", "variant": "",
            "tree": target.split("@")[1], "status": "passed",
            "kernel": {}, "tests": {f"test_boot[{target}]": {
                "status": "passed", "duration": 1.0}}}))
    data = kcidb.export(d, base_url="https://ci.example/r/run2")
    kcidb.validate(data)
    co = {c["misc"]["tree"]: c for c in data["checkouts"]}
    assert sorted(co) == ["6.1", "6.12"]
    assert co["6.12"]["tree_name"] == "linux-source-6.12"
    assert co["6.12"]["git_commit_name"] == "6.12.118"
    assert co["6.1"]["id"] != co["6.12"]["id"]
    for name, c in co.items():
        patches = kcidb.series_patches(REPO / "kernel" / "patches" / name)
        assert c["patchset_hash"] == kcidb.patchset_hash(patches)
        assert [f["url"] for f in c["patchset_files"]] == [
            f"https://ci.example/r/run2/series/{name}/{p.name}"
            for p in patches]
    builds = {b["misc"]["target"]: b for b in data["builds"]}
    assert builds["x86_64@6.12"]["checkout_id"] == co["6.12"]["id"]
    assert builds["x86_64@6.1"]["checkout_id"] == co["6.1"]["id"]
    assert builds["ia64@6.12"]["checkout_id"] == co["6.12"]["id"]
    tests = [t for t in data["tests"] if t["path"] == "nopfn.harness.boot"]
    assert {t["build_id"] for t in tests} >= {builds["x86_64@6.12"]["id"]}
