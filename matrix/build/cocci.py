"""Coccinelle on the series' C files: nothing new.

The tree's own semantic patches (scripts/coccinelle/**/*.cocci), run the
way `make coccicheck MODE=report` runs each of them (spatch -D report,
the script's "Options:" line, the kernel's include folders), on every C
file the series writes. A report counts when the same script does not
make it, line numbers aside, on the file as 6.1 has it: the pristine
file is only looked at for a script that reports something on the
patched one.

One spatch run per (file content, script) is cached, so a warm run runs
none, and a series change runs only the files it changed. The file's
own architecture's include folders are used for a file under arch/, x86's
for the others (mm/, drivers/: coccinelle does not need the
configuration, only the types the headers declare).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import pathlib
import re
import shutil
import subprocess

from . import cache as cachemod
from .log import BuildError
from .tree import Tree

SCRIPTS_DIR = "scripts/coccinelle"
TIMEOUT = 900           # seconds for one script on one file


@dataclasses.dataclass(frozen=True)
class Script:
    rel: str                # scripts/coccinelle/.../x.cocci
    options: tuple[str, ...]
    requires: str           # the spatch version it needs, or ""


def spatch_version() -> str:
    if not shutil.which("spatch"):
        raise BuildError("spatch is missing\n  fix: apt-get install -y "
                         "--no-install-recommends coccinelle ocaml-nox\n"
                         "  (or run ./matrix/setup as root)")
    out = subprocess.run(["spatch", "--version"], capture_output=True,
                         text=True).stdout.split()
    return out[2] if len(out) > 2 else "unknown"


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def scripts(src: pathlib.Path) -> list[Script]:
    """The tree's semantic patches, with what coccicheck reads of them."""
    out = []
    for p in sorted((src / SCRIPTS_DIR).rglob("*.cocci")):
        text = p.read_text(errors="replace")
        opt = re.search(r"^//\s*Options:(.*)$", text, re.M)
        req = re.search(r"^//\s*Requires:\s*(\S+)", text, re.M)
        out.append(Script(str(p.relative_to(src)),
                          tuple(opt.group(1).split()) if opt else (),
                          req.group(1) if req else ""))
    return out


def includes(rel: str) -> list[str]:
    """The -I options for a file: its architecture's, else x86's."""
    parts = rel.split("/")
    arch = parts[1] if parts[0] == "arch" else "x86"
    return ["-I", f"arch/{arch}/include", "-I", "include",
            "-I", f"arch/{arch}/include/uapi", "-I", "include/uapi"]


def normalize(report: str) -> str:
    """A report without its line and column numbers."""
    return re.sub(r"(\.[ch]):\d+(:\d+(-\d+)?)?", r"\1", re.sub(
        r"\bline \d+", "line N", report.strip()))


class Coccicheck:
    def __init__(self, cache: cachemod.Cache, tree: Tree,
                 jobs: int | None = None):
        self.cache = cache
        self.tree = tree
        self.jobs = jobs or os.cpu_count() or 1
        self.version = spatch_version()
        self.scripts, self.not_run = self._runnable()

    def _run(self, src: pathlib.Path, rel: str, script: Script
             ) -> list[str]:
        """spatch's report lines for one script on one file (cached by
        their contents)."""
        inputs = {"file": rel,
                  "text": cachemod.file_checksum(src / rel),
                  "script": cachemod.file_checksum(src / script.rel),
                  "options": script.options, "spatch": self.version,
                  "includes": includes(rel)}
        entry = self.cache.entry("cocci", pathlib.Path(rel).stem, inputs)
        with entry.lock():
            meta = entry.meta()
            if meta is not None:
                return meta["reports"]
            entry.path.mkdir(parents=True, exist_ok=True)
            cmd = ["spatch", "-D", "report", "--no-show-diff",
                   "--very-quiet", "--cocci-file", script.rel,
                   *script.options, *includes(rel), rel]
            # spatch asks `python3 --version` at each start: Debian's, not
            # a shim on PATH (pyenv's took 1 s of each 1.4 s run)
            env = dict(os.environ, PATH="/usr/bin:/bin:" +
                       os.environ.get("PATH", ""))
            try:
                r = subprocess.run(cmd, cwd=src, capture_output=True,
                                   text=True, timeout=TIMEOUT, env=env)
            except subprocess.TimeoutExpired as exc:
                raise BuildError(f"spatch took more than {TIMEOUT} s: "
                                 f"{script.rel} on {rel}") from exc
            if r.returncode != 0:
                raise BuildError(f"spatch failed ({r.returncode}): "
                                 f"{script.rel} on {rel}:\n"
                                 f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
            reports = [ln for ln in r.stdout.splitlines() if ln.strip()]
            (entry.path / "reports.json").write_text(json.dumps(reports))
            entry.complete(["reports.json"], reports=reports,
                           command=cmd)
            return reports

    def _runnable(self) -> tuple[list[Script], list[tuple[str, str]]]:
        """The scripts this spatch can run, and those it cannot, why."""
        ok, not_run = [], []
        for s in scripts(self.tree.src):
            if s.requires and _version(s.requires) > _version(self.version):
                not_run.append((s.rel, f"needs spatch {s.requires}, this "
                                f"is {self.version}"))
            else:
                ok.append(s)
        return ok, not_run

    def new_reports(self, rel: str) -> list[str]:
        """The reports on the patched rel that the pristine file does not
        have (for the same script, line numbers aside)."""
        patched = self.tree.src
        pristine = self.tree.pristine()
        run = self.scripts
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            got = dict(zip(run, pool.map(
                lambda s: self._run(patched, rel, s), run)))
            noisy = [s for s in run if got[s]]
            old = {}
            if (pristine / rel).is_file():
                old = dict(zip(noisy, pool.map(
                    lambda s: self._run(pristine, rel, s), noisy)))
        new = []
        for s in noisy:
            before = {normalize(x) for x in old.get(s, [])}
            new += [f"{x}  [{s.rel}]" for x in got[s]
                    if normalize(x) not in before]
        return new
