"""The dashboard's bar, with real guests: two runs of the matrix sharing
a history, one user test broken in between.

Run 1 and run 2 are `python3 -m matrix run --arch x86_64 --variant none
--user-tests DIR -- -k user/` (only the user tests' items; the guest
still boots the real kernel, loads the modules and runs the programs).
`regress` passes in run 1 and fails in run 2: run 2 must exit non-zero,
name it in its summary, and both of its pages must show it first and
red. `wobble` fails the first time it runs in a boot and passes the
second: it must be reported flaky in both runs; run 1 is started with
--tolerate-flaky, which must keep that from failing it (without the
flag a flaky test fails the run: tests/test_red.py).
"""
import json
import os
import subprocess
import sys

from headless import Browser, file_url, url_path
from matrixbuild import prebuild

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WOBBLE = r"""
#include <stdio.h>
#include <unistd.h>
#include <fcntl.h>

int main(void)
{
	/* fails the first time in a boot, passes the second */
	int fd = open("/tmp/wobble-ran", O_CREAT | O_EXCL | O_WRONLY, 0644);

	if (fd >= 0) {
		close(fd);
		printf("first run: failing\n");
		return 1;
	}
	printf("second run: passing\n");
	return 0;
}
"""

REGRESS = r"""
#include <stdio.h>

int main(void)
{
	printf("# METRIC regress.figure FIGURE x\n");
	printf("SAY\n");
	return RC;
}
"""


def regress(figure: str, say: str, rc: int) -> str:
    return REGRESS.replace("FIGURE", figure).replace("SAY", say).replace(
        "RC", str(rc))


def matrix_run(user, results, env, *pytest_args):
    return subprocess.run(
        [sys.executable, "-m", "matrix", "run", "--arch", "x86_64",
         "--tree", "6.1", "--variant", "none", "--user-tests", str(user),
         "--results", str(results), "--", "-k", "user/", *pytest_args],
        cwd=REPO, capture_output=True, text=True, env=env, timeout=900)


def rows(b, table):
    return b.eval(f"""[...document.querySelectorAll('{table} tbody tr')]
      .map(tr => [tr.dataset.test, tr.querySelector('td').className,
                  getComputedStyle(tr.querySelector('td')).backgroundColor,
                  tr.querySelector('td a') ? tr.querySelector('td a').href
                  : null])""")


def test_regression_between_two_real_runs(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "wobble.c").write_text(WOBBLE)
    (user / "regress.c").write_text(regress("1.5", "fine", 0))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    prebuild("x86_64", "--variant", "none", "--user-tests", str(user),
             env=env)
    r1 = matrix_run(user, tmp_path / "run1", env, "--tolerate-flaky")
    out1 = r1.stdout + r1.stderr
    assert r1.returncode == 0, out1
    assert "REGRESSIONS" not in out1
    assert "flaky (1)" in out1 and "test_program[x86_64@6.1-user/wobble]" in out1

    (user / "regress.c").write_text(regress("2.5", "broken", 3))
    r2 = matrix_run(user, tmp_path / "run2", env)
    out2 = r2.stdout + r2.stderr
    assert r2.returncode != 0, out2
    summary = out2[out2.index("nopfn matrix:"):]
    assert "REGRESSIONS (1)" in summary, summary
    assert "test_program[x86_64@6.1-user/regress]  (passed in run1)" in summary
    assert "test_program[x86_64@6.1-user/wobble]" in summary    # flaky
    s = json.loads((tmp_path / "run2" / "summary.json").read_text())
    assert [r["test"] for r in s["regressions"]] == [
        "test_program[x86_64@6.1-user/regress]"]
    assert s["dashboard"]["seconds"] < 2.0, s["dashboard"]
    assert (tmp_path / "history.sqlite").is_file()

    with Browser() as b:
        for page, table in (("index.html", "#matrix"),
                            ("x86_64@6.1.html", "#history")):
            b.open(file_url(tmp_path / "run2" / page))
            got = rows(b, table)
            test, cls, bg, href = got[0]
            assert (test, cls) == ("test_program[user/regress]",
                                   "regression"), (page, got)
            assert bg == "rgb(198, 40, 40)", (page, bg)
            assert got[1][:2] == ["test_program[user/wobble]", "flaky"]
            log = url_path(href)
            assert log.name == "user-regress.ktap" and \
                "broken" in log.read_text(), (page, href)
        # the user test's METRIC, in the figures table, with its history
        figs = b.eval("[...document.querySelectorAll('#metrics tbody tr')]"
                      ".map(tr => [tr.dataset.metric, [...tr.querySelectorAll"
                      "('td')].map(td => td.innerText.trim())])")
        assert ["user/regress:regress.figure",
                ["user/regress", "regress.figure", "2.5 x", "1.5 x",
                 "+66.7%", ""]] in figs, figs
        b.open(file_url(tmp_path / "index.html"))
        assert rows(b, "#matrix")[0][:2] == ["test_program[user/regress]",
                                            "regression"]
