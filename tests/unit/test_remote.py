"""Boards through labgrid env files (matrix/session/boards.py,
matrix/lab/fakeboard.py): what can be checked without a board or a
guest."""
import os
import pathlib
import shutil
import socket
import subprocess
import time

import pexpect
import pytest
import serial
import yaml

from matrix.spec import arch as archspec
from matrix.lab import fakeboard
from matrix.session import boards as remote

REPO = pathlib.Path(__file__).resolve().parents[2]
RPI4 = REPO / "docs" / "lab" / "rpi4.yaml"
SER2NET_RPI4 = REPO / "docs" / "lab" / "ser2net-rpi4.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_rpi4_example_loads_in_labgrid():
    """The README's board example is a labgrid env file labgrid loads:
    a NetworkSerialPort (ser2net, RFC 2217) under a SerialDriver and a
    network power switch under a NetworkPowerDriver, for arm64."""
    from labgrid.driver import SerialDriver
    from labgrid.driver.powerdriver import NetworkPowerDriver
    from labgrid.resource import NetworkSerialPort
    assert remote.target_names(RPI4) == ["arm64"]
    env, target = remote.load_target(RPI4, "arm64")
    power = target.get_driver("PowerProtocol", activate=False)
    console = target.get_driver("ConsoleProtocol", activate=False)
    assert isinstance(power, NetworkPowerDriver)
    assert (power.port.model, power.port.index) == ("gude24", "3")
    assert isinstance(console, SerialDriver)
    assert isinstance(console.port, NetworkSerialPort)
    assert (console.port.port, console.port.protocol) == (4001, "rfc2217")
    # the power switch model is one labgrid has a back end for
    assert power.backend.__name__.endswith(".gude24")
    # and the matrix picks the target for its arm64 runs by itself
    board = remote.Board(RPI4)
    assert board.target_for("arm64", 3) == "arm64"
    assert board.target_for("x86_64", 3) is None


