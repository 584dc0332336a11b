"""A QEMU guest that behaves like a board in a lab: serial console on a
TCP socket (for ser2net to serve), power switched by a command.

labgrid's ExternalPowerDriver runs `cmd_on` and `cmd_off`; pointing them
at this script makes a QEMU guest a "board" whose console is reachable
only through whatever is in front of its serial socket (ser2net, in the
loopback test). It boots what the harness hands a board through the
environment (NOPFN_ARCH, NOPFN_KERNEL, NOPFN_INITRD, NOPFN_CMDLINE), with
the QEMU settings of matrix/arches/<arch>.yaml, like the local path.

  fakeboard.py on  --state DIR --port P    start QEMU (returns at once;
                                           QEMU waits for the console)
  fakeboard.py on  --state DIR --pty LINK  the same, console on a pty
  fakeboard.py off --state DIR             stop it (nothing running: ok)

With --port, QEMU's serial is `-chardev socket,server=on,wait=on`: the
guest starts when the console connects, so nothing it prints is lost
before then, as with a real board whose console is opened before the
power goes on. With --pty, it is a pseudo-terminal that LINK names, a
serial device for ser2net's `serialdev` connector (the one RFC 2217
needs); the guest starts at once, like a board on a USB serial adapter,
and what it prints before the console is opened is lost.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from typing import Optional

if __package__ in (None, ""):        # run as a script by a power command
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

from matrix.spec import arch as archspec  # noqa: E402 (after the path)


def qemu_command(arch: archspec.Arch, kernel: str, initrd: str,
                 cmdline: str, port: Optional[int]) -> list[str]:
    """QEMU for arch as the local path starts it (matrix/session/guest.py), but
    with the serial console on a TCP socket (port) or a pseudo-terminal
    (port None) and no monitor."""
    q = arch.qemu
    if q is None:
        raise SystemExit(f"fakeboard: {arch.name} has no QEMU section")
    chardev = (f"socket,id=console,host=127.0.0.1,port={port},"
               "server=on,wait=on" if port is not None else
               "pty,id=console")
    return [shutil.which(q.binary) or q.binary,
            "-machine", q.machine, "-cpu", q.cpu, "-m", q.memory,
            "-smp", str(q.smp), *shlex.split(q.extra_args),
            "-kernel", kernel, "-initrd", initrd, "-append", cmdline,
            "-display", "none", "-monitor", "none",
            "-chardev", chardev, "-serial", "chardev:console"]


def _pid(state: pathlib.Path) -> int:
    try:
        return int((state / "qemu.pid").read_text())
    except (OSError, ValueError):
        return 0


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a zombie of ours is gone too
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def power_off(state: pathlib.Path, grace: float = 3.0) -> bool:
    """Stop the board's QEMU; True when one was running."""
    pid = _pid(state)
    if not _alive(pid):
        (state / "qemu.pid").unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.05)
    (state / "qemu.pid").unlink(missing_ok=True)
    return True


PTY_RE = re.compile(rb"char device redirected to (/dev/pts/\d+) "
                    rb"\(label console\)")


def power_on(state: pathlib.Path, port: Optional[int],
             link: Optional[pathlib.Path] = None,
             timeout: float = 20.0) -> int:
    """Start QEMU in the background, return once its console is there
    (QEMU says so on stderr): the socket listens, or the pseudo-terminal
    exists and link points at it. The pid is in state/qemu.pid."""
    env = os.environ
    missing = [v for v in ("NOPFN_ARCH", "NOPFN_KERNEL", "NOPFN_INITRD",
                           "NOPFN_CMDLINE") if v not in env]
    if missing:
        raise SystemExit("fakeboard: the harness did not set "
                         + ", ".join(missing))
    state.mkdir(parents=True, exist_ok=True)
    power_off(state)
    # the target of its tree: a tree's override may change QEMU's options
    from matrix.spec import tree as treespec
    tree = env.get("NOPFN_TREE") or treespec.DEFAULT
    arch = archspec.select(env["NOPFN_ARCH"],
                           trees=treespec.select(tree))[0]
    cmd = qemu_command(arch, env["NOPFN_KERNEL"], env["NOPFN_INITRD"],
                       env["NOPFN_CMDLINE"], port)
    (state / "qemu.cmdline").write_text(shlex.join(cmd) + "\n")
    log = state / "qemu.log"
    with log.open("wb") as out:
        # Own session, no pipe to the power driver: labgrid reads the
        # power command's output until EOF.
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                             stderr=subprocess.STDOUT,
                             start_new_session=True)
    (state / "qemu.pid").write_text(f"{p.pid}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"fakeboard: QEMU exited ({p.returncode}):\n"
                             + log.read_text(errors="replace"))
        out = log.read_bytes()
        if port is not None and b"waiting for connection" in out:
            return p.pid
        m = PTY_RE.search(out)
        if port is None and m and link is not None:
            tmp = link.with_name(link.name + ".new")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(m.group(1).decode())
            os.replace(tmp, link)
            return p.pid
        time.sleep(0.05)
    power_off(state)
    raise SystemExit(f"fakeboard: QEMU did not open its console socket "
                     f"within {timeout:.0f} s")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fakeboard")
    ap.add_argument("action", choices=("on", "off"))
    ap.add_argument("--state", required=True, type=pathlib.Path)
    ap.add_argument("--port", type=int, help="TCP port of the console "
                    "socket (on)")
    ap.add_argument("--pty", type=pathlib.Path, help="instead: the console "
                    "on a pseudo-terminal, this symlink to it (what a USB "
                    "serial adapter's /dev/ttyUSB0 is to ser2net)")
    args = ap.parse_args(argv)
    if args.action == "off":
        power_off(args.state)
        return 0
    if (args.port is None) == (args.pty is None):
        ap.error("on needs --port or --pty")
    power_on(args.state, args.port, args.pty)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
