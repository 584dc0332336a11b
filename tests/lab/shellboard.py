"""A stand-in board for the plumbing tests: a shell on a pseudo-terminal
behind a TCP port, as a board's serial console is behind its UART.

  shellboard.py PORT      accept one connection on 127.0.0.1:PORT, then
                          relay it to `sh -i` (prompt: the matrix's),
                          until either side closes
  shellboard.py --pty LINK
                          the same on a serial line: LINK is a symlink to
                          the far end of a pseudo-terminal (what a USB
                          serial adapter is to its host), for ser2net's
                          serialdev connector; runs until killed

No kernel, no QEMU: what it checks is the path from the harness through
labgrid and ser2net to a console and back (tests/unit/test_remote.py).
"""
import os
import pty
import select
import socket
import sys
import termios
import tty


class Line:
    """The host's end of a serial line: a pseudo-terminal whose slave
    ser2net opens by LINK; recv/sendall on its master."""

    def __init__(self, link: str):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)        # a serial line: no line discipline
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.ttyname(self.slave), link)

    def fileno(self) -> int:
        return self.master

    def recv(self, n: int) -> bytes:
        try:
            return os.read(self.master, n)
        except OSError:
            return b""

    def sendall(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        os.close(self.master)


def ready() -> None:
    """Say that the console is there to connect to: the file named by
    $SHELLBOARD_READY, which the power-on command waits for (on a loaded
    machine Python alone can take longer to start than any fixed wait)."""
    path = os.environ.get("SHELLBOARD_READY")
    if path:
        with open(path, "w"):
            pass


def main() -> int:
    if sys.argv[1] == "--pty":
        conn = Line(sys.argv[2])
        ready()
    else:
        port = int(sys.argv[1])
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port))
        srv.listen(1)
        ready()
        conn, _ = srv.accept()
        srv.close()
    pid, fd = pty.fork()
    if pid == 0:
        attrs = termios.tcgetattr(0)
        attrs[3] &= ~termios.ECHO          # like the matrix's init
        termios.tcsetattr(0, termios.TCSANOW, attrs)
        os.environ["PS1"] = "nopfn-guest# "
        print("nopfn-guest: init done, kernel shellboard", flush=True)
        os.execvp("sh", ["sh", "-i"])
    try:
        while True:
            r, _, _ = select.select([conn, fd], [], [])
            if conn in r:
                data = conn.recv(4096)
                if not data:
                    break
                os.write(fd, data)
            if fd in r:
                try:
                    data = os.read(fd, 4096)
                except OSError:         # the shell is gone
                    break
                if not data:
                    break
                conn.sendall(data)
    finally:
        conn.close()
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
