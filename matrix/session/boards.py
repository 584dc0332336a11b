"""Boards beyond this machine: the matrix on a target of a labgrid
environment file the user writes (`--lg-env board.yaml`).

The harness needs two things of a board: a console (any labgrid
ConsoleProtocol driver; for a board in a lab, a SerialDriver bound to a
NetworkSerialPort that ser2net serves) and power (any PowerProtocol
driver: ExternalPowerDriver with the user's commands, NetworkPowerDriver
for a network power switch, ...). How the kernel the matrix built gets
onto the board (TFTP, NFS, a bootloader command) is the user's: the
power commands see it in their environment:

  NOPFN_ARCH     the target (x86_64, arm64, ...)
  NOPFN_KERNEL   the kernel image the matrix built
  NOPFN_INITRD   its initramfs (busybox, the modules, the test programs)
  NOPFN_CMDLINE  the kernel command line of the local QEMU path

Booting is: power off, power on, open the console, wait for the shell
prompt of the matrix's initramfs (labgrid's ShellDriver; added with the
matrix's prompt when the file has none). Then every guest program runs
exactly as on a local QEMU guest (matrix/session/guest.py's Guest.run).

Which target of the file a matrix target uses: --lg-target NAME (for a
run of one target), else the file's target of the same name (x86_64,
arm64, ...), else the file's only target when the run has only one.
Targets without one run on local QEMU.

A `RemotePlace` resource reaches a board through a labgrid coordinator
(--lg-coordinator URL, or LG_CROSSBAR). Debian 12's labgrid 0.4.1
coordinator runs under the crossbar router, which Debian does not
package: without a coordinator the board's boot fails with a message
that says so (see README, "Boards over the network").
"""
from __future__ import annotations

import os
import pathlib
import shutil
import time
from typing import Optional

import pexpect

from ..spec.arch import Arch
from .guest import PROMPT, Guest, GuestError, labgrid_env

ENV_VARS = ("NOPFN_ARCH", "NOPFN_KERNEL", "NOPFN_INITRD", "NOPFN_CMDLINE")
DEFAULT_COORDINATOR = "ws://127.0.0.1:20408/ws"


class BoardError(GuestError):
    """The env file, its target, its power or its console is unusable."""


class Board:
    """The user's labgrid environment file and how to pick a target."""

    def __init__(self, env_file: pathlib.Path, target: Optional[str] = None,
                 coordinator: Optional[str] = None):
        self.env_file = env_file.resolve()
        self.target = target
        self.coordinator = coordinator
        if not self.env_file.is_file():
            raise BoardError(f"--lg-env {env_file}: no such file")
        self.names = target_names(self.env_file)

    def target_for(self, arch: str, n_arches: int) -> Optional[str]:
        """The env file's target for the matrix target arch, or None
        (arch runs on local QEMU)."""
        if self.target:
            if self.target not in self.names:
                raise BoardError(f"--lg-target {self.target}: not a target "
                                 f"of {self.env_file} (it has: "
                                 f"{', '.join(self.names) or 'none'})")
            return self.target
        if arch in self.names:
            return arch
        label = arch.split("@", 1)[0]   # a board named for the architecture
        if label in self.names:
            return label
        if len(self.names) == 1 and n_arches == 1:
            return self.names[0]
        return None


def target_names(env_file: pathlib.Path) -> list[str]:
    """The targets an env file declares, read by labgrid's own parser."""
    from labgrid.config import Config
    from labgrid.exceptions import InvalidConfigError
    try:
        return list(Config(str(env_file)).get_targets())
    except InvalidConfigError as exc:
        raise BoardError(f"{env_file}: not a labgrid environment: "
                         f"{exc}") from exc


def load_target(env_file: pathlib.Path, name: str,
                coordinator: Optional[str] = None):
    """labgrid's Environment for the file and its target `name`, with
    the errors a user can act on turned into BoardError."""
    from labgrid import Environment
    from labgrid.exceptions import InvalidConfigError
    if coordinator:
        os.environ["LG_CROSSBAR"] = coordinator
    try:
        env = Environment(str(env_file))
        target = env.get_target(name)
    except InvalidConfigError as exc:
        raise BoardError(f"{env_file}: target {name}: {exc}") from exc
    except (ConnectionRefusedError, OSError) as exc:
        url = env.config.get_option(
            "crossbar_url", os.environ.get("LG_CROSSBAR",
                                           DEFAULT_COORDINATOR))
        raise BoardError(
            f"{env_file}: target {name} needs a labgrid coordinator (it "
            f"has a RemotePlace) and none answers at {url} ({exc}). "
            "Start one (labgrid 0.4.1's coordinator runs under the "
            "crossbar router, which Debian 12 does not package) or name "
            "it with --lg-coordinator ws://HOST:20408/ws") from exc
    if target is None:
        raise BoardError(f"{env_file}: no target {name}")
    return env, target


