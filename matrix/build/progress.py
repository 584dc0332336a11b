"""Progress lines for long builds, on a terminal.

A cold run builds for over an hour before the first guest boots; pytest
shows one dot per item. These lines say what is going on meanwhile:

  [  3:12] x86_64        kernel      building kernels/x86_64-4f0c (not cached)
  [  3:12] x86_64        kernel      make tinyconfig
  [  4:13] x86_64        kernel      building the kernel: 1m00s so far
  [  6:20] x86_64        kernel      built in 3m08s
  [  6:21] x86_64        modules     cached (0.02 s)

The first column is the time since the run started. Builder.build()
(matrix/build/builder.py) reports each step's end (built or cached, how long),
the cache (matrix/build/cache.py) each entry it starts to build, run_logged()
(matrix/build/log.py) each command and, every HEARTBEAT seconds, how long the
current one has been running.

Shown when stderr is a terminal; NOPFN_PROGRESS=1 forces the lines on
(e.g. into a CI log), NOPFN_PROGRESS=0 turns them off. Under pytest the
plugin (matrix/plugin/lab.py) writes them past output capturing, through the
terminal reporter.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Callable, Iterator, Optional

from . import background

HEARTBEAT = float(os.environ.get("NOPFN_PROGRESS_EVERY", "60"))

_t0 = time.monotonic()
_writer: Optional[Callable[[str], None]] = None
_tty: Optional[bool] = None
_local = threading.local()      # .where: the (target, step)s being built


def configure(writer: Optional[Callable[[str], None]] = None,
              tty: Optional[bool] = None) -> None:
    """Where lines go (default: stderr) and whether that is a terminal."""
    global _writer, _tty, _t0
    _writer, _tty, _t0 = writer, tty, time.monotonic()


def enabled() -> bool:
    forced = os.environ.get("NOPFN_PROGRESS")
    if forced in ("0", "1"):
        return forced == "1"
    if _tty is not None:
        return _tty
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.0f} s"
    m, s = divmod(int(round(seconds)), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s"


def line(message: str) -> str:
    """message with the run's clock and the current target and step."""
    el = int(time.monotonic() - _t0)
    clock = f"{el // 60:3d}:{el % 60:02d}"
    where = _stack()
    target, step = where[-1] if where else ("", "")
    if background.active():
        message = "(background) " + message
    return f"[{clock}] {target:13} {step:11} {message}".rstrip()


def _stack() -> list[tuple[str, str]]:
    if not hasattr(_local, "where"):
        _local.where = []
    return _local.where


def emit(message: str) -> None:
    if not enabled():
        return
    text = line(message)
    if _writer is not None:
        _writer(text)
    else:
        print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def step(target: str, name: str) -> Iterator[None]:
    """Lines emitted inside are about target's step name."""
    _stack().append((target, name))
    try:
        yield
    finally:
        _stack().pop()


def step_done(seconds: float, built: bool, failed: bool) -> None:
    if failed:
        emit(f"FAILED after {duration(seconds)}")
    elif built:
        emit(f"built in {duration(seconds)}")
    else:
        emit(f"cached ({duration(seconds)})")
