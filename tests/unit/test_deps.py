"""Missing tools are named with the apt-get line that fixes them."""
from matrix.spec import arch as archspec
from matrix.build import deps


def test_missing_tool_message():
    need = [deps.Need("/nonexistent/tool", "some-package"),
            deps.Need("no-such-command-xyz", "other-package")]
    gone = deps.missing(need)
    assert gone == need
    msg = str(deps.MissingTools(gone))
    assert "apt-get install -y --no-install-recommends other-package " \
        "some-package" in msg
    assert "no-such-command-xyz" in msg


def test_arch_requirements():
    arches = archspec.load_all()
    pk = {n.package for n in deps.for_arch(arches["arm64"])}
    assert {"gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross",
            "qemu-system-arm"} <= pk
    pk = {n.package for n in deps.for_arch(arches["riscv64"])}
    assert {"gcc-riscv64-linux-gnu", "qemu-system-misc"} <= pk
    for name, cc, libc, qemu in [
            ("armhf", "gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross",
             "qemu-system-arm"),
            ("armel", "gcc-arm-linux-gnueabi", "libc6-dev-armel-cross",
             "qemu-system-arm"),
            ("i386", "gcc-i686-linux-gnu", "libc6-dev-i386-cross",
             "qemu-system-x86"),
            ("ppc64el", "gcc-powerpc64le-linux-gnu",
             "libc6-dev-ppc64el-cross", "qemu-system-ppc"),
            ("s390x", "gcc-s390x-linux-gnu", "libc6-dev-s390x-cross",
             "qemu-system-misc"),
            ("mips64el", "gcc-mips64el-linux-gnuabi64",
             "libc6-dev-mips64el-cross", "qemu-system-mips"),
            ("mipsel", "gcc-mipsel-linux-gnu", "libc6-dev-mipsel-cross",
             "qemu-system-mips")]:
        a = arches.get(name) or archspec.parse(
            archspec.ARCH_DIR / "pending" / f"{name}.yaml")
        pk = {n.package for n in deps.for_arch(a)}
        assert {cc, libc, qemu} <= pk, name
    pk = {n.package for n in deps.for_arch(arches["ia64"])}
    assert {"binutils-ia64-linux-gnu", "gcc-12-source"} <= pk
    assert not any(p.startswith("qemu") for p in pk)
    # a compile check does not boot: no QEMU
    pk = {n.package for n in deps.for_arch(arches["armhf"], boot=False)}
    assert pk == {"gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross"}


def test_an_architecture_is_one_file(tmp_path):
    """Adding an architecture is one YAML file: its Debian name and
    packages come from it, nothing else names them."""
    import shutil
    from matrix.session import plan
    shutil.copy(archspec.ARCH_DIR / "armhf.yaml", tmp_path / "armhf.yaml")
    (tmp_path / "toy.yaml").write_text(
        (archspec.ARCH_DIR / "armhf.yaml").read_text()
        .replace("name: armhf", "name: toy")
        .replace("aliases: [arm, qemu-armv7]", "aliases: [toy32]")
        .replace("debian: armhf", "debian: toyhf")
        .replace("gcc-arm-linux-gnueabihf,", "gcc-toy-linux-gnu,"))
    toy = archspec.load_all(tmp_path)["toy"]
    assert archspec.resolve("toy32", tmp_path) == "toy"
    assert toy.debian == "toyhf"
    assert "gcc-toy-linux-gnu" in {n.package for n in deps.for_arch(toy)}
    p = plan.chosen_plan("toy", tmp_path, cand_dir=tmp_path / "none")
    assert [a.label for a in p.run] == ["toy"] and "armhf@6.1" in p.left
    (tmp_path / "bad.yaml").write_text(
        (tmp_path / "toy.yaml").read_text().replace("name: toy",
                                                     "name: bad")
        .replace("debian: toyhf\n", ""))
    try:
        archspec.load_all(tmp_path)
    except archspec.ArchError as exc:
        assert "missing key 'debian'" in str(exc)
    else:
        raise AssertionError("a file without debian: was taken")


def test_ensure_reports_without_installing(monkeypatch):
    monkeypatch.setattr(deps, "HOST", [deps.Need("/nonexistent/x", "pkg-x")])
    monkeypatch.setattr(deps, "PYTHON", [])
    try:
        deps.ensure([], install=False)
    except deps.MissingTools as exc:
        assert "pkg-x" in str(exc)
    else:
        raise AssertionError("missing tool not reported")


def test_lab_requirements_are_installed_by_setup():
    """What the lab's tests need is declared, and matrix/setup installs
    it (ser2net, LAVA's validator, jsonschema)."""
    import pathlib
    setup = (pathlib.Path(__file__).resolve().parents[2] / "matrix" /
             "setup").read_text()
    for n in deps.LAB:
        assert f" {n.package}" in setup or f"\t{n.package}" in setup, \
            n.package
    assert not deps.missing(deps.LAB), deps.MissingTools(
        deps.missing(deps.LAB))


def test_every_package_need_is_checked():
    """Package Needs all have what == "": each is looked at on its own."""
    need = [deps.Need("", "bash"), deps.Need("", "no-such-package-xyz")]
    assert deps.missing(need) == need[1:]
