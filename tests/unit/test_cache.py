"""Cache keys and entries: what invalidates what, corruption, locking."""
import json
import multiprocessing
import pathlib
import time

from matrix.build import cache
from matrix.build import kernel, tree
from matrix.build.tree import parse_series, patched_files, tree_inputs


def test_digest_is_stable_and_order_free():
    assert cache.digest({"a": 1, "b": [1, 2]}) == \
        cache.digest({"b": [1, 2], "a": 1})
    assert cache.digest({"a": 1}) != cache.digest({"a": 2})


def test_hash_files_sees_names_and_contents(tmp_path):
    (tmp_path / "a.c").write_text("int a;")
    (tmp_path / "b.c").write_text("int b;")
    files = list(tmp_path.iterdir())
    h1 = cache.hash_files(files, tmp_path)
    (tmp_path / "b.c").write_text("int b2;")
    h2 = cache.hash_files(files, tmp_path)
    (tmp_path / "b.c").rename(tmp_path / "c.c")
    h3 = cache.hash_files(list(tmp_path.iterdir()), tmp_path)
    assert len({h1, h2, h3}) == 3


def test_tree_files_skips_build_outputs(tmp_path):
    for name in ("m.c", "Kbuild", "m.o", "m.ko", ".m.o.cmd", "m.mod.c",
                 "modules.order"):
        (tmp_path / name).write_text("x")
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "x.c").write_text("x")
    assert sorted(p.name for p in cache.tree_files(tmp_path)) == \
        ["Kbuild", "m.c"]


def test_entry_valid_only_when_complete_and_intact(tmp_path):
    c = cache.Cache(tmp_path)
    e = c.entry("kernels", "x86_64", {"tree": "t1"})
    assert not e.valid()
    e.reset()
    (e.path / "vmlinux").write_bytes(b"kernel")
    assert not e.valid()                    # no stamp: partial build
    e.complete(["vmlinux"], release="6.1")
    assert e.meta()["release"] == "6.1"
    (e.path / "vmlinux").write_bytes(b"kernal")
    assert not e.valid()                    # corrupted output
    e.complete(["vmlinux"])
    (e.path / "vmlinux").unlink()
    assert not e.valid()                    # missing output
    e.stamp.write_text("{truncated")
    assert not e.valid()                    # torn stamp


def test_key_follows_inputs(tmp_path):
    c = cache.Cache(tmp_path)
    a = c.entry("modules", "arm64", {"kernel": "k1", "driver": "d1"})
    b = c.entry("modules", "arm64", {"kernel": "k1", "driver": "d2"})
    d = c.entry("modules", "arm64", {"kernel": "k1", "driver": "d1"})
    assert a.path != b.path and a.path == d.path


def _hold(path, started, hold):
    with cache.locked(pathlib.Path(path)):
        started.set()
        time.sleep(hold)


def test_lock_serialises_two_processes(tmp_path):
    lock = tmp_path / "l.lock"
    started = multiprocessing.Event()
    p = multiprocessing.Process(target=_hold, args=(str(lock), started, 0.5))
    p.start()
    started.wait(5)
    t0 = time.monotonic()
    with cache.locked(lock):
        waited = time.monotonic() - t0
    p.join()
    assert waited > 0.3


def test_series_parsing(tmp_path):
    (tmp_path / "0001-a.patch").write_text(
        "--- a/mm/memory.c\n+++ b/mm/memory.c\n@@ -1 +1 @@\n-x\n+y\n"
        "--- /dev/null\n+++ b/include/new.h\n")
    (tmp_path / "0002-b.patch").write_text("+++ b/x/y.c\t2020-01-01\n")
    (tmp_path / "series").write_text(
        "# comment\n0001-a.patch\n\n0002-b.patch -p1 # tail\n")
    series = parse_series(tmp_path)
    assert [(p.name, s) for p, s in series] == \
        [("0001-a.patch", 1), ("0002-b.patch", 1)]
    assert patched_files(series[0][0], 1) == \
        ["mm/memory.c", "include/new.h"]
    assert patched_files(series[1][0], 1) == ["x/y.c"]


def test_series_problems_are_named(tmp_path):
    (tmp_path / "series").write_text("missing.patch\n")
    try:
        parse_series(tmp_path)
    except kernel.BuildError as exc:
        assert "no such patch" in str(exc) and "series:1" in str(exc)
    else:
        raise AssertionError("missing patch accepted")


