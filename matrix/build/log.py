"""Running build commands with their output in a log file."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import time
from typing import Optional, Sequence

from . import background

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
    bg = background.active()
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
            background.started(p)
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
            background.ended(p)
    if rc != 0:
        raise BuildError(f"{what} failed (exit {rc})", log)
