"""A board over the network, end to end on loopback: the matrix boots a
guest whose console it reaches only through ser2net, as a labgrid
NetworkSerialPort, and whose power is a labgrid ExternalPowerDriver that
starts and stops it (matrix/lab/fakeboard.py). The same guest programs, with
the same seeds, must give the same results as on the local QEMU path.

Each test runs ./matrix/run (python3 -m matrix run) twice or once, on
the kernel and initramfs the matrix builds (cached after the first run).
"""
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time

import pytest
import yaml

from matrix.spec import arch as archspec
from matrix.build import deps
from matrix.report import kcidb
from matrix.session import ktap
from matrix.lab import lava
from matrixbuild import prebuild

REPO = pathlib.Path(__file__).resolve().parent.parent
FAKEBOARD = REPO / "matrix" / "lab" / "fakeboard.py"
SEED = 4242

# The guest cases that compare a time measured in the guest with a bar.
# Under TCG the figure moves with the host's load, and where it sits on
# its bar one run passes and the next records the target's known failure
# (x86_64's eager/nopfn sparse ratio: 31.0 to 37.7 against 32 in
# docs/benchmarks.md; the CI run of 2bf8f22 read xfailed locally and
# passed on the board). Both paths must measure them; on which side of
# the bar each lands says nothing about the console path, so a pass and
# a known failure count as the same outcome. A plain failure does not.
MEASURED = ("fault_bench.nopfn_vs_vmf_dense",
            "fault_bench.nopfn_vs_vmf_dense_read",
            "fault_bench.sparse_lazy_beats_eager")


def measured(case: str) -> bool:
    """case: a pytest item name or a KTAP result name."""
    return any(case == m or case.endswith(f"-{m}]") for m in MEASURED)


def outcome(case: str, status: str, known: bool = False) -> str:
    """A measured case's pass or known failure as "measured"; a KTAP
    "fail" of one only where the run recognised it as the documented
    miss (known: its pytest item is xfailed), else it stays a failure."""
    if measured(case) and (status in ("passed", "xfailed", "xpassed",
                                      ktap.PASS) or
                           (status == ktap.FAIL and known)):
        return "measured"
    return status


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def board_arch(config) -> str:
    """x86_64 unless the run's --arch leaves it out: then its first
    booted plain target."""
    try:
        chosen = [a for a in archspec.select(config.getoption("--arch"),
                                             variant="none") if a.bootable]
    except archspec.ArchError:
        chosen = []
    names = [a.name for a in chosen]      # on 6.1, the default tree
    if not names or "x86_64@6.1" in names:
        return "x86_64@6.1"
    return names[0]


class Ser2net:
    """ser2net on loopback: port -> the board's console socket."""

    def __init__(self, tmp: pathlib.Path, connector: str,
                 protocol: str = "raw"):
        self.port = free_port()
        accepter = (f"telnet(rfc2217),tcp,127.0.0.1,{self.port}"
                    if protocol == "rfc2217" else
                    f"tcp,127.0.0.1,{self.port}")
        self.conf = tmp / "ser2net.yaml"
        self.conf.write_text(
            "%YAML 1.1\n---\nconnection: &board\n"
            f"    accepter: {accepter}\n    enable: on\n"
            "    options:\n      kickolduser: true\n"
            f"    connector: {connector}\n")
        self.log = (tmp / "ser2net.log").open("wb")
        self.proc = subprocess.Popen(
            ["ser2net", "-n", "-u", "-c", str(self.conf),
             "-P", str(tmp / "ser2net.pid")],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            assert self.proc.poll() is None, (tmp / "ser2net.log").read_text()
            # a connection with no board behind it is closed at once; it
            # shows that ser2net listens
            try:
                socket.create_connection(("127.0.0.1", self.port),
                                         0.2).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()


def env_file(tmp: pathlib.Path, arch: str, ser2net_port: int,
             console: str, protocol: str) -> pathlib.Path:
    """console: the fakeboard's console option, --port Q or --pty LINK."""
    assert FAKEBOARD.is_file(), FAKEBOARD
    state = tmp / "board-state"
    py = shutil.which("python3", path="/usr/bin") or sys.executable
    env = {"targets": {arch: {
        "resources": {"NetworkSerialPort": {
            "host": "127.0.0.1", "port": ser2net_port,
            "protocol": protocol, "speed": 115200}},
        "drivers": {
            "SerialDriver": {},
            "ExternalPowerDriver": {
                "cmd_on": f"{py} {FAKEBOARD} on --state {state} "
                          f"{console}",
                "cmd_off": f"{py} {FAKEBOARD} off --state {state}"}}}}}
    path = tmp / "board.yaml"
    path.write_text(yaml.safe_dump(env))
    return path


def run_matrix(arch: str, results: pathlib.Path, *extra: str,
               pytest_args=()) -> subprocess.CompletedProcess:
    prebuild(arch, "--variant", "none")
    cmd = ["/usr/bin/python3", "-m", "matrix", "run", "--arch", arch,
           "--tree", "6.1", "--variant", "none", "--results", str(results), *extra,
           "--", "--seed", str(SEED), *pytest_args]
    env = dict(os.environ, NOPFN_PROGRESS="0")
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          timeout=1800, env=env)


def statuses(results: pathlib.Path, arch: str) -> dict[str, str]:
    rec = json.loads((results / f"{arch}.json").read_text())
    return {k: v["status"] for k, v in rec["tests"].items()}


