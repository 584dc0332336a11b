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


# Linux 6.1's kselftest_harness.h, line for line: SKIP() sets passed = 1
# after the failed EXPECT_EQ (logged on stderr by __TH_LOG), the child
# exits 255, and __run_test() prints "OK" and then the SKIP result.
HARNESS_6_1_SKIP_AFTER_EXPECT = """\
TAP version 13
1..3
# Starting 3 tests from 2 test cases.
#  RUN           global.plain ...
#            OK  global.plain
ok 1 global.plain
#  RUN           dev.cached.reads ...
# mspec_mmap.c:88:reads:Expected base->in_use (0) == c.in_use (1)
# mspec_mmap.c:88:reads:uncached
#      SKIP      no uncached pages on this target
#            OK  dev.cached.reads
ok 2 # SKIP no uncached pages on this target
#  RUN           dev.uncached.reads ...
#      SKIP      no uncached pages on this target
#            OK  dev.uncached.reads
ok 3 # SKIP no uncached pages on this target
# PASSED: 3 / 3 tests passed.
# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:2 error:0
"""


def test_skip_after_failed_expectation_is_a_failure():
    rep = ktap.parse(HARNESS_6_1_SKIP_AFTER_EXPECT.splitlines())
    assert rep.complete and not rep.problems
    ok, expect_then_skip, plain_skip = rep.results
    assert (ok.name, ok.status, ok.note) == ("global.plain", ktap.PASS, "")
    assert expect_then_skip.status == ktap.FAIL
    assert expect_then_skip.directive == \
        "SKIP no uncached pages on this target"
    assert expect_then_skip.note.startswith(
        "an expectation failed before the skip (SKIP no uncached pages")
    assert "Expected base->in_use (0) == c.in_use (1)" in \
        expect_then_skip.note
    assert plain_skip.status == ktap.SKIP and plain_skip.note == ""


def test_expectation_after_the_skip_fails_too():
    # 6.1 runs the test body after a SKIP() in FIXTURE_SETUP (setup
    # "passed"), and the case is still reported as skipped
    rep = ktap.parse([
        "TAP version 13", "1..1",
        "#  RUN           dev.cached.reads ...",
        "#      SKIP      no device",
        "# t.c:12:reads:Expected 0 (0) == fd (-1)",
        "#            OK  dev.cached.reads",
        "ok 1 # SKIP no device"])
    (res,) = rep.results
    assert res.status == ktap.FAIL
    assert res.note.startswith("an expectation failed after the skip")


def test_signal_case_after_failed_expectation_is_a_failure():
    # TEST_SIGNAL: dying by the expected signal sets passed = 1, though
    # an EXPECT failed before it
    rep = ktap.parse([
        "TAP version 13", "1..1",
        "#  RUN           global.bus ...",
        "# t.c:40:bus:Expected 1 (1) == touched (0)",
        "#            OK  global.bus",
        "ok 1 global.bus"])
    (res,) = rep.results
    assert res.status == ktap.FAIL
    assert res.note == ("reported ok, but an expectation failed: "
                        "# t.c:40:bus:Expected 1 (1) == touched (0)")


def test_a_th_log_line_alone_is_no_failure():
    rep = ktap.parse(["1..1", "# t.c:5:reads:mapped 4 pages",
                      "#      SKIP      no device", "ok 1 # SKIP no device"])
    assert rep.results[0].status == ktap.SKIP


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


# A known failure covers only the documented miss: recorded output of
# fault_bench's sparse case on riscv64 (CI, 2026-12-06), and the same case
# failing other ways.
MISS_HEAD = """TAP version 13
1..1
#  RUN           fault_bench.sparse_lazy_beats_eager ...
# /w/tests/guest/fault_bench.c:799:sparse_lazy_beats_eager:eager/nopfn sparse: median 10.5, rounds 10.0 .. 11.0; issue's bar 32.0
# /w/tests/guest/fault_bench.c:802:sparse_lazy_beats_eager:fault premium (a fault / an eager page): median 5.45, rounds 5.19 .. 5.70
"""
MISS_BAR = """# /w/tests/guest/fault_bench.c:805:sparse_lazy_beats_eager:Expected 0 (0) != med >= bar (0)
# /w/tests/guest/fault_bench.c:806:sparse_lazy_beats_eager:eager/nopfn sparse median 10.5 under the bar 32.0
"""
MISS_END = """# sparse_lazy_beats_eager: Test failed at step #6
#          FAIL  fault_bench.sparse_lazy_beats_eager
not ok 1 fault_bench.sparse_lazy_beats_eager
"""


def miss_of(text: str):
    return ktap.measured_miss(ktap.parse(text.splitlines()).results[0])


def test_the_documented_miss_is_recognised_with_its_figure():
    assert miss_of(MISS_HEAD + MISS_BAR + MISS_END) == \
        "eager/nopfn sparse median 10.5 under the bar 32.0"
    dense = ("TAP version 13\n1..1\n"
             "# /w/fault_bench.c:762:nopfn_vs_vmf_dense:Expected 0 (0) != "
             "med <= BAR_NOPFN_VS_VMF (0)\n"
             "# /w/fault_bench.c:763:nopfn_vs_vmf_dense:median 1.290 over "
             "the bar 1.05\n"
             "# nopfn_vs_vmf_dense: Test failed at step #2\n"
             "not ok 1 fault_bench.nopfn_vs_vmf_dense\n")
    assert miss_of(dense) == "median 1.290 over the bar 1.05"
    # 6.12's kselftest_harness.h: "Test failed", no step (armhf@6.12)
    assert miss_of(MISS_HEAD + MISS_BAR + MISS_END.replace(
        " at step #6", "")) == \
        "eager/nopfn sparse median 10.5 under the bar 32.0"


def test_any_other_failure_of_a_measured_case_is_not_the_miss():
    # terminated by a signal after the miss line
    assert miss_of(MISS_HEAD + MISS_BAR + "# sparse_lazy_beats_eager: Test "
                   "terminated unexpectedly by signal 11\n"
                   "not ok 1 fault_bench.sparse_lazy_beats_eager\n") is None
    # a timeout
    assert miss_of(MISS_HEAD + "# sparse_lazy_beats_eager: Test terminated "
                   "by timeout\nnot ok 1 fault_bench.sparse_lazy_beats_eager"
                   "\n") is None
    # a second failed expectation beside the bar's
    assert miss_of(MISS_HEAD + "# /w/fault_bench.c:790:sparse_lazy_beats_"
                   "eager:Expected 0 (0) == ret (-12)\n" + MISS_BAR +
                   MISS_END) is None
    # no figure: failed before it measured anything
    assert miss_of(MISS_HEAD + "# /w/fault_bench.c:780:sparse_lazy_beats_"
                   "eager:Expected 1 (1) == fig->done (0)\n" + MISS_END) \
        is None
    # a figure on the right side of its bar is no miss
    assert miss_of(MISS_HEAD + MISS_BAR.replace("10.5 under", "40.5 under")
                   + MISS_END) is None
    # not a failure at all
    assert miss_of("TAP version 13\n1..1\nok 1 fault_bench.x\n") is None
