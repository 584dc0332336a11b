"""Architecture files: parsing, validation, selection."""
import pathlib

import pytest

from matrix.spec import arch as archspec

GOOD = """\
name: toy
debian: arm64
packages:
  build: [gcc-aarch64-linux-gnu, libc6-dev-arm64-cross]
  boot: [qemu-system-arm]
kernel:
  arch: arm64
  cross_compile: aarch64-linux-gnu-
  image: arch/arm64/boot/Image
  config: |
    CONFIG_SERIAL_AMBA_PL011=y
userspace:
  cc: aarch64-linux-gnu-gcc
qemu:
  binary: qemu-system-aarch64
  machine: virt
  cpu: cortex-a57
  memory: 256M
  console: ttyAMA0
module_params:
  test_nopfn: carve_phys=0x1
"""


def write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return p


def test_shipped_files_parse():
    arches = archspec.load_all()
    assert {"x86_64", "arm64", "riscv64", "ia64"} <= set(arches)
    assert not arches["ia64"].bootable
    for name in ("x86_64", "arm64", "riscv64"):
        a = arches[name]
        assert a.bootable and a.user is not None
        assert "test_nopfn" in a.module_params


def test_one_file_is_one_architecture(tmp_path):
    write(tmp_path, "toy", GOOD)
    arches = archspec.load_all(tmp_path)
    toy = arches["toy"]
    assert toy.bootable
    assert toy.qemu.smp == 1 and toy.qemu.memory == "256M"
    assert toy.kernel.config.strip() == "CONFIG_SERIAL_AMBA_PL011=y"
    assert toy.module_params == {"test_nopfn": "carve_phys=0x1"}


def test_unknown_arch_names_the_known_ones(tmp_path):
    write(tmp_path, "toy", GOOD)
    with pytest.raises(archspec.ArchError) as exc:
        archspec.select("toy,mips", tmp_path)
    assert "unknown architecture 'mips'" in str(exc.value)
    assert "known: toy" in str(exc.value)


def test_select_keeps_order_and_all(tmp_path):
    write(tmp_path, "toy", GOOD)
    write(tmp_path, "aaa", GOOD.replace("name: toy", "name: aaa"))
    assert [a.label for a in archspec.select("toy,aaa", tmp_path)] == \
        ["toy", "aaa"]
    assert [a.label for a in archspec.select("all", tmp_path)] == \
        ["aaa", "toy"]


def test_name_must_match_file(tmp_path):
    write(tmp_path, "other", GOOD)
    with pytest.raises(archspec.ArchError, match="must match the file name"):
        archspec.load_all(tmp_path)


def test_missing_key_and_unknown_key(tmp_path):
    write(tmp_path, "toy", GOOD.replace("  image: arch/arm64/boot/Image\n",
                                        ""))
    with pytest.raises(archspec.ArchError, match="missing key 'image'"):
        archspec.load_all(tmp_path)
    write(tmp_path, "toy", GOOD + "colour: blue\n")
    with pytest.raises(archspec.ArchError, match="unknown keys"):
        archspec.load_all(tmp_path)


def test_bootable_needs_userspace(tmp_path):
    text = GOOD.replace("userspace:\n  cc: aarch64-linux-gnu-gcc\n", "")
    write(tmp_path, "toy", text)
    with pytest.raises(archspec.ArchError, match="needs a userspace"):
        archspec.load_all(tmp_path)


def test_fingerprint_changes_with_kernel_fields(tmp_path):
    write(tmp_path, "toy", GOOD)
    a = archspec.load_all(tmp_path)["toy"].fingerprint()
    write(tmp_path, "toy", GOOD.replace("PL011=y", "PL011=n"))
    b = archspec.load_all(tmp_path)["toy"].fingerprint()
    write(tmp_path, "toy", GOOD.replace("memory: 256M", "memory: 512M"))
    c = archspec.load_all(tmp_path)["toy"].fingerprint()
    assert a != b
    assert a == c      # QEMU settings do not rebuild the kernel


VARIANTS = GOOD + """\
variants:
  debug:
    cmdline: kmemleak=on
    memory: 512M
    scale: 4
"""


def test_variant_is_its_own_target(tmp_path):
    write(tmp_path, "toy", VARIANTS)
    arches = archspec.load_all(tmp_path)
    assert list(arches) == ["toy", "toy-debug"]
    plain, debug = arches["toy"], arches["toy-debug"]
    assert (plain.variant, plain.scale, plain.base) == ("", 1, "toy")
    assert (debug.variant, debug.scale, debug.base) == ("debug", 4, "toy")
    assert debug.qemu.memory == "512M" and plain.qemu.memory == "256M"
    assert debug.qemu.cmdline.endswith("kmemleak=on")
    # the same kernel description: only the fragment differs
    assert debug.fingerprint() == plain.fingerprint()


