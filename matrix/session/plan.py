"""What a run does with every target it knows, and why.

A target of matrix/arches/ is, in one run, either

- run: its kernel built, and booted and tested where QEMU has it
  (build-only where it has not, as ia64);
- checked: compile-checked only (kernel.CompileCheck: configured,
  prepared, the series' files compiled with W=1 and sparse, the modules
  and test programs built): in a default run, a full-tier target whose
  kernel is not in the cache for this series;
- left out, with the reason: not selected (--arch, --variant), or not
  even compile-checked (its compiler is one the matrix builds itself and
  has not built yet).

Candidates (matrix/candidates/, files tried but not in the matrix) are
left out too, so that a run's summary names every target it did not boot.
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Callable, Optional

from ..spec import arch as archspec
from ..spec.arch import Arch
from ..spec.tree import TreeSpec

CANDIDATE_DIR = archspec.ARCH_DIR.parent / "candidates"

NOT_CACHED = "kernel not cached for this series: compile-checked only"
BUILD_ONLY = "build-only: QEMU has no machine for it"


@dataclasses.dataclass(frozen=True)
class Plan:
    run: list[Arch]
    check: list[Arch]
    left: dict[str, str]        # target -> why it is neither run nor checked

    def why(self, a: Arch) -> Optional[str]:
        """Why a target of the run or a checked one is not booted (None:
        it is)."""
        if any(c.name == a.name for c in self.check):
            return NOT_CACHED
        if not a.bootable:
            return BUILD_ONLY
        return None


def candidates(cand_dir: pathlib.Path = CANDIDATE_DIR) -> dict[str, str]:
    """Candidate name -> why it is left out."""
    return {p.stem: f"candidate, not in the matrix: {p.parent.name}/"
            f"{p.name} says why (README, Candidates)"
            for p in sorted(cand_dir.glob("*.yaml"))}


def not_in_tree(trees: Optional[list[TreeSpec]],
                arch_dir: pathlib.Path) -> dict[str, str]:
    """The targets a tree does not have (an architecture it removed)."""
    if trees is None:
        return {}
    return {n: f"not in this tree: {why}"
            for n, why in archspec.removed(trees, arch_dir).items()}


def default_plan(kernel_cached: Callable[[Arch], bool],
                 compiler_cached: Callable[[Arch], bool],
                 arch_dir: pathlib.Path = archspec.ARCH_DIR,
                 variant: Optional[str] = None,
                 cand_dir: pathlib.Path = CANDIDATE_DIR,
                 trees: Optional[list[TreeSpec]] = None) -> Plan:
    """A default run (./tests/run without --arch): every fast-tier target,
    and each full-tier one whose kernel is cached, is run; every other
    full-tier target is compile-checked, when its compiler is there
    without building one (on each tree of trees: default the default
    tree)."""
    chosen = archspec.select(None, arch_dir, variant, trees)
    names = {a.name for a in chosen}
    run, check, left = [], [], {}
    for a in chosen:
        if a.tier == "fast" or kernel_cached(a):
            run.append(a)
        elif compiler_cached(a):
            check.append(a)
        else:
            left[a.name] = (
                f"not compile-checked: its compiler ({a.kernel.toolchain}) "
                "is one the matrix builds and has not built yet (about 15 "
                f"minutes once): ./matrix/run --arch {a.name} builds it")
    for a in archspec.select(None, arch_dir, None, trees):
        if a.name not in names:
            left[a.name] = f"not selected: --variant {variant}"
    left.update(not_in_tree(trees, arch_dir))
    left.update(candidates(cand_dir))
    return Plan(run, check, left)


def chosen_plan(names: Optional[str], arch_dir: pathlib.Path =
                archspec.ARCH_DIR, variant: Optional[str] = None,
                cand_dir: pathlib.Path = CANDIDATE_DIR,
                trees: Optional[list[TreeSpec]] = None) -> Plan:
    """A run of the targets named (--arch a,b or all) on each tree of
    trees: the others are left out as not selected."""
    chosen = archspec.select(names, arch_dir, variant, trees)
    picked = {a.name for a in chosen}
    how = f"--arch {names}" if names and names != "all" else \
        f"--variant {variant}"
    left = {a.name: f"not selected: {how}"
            for a in archspec.select(None, arch_dir, None, trees)
            if a.name not in picked}
    left.update(not_in_tree(trees, arch_dir))
    left.update(candidates(cand_dir))
    return Plan(chosen, [], left)
