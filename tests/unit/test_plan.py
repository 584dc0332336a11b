"""matrix/session/plan.py: what a run does with every target, and why."""
import pathlib

from matrix.session import plan

from test_archspec import GOOD, write


def toy_arches(d: pathlib.Path) -> None:
    write(d, "toy", GOOD)
    for name in ("big", "huge"):
        write(d, name, "tier: full\n" + GOOD.replace("name: toy",
                                                     f"name: {name}"))
    write(d, "own", "tier: full\n" + GOOD.replace("name: toy", "name: own")
          .replace("  cross_compile:", "  toolchain: ia64-gcc\n"
                   "  cross_compile:"))


def test_default_runs_fast_and_cached_and_checks_the_rest(tmp_path):
    arches, cands = tmp_path / "arches", tmp_path / "candidates"
    arches.mkdir()
    cands.mkdir()
    toy_arches(arches)
    write(cands, "odd", GOOD.replace("name: toy", "name: odd"))
    asked = []

    def cached(a):
        asked.append(a.label)
        return a.label == "huge"

    def compiler(a):
        return not a.kernel.toolchain
    p = plan.default_plan(cached, compiler, arches, cand_dir=cands)
    assert [a.label for a in p.run] == ["huge", "toy"]
    assert [a.label for a in p.check] == ["big"]
    assert sorted(asked) == ["big", "huge", "own"]  # fast ones: not probed
    assert set(p.left) == {"own@6.1", "odd"}
    assert "ia64-gcc" in p.left["own@6.1"] and \
        "--arch own@6.1" in p.left["own@6.1"]
    assert "candidates/odd.yaml" in p.left["odd"]
    big = next(a for a in p.check if a.label == "big")
    assert p.why(big) == plan.NOT_CACHED
    assert p.why(p.run[0]) is None


def test_a_series_change_checks_every_full_tier_target():
    """With no kernel in the cache for the series (a changed series), a
    default run compile-checks every full-tier target whose compiler it
    has: among them both mips targets (a mips-only hunk is compiled)."""
    p = plan.default_plan(lambda a: False, lambda a: True)
    assert {a.tier for a in p.run} == {"fast"}
    checked = {a.label for a in p.check}
    assert {"mips64el", "mipsel", "armhf", "ppc64", "ia64"} <= checked
    assert not (checked & {a.label for a in p.run})
    # ia64's compiler is one the matrix builds: without it, left out
    p = plan.default_plan(lambda a: False,
                          lambda a: not a.kernel.toolchain)
    assert "ia64@6.1" in p.left and "ia64" not in {a.label for a in p.check}


def test_chosen_leaves_the_others_not_selected(tmp_path):
    arches, cands = tmp_path / "arches", tmp_path / "candidates"
    arches.mkdir()
    cands.mkdir()
    toy_arches(arches)
    p = plan.chosen_plan("toy,big", arches, cand_dir=cands)
    assert [a.label for a in p.run] == ["toy", "big"] and not p.check
    assert p.left == {"huge@6.1": "not selected: --arch toy,big",
                      "own@6.1": "not selected: --arch toy,big"}
    p = plan.chosen_plan("all", arches, cand_dir=cands)
    assert not p.left
