"""The matrix's pytest options, and the run's Options made of them."""
from __future__ import annotations

import os
import pathlib
from typing import Optional

from ..session.matrix import MAX_BOOTS, Options


def pytest_addoption(parser):
    g = parser.getgroup("matrix", "nopfn architecture matrix")
    g.addoption("--arch", default=os.environ.get("NOPFN_ARCH", "default"),
                help="comma list of architectures, or all (every file in "
                "matrix/arches/), or default: the fast tier, plus each "
                "full-tier target whose kernel is already cached; the "
                "others are compile-checked (matrix/session/plan.py)")
    g.addoption("--tree", default=os.environ.get("NOPFN_TREE", ""),
                help="comma list of kernel trees: names of matrix/trees/ "
                "(6.1, 6.12), all, or a kernel tree's folder or source "
                "tarball by path (default: 6.1; ./matrix/run's: all)")
    g.addoption("--variant", default=os.environ.get("NOPFN_VARIANT", "all"),
                help="which kernels: all (default: every architecture and "
                "its variants), none (plain kernels only), or a variant "
                "(e.g. debug: kernel/config/debug.config)")
    g.addoption("--driver", default=None, help="build and load the "
                "modules of this folder instead of driver/ (a copy of it "
                "with yours added, or a mutated one); its "
                "module-params.yaml gives their parameters")
    g.addoption("--series", default=None, help="apply this copy of the "
                "tree's series (kernel/patches/VERSION/, its series file) "
                "instead, with one --tree (e.g. with a mutation added)")
    g.addoption("--user-tests", default=None, help="folder of extra C test "
                "sources (KTAP or plain exit status) for every guest")
    g.addoption("--results", default=None, help="results folder (default "
                "results/<date>-<pid>)")
    g.addoption("--json", default=None, metavar="FILE", help="at the end "
                "of the run, write every result (target, tree, test, "
                "status, duration) and each target's status and counts as "
                "JSON to FILE; - for stdout, after pytest's report "
                "(matrix/report/jsonout.py)")
    g.addoption("--test-timeout", type=float, default=60.0,
                help="seconds a guest test may stay silent before the "
                "guest is killed")
    g.addoption("--boot-timeout", type=int, default=60,
                help="seconds a guest may take from QEMU's start to its "
                "shell prompt (times the target's scale)")
    g.addoption("--reruns", type=int, choices=(0, 1), default=1,
                help="rerun a failing guest program once, to tell a flaky "
                "failure from a real one (0: do not)")
    g.addoption("--tolerate-flaky", action="store_true",
                help="a test that fails and then passes on its rerun is "
                "reported FLAKY without failing the run (default: it "
                "fails the run)")
    g.addoption("--max-boots", type=int, default=MAX_BOOTS,
                help="boots of one target's guest before its remaining "
                "items fail without booting again")
    g.addoption("--max-output", type=int, default=1 << 20,
                help="bytes a guest command may print before the guest "
                "is killed as flooding its console")
    g.addoption("--seed", type=int, default=None, help="the {seed} given "
                "to the test programs that take one (default: a fresh "
                "random seed per program and run, kept in the results)")
    g.addoption("--no-install", action="store_true",
                help="report missing packages instead of installing them")
    g.addoption("--baseline", default=None, help="compare with this run "
                "(its id or results folder name) instead of each test's "
                "previous result")
    g.addoption("--history", default=None, help="history database (default "
                "history.sqlite beside the run folders)")


def _folder(value: Optional[str]) -> Optional[pathlib.Path]:
    return pathlib.Path(value).resolve() if value else None


def options_from(config) -> Options:
    """The run's Options from pytest's (labgrid's --lg-env and
    --lg-coordinator included, when its plugin is there)."""
    opt = config.getoption
    return Options(
        arch=opt("--arch"), variant=opt("--variant"), tree=opt("--tree"),
        driver=_folder(opt("--driver")), series=_folder(opt("--series")),
        user_tests=_folder(opt("--user-tests")), results=opt("--results"),
        test_timeout=opt("--test-timeout"),
        boot_timeout=opt("--boot-timeout"), reruns=opt("--reruns"),
        tolerate_flaky=opt("--tolerate-flaky"),
        max_boots=opt("--max-boots"), max_output=opt("--max-output"),
        seed=opt("--seed"), install=not opt("--no-install"),
        baseline=opt("--baseline"), history=opt("--history"),
        lg_env=opt("lg_env", None), lg_target=opt("--lg-target", None),
        lg_coordinator=opt("lg_coordinator", None))
