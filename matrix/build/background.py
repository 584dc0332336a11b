"""Builds in the background: a thread that runs its build commands at
the idle scheduling class, on the time that the foreground (guests, the
builds a test waits for) leaves, and what ends them with the run."""
from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
from typing import Iterator

_local = threading.local()
_running: set[subprocess.Popen] = set()     # background commands


@contextlib.contextmanager
def thread() -> Iterator[None]:
    """In this thread, log.run_logged() runs commands in the background: at
    the idle scheduling class (chrt --idle: only on time that nothing
    else wants, so a guest or a build in the foreground keeps the cores),
    each in a process group of its own that stop() ends."""
    _local.background = True
    try:
        yield
    finally:
        _local.background = False


def active() -> bool:
    """Whether this thread's commands run in the background."""
    return getattr(_local, "background", False)


def started(p: subprocess.Popen) -> None:
    _running.add(p)


def ended(p: subprocess.Popen) -> None:
    _running.discard(p)


def stop() -> None:
    """Kill the background commands that run (their builds fail, and
    their cache entries stay incomplete: built again when next needed)."""
    for p in list(_running):
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)


atexit.register(stop)


def stop_on_signals() -> None:
    """Stop the background commands when this process is terminated
    (SIGTERM, SIGHUP: a CI job's time limit, a closed terminal), then die
    of the signal as before; atexit handlers do not run then, and the
    commands, each in a session of its own, would build on. Call it from
    the main thread."""
    def handler(signum, _frame):
        stop()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, handler)