def outcomes(results: pathlib.Path, arch: str) -> dict[str, str]:
    """statuses(), with a measured case's pass or known failure as one."""
    return {k: outcome(k, v) for k, v in statuses(results, arch).items()}


def ktap_results(results: pathlib.Path, arch: str) -> dict[str, list]:
    """Per program: its KTAP results as (name, outcome), every boot."""
    xfailed = {k for k, v in statuses(results, arch).items()
               if v == "xfailed"}
    out: dict[str, list] = {}
    for f in sorted((results / arch).glob("boot*/*.ktap")):
        rep = ktap.parse([(0.0, ln) for ln in
                          f.read_text(errors="replace").splitlines()])
        out.setdefault(f.name, []).append(
            [(r.name, outcome(r.name, r.status,
                              any(k.endswith(f"-{r.name}]")
                                  for k in xfailed)))
             for r in rep.results])
    return out


@pytest.fixture
def lab(tmp_path):
    deps.ensure_needs(deps.LAB)
    yield tmp_path
    # whatever happened: no board left running
    from matrix.lab import fakeboard
    fakeboard.power_off(tmp_path / "board-state")


def test_board_behind_ser2net_gives_the_local_results(lab, request):
    """A guest reached only through ser2net on loopback as a
    NetworkSerialPort, powered by an ExternalPowerDriver, runs every guest
    program of the matrix and its results (pytest items and each
    program's KTAP) equal those of the local path."""
    arch = board_arch(request.config)
    board_port = free_port()
    s2n = Ser2net(lab, f"tcp,127.0.0.1,{board_port}")
    try:
        env = env_file(lab, arch, s2n.port, f"--port {board_port}", "raw")
        local = run_matrix(arch, lab / "local", "--kcidb",
                           str(lab / "kcidb.json"), "--lava-jobs",
                           str(lab / "lava"))
        board = run_matrix(arch, lab / "board", "--lg-env", str(env))
    finally:
        s2n.stop()
    tail = (f"local:\n{local.stdout[-3000:]}\n{local.stderr[-2000:]}\n"
            f"board:\n{board.stdout[-3000:]}\n{board.stderr[-2000:]}")
    assert (lab / "local" / f"{arch}.json").is_file(), tail
    assert (lab / "board" / f"{arch}.json").is_file(), tail

    # the board was the only console: labgrid's NetworkSerialPort to
    # ser2net, QEMU's serial a socket only ser2net connected to
    used = yaml.safe_load((lab / "board" / arch / "boot1" /
                           "labgrid-env.yaml").read_text())
    res = used["targets"][arch]["resources"]["NetworkSerialPort"]
    assert res["port"] == s2n.port
    qemu = (lab / "board-state" / "qemu.cmdline").read_text()
    assert f"port={board_port},server=on,wait=on" in qemu
    assert "-qmp" not in qemu and "-nographic" not in qemu
    console = (lab / "board" / arch / "boot1" / "console.log").read_text(
        errors="replace")
    assert "nopfn-guest: init done" in console, console[-2000:]
    assert not (lab / "board-state" / "qemu.pid").exists()    # powered off

    s_local, s_board = outcomes(lab / "local", arch), \
        outcomes(lab / "board", arch)
    guest_items = [k for k in s_local if k.startswith("test_case[")]
    assert len(guest_items) > 20, tail
    diff = {k: (s_local.get(k), s_board.get(k))
            for k in set(s_local) | set(s_board)
            if s_local.get(k) != s_board.get(k)}
    assert not diff, f"local vs board: {diff}\n{tail}"
    k_local, k_board = ktap_results(lab / "local", arch), \
        ktap_results(lab / "board", arch)
    assert k_local and k_local == k_board
    assert local.returncode == board.returncode, tail

    # the same real run as KCIDB data and as LAVA jobs, each checked by
    # its format's own validator
    data = json.loads((lab / "kcidb.json").read_text())
    kcidb.validate(data)
    paths = {t["path"]: t for t in data["tests"]}
    ok = [t for t in data["tests"] if t.get("misc", {}).get("ktap")]
    assert ok and all(t["log_url"].endswith(".ktap") for t in ok)
    assert len([p for p in paths if p.startswith("nopfn.")]) >= \
        len(guest_items)
    job = yaml.safe_load((lab / "lava" / f"{arch}.yaml").read_text())
    lava.validate(job)
    steps = job["actions"][2]["test"]["definitions"][0]["repository"][
        "run"]["steps"]
    assert any(f"--seed {SEED}" in s for s in steps)


def test_board_over_rfc2217(lab, request):
    """The board as in a lab: its serial port a device on the ser2net
    host (a pseudo-terminal here, as /dev/ttyUSB0 of a USB serial
    adapter), served with RFC 2217 (labgrid's default NetworkSerialPort
    protocol, as in the Raspberry Pi example): it boots, loads the
    modules and runs a program."""
    arch = board_arch(request.config)
    line = lab / "ttyUSB0"
    s2n = Ser2net(lab, f"serialdev,{line},115200n81,local", "rfc2217")
    try:
        env = env_file(lab, arch, s2n.port, f"--pty {line}", "rfc2217")
        r = run_matrix(arch, lab / "board", "--lg-env", str(env),
                       pytest_args=["-k", "test_boot or test_module_load "
                                    "or nopfn_faults"])
    finally:
        s2n.stop()
    st = statuses(lab / "board", arch)
    assert st and all(v == "passed" for v in st.values()), \
        f"{st}\n{r.stdout[-3000:]}"
    assert any(k.startswith("test_case[") for k in st)
    assert r.returncode == 0, r.stdout[-3000:]
