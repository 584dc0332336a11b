"""The private apt state for foreign architectures' busybox."""
from matrix import cache as cachemod
from matrix.userspace import PrivateApt


def test_main_index_is_the_release_suites(tmp_path):
    c = cachemod.Cache(tmp_path)
    apt = PrivateApt(c, "ppc64el", "deb")
    lists = apt.root / "lists"
    lists.mkdir(parents=True)
    assert not apt.have_main_index()
    # what an update that failed on the security suite leaves
    for name in ("bookworm-updates_main_binary-ppc64el_Packages.lz4",
                 "bookworm-security_main_binary-ppc64el_Packages.lz4",
                 "bookworm_main_binary-amd64_Packages.lz4"):
        (lists / f"deb.debian.org_debian_dists_{name}").touch()
    assert not apt.have_main_index()
    (lists / "deb.debian.org_debian_dists_bookworm_main_binary-ppc64el_"
     "Packages.lz4").touch()
    assert apt.have_main_index()
    src = PrivateApt(c, "amd64", "deb-src")
    (src.root / "lists").mkdir(parents=True)
    assert not src.have_main_index()
    (src.root / "lists" / "deb.debian.org_debian_dists_bookworm_main_"
     "source_Sources.lz4").touch()
    assert src.have_main_index()
