"""How tests/test_lab_board.py compares a board's results with the local
path's: a measured case's pass and its known failure are one outcome, but
a KTAP "not ok" of a measured case that the run did not recognise as the
documented miss (its pytest item failed plainly) is a failure."""
import json
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

import test_lab_board as board  # noqa: E402

CASE = "fault_bench.sparse_lazy_beats_eager"
ITEM = f"test_case[x86_64-fault_bench-{CASE}]"


def results(tmp_path: pathlib.Path, name: str, item_status: str,
            ktap_line: str) -> pathlib.Path:
    root = tmp_path / name
    (root / "x86_64" / "boot1").mkdir(parents=True)
    (root / "x86_64.json").write_text(json.dumps(
        {"tests": {ITEM: {"status": item_status}}}))
    (root / "x86_64" / "boot1" / "fault_bench.ktap").write_text(
        f"TAP version 13\n1..1\n{ktap_line} 1 {CASE}\n")
    return root


def test_a_known_failure_and_a_pass_of_a_measured_case_are_one(tmp_path):
    known = results(tmp_path, "known", "xfailed", "not ok")
    passed = results(tmp_path, "passed", "passed", "ok")
    assert board.outcomes(known, "x86_64") == \
        board.outcomes(passed, "x86_64") == {ITEM: "measured"}
    assert board.ktap_results(known, "x86_64") == \
        board.ktap_results(passed, "x86_64") == \
        {"fault_bench.ktap": [[(CASE, "measured")]]}


def test_a_plain_failure_of_a_measured_case_is_not_measured(tmp_path):
    """A crash or a failed EXPECT of a measured case: "not ok" in KTAP,
    "failed" in pytest. It must not compare equal to a pass."""
    failed = results(tmp_path, "failed", "failed", "not ok")
    passed = results(tmp_path, "passed", "passed", "ok")
    assert board.outcomes(failed, "x86_64") == {ITEM: "failed"}
    assert board.ktap_results(failed, "x86_64") == \
        {"fault_bench.ktap": [[(CASE, "fail")]]}
    assert board.ktap_results(failed, "x86_64") != \
        board.ktap_results(passed, "x86_64")


def test_a_pass_of_a_known_failure_is_measured_too(tmp_path):
    """x86_64's sparse case is a known failure that passes in some runs:
    an XPASS on one path and an XFAIL on the other are the same outcome."""
    xpassed = results(tmp_path, "xpassed", "xpassed", "ok")
    known = results(tmp_path, "known", "xfailed", "not ok")
    assert board.outcomes(xpassed, "x86_64") == \
        board.outcomes(known, "x86_64")


def test_other_cases_keep_their_status():
    assert board.outcome("nopfn.ram_read_write_remap", "fail", True) == \
        "fail"
    assert board.outcome("nopfn.ram_read_write_remap", "pass") == "pass"