def test_variant_selection(tmp_path):
    write(tmp_path, "toy", VARIANTS)
    names = lambda sel: [a.label for a in sel]  # noqa: E731
    assert names(archspec.select("all", tmp_path)) == ["toy", "toy-debug"]
    assert names(archspec.select(None, tmp_path, "none")) == ["toy"]
    assert names(archspec.select(None, tmp_path, "debug")) == ["toy-debug"]
    assert names(archspec.select("toy", tmp_path, "debug")) == ["toy-debug"]
    assert names(archspec.select("toy-debug", tmp_path)) == ["toy-debug"]
    with pytest.raises(archspec.ArchError, match="known: debug"):
        archspec.select(None, tmp_path, "fast")


def test_variant_needs_its_fragment(tmp_path):
    write(tmp_path, "toy", GOOD + "variants:\n  nosuch: {}\n")
    with pytest.raises(archspec.ArchError, match="no config fragment"):
        archspec.load_all(tmp_path)


def test_debug_variant_shipped_for_x86_64_and_arm64():
    arches = archspec.load_all()
    assert {"x86_64-debug", "arm64-debug"} <= set(arches)
    for a in ("x86_64-debug", "arm64-debug"):
        assert arches[a].bootable and arches[a].variant == "debug"


def test_variant_shares_the_architectures_user_space():
    arches = archspec.load_all()
    assert arches["x86_64-debug"].debian == "amd64"
    assert arches["arm64-debug"].debian == "arm64"


def test_variant_overrides_cmdline_keys_and_module_params(tmp_path):
    write(tmp_path, "toy", GOOD.replace(
        "  console: ttyAMA0\n", "  console: ttyAMA0\n  cmdline: mem=128M "
        "quiet\n") + "variants:\n  debug:\n    cmdline: mem=384M kmemleak=on"
        "\n    module_params:\n      test_nopfn: carve_phys=0x2\n")
    d = archspec.load_all(tmp_path)["toy-debug"]
    assert d.qemu.cmdline == "quiet mem=384M kmemleak=on"
    assert archspec.merge_cmdline("mem=128M quiet", "!mem x=1") == "quiet x=1"
    assert d.module_params == {"test_nopfn": "carve_phys=0x2"}
    assert archspec.load_all(tmp_path)["toy"].module_params == {
        "test_nopfn": "carve_phys=0x1"}


def test_known_failures_name_real_cases():
    """A known_failures key is "<program>-<case>" as in the test_case
    id: it must name a case the sources have, or it would excuse
    nothing (and hide the typo)."""
    from matrix.build.builder import expected_programs
    cases = {f"{p.name}-{c}" for p in expected_programs(None)
             for c in p.cases}
    named = 0
    for arch in archspec.load_all().values():
        for key, why in arch.known_failures:
            assert key in cases, (arch.name, key)
            assert why.strip(), (arch.name, key)
            named += 1
    assert named >= 2


def test_shipped_tiers():
    arches = archspec.load_all()
    fast = {a.label for a in arches.values() if a.tier == "fast"}
    # what a cold ./tests/run builds: the targets the harness's own
    # tests boot (x86_64, x86_64-debug) and two more architectures
    assert fast == {"x86_64", "x86_64-debug", "arm64", "riscv64"}
    # a variant is in its architecture's tier unless it names its own
    assert arches["x86_64-debug"].tier == "fast"
    assert arches["arm64-debug"].tier == "full"
    assert arches["ia64"].tier == "full"


def test_variant_tier(tmp_path):
    write(tmp_path, "toy", GOOD + "variants:\n  debug:\n    tier: full\n")
    got = archspec.load_all(tmp_path)
    assert (got["toy"].tier, got["toy-debug"].tier) == ("fast", "full")
    write(tmp_path, "toy", GOOD + "variants:\n  debug:\n    tier: warm\n")
    with pytest.raises(archspec.ArchError) as exc:
        archspec.load_all(tmp_path)
    assert "tier must be one of fast, full, not 'warm'" in str(exc.value)


def test_tier_default_and_bad_value(tmp_path):
    write(tmp_path, "toy", GOOD)
    assert archspec.load_all(tmp_path)["toy"].tier == "fast"
    write(tmp_path, "toy", "tier: slow\n" + GOOD)
    with pytest.raises(archspec.ArchError) as exc:
        archspec.load_all(tmp_path)
    assert "tier must be one of fast, full, not 'slow'" in str(exc.value)


