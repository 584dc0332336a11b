"""--json: a run's results as one JSON document, parsed back and held
against summary.json and the targets' records it is made from."""
import json
import os
import pathlib
import sys

import pytest

from matrix.report import jsonout, results
from test_results import fake_matrix

REPO = pathlib.Path(__file__).resolve().parents[2]


def written(tmp_path):
    m = fake_matrix(tmp_path)
    m.state["arm64"].tests["test_case[arm64-p-c]"].update(
        message="c: fail", log="arm64/boot1/p.ktap")
    results.write(m, wall=4.0)
    return m.results.path


def test_every_result_with_target_tree_status_duration(tmp_path):
    d = written(tmp_path)
    doc = jsonout.document(d)
    assert doc["format"] == jsonout.FORMAT
    assert doc["results_dir"] == str(d)
    got = {(r["target"], r["test"]): r for r in doc["results"]}
    assert set(got) == {("arm64", "test_boot[arm64]"),
                        ("arm64", "test_case[arm64-p-c]"),
                        ("ia64", "test_kernel_build[ia64]")}
    for r in doc["results"]:
        assert r["tree"] == "6.1"
        assert set(r) >= {"target", "tree", "test", "status", "duration"}
    fail = got[("arm64", "test_case[arm64-p-c]")]
    assert (fail["status"], fail["duration"]) == ("failed", 0.2)
    assert fail["message"] == "c: fail"
    assert fail["log"] == "arm64/boot1/p.ktap"
    assert "message" not in got[("arm64", "test_boot[arm64]")]
    assert doc["targets"]["ia64"]["status"] == "build-only"
    assert doc["targets"]["arm64"]["kernel_release"] == "6.1.192-nopfn"


def agrees_with_summary(doc: dict, d) -> None:
    """What a test of --json checks: the document says what summary.json
    and the targets' records say."""
    summary = json.loads((d / "summary.json").read_text())
    assert set(doc["targets"]) == set(summary["arches"])
    for name, s in summary["arches"].items():
        t = doc["targets"][name]
        assert t["status"] == s["status"] and t["counts"] == s["counts"]
        assert t["tree"] == s["tree"]
        mine = [r for r in doc["results"] if r["target"] == name]
        for status, n in s["counts"].items():
            assert sum(r["status"] == status for r in mine) == n
        rec = json.loads((d / f"{name}.json").read_text())
        assert {r["test"]: r["status"] for r in mine} == \
            {t: r["status"] for t, r in rec["tests"].items()}


def test_written_to_stdout_parses_back_and_agrees(tmp_path, capsys):
    d = written(tmp_path)
    doc = jsonout.write("-", d)
    back = json.loads(capsys.readouterr().out)
    assert back == doc
    agrees_with_summary(back, d)


def test_written_to_a_file(tmp_path):
    d = written(tmp_path)
    out = tmp_path / "out" / "run.json"
    jsonout.write(str(out), d)
    agrees_with_summary(json.loads(out.read_text()), d)


FAKE_RUN = """
import os, sys
import pytest
from matrix import __main__ as cli
from matrix.report import jsonout

def fake_main(argv):
    print("pytest's report", argv)
    sys.stdout.flush()
    os.system("echo a command pytest ran")
    dest = [a for a in argv if a.startswith("--json=")][0][7:]
    jsonout.write(dest, sys.argv[1])
    return 1

pytest.main = fake_main
sys.exit(cli.main(sys.argv[2:]))
"""


def test_run_json_dash_keeps_stdout_for_the_document(tmp_path):
    """./matrix/run --json -: pytest and what it starts print on stderr
    (file descriptor 1 is stderr meanwhile), the document alone on
    stdout. A process of its own: pytest's capture would not show file
    descriptors as they are."""
    import subprocess
    d = written(tmp_path)
    r = subprocess.run([sys.executable, "-c", FAKE_RUN, str(d), "run",
                        "--arch", "arm64", "--json", "-"],
                       cwd=REPO, capture_output=True, text=True,
                       env=dict(os.environ, NOPFN_CWD=str(tmp_path)))
    assert r.returncode == 1, r.stderr
    agrees_with_summary(json.loads(r.stdout), d)
    assert "pytest's report" in r.stderr, r.stderr
    assert "a command pytest ran" in r.stderr
    assert "--json=-" not in r.stderr and "--json=/" in r.stderr
    r = subprocess.run([sys.executable, "-c", FAKE_RUN, str(d), "run",
                        "--arch", "arm64", "--json", "rel.json"],
                       cwd=REPO, capture_output=True, text=True,
                       env=dict(os.environ, NOPFN_CWD=str(tmp_path)))
    assert f"--json={tmp_path / 'rel.json'}" in r.stdout, r.stdout
    agrees_with_summary(json.loads((tmp_path / "rel.json").read_text()), d)


def test_run_json_dash_says_when_there_is_nothing(tmp_path, monkeypatch,
                                                  capfd):
    from matrix import __main__ as cli
    monkeypatch.setattr(pytest, "main", lambda argv: 5)
    assert cli.main(["run", "--arch", "arm64", "--json", "-"]) == 5
    out, err = capfd.readouterr()
    assert out == "" and "left no results" in err


class FakeConfig:
    def __init__(self, json_dest):
        self.opts = {"--json": json_dest}
        self.pluginmanager = type("PM", (), {"getplugin":
                                             staticmethod(lambda n: None)})

    def getoption(self, name, default=None):
        return self.opts.get(name, default)


def test_the_plugin_writes_it_when_the_run_ends(tmp_path, capsys):
    """pytest's --json: the file at the session's end, from the records
    results.write() has just written; "-" on stdout at unconfigure,
    after pytest's report."""
    from matrix.plugin.hooks import MatrixHooks
    dest = tmp_path / "out.json"
    h = MatrixHooks(FakeConfig(str(dest)))
    h.matrix = fake_matrix(tmp_path)
    h.pytest_sessionfinish(session=None, exitstatus=1)
    agrees_with_summary(json.loads(dest.read_text()),
                        h.matrix.results.path)
    h.pytest_unconfigure(h.config)          # a file: nothing on stdout
    assert capsys.readouterr().out == ""
    h.config.opts["--json"] = "-"
    h.pytest_unconfigure(h.config)
    agrees_with_summary(json.loads(capsys.readouterr().out),
                        h.matrix.results.path)
