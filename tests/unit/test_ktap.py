"""KTAP parsing, and the test names read from C sources."""
from matrix.session import ktap
from matrix.build.programs import ktap_cases

HARNESS_OUTPUT = """\
TAP version 13
1..3
# Starting 3 tests from 2 test cases.
#  RUN           global.first ...
#            OK  global.first
ok 1 global.first
#  RUN           fix.second ...
# second.c:10:second:Expected 1 (1) == 2 (2)
#          FAIL  fix.second
not ok 2 fix.second
#  RUN           fix.third ...
#      SKIP      no device
ok 3 # SKIP no device
# FAILED: 1 / 3 tests passed.
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""


def test_harness_output():
    rep = ktap.parse(HARNESS_OUTPUT.splitlines())
    assert rep.version == "TAP 13"
    assert rep.plan == 3 and rep.complete and not rep.problems
    first, second, third = rep.results
    assert (first.name, first.status) == ("global.first", ktap.PASS)
    assert (second.name, second.status) == ("fix.second", ktap.FAIL)
    assert any("Expected 1 (1) == 2 (2)" in d for d in second.diagnostics)
    assert third.status == ktap.SKIP and third.directive == "SKIP no device"


def test_timestamps_give_durations():
    lines = [(0.0, "TAP version 13"), (0.0, "1..1"),
             (0.5, "#  RUN           global.slow ..."),
             (2.0, "ok 1 global.slow")]
    (res,) = ktap.parse(lines).results
    assert res.started == 0.5 and res.t == 2.0


def test_truncated_output_is_incomplete():
    text = HARNESS_OUTPUT.splitlines()[:6]
    rep = ktap.parse(text)
    assert not rep.complete
    assert rep.problems == ["plan 1..3 but 1 results"]


def test_numbering_and_bail_out():
    rep = ktap.parse(["KTAP version 1", "1..2", "ok 2 b", "Bail out! gone"])
    assert "test number 2, expected 1" in rep.problems
    assert rep.bail_out == "gone" and not rep.complete


def test_nested_subtests():
    rep = ktap.parse([
        "KTAP version 1", "1..1",
        "    KTAP version 1", "    1..2",
        "    ok 1 inner_a", "    not ok 2 inner_b",
        "not ok 1 outer"])
    (outer,) = rep.results
    assert outer.status == ktap.FAIL
    assert [(s.name, s.status) for s in outer.subtests] == \
        [("inner_a", ktap.PASS), ("inner_b", ktap.FAIL)]


def test_xfail_and_error_directives():
    rep = ktap.parse(["1..2", "ok 1 a # XFAIL known", "not ok 2 b # error x"])
    assert [r.status for r in rep.results] == [ktap.XFAIL, ktap.ERROR]


SOURCE = """\
#include "kselftest_harness.h"
/* TEST(commented_out) */
TEST(plain) { }
FIXTURE(dev) { int fd; };
FIXTURE_VARIANT(dev) { int mode; };
FIXTURE_VARIANT_ADD(dev, cached) { .mode = 1 };
FIXTURE_VARIANT_ADD(dev, uncached) { .mode = 2 };
FIXTURE_SETUP(dev) { }
FIXTURE_TEARDOWN(dev) { }
TEST_F(dev, reads) { }
TEST_F_TIMEOUT(dev, slow, 60) { }
// TEST(also_commented)
TEST_SIGNAL(bus, SIGBUS) { }
TEST_HARNESS_MAIN
"""


def test_case_names_from_source():
    assert ktap_cases(SOURCE) == [
        "global.plain", "global.bus",
        "dev.cached.reads", "dev.cached.slow",
        "dev.uncached.reads", "dev.uncached.slow"]


def test_metrics():
    lines = ["# METRIC fuzz.ops 1234 ops", "#METRIC ratio.a 1.05",
             "# METRIC bad name 3", "# METRIC x.y notanumber",
             "  # METRIC t 2.5e-3 s", "# METRIC fuzz.ops 1235 ops"]
    m = ktap.metrics(lines)
    assert m == {"fuzz.ops": {"value": 1235, "unit": "ops"},
                 "ratio.a": {"value": 1.05, "unit": ""},
                 "t": {"value": 0.0025, "unit": "s"}}


def test_program_args():
    from matrix.build.programs import program_args
    assert program_args("int x;\n// matrix-args: --seconds 10 --seed {seed}"
                        "\n") == "--seconds 10 --seed {seed}"
    assert program_args("/*\n * matrix-args: -n 3\n */\n") == "-n 3"
    assert program_args("/* matrix-args: -q */\n") == "-q"
    assert program_args("int main(void) { return 0; }\n") == ""


def test_metric_integers_are_exact():
    m = ktap.metrics(["# METRIC fuzz.seed 2194960933338486915"])
    assert m["fuzz.seed"]["value"] == 2194960933338486915