def test_boot_warnings_allow_only_their_line(tmp_path):
    """A machine's boot warning is allowed on that target and no other
    report with it; a bad pattern or a missing reason is refused."""
    from matrix.session import kernlog
    import re
    write(tmp_path, "toy", GOOD + 'boot_warnings:\n  "^WARNING: nvram x$": '
          'the machine prints it\n')
    toy = archspec.load_all(tmp_path)["toy"]
    pats = [re.compile(p) for p, _ in toy.boot_warnings]
    log = ["[    0.1] WARNING: nvram x", "[    2.0] Oops: bad area"]
    bad = kernlog.unexpected(log, pats)
    assert [r.text for r in bad] == ["Oops: bad area"]
    write(tmp_path, "toy", GOOD + 'boot_warnings:\n  "(": why\n')
    with pytest.raises(archspec.ArchError) as exc:
        archspec.load_all(tmp_path)
    assert "not a regular expression" in str(exc.value)
    write(tmp_path, "toy", GOOD + 'boot_warnings:\n  "x": ""\n')
    with pytest.raises(archspec.ArchError) as exc:
        archspec.load_all(tmp_path)
    assert "to the reason" in str(exc.value)


def test_shipped_boot_warnings_are_pseries_nvram_only():
    for a in archspec.load_all().values():
        for pat, why in a.boot_warnings:
            assert a.qemu and a.qemu.machine.startswith("pseries"), a.name
            assert "nvram" in pat and why


# the names --arch takes besides the files' (kernel, Debian, TuxRun)
ALIASES = {
    "ppc64le": "ppc64el", "arm": "armhf", "aarch64": "arm64",
    "amd64": "x86_64", "i686": "i386", "x86": "i386", "riscv": "riscv64",
    "s390": "s390x",
    "qemu-arm64": "arm64", "qemu-armv7": "armhf", "qemu-x86_64": "x86_64",
    "qemu-i386": "i386", "qemu-riscv64": "riscv64",
    "qemu-mips32el": "mipsel", "qemu-mips64el": "mips64el",
    "qemu-ppc64": "ppc64", "qemu-ppc64le": "ppc64el", "qemu-s390": "s390x",
    "qemu-m68k": "m68k",
}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_shipped_aliases(alias):
    assert [a.label for a in archspec.select(alias)] == [ALIASES[alias]]
    assert archspec.resolve(alias) == ALIASES[alias]


def test_an_alias_names_the_variants_too():
    assert [a.label for a in archspec.select("aarch64-debug")] == \
        ["arm64-debug"]
    assert [a.label for a in archspec.select("amd64", variant="debug")] == \
        ["x86_64-debug"]
    assert [a.label for a in archspec.select("amd64", variant="none")] == \
        ["x86_64"]
    # named twice, run once
    assert [a.label for a in archspec.select("x86_64,amd64,qemu-x86_64")] \
        == ["x86_64"]
    assert archspec.resolve("nonesuch") == "nonesuch"


def test_an_alias_is_one_targets_only(tmp_path):
    write(tmp_path, "toy", GOOD.replace("name: toy\n",
                                        "name: toy\naliases: [a, b]\n"))
    other = GOOD.replace("name: toy\n", "name: other\naliases: [b]\n")
    write(tmp_path, "other", other)
    with pytest.raises(archspec.ArchError, match="alias 'b' already names"):
        archspec.load_all(tmp_path)
    write(tmp_path, "other", other.replace("[b]", "[toy]"))
    with pytest.raises(archspec.ArchError, match="alias 'toy' already"):
        archspec.load_all(tmp_path)
    write(tmp_path, "other", other.replace("[b]", "[other]"))
    with pytest.raises(archspec.ArchError, match="is the file's name"):
        archspec.load_all(tmp_path)
    write(tmp_path, "other", other.replace("[b]", "b"))
    with pytest.raises(archspec.ArchError, match="a list of names"):
        archspec.load_all(tmp_path)
    write(tmp_path, "other", other.replace("[b]", "[c]"))
    assert [a.label for a in archspec.select("a,c", tmp_path)] == \
        ["toy", "other"]


def test_an_unknown_name_points_at_the_list():
    with pytest.raises(archspec.ArchError, match="matrix list"):
        archspec.select("amd46")


def test_the_run_and_pytest_take_aliases():
    from matrix.session import plan
    p = plan.chosen_plan("aarch64,qemu-riscv64")
    assert [a.label for a in p.run] == ["arm64", "riscv64"]
    assert "x86_64@6.1" in p.left
