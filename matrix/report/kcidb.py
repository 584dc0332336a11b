"""A run's results as KCIDB I/O data (major version 5), for KernelCI.

  ./matrix/run --kcidb FILE [--kcidb-origin NAME] [--kcidb-url BASE]
  python3 -m matrix kcidb RESULTS_DIR FILE [--origin NAME] [--url BASE]

One checkout per kernel tree of the run (e.g. linux-source-6.12 with
kernel/patches/6.12/ applied: tree_name the tree, git_commit_name its
kernel version, the patchset hash as KCIDB defines it, the patches as
patchset_files, which the results folder keeps a copy of under
series/TREE/), one build per target (architecture, variant and tree:
x86_64@6.1, x86_64-debug@6.12, ...), in its tree's checkout, and one test
per pytest item of the target, with its status and, as log_url, the
program's KTAP output (or the console log); `# METRIC` figures are tests
with status DONE and a number. Every id starts with the origin and a
colon. Log and patch URLs are file:// URLs of the results folder unless
--kcidb-url names where that folder is served.

Every target the run did not boot (summary.json's "not_booted": build-
only, compile-checked, and left out as matrix/session/plan.py says) has a boot
test (the path of a booted target's test_boot) with status MISS and the
reason as its comment. A compile-checked target's build says so in its
comment, with the reason, and has the check's outcome as its status. A
target the run left out (not selected, no compiler, a candidate) has no
record: it gets a build of its own, with its architecture, the reason,
and no status.

The output is checked against matrix/report/schemas/kcidb-io-v5.json (JSON
Schema 2020-12, written from kcidb-io's published v5 definition) before
it is written.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import pathlib
import re
from typing import Optional

REPO = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = pathlib.Path(__file__).resolve().parent / "schemas" / \
    "kcidb-io-v5.json"
VERSION = {"major": 5, "minor": 3}
DEFAULT_ORIGIN = "nopfn"
STATUS = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP",
          "flaky": "FAIL", "error": "ERROR",
          # a target's documented miss, and a pass of one
          "xfailed": "FAIL", "xpassed": "PASS"}
BUILD_STEPS = ("kernel", "modules", "tests", "busybox", "initramfs")
# The pytest item whose KCIDB path a target that was not booted misses.
BOOT_ITEM = "test_boot[{}]"


class KcidbError(Exception):
    """The export does not validate, or the results are unreadable."""


def load_schema() -> dict:
    return json.loads(SCHEMA.read_text())


def _date_time(value) -> bool:
    """RFC 3339 date-time: a date, "T", a time, and a time zone."""
    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?"
                        r"([Zz]|[+-]\d\d:\d\d)", value):
        return False
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00")
                                        .replace("z", "+00:00"))
    except ValueError:
        return False
    return True


def _uri(value) -> bool:
    """An absolute URI (scheme:rest), without spaces."""
    if not isinstance(value, str):
        return True
    return re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]+", value) is not None


def format_checker():
    """jsonschema's format checks, plus date-time and uri (Debian's
    python3-jsonschema checks those only with optional modules)."""
    import jsonschema
    fc = jsonschema.FormatChecker()
    fc.checks("date-time")(_date_time)
    fc.checks("uri")(_uri)
    return fc


def validator(schema: Optional[dict] = None):
    import jsonschema
    schema = schema or load_schema()
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=format_checker())


def validate(data: dict, schema: Optional[dict] = None) -> None:
    """Raise KcidbError naming every place data breaks the schema."""
    errors = sorted(validator(schema).iter_errors(data),
                    key=lambda e: list(e.absolute_path))
    if errors:
        raise KcidbError("not KCIDB v5 data:\n" + "\n".join(
            f"  {'/'.join(map(str, e.absolute_path)) or '(root)'}: "
            f"{e.message}" for e in errors[:20]))


def patchset_hash(patches: list[pathlib.Path]) -> str:
    """KCIDB's patchset hash: sha256 of the newline-terminated sha256
    hex digests of each patch, in order; "" without patches."""
    if not patches:
        return ""
    lines = "".join(hashlib.sha256(p.read_bytes()).hexdigest() + "\n"
                    for p in patches)
    return hashlib.sha256(lines.encode()).hexdigest()


def series_patches(series_dir: Optional[pathlib.Path] = None
                   ) -> list[pathlib.Path]:
    from ..build.tree import SERIES_DIR, parse_series
    return [p for p, _ in parse_series(series_dir or SERIES_DIR)]


def _checkouts(results: pathlib.Path, summary: dict, origin: str,
               base: str, commit: str, run: str, started: float,
               finished: float) -> dict[str, dict]:
    """Tree name -> its checkout: the series applied to it, as the
    results folder keeps it (series/TREE/; results from before trees:
    the default series, by its path in the repository)."""
    from ..build.tree import TREE
    trees = summary.get("trees") or {TREE: {"version": TREE}}
    out = {}
    for name, t in trees.items():
        kept = results / "series" / name
        if kept.is_dir():
            patches = series_patches(kept)
            files = [{"name": p.name,
                      "url": _url(base, f"series/{name}/{p.name}")}
                     for p in patches]
        else:
            patches = series_patches(pathlib.Path(t["series"])
                                     if t.get("series") else None)
            files = [{"name": p.name, "url": p.resolve().as_uri()}
                     for p in patches]
        phash = patchset_hash(patches)
        source = t.get("package") or pathlib.PurePath(
            t.get("source") or f"linux-source-{name}").name
        checkout = {
            "id": f"{origin}:{commit}:{path_part(name)}:"
                  f"{phash[:16] or 'unpatched'}",
            "origin": origin, "tree_name": source,
            "patchset_hash": phash, "patchset_files": files,
            "start_time": _time(started),
            "origin_builds_finish_time": _time(finished),
            "origin_tests_finish_time": _time(finished),
            "comment": f"{source} (Linux "
                       f"{t.get('kernel_version') or t.get('version')}) "
                       "with the nopfn series of kernel/patches/"
                       f"{t.get('version') or name}/",
            "misc": {"project_commit": commit, "run": run, "tree": name},
        }
        if t.get("kernel_version"):
            checkout["git_commit_name"] = t["kernel_version"]
        out[name] = checkout
    return out


_PATH_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def path_part(text: str) -> str:
    """One or more dot-separated KCIDB path segments from a name."""
    parts = [_PATH_BAD.sub("_", p) for p in text.split(".")]
    return ".".join(p or "_" for p in parts)


def test_path(item: str, target: str) -> str:
    """The KCIDB path of a pytest item of the matrix:
    test_case[T-prog-case] -> nopfn.prog.case, test_program[T-prog] ->
    nopfn.prog, test_mm_selftest[T-t] -> mm_selftests.t, any other
    test_NAME[T-param] -> nopfn.harness.NAME.param."""
    m = re.fullmatch(r"test_(\w+)(?:\[(.*)\])?", item)
    if not m:
        return "nopfn.harness." + path_part(item)
    func, params = m.group(1), m.group(2) or ""
    rest = params[len(target) + 1:] if params.startswith(target + "-") \
        else ("" if params == target else params)
    if func == "case" and "-" in rest:
        prog, case = rest.rsplit("-", 1)     # case names have no "-"
        return f"nopfn.{path_part(prog.replace('/', '.'))}.{path_part(case)}"
    if func == "program":
        return f"nopfn.{path_part(rest.replace('/', '.'))}"
    if func == "mm_selftest":
        return f"mm_selftests.{path_part(rest)}"
    return "nopfn.harness." + ".".join(
        path_part(p) for p in [func] + ([rest] if rest else []))


def _url(base: str, rel: str) -> str:
    return f"{base.rstrip('/')}/{rel.lstrip('/')}"


def _time(ts: float) -> str:
    return datetime.datetime.fromtimestamp(
        ts, datetime.timezone.utc).isoformat(timespec="seconds")


def export(results: pathlib.Path, origin: str = DEFAULT_ORIGIN,
           base_url: Optional[str] = None) -> dict:
    """KCIDB data for the run in the results folder."""
    results = results.resolve()
    try:
        summary = json.loads((results / "summary.json").read_text())
    except (OSError, ValueError) as exc:
        raise KcidbError(f"{results}: no readable summary.json ({exc})") \
            from exc
    base = base_url or results.as_uri()
    run = results.name
    finished = (results / "summary.json").stat().st_mtime
    started = finished - float(summary.get("wall_seconds") or 0)
    commit = summary.get("commit") or "unknown"
    from .history import tree_of
    checkouts = _checkouts(results, summary, origin, base, commit, run,
                           started, finished)
    first = next(iter(checkouts.values()))

    def checkout_of(target: str, rec: Optional[dict] = None) -> dict:
        tree = (rec or {}).get("tree") or tree_of(target)
        return checkouts.get(tree, first)
    builds, tests = [], []
    patch_ok = {c["id"]: True for c in checkouts.values()}
    arches = summary.get("arches") or {}
    not_booted = summary.get("not_booted") or {}
    for target in arches:
        try:
            rec = json.loads((results / f"{target}.json").read_text())
        except (OSError, ValueError) as exc:
            raise KcidbError(f"{results}/{target}.json: {exc}") from exc
        checkout_id = checkout_of(target, rec)["id"]
        b, ts = _target(rec, target, origin, checkout_id, run, base,
                        started, environment(results, target, rec))
        if any("applying" in e for e in
               (rec.get("build_errors") or {}).values()):
            patch_ok[checkout_id] = False
        if target in not_booted:
            _not_booted(b, ts, rec, target, not_booted[target])
        builds.append(b)
        tests += ts
    for target, nb in not_booted.items():
        if target not in arches:        # left out: no record of its own
            b = _left_build(target, nb, origin, checkout_of(target)["id"],
                            run)
            builds.append(b)
            tests.append(_miss(b, target, nb))
    for c in checkouts.values():
        c["valid"] = patch_ok[c["id"]]
    data = {"version": dict(VERSION), "checkouts": list(checkouts.values()),
            "builds": builds, "tests": tests}
    validate(data)
    return data


def environment(results: pathlib.Path, target: str, rec: dict) -> dict:
    """Where the target's tests ran: local QEMU, or a board of --lg-env
    (the labgrid env file the first boot kept says which)."""
    env = {"misc": {"target": target}}
    used = results / target / "boot1" / "labgrid-env.yaml"
    try:
        import yaml
        targets = (yaml.safe_load(used.read_text()) or {}).get(
            "targets") or {}
    except (OSError, ValueError, AttributeError):
        targets = {}
    for name, t in targets.items():
        drivers = (t or {}).get("drivers") or {}
        if drivers and "MatrixQEMUDriver" not in drivers:
            env["comment"] = f"labgrid board {name}"
            env["misc"].update(board=name, drivers=sorted(drivers),
                               resources=sorted((t or {}).get(
                                   "resources") or {}))
            return env
    env["comment"] = (f"QEMU {rec.get('qemu_version')}"
                      if rec.get("qemu_version") else "build only")
    return env


def _target(rec: dict, target: str, origin: str, checkout_id: str,
            run: str, base: str, started: float,
            env: dict) -> tuple[dict, list]:
    k = rec.get("kernel") or {}
    errors = rec.get("build_errors") or {}
    arch = rec.get("base") or rec.get("arch") or target
    variant = rec.get("variant") or ""
    build_id = f"{origin}:{run}:{target}"
    seconds = rec.get("build_step_seconds") or {}
    failed = [s for s in BUILD_STEPS if s in errors]
    build = {
        "id": build_id, "checkout_id": checkout_id, "origin": origin,
        "architecture": re.sub(r"[^a-z0-9_]", "_", arch.lower()),
        "config_name": "tinyconfig+common+" + arch +
                       (f"+{variant}" if variant else ""),
        "start_time": _time(started),
        "duration": float(k.get("build_seconds") or
                          sum(v for v in seconds.values()) or 0.0),
        "status": "FAIL" if failed else "PASS",
        "comment": f"{target}: {k.get('release') or 'not built'}",
        "misc": {"target": target, "variant": variant,
                 "kernel_key": k.get("key"), "cached": bool(k.get("cached")),
                 "config_sha": k.get("config_sha"),
                 "release": k.get("release"),
                 "step_seconds": seconds},
    }
    if k.get("compiler"):
        build["compiler"] = k["compiler"]
    if failed:
        build["log_excerpt"] = str(errors[failed[0]])[-16384:]
        build["misc"]["failed_steps"] = failed
    tests = []
    for item, t in (rec.get("tests") or {}).items():
        status = STATUS.get(t.get("status", "failed"), "ERROR")
        test = {"id": f"{origin}:{run}:{target}:{item}",
                "build_id": build_id, "origin": origin,
                "path": test_path(item, target), "status": status,
                "environment": env,
                "misc": {"target": target, "nodeid": t.get("nodeid", ""),
                         "pytest_status": t.get("status")}}
        if t.get("duration") is not None:
            test["duration"] = float(t["duration"])
        if t.get("log"):
            test["log_url"] = _url(base, t["log"])
            test["misc"]["ktap" if t["log"].endswith(".ktap") else
                         "console"] = t["log"]
        if t.get("rerun_log"):
            test["output_files"] = [{
                "name": pathlib.PurePath(t["rerun_log"]).name,
                "url": _url(base, t["rerun_log"])}]
        if t.get("message"):
            test["log_excerpt"] = t["message"][-16384:].replace("\0", "")
        tests.append(test)
    from .history import is_seed
    for prog, names in (rec.get("metrics") or {}).items():
        for name, m in (names or {}).items():
            value = m.get("value") if isinstance(m, dict) else m
            if is_seed(name) or not isinstance(value, (int, float)) or \
                    isinstance(value, bool):
                continue
            number = {"value": value}
            if isinstance(m, dict) and m.get("unit"):
                number["unit"] = m["unit"]
            tests.append({
                "id": f"{origin}:{run}:{target}:metric:{prog}:{name}",
                "build_id": build_id, "origin": origin,
                "path": f"nopfn.{path_part(prog.replace('/', '.'))}."
                        f"metric.{path_part(name)}",
                "status": "DONE", "number": number, "environment": env})
    return build, tests


def _why(nb: dict, rec: Optional[dict] = None) -> str:
    return nb.get("why") or (rec or {}).get("why") or "not booted"


def _miss(build: dict, target: str, nb: dict) -> dict:
    """The boot test of a target that was not booted: MISS, and why."""
    item = BOOT_ITEM.format(target)
    status = nb.get("status") or "not run"
    return {"id": f"{build['id']}:{item}", "build_id": build["id"],
            "origin": build["origin"], "path": test_path(item, target),
            "status": "MISS",
            "comment": f"not booted ({status}): {_why(nb)}",
            "misc": {"target": target, "not_booted": status}}


def _not_booted(build: dict, tests: list, rec: dict, target: str,
                nb: dict) -> None:
    """A target of the run that was not booted (build-only, or compile-
    checked): its build says why, and its boot test is missed."""
    why = _why(nb, rec)
    status = nb.get("status") or rec.get("status")
    build["misc"].update(role=rec.get("role"), why=why,
                         target_status=status)
    if rec.get("role") == "check" or status == "compile-checked":
        build["comment"] = (f"{target}: compile-checked only (configured, "
                            f"the series' files compiled; not built, not "
                            f"booted): {why}")
        if status != "compile-checked":
            build["status"] = "FAIL"
    else:
        build["comment"] += f"; not booted: {why}"
    boot = test_path(BOOT_ITEM.format(target), target)
    if not any(t["path"] == boot for t in tests
               if t["build_id"] == build["id"]):
        tests.append(_miss(build, target, dict(nb, why=why, status=status)))


def _left_build(target: str, nb: dict, origin: str, checkout_id: str,
                run: str) -> dict:
    """The build of a target the run left out: never started, so no
    status; its architecture and why."""
    from .history import split_target
    arch, variant = split_target(target)
    return {"id": f"{origin}:{run}:{target}", "checkout_id": checkout_id,
            "origin": origin,
            "architecture": re.sub(r"[^a-z0-9_]", "_", arch.lower()),
            "comment": f"{target}: {nb.get('status') or 'not run'}: "
                       f"{_why(nb)}",
            "misc": {"target": target, "variant": variant, "role": "left",
                     "why": _why(nb)}}


def write(results: pathlib.Path, out: pathlib.Path,
          origin: str = DEFAULT_ORIGIN,
          base_url: Optional[str] = None) -> dict:
    data = export(results, origin, base_url)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data