def tap_console(console, transcript: pathlib.Path):
    """Keep a transcript of what the console reads, and report a console
    the far end closed (ser2net after the board's QEMU exited, a board
    that lost power) as EOF, as the local QEMU driver does."""
    import serial
    read = console._read
    log = transcript.open("ab", buffering=0)

    def _read(size: int = 1, timeout: float = 0.0):
        try:
            data = read(size=size, timeout=timeout)
        except serial.SerialException as exc:
            raise pexpect.EOF(f"the console closed ({exc})") from exc
        if data == b"":
            raise pexpect.EOF("the console closed")
        log.write(data)
        return data

    console._read = _read
    return log


class BoardGuest(Guest):
    """A Guest whose console and power are the drivers of a target in
    the user's labgrid env file."""

    def __init__(self, arch: Arch, kernel: pathlib.Path,
                 initrd: pathlib.Path, workdir: pathlib.Path,
                 boot_timeout: int, board: Board, target: str):
        super().__init__(arch, kernel, initrd, workdir, boot_timeout)
        local = labgrid_env(arch, kernel, initrd, self.transcript,
                            boot_timeout)
        self.cmdline = local["targets"][arch.name]["drivers"][
            "MatrixQEMUDriver"]["boot_args"]
        self.kernel, self.initrd = kernel, initrd
        self.board = board
        self.target_name = target
        # the results keep the env file that was used, as for QEMU guests
        shutil.copyfile(board.env_file, self.env_file)
        self.power = None
        self._log = None

    def boot_env(self) -> dict[str, str]:
        return {"NOPFN_ARCH": self.arch.name,      # LABEL@TREE
                "NOPFN_TREE": self.arch.tree,
                "NOPFN_KERNEL": str(self.kernel),
                "NOPFN_INITRD": str(self.initrd),
                "NOPFN_CMDLINE": self.cmdline}

    def boot(self) -> float:
        from labgrid.exceptions import NoDriverFoundError
        from labgrid.factory import target_factory
        _, self.target = load_target(self.board.env_file, self.target_name,
                                     self.board.coordinator)
        t = self.target
        try:
            self.power = t.get_driver("PowerProtocol", activate=False)
            console = t.get_driver("ConsoleProtocol", activate=False)
        except NoDriverFoundError as exc:
            raise BoardError(f"{self.board.env_file}: target "
                             f"{self.target_name} needs a power driver and "
                             f"a console driver: {exc}") from exc
        try:
            self.shell = t.get_driver("ShellDriver", activate=False)
        except NoDriverFoundError:
            self.shell = target_factory.make_driver(t, "ShellDriver", None, {
                "prompt": PROMPT, "login_prompt": "login: ",
                "username": "root", "login_timeout": self.boot_timeout,
                "await_login_timeout": 1})
        os.environ.update(self.boot_env())
        t0 = time.monotonic()
        try:
            t.activate(self.power)
            self.power.off()
            self.power.on()
            self._open_console(console, t0)
            self.qemu = console
            self._log = tap_console(console, self.transcript)
            t.activate(self.shell)
        except (pexpect.EOF, pexpect.TIMEOUT, OSError) as exc:
            self.kill()
            raise GuestError(f"{self.arch.name}: board {self.target_name} "
                             f"({self.board.env_file}): no shell prompt "
                             f"within {self.boot_timeout} s of power on "
                             f"({type(exc).__name__}: {exc})") from exc
        except Exception as exc:  # noqa: BLE001 - a power command failed
            self.kill()
            raise BoardError(f"{self.arch.name}: board {self.target_name}: "
                             f"{type(exc).__name__}: {exc}") from exc
        self.boot_seconds = time.monotonic() - t0
        self.alive = True
        return self.boot_seconds

    def _open_console(self, console, t0: float) -> None:
        """Open the console, retrying while the far end is not up yet
        (a ser2net that cannot reach the board yet closes at once)."""
        import serial
        while True:
            try:
                self.target.activate(console)
                return
            except (serial.SerialException, OSError) as exc:
                if time.monotonic() - t0 > self.boot_timeout:
                    raise OSError(f"cannot open the console: {exc}") from exc
                time.sleep(0.2)

    def kill(self) -> None:
        self.alive = False
        if self.target is not None:
            try:
                self.target.deactivate_all_drivers()
            except Exception:  # noqa: BLE001 - kill must not raise
                pass
        if self.power is not None:
            try:
                self.target.activate(self.power)
                self.power.off()
            except Exception:  # noqa: BLE001
                pass
            try:
                self.target.deactivate(self.power)
            except Exception:  # noqa: BLE001
                pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        self.kill()


def guest_for(board: Optional[Board], arch: Arch, kernel: pathlib.Path,
              initrd: pathlib.Path, workdir: pathlib.Path,
              boot_timeout: int, n_arches: int = 1) -> Guest:
    """The guest for one boot of arch: on the board when its env file
    has a target for it, else local QEMU."""
    if board is not None:
        name = board.target_for(arch.name, n_arches)
        if name is not None:
            return BoardGuest(arch, kernel, initrd, workdir, boot_timeout,
                              board, name)
    return Guest(arch, kernel, initrd, workdir, boot_timeout)


def board_for(options) -> Optional[Board]:
    """The board file of the options' lg_env (labgrid's --lg-env) or
    LG_ENV, if any."""
    path = options.lg_env or os.environ.get("LG_ENV")
    if not path:
        return None
    return Board(pathlib.Path(path), options.lg_target,
                 options.lg_coordinator)
