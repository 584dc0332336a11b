"""The harness's shape: matrix/ in packages by job, each importing only
its own modules and the layers below it, with no import circle, and no
module over 500 lines.

  spec     what the matrix is: architecture files, packages
  build    what a target needs, built and cached
  session  what a run does with its targets: plan, guests, KTAP
  report   what a run leaves: results, history, dashboard, KCIDB
  lab      beyond one machine: LAVA, boards for the tests
  plugin   the pytest plugin
  (top)    the command line (with parse and bisect) and the benchmarks
"""
import ast
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
MATRIX = REPO / "matrix"
LAYERS = {"spec": 0, "build": 1, "session": 2, "report": 3, "lab": 3,
          "plugin": 4, "": 5}
MAX_LINES = 500


def modules() -> dict[str, pathlib.Path]:
    """Dotted name (below matrix) -> file."""
    out = {}
    for p in sorted(MATRIX.rglob("*.py")):
        rel = p.relative_to(MATRIX).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def imports(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The matrix modules that module @name imports (anywhere in it)."""
    pkg = name.split(".")[:-1] if path.name != "__init__.py" else \
        name.split(".")
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "matrix":
                mod = node.module[len("matrix."):] if \
                    node.module != "matrix" else ""
            else:
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}" if mod else alias.name
                out.add(sub if sub in known else mod)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("matrix."):
                    out.add(alias.name[len("matrix."):])
    return {m for m in out if m in known and m != name}


def package(name: str) -> str:
    return name.split(".")[0] if "." in name else ""


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {n: imports(n, p, set(mods)) for n, p in mods.items()}


def test_every_package_is_a_known_layer():
    pkgs = {package(n) for n in modules()}
    assert pkgs <= set(LAYERS), f"give {pkgs - set(LAYERS)} a layer"
    assert len([p for p in pkgs if p]) >= 4


def test_nothing_imports_upward_or_sideways():
    bad = []
    for name, deps in graph().items():
        own = package(name)
        for d in deps:
            other = package(d)
            if other == own:
                continue
            if LAYERS[other] >= LAYERS[own]:
                bad.append(f"{name} imports {d}")
    assert not bad, "\n".join(bad)


def test_no_import_circle():
    g = graph()
    seen: dict[str, int] = {}      # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str]:
        seen[n] = 1
        path.append(n)
        for d in sorted(g[n]):
            if seen.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in seen:
                cycle = visit(d)
                if cycle:
                    return cycle
        seen[n] = 2
        path.pop()
        return []

    for n in sorted(g):
        if n not in seen:
            cycle = visit(n)
            assert not cycle, " -> ".join(cycle)


def test_no_module_over_500_lines():
    long = {str(p.relative_to(REPO)): n for p in MATRIX.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, long
