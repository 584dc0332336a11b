"""Running build commands with their output in a log file."""
from __future__ import annotations

import atexit
import contextlib
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import time
from typing import Iterator, Optional, Sequence

_local = threading.local()
_running: set[subprocess.Popen] = set()     # background commands


@contextlib.contextmanager
def background() -> Iterator[None]:
    """In this thread, run_logged() runs commands in the background: at
    the idle scheduling class (chrt --idle: only on time that nothing
    else wants, so a guest or a build in the foreground keeps the cores),
    each in a process group of its own that stop_background() ends."""
    _local.background = True
    try:
        yield
    finally:
        _local.background = False


def in_background() -> bool:
    return getattr(_local, "background", False)


def stop_background() -> None:
    """Kill the background commands that run (their builds fail, and
    their cache entries stay incomplete: built again when next needed)."""
    for p in list(_running):
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)


atexit.register(stop_background)


def stop_background_on_signals() -> None:
    """Stop the background commands when this process is terminated
    (SIGTERM, SIGHUP: a CI job's time limit, a closed terminal), then die
    of the signal as before; atexit handlers do not run then, and the
    commands, each in a session of its own, would build on. Call it from
    the main thread."""
    def handler(signum, _frame):
        stop_background()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, handler)


class BuildError(Exception):
    """A build step failed; carries the log that says why."""

    def __init__(self, message: str, log: Optional[pathlib.Path] = None):
        self.log = log
        super().__init__(message)

    def tail(self, lines: int = 40) -> str:
        if self.log is None or not self.log.exists():
            return ""
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def errors(self, most: int = 10) -> list[str]:
        """The compiler's error lines of the log ("FILE:LINE:COL: error:
        ..."), which a parallel make may print far from its end."""
        if self.log is None or not self.log.exists():
            return []
        text = self.log.read_text(errors="replace").splitlines()
        return [ln for ln in text if _ERROR.search(ln)][:most]

    def __str__(self) -> str:
        msg = super().__str__()
        if self.log is not None:
            msg += f"\n  log: {self.log}\n{self.tail()}"
            errs = self.errors()
            if errs:       # last: what a truncated report keeps
                msg += "\n  the compiler's errors in it:\n" + \
                    "\n".join(errs)
        return msg


_ERROR = re.compile(r"^\S+:\d+:(?:\d+:)? (?:fatal )?error: ")


def run_logged(cmd: Sequence[str], log: pathlib.Path, *, what: str,
               env: Optional[dict] = None,
               cwd: Optional[pathlib.Path] = None) -> None:
    """Run cmd, appending its output to log; BuildError if it fails."""
    from . import progress
    log.parent.mkdir(parents=True, exist_ok=True)
    progress.emit(what)
    t0 = time.monotonic()
    bg = in_background()
    if bg and shutil.which("chrt"):
        cmd = ["chrt", "--idle", "0", *cmd]
    with log.open("a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n")
        f.flush()
        try:
            p = subprocess.Popen(list(map(str, cmd)), stdout=f,
                                 stderr=subprocess.STDOUT, env=env,
                                 cwd=cwd, start_new_session=bg)
        except OSError as exc:
            raise BuildError(f"{what}: cannot run {cmd[0]}: {exc}",
                             log) from exc
        if bg:
            _running.add(p)
        try:
            while True:     # a line now and then while a command runs
                try:
                    rc = p.wait(timeout=progress.HEARTBEAT)
                    break
                except subprocess.TimeoutExpired:
                    progress.emit(
                        f"{what}: "
                        f"{progress.duration(time.monotonic() - t0)} so far")
        except BaseException:   # interrupted: do not leave it running
            p.kill()
            p.wait()
            raise
        finally:
            _running.discard(p)
    if rc != 0:
        raise BuildError(f"{what} failed (exit {rc})", log)