def test_tree_key_changes_with_series(tmp_path, monkeypatch):
    tarball = tmp_path / "linux.tar.xz"
    tarball.write_bytes(b"x")
    monkeypatch.setattr(tree, "TARBALL", tarball)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "series").write_text("1.patch\n")
    (tmp_path / "p" / "1.patch").write_text("+++ b/a\n")
    series = tmp_path / "p"
    k1 = cache.digest(tree_inputs(parse_series(series)))
    (tmp_path / "p" / "1.patch").write_text("+++ b/a\n+more\n")
    k2 = cache.digest(tree_inputs(parse_series(series)))
    assert k1 != k2


def test_fragment_check():
    frag = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"s\"\n"
    assert kernel.fragment_options(frag) == \
        {"CONFIG_A": "y", "CONFIG_B": "n", "CONFIG_C": '"s"'}
    config = "CONFIG_A=y\nCONFIG_C=\"t\"\n"
    assert kernel.check_config(config, kernel.fragment_options(frag)) == \
        ['CONFIG_C="s" (got "t")']
    assert kernel.check_config("CONFIG_B=y\n", {"CONFIG_B": "n"}) == \
        ["CONFIG_B=n (got y)"]


def test_stamp_is_json(tmp_path):
    c = cache.Cache(tmp_path)
    e = c.entry("x", "y", 1)
    e.reset()
    e.complete([], figure=1)
    assert json.loads(e.stamp.read_text())["figure"] == 1


def test_heavy_lock_is_not_taken_again_under_an_ancestors_flock(tmp_path):
    """`flock LOCK ./matrix/run` must not deadlock with the run's own
    heavy lock on the same file; without the wrapper the lock is taken."""
    import subprocess
    import sys
    lock = tmp_path / "heavy.lock"
    lock.touch()
    code = ("import pathlib, sys; sys.path.insert(0, %r); "
            "from matrix.build import cache; "
            "print(cache.held_by_ancestor(pathlib.Path(%r)))"
            % (str(pathlib.Path(__file__).resolve().parents[2]), str(lock)))
    under = subprocess.run(["flock", str(lock), sys.executable, "-c", code],
                           capture_output=True, text=True, timeout=30)
    alone = subprocess.run([sys.executable, "-c", code],
                           capture_output=True, text=True, timeout=30)
    assert under.stdout.strip() == "True", under
    assert alone.stdout.strip() == "False", alone


def test_build_error_names_the_compilers_errors(tmp_path):
    """A parallel make prints a compiler's error far from the log's end:
    the error says it, last, whatever the tail shows."""
    from matrix.build.log import BuildError
    log = tmp_path / "build.log"
    log.write_text("src/arch/mips/mm/fault.c:8:2: error: #error \"broken\"\n"
                   + "sparse: noise\n" * 100 + "make: *** Error 2\n")
    text = str(BuildError("compiling failed (exit 2)", log))
    assert text.splitlines()[-1] == \
        'src/arch/mips/mm/fault.c:8:2: error: #error "broken"'
    assert "make: *** Error 2" in text


def test_background_commands_end_with_a_terminated_run(tmp_path):
    """A run killed by SIGTERM (a CI job's time limit) takes its
    background builds with it: they are in sessions of their own, which
    the terminal's or job's kill would not reach."""
    import os
    import subprocess
    import sys
    import time
    repo = pathlib.Path(__file__).resolve().parents[2]
    pidfile = tmp_path / "pid"
    code = (
        "import pathlib, sys, threading, time\n"
        f"sys.path.insert(0, {str(repo)!r})\n"
        "from matrix.build import background, log\n"
        "background.stop_on_signals()\n"
        "def work():\n"
        "    with background.thread():\n"
        f"        log.run_logged(['sh', '-c', 'echo $$ > {pidfile}; "
        "exec sleep 600'], pathlib.Path("
        f"{str(tmp_path / 'log')!r}), what='sleeping')\n"
        "threading.Thread(target=work, daemon=True).start()\n"
        "time.sleep(600)\n")
    p = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline, "the command did not start"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    p.terminate()
    assert p.wait(timeout=30) == -15
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}"):
        status = pathlib.Path(f"/proc/{child}/stat").read_text().split()[2]
        if status == "Z":
            break
        assert time.monotonic() < deadline, "the background command lives on"
        time.sleep(0.05)
