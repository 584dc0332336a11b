"""Where an item of the matrix runs within its target's group.

Each target's items run together, phase by phase: its builds, the
boot, the module loads, the test programs (each program's cases, then
the program itself), the kernel's mm selftests, the module unloads, the
kernel log scan last.
"""
from __future__ import annotations

import dataclasses
import enum


class Phase(enum.IntEnum):
    BUILD = 0           # the kernel built, or compile-checked
    SERIES = 1          # the series' files: W=1, sparse, compiled at all
    MODULES = 2
    PROGRAMS = 3        # the test programs built
    BOOT = 4
    LOAD = 5            # the modules loaded at boot
    TESTS = 6           # the programs run: their cases, then each program
    SELFTESTS = 7       # the kernel's mm selftests
    UNLOAD = 8
    KERNEL_LOG = 9


@dataclasses.dataclass(frozen=True)
class Step:
    phase: Phase
    sub: int            # order within the phase (a case before its program)
    guest: bool         # needs a booted guest
    user: bool          # needs the target's user space
    role: str           # targets: "run" (built), "check" (compile-checked
    #                     only) or "both"


NONE = Step(Phase.BUILD, 0, False, False, "run")


def item(phase: Phase, sub: int = 0, guest: bool = False,
         user: bool = False, role: str = "run"):
    """Decorator of a matrix test: where its items run within their
    target's group, and for which targets: those the run builds ("run"),
    those it only compile-checks ("check"), or both."""
    assert role in ("run", "check", "both")

    def mark(fn):
        # one attribute: pytest makes each function attribute a keyword
        # that -k matches (a "needs_user" would match -k user)
        fn.matrix_step = Step(phase, sub, guest, user, role)
        return fn
    return mark


def step_of(fn) -> Step:
    return getattr(fn, "matrix_step", NONE)
