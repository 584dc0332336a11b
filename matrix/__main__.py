"""python3 -m matrix: the main job (build, boot, test every architecture).

  python3 -m matrix run [--tree 6.1,6.12|PATH] [--arch a,b] [--variant V]
                        [--user-tests DIR]
                        [--driver DIR] [--series DIR] [--results DIR]
                        [--baseline RUN] [--history DB]
                        [--boot-timeout S] [--test-timeout S]
                        [--json FILE|-] [-- extra pytest args]
  python3 -m matrix build [--tree T] [--arch a,b]
                                            build only, print artifacts
  python3 -m matrix list [--series DIR]     the targets: tier, tree,
                                            cached, aliases
  python3 -m matrix bench [--arch a,b]      harness timings (matrix/bench.py)
  python3 -m matrix lava-jobs DIR [--arch]  build, write LAVA jobs (no boot)
  python3 -m matrix kcidb RESULTS FILE      a run's results as KCIDB JSON
  python3 -m matrix bisect --arch A --test T [--series DIR] [--good N]
                                            the first patch at which T
                                            fails on A
  python3 -m matrix parse LOG...            a saved console log's or
                                            .ktap's results, as a run
                                            shows them

  run also takes --lg-env FILE [--lg-target T] [--lg-coordinator URL],
  --lava-jobs DIR [--lava-url URL], --kcidb FILE [--kcidb-origin NAME]
  [--kcidb-url URL]: matrix/plugin/lab.py
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

from .spec import arch as archspec
from .spec import tree as treespec
from .build import deps

REPO = pathlib.Path(__file__).resolve().parent.parent


def list_lines(arches: list, tree: str, state) -> list[str]:
    # tree: the trees' column for targets that name none (arch.tree "")
    """`matrix list`'s table: per target its tier, whether it boots, its
    kernel tree, what the cache holds of it (state(arch): Builder's
    cache_state(), or None when not looked up), how its kernel is built
    and its other names."""
    head = ["target", "tier", "kind", "tree", "cache", "kernel", "aliases"]
    rows = [head]
    for a in arches:
        extra = f" +{a.variant}.config" if a.variant else ""
        cached = state(a) if state else "-"
        rows.append([a.name, a.tier, "boot" if a.bootable else "build-only",
                     a.tree or tree, cached, f"ARCH={a.kernel.arch} "
                     f"{a.kernel.cross_compile or '(native)'}{extra}",
                     ", ".join(a.aliases) or "-"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    return [" ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + " "
            + r[-1] for r in rows]


def cmd_list(args) -> int:
    from .build import tree as treemod
    from .build.builder import Builder
    from .build.cache import Cache
    from .session import plan
    absolute_folders(args)
    series = pathlib.Path(args.series) if args.series else None
    if args.tree is None:
        args.tree = treespec.DEFAULT if series else "all"
    trees = select_trees(args)
    arches = archspec.select(None, trees=trees)
    state = None
    if not args.no_cache:
        b = Builder(Cache(), install=False, series_dir=series, trees=trees)
        state = b.cache_state
    for line in list_lines(arches, treemod.TREE, state):
        print(line)
    print()
    for t in trees:
        sd = series or t.series_dir
        patches = treemod.parse_series(sd)
        shown = sd.relative_to(REPO) if sd.is_relative_to(REPO) else sd
        print(f"tree {t.name}: {t.package or t.source} with "
              f"{len(patches)} patches of {shown}")
    for name, why in archspec.removed(trees).items():
        print(f"not in its tree: {name}: {why}")
    print(f"cache {'not looked up' if args.no_cache else Cache().root}")
    cands = plan.candidates()
    if cands:
        print(f"candidates, not in the matrix: {', '.join(cands)} "
              f"({plan.CANDIDATE_DIR.relative_to(REPO)}/)")
    return 0


# folder options of run and build, relative to where ./matrix/run was
# started (caller_path())
FOLDER_OPTIONS = ("user_tests", "driver", "series", "results")


def absolute_folders(args) -> None:
    for name in FOLDER_OPTIONS:
        value = getattr(args, name, None)
        if value:
            setattr(args, name, str(caller_path(value)))


def cmd_build(args) -> int:
    from .build.builder import Builder
    from .build.cache import Cache
    absolute_folders(args)
    trees = select_trees(args)
    arches = archspec.select(args.arch, variant=args.variant, trees=trees)
    b = Builder(Cache(),
                pathlib.Path(args.user_tests) if args.user_tests else None,
                not args.no_install,
                pathlib.Path(args.driver).resolve() if args.driver else None,
                pathlib.Path(args.series).resolve() if args.series else None,
                trees)
    rc = 0
    for a in arches:
        art = b.build(a)
        print(f"{a.name}: kernel {art.kernel_image} initramfs "
              f"{art.initramfs} steps {art.seconds}")
        for step, err in art.errors.items():
            rc = 1
            print(f"{a.name}: {step} FAILED: {err}", file=sys.stderr)
    return rc


def select_trees(args) -> list:
    """--tree's trees: names of matrix/trees/, or paths (relative to
    where ./matrix/run was started), made absolute in args.tree."""
    names = []
    default = "all" if args.cmd == "run" and not getattr(
        args, "series", None) else treespec.DEFAULT
    for n in (args.tree or default).split(","):
        n = n.strip()
        if n and n != "all" and n not in treespec.load_all() and (
                "/" in n or n.startswith((".", "~")) or
                caller_path(n).exists()):
            n = str(caller_path(n))
        names.append(n)
    args.tree = ",".join(names)
    return treespec.select(args.tree)


def cmd_run(args, extra: list[str]) -> int:
    import pytest
    absolute_folders(args)
    try:
        trees = select_trees(args)
        archspec.select(args.arch, variant=args.variant, trees=trees)
    except (archspec.ArchError, treespec.TreeError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return 2
    if args.series and len(trees) > 1:
        print("matrix: --series replaces one tree's series: choose that "
              "tree with --tree", file=sys.stderr)
        return 2
    argv = [str(REPO / "tests" / "test_matrix.py"), f"--arch={args.arch}",
            f"--tree={args.tree}",
            "-q", "-p", "no:cacheprovider", "-o", "console_output_style=count"]
    if args.variant != "all":
        argv.append(f"--variant={args.variant}")
    if args.user_tests:
        argv.append(f"--user-tests={args.user_tests}")
    if args.driver:
        argv.append(f"--driver={args.driver}")
    if args.series:
        argv.append(f"--series={args.series}")
    if args.results:
        argv.append(f"--results={args.results}")
    if args.no_install:
        argv.append("--no-install")
    if args.history:
        argv.append(f"--history={args.history}")
    for opt in RUN_OPTIONS:     # pytest's options of the matrix plugin
        value = getattr(args, opt.replace("-", "_"))
        if value is not None:
            argv.append(f"--{opt}={value}")
    for opt in LAB_OPTIONS:      # matrix/plugin/lab.py: boards, LAVA, KCIDB
        value = getattr(args, opt.replace("-", "_"))
        if value and opt in LAB_PATHS:
            value = str(caller_path(value))
        if value:
            argv.append(f"--{opt}={value}")
    if args.baseline:
        err = check_baseline(args)
        if err:
            print(f"matrix: {err}", file=sys.stderr)
            return 2
        argv.append(f"--baseline={args.baseline}")
    if args.json == "-":
        return json_to_stdout(lambda more: int(pytest.main(argv + more +
                                                           extra)))
    if args.json:
        argv.append(f"--json={caller_path(args.json)}")
    return int(pytest.main(argv + extra))


def json_to_stdout(run) -> int:
    """run(extra pytest arguments) with --json to a file, everything it
    prints (pytest's report, the commands it starts) sent to stderr,
    then the file on stdout: stdout is the JSON document alone."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="nopfn-json-") as tmp:
        out = pathlib.Path(tmp) / "results.json"
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
        try:
            rc = run([f"--json={out}"])
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        if out.is_file():
            sys.stdout.write(out.read_text())
            sys.stdout.flush()
        else:
            print("matrix: --json -: the run left no results (no item of "
                  "the matrix ran)", file=sys.stderr)
    return rc


# options of the matrix's pytest plugin (matrix/plugin/options.py) that
# run takes before "--" too: (type, help)
RUN_OPTIONS = {
    "boot-timeout": (int, "seconds a guest may take from QEMU's start to "
                     "its shell prompt (default 60; times the target's "
                     "scale, 4 for a debug kernel)"),
    "test-timeout": (float, "seconds a guest test may stay silent before "
                     "the guest is killed (default 60; times the target's "
                     "scale)"),
}

LAB_OPTIONS = ("lg-env", "lg-target", "lg-coordinator", "lava-jobs",
               "lava-url", "kcidb", "kcidb-origin", "kcidb-url")
LAB_PATHS = ("lg-env", "lava-jobs", "kcidb")


def caller_path(value: str) -> pathlib.Path:
    """A file argument relative to where ./matrix/run was started (it
    changes to the repository first)."""
    return (pathlib.Path(os.environ.get("NOPFN_CWD", os.getcwd()))
            / os.path.expanduser(value)).resolve()


LAB_HELP = {
    "lg-env": "labgrid environment file: boot its targets (boards: console "
              "and power) instead of local QEMU",
    "lg-target": "the env file's target to boot (default: the one named "
                 "like the matrix target)",
    "lg-coordinator": "labgrid coordinator URL for RemotePlace targets",
    "lava-jobs": "write a LAVA job definition per booted target here",
    "lava-url": "URL where the --lava-jobs folder is served",
    "kcidb": "export the results as KCIDB v5 JSON to this file",
    "kcidb-origin": "KCIDB origin name (default nopfn)",
    "kcidb-url": "URL where the results folder is served",
}


def cmd_lava_jobs(args) -> int:
    """Build (or find cached) and write the LAVA jobs, booting nothing."""
    from .lab import lava
    from .build.builder import Builder
    from .build.cache import Cache
    import random
    trees = select_trees(args)
    arches = [a for a in archspec.select(args.arch, variant=args.variant,
                                         trees=trees) if a.bootable]
    b = Builder(Cache(), None, not args.no_install, trees=trees)
    seed = args.seed if args.seed is not None else \
        random.SystemRandom().getrandbits(63)

    def args_of(prog, arch):
        return prog.args.replace("{seed}", str(seed)).replace(
            "{scale}", str(arch.scale))
    builds = [(a, b.build(a)) for a in arches]
    rc = 0
    for a, art in builds:
        for step, err in art.errors.items():
            rc = 1
            print(f"{a.name}: {step} FAILED: {err}", file=sys.stderr)
    written = lava.write_jobs(caller_path(args.dir), builds, args_of,
                              args.lava_url, {"nopfn.seed": seed})
    for name, path in written.items():
        print(f"{name}: {path}")
    return rc


def cmd_kcidb(args) -> int:
    from .report import kcidb
    data = kcidb.write(caller_path(args.results), caller_path(args.out),
                       args.origin, args.url)
    print(f"{args.out}: {len(data['builds'])} builds, "
          f"{len(data['tests'])} tests (KCIDB v5, validated)")
    return 0


def check_baseline(args) -> str:
    """Why --baseline names no run of the history, or ""."""
    from .report import history
    from .report import results
    d = (pathlib.Path(args.results).resolve() if args.results
         else results.DEFAULT_ROOT / "run")
    path = results.history_path(d, args.history)
    if not path.is_file():
        return f"--baseline {args.baseline}: no history at {path}"
    with history.History(path) as h:
        if h.find(args.baseline) is None:
            return (f"--baseline {args.baseline}: no such run in {path} "
                    f"(known: {', '.join(r.key for r in h.runs(limit=5))}"
                    f"{', ...' if len(h.runs(limit=6)) > 5 else ''})")
    return ""


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="matrix")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, text in (("run", "build, boot and test the targets "
                         "(pytest: tests/test_matrix.py)"),
                        ("build", "build only, and print the artifacts")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--arch", default="all", help="comma list of "
                       "targets, by name or alias (aarch64, amd64, "
                       "qemu-arm64: `matrix list`), or all (default); "
                       "NAME@TREE names one tree's target")
        p.add_argument("--tree", default=None,
                       help="comma list of kernel trees: names of "
                       "matrix/trees/ (6.1, 6.12), all, or a kernel "
                       "tree's folder or source tarball by path (its "
                       "series: kernel/patches/MAJOR.MINOR/); default "
                       + ("all (with --series: " + treespec.DEFAULT + ")"
                          if name == "run" else treespec.DEFAULT))
        p.add_argument("--variant", default="all",
                       help="all, none, or a variant such as debug")
        p.add_argument("--user-tests", help="a folder of C test programs "
                       "of yours, run in every guest (compiled as "
                       "written: no -D of ours)")
        p.add_argument("--driver", help="a folder of modules to build and "
                       "load instead of driver/ (a copy of it with yours "
                       "added, or a mutated one); its module-params.yaml "
                       "gives their parameters")
        p.add_argument("--series", help="a copy of a tree's series "
                       "(kernel/patches/VERSION/) to apply to it instead, "
                       "with one --tree (e.g. with a mutation added)")
        p.add_argument("--no-install", action="store_true")
        if name == "run":
            p.add_argument("--results")
            p.add_argument("--baseline", help="compare with this run (id "
                           "or results folder name) instead of each "
                           "test's previous result")
            p.add_argument("--history", help="history database (default: "
                           "history.sqlite beside the run folders)")
            p.add_argument("--json", metavar="FILE", help="at the end, "
                           "every result (target, tree, test, status, "
                           "duration) and each target's status and counts "
                           "as JSON to FILE; - for stdout (pytest's report "
                           "then goes to stderr)")
            for opt, (kind, text) in RUN_OPTIONS.items():
                p.add_argument(f"--{opt}", type=kind, metavar="S",
                               help=text)
            for opt in LAB_OPTIONS:
                p.add_argument(f"--{opt}", help=LAB_HELP[opt])
    p = sub.add_parser("lava-jobs", help="build, then write LAVA jobs")
    p.add_argument("dir")
    p.add_argument("--arch", default="all")
    p.add_argument("--tree", default=None, help="as run's (default "
                   f"{treespec.DEFAULT})")
    p.add_argument("--variant", default="all")
    p.add_argument("--lava-url")
    p.add_argument("--seed", type=int)
    p.add_argument("--no-install", action="store_true")
    p = sub.add_parser("kcidb", help="a results folder as KCIDB v5 JSON")
    p.add_argument("results")
    p.add_argument("out")
    p.add_argument("--origin", default="nopfn")
    p.add_argument("--url")
    p = sub.add_parser("list", help="the targets: tier, kind, tree, what "
                       "the cache holds of each (kernel built for the "
                       "series, or compile-checked only), aliases")
    p.add_argument("--tree", default=None, help="the trees to list, as "
                   "run's (default all; with --series 6.1)")
    p.add_argument("--series", help="what the cache holds for this copy "
                   "of a tree's series (default: kernel/patches/VERSION/)")
    p.add_argument("--no-cache", action="store_true", help="do not look "
                   "in the cache (runs no compiler to name it)")
    sub.add_parser("bisect", help="the first patch of the series at "
                   "which a test goes from passing to failing on a target "
                   "(matrix/bisect.py)", add_help=False)
    sub.add_parser("parse", help="the results of a saved console log or "
                   ".ktap, as a run shows them (matrix/parselog.py)",
                   add_help=False)
    if argv and argv[0] == "bench":
        from . import bench
        return bench.main(argv[1:])
    if argv and argv[0] == "parse":
        from . import parselog
        return parselog.main(argv[1:])
    if argv and argv[0] == "bisect":
        from . import bisect
        return bisect.main(argv[1:], extra, caller_path)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            return cmd_list(args)
        if args.cmd == "build":
            return cmd_build(args)
        if args.cmd == "lava-jobs":
            return cmd_lava_jobs(args)
        if args.cmd == "kcidb":
            return cmd_kcidb(args)
        return cmd_run(args, extra)
    except (archspec.ArchError, treespec.TreeError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return 2
    except deps.MissingTools as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:     # the lab's own errors: no traceback
        from .report.kcidb import KcidbError
        from .lab.lava import LavaError
        if not isinstance(exc, (KcidbError, LavaError)):
            raise
        print(f"matrix: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
