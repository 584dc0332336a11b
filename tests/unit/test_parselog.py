"""python3 -m matrix parse: a saved console log or .ktap read back the
way a run shows it, with the exit status a script can test."""
import pathlib

from matrix import __main__ as cli
from matrix import parselog
from matrix.build import programs
from matrix.session import guest, ktap

REPO = pathlib.Path(__file__).resolve().parents[2]
RACE = programs.describe("mspec_race", REPO / "tests/guest/mspec_race.c")


def harness(cases, bad=(), skip=()):
    """What kselftest_harness.h prints for these cases."""
    out = ["TAP version 13", f"1..{len(cases)}",
           f"# Starting {len(cases)} tests from 1 test cases."]
    for i, c in enumerate(cases, 1):
        out.append(f"#  RUN           {c} ...")
        if c in bad:
            out += [f"# x.c:10:{c}:Expected 1 (1) == 2 (2)",
                    f"#          FAIL  {c}", f"not ok {i} {c}"]
        elif c in skip:
            out += ["#      SKIP      no device", f"ok {i} # SKIP no device"]
        else:
            out += [f"#            OK  {c}", f"ok {i} {c}"]
    return out


def console(*programs_out):
    """A guest's console.log: the prompt before each command's output,
    the harness's end marker and exit status after it, kernel lines in
    between, CRLF line ends."""
    lines = ["nopfn-guest: init done, kernel 6.1.192-nopfn",
             "nopfn-guest# UIPQFCEVOC 0",
             "nopfn-guest# mspec 20480 0 - Live 0x0 (O)", "OERPKNRWDP 0"]
    for out, rc in programs_out:
        lines.append("nopfn-guest# " + out[0])
        lines += out[1:]
        lines.append(f"RODFAGRGBO {rc}")
    lines.append("nopfn-guest# [   12.5] a kernel line after the programs")
    return "\r\n".join(lines) + "\r\n"


def test_the_console_prompt_is_the_guests():
    assert ktap._PROMPTS.match(guest.PROMPT)


def test_split_a_console_log_into_its_programs():
    text = console((harness(["global.a", "global.b"]), 0),
                   (harness(["global.c"], bad=["global.c"]), 1))
    first, second = ktap.split(text)
    assert (first.line, first.rc, second.rc) == (5, 0, 1)
    assert [r.name for r in first.report.results] == ["global.a",
                                                      "global.b"]
    assert first.report.complete and second.report.results[0].status == \
        ktap.FAIL
    assert not any("RODFAGRGBO" in ln for ln in first.lines)
    # a .ktap file: one document, no exit status
    (only,) = ktap.split("\n".join(harness(["global.a"])) + "\n")
    assert only.rc is None and only.report.complete


def test_a_console_log_named_by_its_programs(tmp_path, capsys):
    cases = RACE.cases
    log = tmp_path / "console.log"
    log.write_text(console(
        (harness(cases, skip=[cases[1]]), 0),
        (harness(["global.mine"], bad=["global.mine"]), 1)))
    assert cli.main(["parse", str(log)]) == 1
    out = capsys.readouterr().out
    assert "mspec_race (console.log:5, exit 0)" in out
    # the harness prints a skip without its name: named from the source
    assert f"  SKIPPED  {cases[1]}: SKIP no device" in out
    assert f"  PASSED   {cases[0]}" in out
    assert f"{len(cases)} cases: {len(cases) - 1} passed, 0 failed, " \
        "1 skipped" in out
    # not a program of tests/guest/: by its place in the log
    assert "(line " in out and "exit 1)" in out
    assert "  FAILED   global.mine" in out
    assert "Expected 1 (1) == 2 (2)" in out
    assert "1 cases: 0 passed, 1 failed, 0 skipped" in out
    assert "total: 2 programs" in out and "1 bad" in out


def test_user_programs_are_named_with_their_folder(tmp_path, capsys):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "mine.c").write_text('#include "kselftest_harness.h"\n'
                                 "TEST(mine) {}\nTEST_HARNESS_MAIN\n")
    log = tmp_path / "user-mine.ktap"
    log.write_text("\n".join(harness(["global.mine"])) + "\n")
    assert cli.main(["parse", str(log), "--user-tests", str(user)]) == 0
    assert capsys.readouterr().out.startswith(
        "user/mine (user-mine.ktap:1)")


def test_a_passing_ktap_exits_0(tmp_path, capsys):
    log = tmp_path / "mspec_race.ktap"
    log.write_text("\n".join(harness(RACE.cases)) + "\n")
    assert parselog.main([str(log)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "mspec_race (mspec_race.ktap:1)"
    assert out.rstrip().endswith(f"{len(RACE.cases)} cases: "
                                 f"{len(RACE.cases)} passed, 0 failed, "
                                 "0 skipped")
    assert "total:" not in out


def test_an_incomplete_program_is_bad(tmp_path, capsys):
    """A program that died half way: its plan says more than it ran."""
    lines = harness(RACE.cases)
    log = tmp_path / "died.ktap"
    log.write_text("\n".join(lines[:-3]) + "\n")
    assert parselog.main([str(log)]) == 1
    out = capsys.readouterr().out
    n = len(RACE.cases)
    assert f"incomplete (plan 1..{n} but {n - 1} results)" in out
    # a program whose console log shows a non-zero exit is bad too
    log.write_text(console((harness(RACE.cases), 139)))
    assert parselog.main([str(log)]) == 1


def test_no_ktap_or_no_file_exits_2(tmp_path, capsys):
    empty = tmp_path / "boot.log"
    empty.write_text("nopfn-guest# \r\nnothing here\r\n")
    assert parselog.main([str(empty)]) == 2
    assert parselog.main([str(tmp_path / "gone.ktap")]) == 2
    err = capsys.readouterr().err
    assert "no KTAP in it" in err and "gone.ktap" in err
