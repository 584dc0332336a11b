"""A QEMU guest per architecture, driven over its serial console by labgrid.

The labgrid environment (a YAML file per guest, written next to the run's
results) holds one target with two drivers: MatrixQEMUDriver, which is
labgrid's QEMUDriver plus a console transcript and prompt end-of-file
handling when QEMU exits (a panicked guest with panic=-1 and -no-reboot),
and labgrid's ShellDriver.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil
import subprocess
import time
from typing import Optional

import attr
import pexpect
import yaml
from labgrid import Environment
from labgrid.driver import QEMUDriver
from labgrid.factory import target_factory
from labgrid.util import gen_marker

from ..spec.arch import Arch

PROMPT = "nopfn-guest# "
PANIC_RE = re.compile(r"Kernel panic - not syncing|---\[ end Kernel panic")


@target_factory.reg_driver
@attr.s(eq=False)
class MatrixQEMUDriver(QEMUDriver):
    """QEMUDriver that keeps a transcript and reports QEMU's exit as EOF."""

    transcript = attr.ib(default="", validator=attr.validators.instance_of(
        str))

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self._log = None

    def on(self):
        if self.transcript:
            self._log = open(self.transcript, "ab", buffering=0)
        super().on()

    def _read(self, size=1, timeout=10):
        data = super()._read(size=size, timeout=timeout)
        if data == b"":
            raise pexpect.EOF("QEMU closed the console (the guest is gone)")
        if self._log is not None:
            self._log.write(data)
        return data

    def kill(self) -> None:
        """Stop QEMU now, whatever the guest is doing."""
        if self._child is not None:
            self._child.kill()
            self._child.wait()
            self._child = None
        self.status = 0
        if self._log is not None:
            self._log.close()
            self._log = None

    def off(self):
        try:
            super().off()
        except Exception:  # QEMU already gone: QMP fails; make sure it is
            self.kill()
        if self._log is not None:
            self._log.close()
            self._log = None


MAX_OUTPUT = 4 << 20      # bytes one guest command may print


class GuestError(Exception):
    """The guest died, hung or could not boot; the message says which."""


class ConsoleFlood(Exception):
    """A command printed more than the guest's output limit."""


@dataclasses.dataclass
class Line:
    t: float        # seconds since the command was sent
    text: str


@dataclasses.dataclass
class Output:
    lines: list[Line]
    rc: Optional[int]
    seconds: float

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


CONSOLE_LOGLEVEL = "loglevel=5"


def labgrid_env(arch: Arch, kernel: pathlib.Path, initrd: pathlib.Path,
                transcript: pathlib.Path, boot_timeout: int) -> dict:
    q = arch.qemu
    assert q is not None
    args = f"-smp {q.smp} -initrd {initrd} {q.extra_args}".strip()
    # loglevel=5: the console prints warnings and worse (WARN, lockdep,
    # KASAN, oopses, panics), so that a guest killed before its dmesg is
    # read still left them in its console log; notices and info stay off
    # the console, which boots as fast as with quiet under TCG.
    cmdline = f"console={q.console} panic=-1 {CONSOLE_LOGLEVEL} " \
        f"{q.cmdline}".strip()
    return {
        "targets": {arch.name: {"drivers": {
            "MatrixQEMUDriver": {
                "qemu_bin": "qemu", "machine": q.machine, "cpu": q.cpu,
                "memory": q.memory, "extra_args": args, "kernel": "kernel",
                "boot_args": cmdline, "transcript": str(transcript)},
            "ShellDriver": {
                "prompt": PROMPT, "login_prompt": "login: ",
                "username": "root", "login_timeout": boot_timeout,
                "await_login_timeout": 1},
        }}},
        "images": {"kernel": str(kernel)},
        "tools": {"qemu": shutil.which(q.binary) or q.binary},
    }


