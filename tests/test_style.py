"""Kernel code style: checkpatch.pl --strict from the extracted tree.

Every patch of the series and every C file of driver/ (and of the
example module, docs/examples/mydriver/) must be clean:
no error, no warning, no check, with two exceptions for the patches,
each matched exactly:

- UNKNOWN_COMMIT_ID on a Fixes: tag or on a line that names a commit the
  way checkpatch asks ('commit 0123456789ab ("title'; the backports name
  their upstream commit so): checkpatch looks the commit up with git,
  and the extracted linux-source tarball has no history;
- BAD_SIGN_OFF on Originally-by: (the credit to the 2006 code the series
  ports), a tag the kernel uses that is not in checkpatch's list;
- ENOSYS on a selftest's check that a syscall is missing from the kernel
  (`errno == ENOSYS` after calling it): the one meaning checkpatch's
  rule allows ("invalid syscall nr"), which its own comment says it
  cannot tell apart;
- FILE_PATH_CHANGES ("does MAINTAINERS need updating?") on a patch whose
  new files an F: line of the patched tree's MAINTAINERS already covers:
  the answer to its question, checked here.
"""
import fnmatch
import pathlib
import re
import subprocess

import pytest

from matrix.build import cache
from matrix.build.tree import Tree, created_files, parse_series

REPO = pathlib.Path(__file__).resolve().parent.parent
SERIES = parse_series()
PATCHES = [p for p, _ in SERIES]
# driver/, and the example module of README's "Test your own driver"
DRIVER = sorted(p for d in ("driver", "docs/examples/mydriver")
                for p in (REPO / d).rglob("*") if p.suffix in (".c", ".h"))


@pytest.fixture(scope="module")
def tree() -> pathlib.Path:
    return Tree(cache.Cache()).ensure()


def checkpatch(tree: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["perl", "scripts/checkpatch.pl", "--strict",
                           "--color=never", *args], cwd=tree,
                          capture_output=True, text=True)


# (type, what the report's first line must say, what the patch line is)
ALLOWED = [
    ("UNKNOWN_COMMIT_ID", r"Unknown commit id '[0-9a-f]{12}'",
     r"^Fixes: [0-9a-f]{12} \(\".+\"\)$"),
    ("UNKNOWN_COMMIT_ID", r"Unknown commit id '[0-9a-f]{12}'",
     r"^.*\bcommit [0-9a-f]{12} \(\"\S"),
    ("BAD_SIGN_OFF", r"Non-standard signature: Originally-by:",
     r"^Originally-by: [^<>]+ <[^<>@]+@[^<>]+>$"),
    ("ENOSYS", r"ENOSYS means 'invalid syscall nr' and nothing else",
     r"^\s*if \(\w+ < 0 && errno == ENOSYS\)$"),
]


def maintained(rel: str, maintainers: str) -> bool:
    """Whether an F: pattern of MAINTAINERS covers @rel (a folder's
    pattern, ending in /, covers everything below it)."""
    for m in re.finditer(r"^F:\s+(\S+)$", maintainers, re.M):
        pat = m.group(1)
        if (pat.endswith("/") and rel.startswith(pat)) or \
                fnmatch.fnmatchcase(rel, pat):
            return True
    return False


def unexpected_reports(out: str) -> list[str]:
    """checkpatch --show-types reports, but for the ALLOWED ones."""
    bad = []
    for block in out.split("\n\n"):
        m = re.match(r"(ERROR|WARNING|CHECK):(\w+): (.*)", block)
        if not m:
            continue
        kind, text = m.group(2), m.group(3)
        # the line checkpatch quotes: after the "#NN: FILE..." line, with a
        # "+" in front for a line of the diff
        quoted = [ln[1:] if ln.startswith("+") else ln
                  for ln in block.splitlines()[2:3]]
        if any(kind == k and re.match(t, text) and quoted and
               re.match(q, quoted[0]) for k, t, q in ALLOWED):
            continue
        bad.append(block)
    return bad


@pytest.mark.parametrize("patch", PATCHES, ids=[p.name for p in PATCHES])
def test_patch_checkpatch_clean(tree, patch):
    r = checkpatch(tree, "--show-types", str(patch))
    assert "total: 0 errors" in r.stdout, r.stdout
    bad = unexpected_reports(r.stdout)
    text = (tree / "MAINTAINERS").read_text(errors="replace")
    strip = dict(SERIES)[patch]
    if all(maintained(f, text) for f in created_files(patch, strip)):
        bad = [b for b in bad if not b.startswith(
            "WARNING:FILE_PATH_CHANGES:")]
    assert bad == [], r.stdout


def test_checkpatch_filter_is_narrow():
    """Only the exact allowed forms pass the filter."""
    ok = ("WARNING:BAD_SIGN_OFF: Non-standard signature: Originally-by:\n"
          "#12: \nOriginally-by: Jes Sorensen <jes@sgi.com>\n")
    typo = ("WARNING:BAD_SIGN_OFF: Non-standard signature: Signed-of-by:\n"
            "#12: \nSigned-of-by: A <a@b.c>\n")
    other = "WARNING:LONG_LINE: line length of 90 exceeds 80 columns\n"
    named = ("WARNING:UNKNOWN_COMMIT_ID: Unknown commit id '0b1d60d6dd9e', "
             "maybe rebased or not pulled?\n#6: \n"
             "Backport of upstream commit 0b1d60d6dd9e (\"riscv: Fix\n")
    bare = ("WARNING:UNKNOWN_COMMIT_ID: Unknown commit id '0b1d60d6dd9e', "
            "maybe rebased or not pulled?\n#6: \nsee 0b1d60d6dd9e\n")
    enosys = ("WARNING:ENOSYS: ENOSYS means 'invalid syscall nr' and "
              "nothing else\n#9: FILE: x.c:9:\n"
              "+\tif (uffd < 0 && errno == ENOSYS)\n")
    returned = ("WARNING:ENOSYS: ENOSYS means 'invalid syscall nr' and "
                "nothing else\n#9: FILE: x.c:9:\n+\treturn -ENOSYS;\n")
    assert unexpected_reports(enosys) == []
    assert len(unexpected_reports(returned)) == 1
    text = "F:\tlib/test_nopfn*\nF:\ttools/testing/selftests/vm/\n"
    assert maintained("tools/testing/selftests/vm/nopfn-tests.c", text)
    assert maintained("lib/test_nopfn_uapi.h", text)
    assert not maintained("lib/test_other.c", text)
    assert not maintained("tools/testing/selftests/vmx/a.c", text)
    assert unexpected_reports(ok) == []
    assert unexpected_reports(named) == []
    assert len(unexpected_reports(bare)) == 1
    assert len(unexpected_reports(typo)) == 1
    assert len(unexpected_reports(other)) == 1


@pytest.mark.parametrize("path", DRIVER,
                         ids=[str(p.relative_to(REPO)) for p in DRIVER])
def test_driver_checkpatch_clean(tree, path):
    r = checkpatch(tree, "--no-tree", "-f", str(path))
    assert r.returncode == 0 and " 0 errors, 0 warnings, 0 checks" \
        in r.stdout, r.stdout


def test_series_is_not_empty():
    assert PATCHES, "kernel/patches/6.1/series lists no patch"