def test_ser2net_example_is_accepted_by_ser2net(tmp_path):
    """ser2net 4 starts with the example configuration (its accepter on
    another port here, to stay off 4001)."""
    if shutil.which("ser2net") is None:
        pytest.fail("ser2net is missing: ./matrix/setup installs it")
    port = free_port()
    conf = tmp_path / "ser2net.yaml"
    conf.write_text(SER2NET_RPI4.read_text().replace(
        "tcp,4001", f"tcp,127.0.0.1,{port}"))
    p = subprocess.Popen(["ser2net", "-n", "-u", "-c", str(conf),
                          "-P", str(tmp_path / "pid")],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            assert p.poll() is None, p.stdout.read().decode()
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("ser2net did not listen on its accepter")
    finally:
        p.terminate()
        p.wait()


def test_target_choice(tmp_path):
    env = tmp_path / "two.yaml"
    env.write_text("targets:\n  x86_64: {}\n  rpi4: {}\n")
    b = remote.Board(env)
    assert b.target_for("x86_64", 2) == "x86_64"
    assert b.target_for("arm64", 2) is None            # runs locally
    assert remote.Board(env, "rpi4").target_for("arm64", 1) == "rpi4"
    with pytest.raises(remote.BoardError, match="not a target"):
        remote.Board(env, "nope").target_for("arm64", 1)
    one = tmp_path / "one.yaml"
    one.write_text("targets:\n  board: {}\n")
    assert remote.Board(one).target_for("arm64", 1) == "board"
    assert remote.Board(one).target_for("arm64", 2) is None
    with pytest.raises(remote.BoardError, match="no such file"):
        remote.Board(tmp_path / "missing.yaml")


def test_remote_place_without_coordinator(tmp_path):
    """A RemotePlace target parses, and without a coordinator the error
    says what is missing and where it looked (--lg-coordinator)."""
    env = tmp_path / "place.yaml"
    env.write_text("targets:\n  arm64:\n    resources:\n      RemotePlace:\n"
                   "        name: rpi4-lab1\n    drivers:\n"
                   "      SerialDriver: {}\n")
    assert remote.target_names(env) == ["arm64"]
    url = f"ws://127.0.0.1:{free_port()}/ws"
    old = os.environ.get("LG_CROSSBAR")
    try:
        with pytest.raises(remote.BoardError) as exc:
            remote.load_target(env, "arm64", coordinator=url)
    finally:
        if old is None:
            os.environ.pop("LG_CROSSBAR", None)
        else:
            os.environ["LG_CROSSBAR"] = old
    msg = str(exc.value)
    assert url in msg and "RemotePlace" in msg and "crossbar" in msg


def test_bad_env_file(tmp_path):
    env = tmp_path / "bad.yaml"
    env.write_text("targets:\n  arm64:\n    drivers:\n"
                   "      NoSuchDriver: {}\n")
    with pytest.raises(remote.BoardError, match="NoSuchDriver"):
        remote.load_target(env, "arm64")


class FakeConsole:
    def __init__(self, chunks):
        self.chunks = list(chunks)

    def _read(self, size=1, timeout=0.0):
        item = self.chunks.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def test_console_transcript_and_eof(tmp_path):
    """What the board's console reads is kept; a console its far end
    closed (pyserial: 'socket disconnected') is EOF, as when QEMU exits
    on the local path."""
    log = tmp_path / "console.log"
    c = FakeConsole([b"boot", b"ing\n",
                     serial.SerialException("socket disconnected")])
    f = remote.tap_console(c, log)
    assert c._read() == b"boot" and c._read(size=4) == b"ing\n"
    with pytest.raises(pexpect.EOF, match="socket disconnected"):
        c._read()
    f.close()
    assert log.read_bytes() == b"booting\n"
    c = FakeConsole([b""])
    remote.tap_console(c, log).close
    with pytest.raises(pexpect.EOF):
        c._read()


def test_fakeboard_qemu_command_has_only_the_tcp_console():
    a = archspec.load_all()["x86_64"]
    cmd = fakeboard.qemu_command(a, "/k", "/i", "console=ttyS0 x", 4555)
    text = " ".join(cmd)
    assert cmd[cmd.index("-chardev") + 1] == (
        "socket,id=console,host=127.0.0.1,port=4555,server=on,wait=on")
    assert cmd[cmd.index("-serial") + 1] == "chardev:console"
    assert cmd[cmd.index("-append") + 1] == "console=ttyS0 x"
    assert cmd[cmd.index("-machine") + 1] == a.qemu.machine
    assert "-qmp" not in cmd and "-nographic" not in cmd and "stdio" \
        not in text
    assert cmd.count("-serial") == 1 and "-monitor none" in text


def test_fakeboard_off_without_qemu(tmp_path):
    assert fakeboard.power_off(tmp_path) is False
    (tmp_path / "qemu.pid").write_text("999999999\n")
    assert fakeboard.power_off(tmp_path) is False
    assert not (tmp_path / "qemu.pid").exists()


def test_fakeboard_runs_as_the_power_command_runs_it(tmp_path):
    """A lab's power command runs the file as a script, from anywhere."""
    r = subprocess.run(["/usr/bin/python3", fakeboard.__file__, "off",
                        "--state", str(tmp_path)], cwd="/",
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def test_fakeboard_on_needs_the_harness_environment(tmp_path, monkeypatch):
    for v in remote.ENV_VARS:
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(SystemExit, match="NOPFN_KERNEL"):
        fakeboard.power_on(tmp_path, 1)


SHELLBOARD = REPO / "tests" / "lab" / "shellboard.py"


def _ser2net(tmp_path, port, connector, accepter="tcp"):
    conf = tmp_path / "ser2net.yaml"
    conf.write_text(
        "%YAML 1.1\n---\nconnection: &board\n"
        f"    accepter: {accepter},127.0.0.1,{port}\n    enable: on\n"
        "    options:\n      kickolduser: true\n"
        f"    connector: {connector}\n")
    p = subprocess.Popen(["ser2net", "-n", "-u", "-c", str(conf),
                          "-P", str(tmp_path / "ser2net.pid")],
                         stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 5
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p
        except OSError:
            assert time.monotonic() < deadline, "ser2net did not start"
            time.sleep(0.05)


@pytest.mark.parametrize("protocol", ["raw", "rfc2217"])
def test_board_plumbing_through_ser2net(tmp_path, protocol):
    """BoardGuest end to end without a kernel: labgrid's
    ExternalPowerDriver starts a shell "board" (tests/lab/shellboard.py),
    the console is a NetworkSerialPort on a real ser2net in front of it,
    the matrix adds the ShellDriver; commands run with their output and
    exit status, the harness environment reaches the power command, a
    board that dies is EOF (guest died), and each boot powers on anew."""
    if shutil.which("ser2net") is None:
        pytest.fail("ser2net is missing: ./matrix/setup installs it")
    board_port, port = free_port(), free_port()
    pidfile, seen = tmp_path / "board.pid", tmp_path / "env.txt"
    # raw: ser2net's connector is the board's TCP socket; RFC 2217 needs
    # a serial device behind ser2net (it sets the line's speed): the
    # board is then on a pseudo-terminal, as behind a USB serial adapter
    line = tmp_path / "ttyUSB0"
    where = f"--pty {line}" if protocol == "rfc2217" else str(board_port)
    # power on: start the board and wait until its console is there
    ready = tmp_path / "board.ready"
    on = (f"sh -c 'echo \"$NOPFN_ARCH $NOPFN_KERNEL $NOPFN_CMDLINE\" "
          f">> {seen}; rm -f {ready}; SHELLBOARD_READY={ready} "
          f"/usr/bin/python3 {SHELLBOARD} {where} "
          f"</dev/null >/dev/null 2>&1 & echo $! > {pidfile}; "
          f"timeout 20 sh -c \"until [ -e {ready} ]; do sleep 0.05; "
          "done\"'")
    off = f"sh -c 'kill $(cat {pidfile} 2>/dev/null) 2>/dev/null; true'"
    env = tmp_path / "board.yaml"
    env.write_text(yaml.safe_dump({"targets": {"x86_64": {
        "resources": {"NetworkSerialPort": {
            "host": "127.0.0.1", "port": port, "protocol": protocol}},
        "drivers": {"SerialDriver": {},
                    "ExternalPowerDriver": {"cmd_on": on,
                                            "cmd_off": off}}}}}))
    if protocol == "rfc2217":
        s2n = _ser2net(tmp_path, port, f"serialdev,{line},115200n81,local",
                       "telnet(rfc2217),tcp")
    else:
        s2n = _ser2net(tmp_path, port, f"tcp,127.0.0.1,{board_port}")
    arch = archspec.load_all()["x86_64"]
    board = remote.Board(env)
    try:
        g = remote.BoardGuest(arch, pathlib.Path("/k/vmlinux"),
                              pathlib.Path("/k/initramfs.cpio"),
                              tmp_path / "boot1", 20, board, "x86_64")
        g.boot()
        out = g.run("echo hello; echo world; false")
        assert [ln.text for ln in out.lines] == ["hello", "world"]
        assert out.rc == 1
        assert g.check("echo $((6 * 7))").strip() == "42"
        console = (tmp_path / "boot1" / "console.log").read_text()
        assert "hello\nworld\n" in console
        if protocol == "raw":   # the board waited for its console
            assert "nopfn-guest: init done" in console
        assert (tmp_path / "boot1" / "labgrid-env.yaml").read_text() == \
            env.read_text()
        # the board's shell dies: over TCP the connection closes (EOF,
        # "guest died"); on a serial line the line just goes quiet, as a
        # real board's does, and the harness's time limit catches it
        with pytest.raises(remote.GuestError,
                           match="guest died" if protocol == "raw" else
                           "printed no complete line"):
            g.run("kill -9 $$", timeout=3)
        assert not g.alive
        g2 = remote.BoardGuest(arch, pathlib.Path("/k/vmlinux"),
                               pathlib.Path("/k/initramfs.cpio"),
                               tmp_path / "boot2", 20, board, "x86_64")
        g2.boot()
        assert g2.check("echo again").strip() == "again"
        g2.stop()
    finally:
        subprocess.run(["sh", "-c", off])
        s2n.terminate()
        s2n.wait()
    lines = seen.read_text().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("x86_64 /k/vmlinux console=ttyS0 ")


def _pytest_argv(monkeypatch) -> dict:
    """pytest.main replaced: what `matrix run` hands it lands in the
    returned dict's "argv"."""
    import pytest as pt
    seen: dict = {}

    def fake_main(argv):
        seen["argv"] = argv
        return 0
    monkeypatch.setattr(pt, "main", fake_main)
    return seen


def test_run_passes_lab_options_to_pytest(monkeypatch, tmp_path):
    """./matrix/run changes to the repository first: relative file
    arguments are the caller's (NOPFN_CWD), and reach pytest as the
    options of labgrid's and the lab plugin."""
    from matrix import __main__ as cli
    monkeypatch.setenv("NOPFN_CWD", str(tmp_path))
    assert cli.caller_path("board.yaml") == tmp_path / "board.yaml"
    assert cli.caller_path("/abs/k.json") == pathlib.Path("/abs/k.json")
    seen = _pytest_argv(monkeypatch)
    rc = cli.main(["run", "--arch", "x86_64", "--lg-env", "board.yaml",
                   "--lg-target", "rpi4", "--kcidb", "out/k.json",
                   "--lava-jobs", "jobs", "--kcidb-origin", "mylab"])
    assert rc == 0
    argv = seen["argv"]
    assert f"--lg-env={tmp_path / 'board.yaml'}" in argv
    assert f"--kcidb={tmp_path / 'out' / 'k.json'}" in argv
    assert f"--lava-jobs={tmp_path / 'jobs'}" in argv
    assert "--lg-target=rpi4" in argv and "--kcidb-origin=mylab" in argv


def test_remote_place_coordinator_from_the_env_file(tmp_path, monkeypatch):
    """The coordinator an env file names (options: crossbar_url) is the
    one labgrid's client tries, and the one the error names."""
    monkeypatch.delenv("LG_CROSSBAR", raising=False)
    url = f"ws://127.0.0.1:{free_port()}/ws"
    env = tmp_path / "place.yaml"
    env.write_text(f"options:\n  crossbar_url: {url}\ntargets:\n  arm64:\n"
                   "    resources:\n      RemotePlace:\n        name: p\n")
    with pytest.raises(remote.BoardError, match=url.replace("/", ".")):
        remote.load_target(env, "arm64")


def test_run_takes_the_timeouts_and_the_callers_folders(monkeypatch,
                                                        tmp_path):
    """--boot-timeout and --test-timeout are run's own options (before
    "--"), passed to pytest; the folder options are the caller's, as the
    lab's files are."""
    from matrix import __main__ as cli
    monkeypatch.setenv("NOPFN_CWD", str(tmp_path))
    seen = _pytest_argv(monkeypatch)
    rc = cli.main(["run", "--arch", "amd64", "--boot-timeout", "90",
                   "--test-timeout", "7.5", "--user-tests", "mine",
                   "--driver", "mydriver", "--series", "/abs/patches",
                   "--results", "out", "--", "-k", "user/"])
    assert rc == 0
    argv = seen["argv"]
    assert "--boot-timeout=90" in argv and "--test-timeout=7.5" in argv
    assert f"--user-tests={tmp_path / 'mine'}" in argv
    assert f"--driver={tmp_path / 'mydriver'}" in argv
    assert "--series=/abs/patches" in argv
    assert f"--results={tmp_path / 'out'}" in argv
    assert "--arch=amd64" in argv and argv[-2:] == ["-k", "user/"]
    rc = cli.main(["run", "--arch", "x86_64"])
    assert not [a for a in seen["argv"] if "timeout" in a]
    with pytest.raises(SystemExit):
        cli.main(["run", "--boot-timeout", "soon"])