class Guest:
    """One booted guest: boot, run commands, stream KTAP, stop."""

    def __init__(self, arch: Arch, kernel: pathlib.Path,
                 initrd: pathlib.Path, workdir: pathlib.Path,
                 boot_timeout: int = 60):
        self.arch = arch
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.transcript = workdir / "console.log"
        self.env_file = workdir / "labgrid-env.yaml"
        self.env_file.write_text(yaml.safe_dump(labgrid_env(
            arch, kernel, initrd, self.transcript, boot_timeout)))
        self.boot_timeout = boot_timeout
        self.qemu: Optional[MatrixQEMUDriver] = None
        self.shell = None
        self.target = None
        self.boot_seconds = 0.0
        self.busy_seconds = 0.0     # time spent running guest commands
        self.alive = False
        # A command that prints more than this floods the console: the
        # guest is killed rather than the harness filling memory and disk.
        self.max_output = MAX_OUTPUT

    # ------------------------------------------------------------ lifecycle
    def boot(self) -> float:
        env = Environment(str(self.env_file))
        self.target = env.get_target(self.arch.name)
        self.qemu = self.target.get_driver("MatrixQEMUDriver")
        self.shell = self.target.get_driver("ShellDriver", activate=False)
        t0 = time.monotonic()
        try:
            self.target.activate(self.qemu)
            self.qemu.on()
            self.target.activate(self.shell)
        except (pexpect.EOF, pexpect.TIMEOUT, OSError) as exc:
            self.kill()
            raise GuestError(f"{self.arch.name}: no shell prompt within "
                             f"{self.boot_timeout} s of starting QEMU "
                             f"({type(exc).__name__}: {exc})") from exc
        self.boot_seconds = time.monotonic() - t0
        self.alive = True
        return self.boot_seconds

    def kill(self) -> None:
        self.alive = False
        if self.qemu is not None:
            self.qemu.kill()

    def stop(self) -> None:
        if self.target is not None:
            try:
                if self.qemu is not None and self.qemu.status:
                    self.qemu.off()
                self.target.deactivate_all_drivers()
            except Exception:  # noqa: BLE001 - stop must not raise
                self.kill()
        self.alive = False

    # ------------------------------------------------------------- commands
    def run(self, cmd: str, timeout: float = 30.0,
            line_timeout: Optional[float] = None) -> Output:
        """Run a shell command, stream its output; kill the guest on hang.

        timeout bounds the whole command, line_timeout the silence between
        two lines of output (a test that hangs in the kernel).
        """
        line_timeout = line_timeout or timeout
        if not self.alive:
            raise GuestError(f"{self.arch.name}: guest is not running")
        console = self.qemu
        marker = gen_marker()
        hidden = f"'{marker[:4]}''{marker[4:]}'"
        end_re = re.compile(rf"^{marker} (\d+)$")
        t0 = time.monotonic()
        console.sendline(f"{cmd} 2>&1; echo {hidden} $?")
        lines: list[Line] = []
        rc = None
        echoed = False
        nbytes = 0
        try:
            while True:
                left = timeout - (time.monotonic() - t0)
                if left <= 0:
                    raise pexpect.TIMEOUT("command timeout")
                _, before, _, _ = console.expect(
                    rb"\n", timeout=min(left, line_timeout))
                nbytes += len(before) + 1
                if nbytes > self.max_output:
                    raise ConsoleFlood()
                text = before.decode(
                    "utf-8", "replace").rstrip("\r")
                now = time.monotonic() - t0
                if not echoed:      # the tty echoes the command line first
                    echoed = True
                    if hidden in text:
                        continue
                m = end_re.match(text.strip())
                if m:
                    rc = int(m.group(1))
                    break
                lines.append(Line(now, text))
                if PANIC_RE.search(text):
                    raise pexpect.EOF("kernel panic")
            console.expect(PROMPT, timeout=max(5.0, timeout / 10))
        except (pexpect.TIMEOUT, ConsoleFlood, pexpect.EOF) as exc:
            dt = time.monotonic() - t0
            self.busy_seconds += dt
            self.kill()
            if isinstance(exc, pexpect.TIMEOUT):
                why = (f"'{cmd}' printed no complete line for "
                       f"{line_timeout:.0f} s or ran past {timeout:.0f} s; "
                       "guest killed")
            elif isinstance(exc, ConsoleFlood):
                why = (f"'{cmd}' flooded the console (more than "
                       f"{self.max_output} bytes in {dt:.1f} s); guest "
                       "killed")
            else:
                why = f"guest died during '{cmd}' ({exc})"
            raise GuestError(f"{self.arch.name}: {why}") from exc
        dt = time.monotonic() - t0
        self.busy_seconds += dt
        return Output(lines, rc, dt)

    def check(self, cmd: str, timeout: float = 30.0) -> str:
        out = self.run(cmd, timeout)
        if out.rc != 0:
            raise GuestError(f"'{cmd}' exited {out.rc}:\n{out.text}")
        return out.text

    def console_tail(self, lines: int = 150) -> str:
        try:
            text = self.transcript.read_bytes().decode("utf-8", "replace")
        except OSError:
            return "(no console log)"
        return "\n".join(text.replace("\r", "").splitlines()[-lines:])


def qemu_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True,
                             text=True, check=True).stdout
        return out.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"
