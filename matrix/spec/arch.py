"""One declarative file per architecture, under matrix/arches/.

An architecture file says how to build the kernel (ARCH, cross prefix,
config fragment, image), how to build user space for it (C compiler,
where busybox comes from), for a bootable one how QEMU starts it, and
Debian's name for it and the Debian packages that build and boot it.
Adding an architecture is adding one such file.

A file may also name variants (e.g. debug): the same architecture with
kernel/config/VARIANT.config on top, run as its own target, e.g.
x86_64-debug, with its own kernel command line additions and a time
scale for slow kernels. Every variant is part of a full run.

A target runs on a kernel tree (matrix/spec/tree.py) and is named by
both: ARCH[-VARIANT]@TREE (x86_64-debug@6.12). What differs for one
tree's version is a `trees:` entry of the file, not a copy of it:

  trees:
    "6.12":
      kernel:
        config: "CONFIG_ARCH_VIRT=y"          # added to the fragment
        drop: [CONFIG_SOC_VIRT]               # its lines taken out
      qemu: {cpu: max}                        # replaces these keys
      module_params: {...}                    # per module, replaced
      known_failures: {...}                   # added, with their reasons
      boot_warnings: {...}                    # added
      removed: why                            # not in that tree at all

A file may give aliases: other names that --arch takes for it, such as
the kernel's (aarch64), Debian's (amd64) or TuxRun's device names
(qemu-arm64); an alias of an architecture with variants names its
variants too (aarch64-debug).

A file's tier says when its kernel is built from nothing: "fast" (the
default) in every run, "full" only by the main job (./matrix/run) or when
asked for by name; the default ./tests/run also boots a full-tier target
whose kernel is already in the cache, and compile-checks the others
(matrix/session/plan.py). A variant is in its file's tier unless it names its
own.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Any, Optional


from . import override
from . import tree as treespec
from .tree import TreeSpec
from .yamlfile import drop_config, load_mapping

ARCH_DIR = pathlib.Path(__file__).resolve().parents[1] / "arches"
CONFIG_DIR = ARCH_DIR.parent.parent / "kernel" / "config"


class ArchError(Exception):
    """A bad architecture name or file, with what to do about it."""


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    arch: str                       # the kernel's ARCH=
    image: str                      # the boot image inside the build dir
    cross_compile: str = ""         # CROSS_COMPILE= prefix ("": native)
    config: str = ""                # config fragment for this architecture
    toolchain: Optional[str] = None     # a compiler the matrix builds


@dataclasses.dataclass(frozen=True)
class UserSpec:
    cc: str                         # C compiler for static test programs
    busybox: str = "debian"         # "debian" (busybox-static) or "source"


@dataclasses.dataclass(frozen=True)
class QemuSpec:
    binary: str
    machine: str
    cpu: str
    memory: str
    console: str
    smp: int = 1
    cmdline: str = ""
    extra_args: str = ""


@dataclasses.dataclass(frozen=True)
class Packages:
    """Debian's packages, as apt-get installs them."""
    build: tuple[str, ...] = ()     # the kernel's and user space's compilers
    boot: tuple[str, ...] = ()      # QEMU and its firmware


@dataclasses.dataclass(frozen=True)
class VariantSpec:
    name: str                       # kernel/config/<name>.config
    cmdline: str = ""               # appended to the kernel command line
    memory: Optional[str] = None    # guest RAM, when the variant needs more
    scale: int = 1                  # slowness: timeouts, {scale} in args
    image: Optional[str] = None     # another boot image of the same build
    module_params: tuple[tuple[str, str], ...] = ()  # per module, replaced
    tier: Optional[str] = None      # None: the architecture file's tier


@dataclasses.dataclass(frozen=True)
class Arch:
    name: str                 # target name: "x86_64" or "x86_64-debug"
    path: pathlib.Path
    kernel: KernelSpec
    user: Optional[UserSpec]
    qemu: Optional[QemuSpec]
    module_params: dict[str, str]
    debian: str = ""          # Debian's name for it (busybox-static:NAME)
    packages: Packages = Packages()
    base: str = ""            # the architecture file's name
    variant: str = ""         # "" for the plain kernel
    scale: int = 1
    variants: tuple[VariantSpec, ...] = ()
    # "program-case" (as in the test_case id) -> why this target misses
    # it (documented there): the case still runs; a failure is reported
    # as XFAIL with the reason, a pass as a pass
    known_failures: tuple[tuple[str, str], ...] = ()
    # kernel-log lines this machine prints at every boot, not a fault of the
    # kernel under test (a regular expression, and why it is there)
    boot_warnings: tuple[tuple[str, str], ...] = ()
    tier: str = "fast"        # "fast" or "full": see the module's doc
    # other names --arch takes for this target (kernel, Debian, TuxRun)
    aliases: tuple[str, ...] = ()
    tree: str = ""            # the kernel tree: "" until on_tree()
    version: str = ""         # its major.minor (the series, overrides)
    # tree version -> its override (the `trees:` mapping, checked)
    overrides: tuple[tuple[str, Any], ...] = dataclasses.field(
        default=(), compare=False)

    @property
    def label(self) -> str:
        """The target without its tree: x86_64-debug (cache folders)."""
        if not self.base:
            return self.name.split("@")[0]
        return f"{self.base}-{self.variant}" if self.variant else self.base

    def removed_from(self, version: str) -> Optional[str]:
        """Why the architecture is not in a tree of that version (its
        `trees:` override's removed), or None."""
        return dict(self.overrides).get(version, {}).get("removed")

    def on_tree(self, tree: "TreeSpec") -> "Arch":
        """This target on a kernel tree: named LABEL@TREE, the file's
        `trees:` override for the tree's version applied."""
        a = dataclasses.replace(self, name=f"{self.label}@{tree.name}",
                                tree=tree.name, version=tree.version)
        ov = dict(self.overrides).get(tree.version)
        if not ov:
            return a
        kernel, qemu = a.kernel, a.qemu
        if "kernel" in ov:
            kept = drop_config(kernel.config, ov["kernel"]["drop"])
            kernel = dataclasses.replace(
                kernel, config=kept.rstrip("\n") + "\n" +
                ov["kernel"]["config"])
        if "qemu" in ov and qemu is not None:
            qemu = dataclasses.replace(qemu, **ov["qemu"])
        params = dict(a.module_params)
        params.update(ov.get("module_params", {}))
        return dataclasses.replace(
            a, kernel=kernel, qemu=qemu, module_params=params,
            known_failures=a.known_failures + tuple(
                ov.get("known_failures", {}).items()),
            boot_warnings=a.boot_warnings + tuple(
                ov.get("boot_warnings", {}).items()))

    @property
    def bootable(self) -> bool:
        return self.qemu is not None

    def fingerprint(self) -> dict[str, Any]:
        """What of this file feeds the kernel build (for its cache key)."""
        return dataclasses.asdict(self.kernel)

    def with_variant(self, v: VariantSpec) -> "Arch":
        """This architecture as the target of one of its variants."""
        qemu = self.qemu
        if qemu is not None:
            qemu = dataclasses.replace(
                qemu, memory=v.memory or qemu.memory,
                cmdline=merge_cmdline(qemu.cmdline, v.cmdline))
        params = dict(self.module_params)
        params.update(dict(v.module_params))
        kernel = self.kernel
        if v.image:
            kernel = dataclasses.replace(kernel, image=v.image)
        return dataclasses.replace(self, name=f"{self.base}-{v.name}",
                                   variant=v.name, scale=v.scale, qemu=qemu,
                                   kernel=kernel, module_params=params,
                                   variants=(), tier=v.tier or self.tier,
                                   aliases=tuple(f"{a}-{v.name}"
                                                 for a in self.aliases))


def merge_cmdline(base: str, extra: str) -> str:
    """The kernel command line with extra's parameters added; a
    "key=value" of extra replaces base's parameters of the same key
    (mem= and friends take their first value, so they cannot just be
    appended), and "!key" removes them."""
    words = extra.split()
    drop = {w[1:] for w in words if w.startswith("!")}
    drop |= {w.split("=", 1)[0] for w in words if "=" in w}
    kept = [t for t in base.split() if t.split("=", 1)[0] not in drop]
    return " ".join(kept + [w for w in words if not w.startswith("!")])


TIERS = ("fast", "full")


def _section(cls, raw: Any, where: str, skip: tuple[str, ...] = (),
             **given: Any):
    """An instance of the dataclass cls from the mapping raw: each field
    from the key of its name (converted to the field's type: str, int, a
    tuple of strings, a tuple of pairs from a mapping), a field without a
    default required; a key that is no field is refused, naming the known
    ones. skip: fields that are no keys (given: their values)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ArchError(f"{where}: expected a mapping")
    fields = [f for f in dataclasses.fields(cls) if f.name not in skip]
    names = [f.name for f in fields]
    unknown = set(raw) - set(names)
    if unknown:
        raise ArchError(f"{where}: unknown keys {sorted(unknown)}; known: "
                        f"{sorted(names)}")
    values = dict(given)
    for f in fields:
        if f.name not in raw:
            if f.default is dataclasses.MISSING:
                raise ArchError(f"{where}: missing key '{f.name}'")
            continue
        v = raw[f.name]
        kind = str(f.type)
        if v is None:
            v = f.default if f.default is not dataclasses.MISSING else None
        elif kind.startswith("tuple[tuple"):
            if not isinstance(v, dict):
                raise ArchError(f"{where}:{f.name}: expected a mapping")
            v = tuple((str(k), str(x)) for k, x in v.items())
        elif kind.startswith("tuple"):
            if not isinstance(v, list):
                raise ArchError(f"{where}:{f.name}: expected a list")
            v = tuple(str(x) for x in v)
        elif kind == "int":
            v = int(v)
        elif kind in ("str", "Optional[str]"):
            v = str(v)
        values[f.name] = v
    return cls(**values)


def _tier(value: Any, where: str) -> str:
    if value not in TIERS:
        raise ArchError(f"{where}: tier must be one of {', '.join(TIERS)}, "
                        f"not '{value}'")
    return value


def _reasons(raw: Any, what: str, where: str) -> tuple[tuple[str, str], ...]:
    """A mapping of something to the reason for it, each reason given."""
    raw = raw or {}
    if not isinstance(raw, dict) or not all(
            isinstance(r, str) and r.strip() for r in raw.values()):
        raise ArchError(f"{where}: {what}")
    return tuple((str(k), r.strip()) for k, r in raw.items())


KEYS = ("name", "tier", "aliases", "debian", "packages", "kernel",
        "userspace", "qemu", "module_params", "variants", "known_failures",
        "boot_warnings", "trees")
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def _aliases(raw: Any, name: str, where: str) -> tuple[str, ...]:
    """A file's aliases: a list of names, none its own."""
    raw = raw or []
    if not isinstance(raw, list) or not all(
            isinstance(a, str) and _ALIAS.match(a) for a in raw):
        raise ArchError(f"{where}: aliases must be a list of names "
                        "(letters, digits, '_', '.', '+', '-')")
    if name in raw:
        raise ArchError(f"{where}: aliases: '{name}' is the file's name")
    return tuple(raw)


def _tree_overrides(raw: Any, qemu: Optional[QemuSpec], where: str
                    ) -> tuple[tuple[str, Any], ...]:
    keys = None if qemu is None else \
        [f.name for f in dataclasses.fields(QemuSpec)]
    try:
        return override.parse_overrides(raw, keys, where)
    except override.OverrideError as exc:
        raise ArchError(str(exc)) from exc


def parse(path: pathlib.Path) -> Arch:
    """Read and check one architecture file."""
    raw = load_mapping(path, ArchError)
    where = str(path)
    unknown = set(raw) - set(KEYS)
    if unknown:
        raise ArchError(f"{path}: unknown keys {sorted(unknown)}; "
                        f"known: {sorted(KEYS)}")
    for key in ("name", "debian", "packages", "kernel"):
        if key not in raw:
            raise ArchError(f"{where}: missing key '{key}'")
    name = raw["name"]
    if name != path.stem:
        raise ArchError(f"{path}: name '{name}' must match the file name")
    tier = _tier(raw.get("tier", "fast"), where)
    kernel = _section(KernelSpec, raw["kernel"], where + ":kernel")
    packages = _section(Packages, raw["packages"], where + ":packages")
    user = None
    if "userspace" in raw:
        user = _section(UserSpec, raw["userspace"], where + ":userspace")
        if user.busybox not in ("debian", "source"):
            raise ArchError(f"{path}: userspace.busybox must be "
                            f"'debian' or 'source', not '{user.busybox}'")
    qemu = None
    if "qemu" in raw:
        qemu = _section(QemuSpec, raw["qemu"], where + ":qemu")
        if user is None:
            raise ArchError(f"{path}: a bootable architecture (qemu:) "
                            "needs a userspace: section")
    params = raw.get("module_params", {}) or {}
    if not isinstance(params, dict):
        raise ArchError(f"{path}: module_params must map module to params")
    variants = []
    for vname, v in (raw.get("variants") or {}).items():
        wv = f"{where}:variants:{vname}"
        variant = _section(VariantSpec, v, wv, skip=("name",),
                           name=str(vname))
        if variant.tier is not None:
            _tier(variant.tier, wv)
        if not (CONFIG_DIR / f"{vname}.config").is_file():
            raise ArchError(f"{wv}: no config fragment "
                            f"{CONFIG_DIR / (vname + '.config')}")
        variants.append(variant)
    kf = _reasons(raw.get("known_failures"), "known_failures must map "
                  "'program-case' to the reason it fails here", where)
    bw = _reasons(raw.get("boot_warnings"), "boot_warnings must map a "
                  "regular expression to the reason the machine prints it",
                  where)
    for pat, _ in bw:
        try:
            re.compile(pat)
        except re.error as exc:
            raise ArchError(f"{path}: boot_warnings: '{pat}' is not a "
                            f"regular expression: {exc}") from exc
    return Arch(name=name, path=path, kernel=kernel, user=user, qemu=qemu,
                module_params={str(m): str(p) for m, p in params.items()},
                debian=str(raw["debian"]), packages=packages, base=name,
                variants=tuple(variants), tier=tier, known_failures=kf,
                boot_warnings=bw,
                aliases=_aliases(raw.get("aliases"), name, where),
                overrides=_tree_overrides(raw.get("trees"), qemu, where))


def load_all(arch_dir: pathlib.Path = ARCH_DIR) -> dict[str, Arch]:
    """Every target, by name, in a stable order: each architecture file,
    followed by its variants (x86_64, x86_64-debug, arm64, ...)."""
    out = {}
    for p in sorted(arch_dir.glob("*.yaml")):
        a = parse(p)
        out[a.name] = a
        for v in a.variants:
            out[f"{a.name}-{v.name}"] = a.with_variant(v)
    alias_table(out)        # no alias names two targets
    return out


def alias_table(arches: dict[str, Arch]) -> dict[str, str]:
    """Alias -> the target it names, over every target; ArchError for an
    alias that is a target's name or another file's alias."""
    table: dict[str, str] = {}
    for a in arches.values():
        for alias in a.aliases:
            other = table.get(alias) or (alias if alias in arches else None)
            if other is not None:
                raise ArchError(f"{a.path}: alias '{alias}' already names "
                                f"{other}")
            table[alias] = a.name
    return table


def resolve(name: str, arch_dir: pathlib.Path = ARCH_DIR) -> str:
    """The target (or architecture) a name of --arch stands for: itself,
    or the one it is an alias of."""
    return alias_table(load_all(arch_dir)).get(name, name)


def select(names: Optional[str], arch_dir: pathlib.Path = ARCH_DIR,
           variant: Optional[str] = None,
           trees: Optional[list[TreeSpec]] = None) -> list[Arch]:
    """The targets named in a comma list (all when None or "all"), on each
    tree of trees (default: treespec.DEFAULT), tree by tree.

    A name is an architecture, target or alias, on every tree, or one of
    those with @TREE (arm64@6.12), on that tree only (which must be one
    of trees). variant narrows the choice to the targets of one variant
    ("debug"), or to the plain kernels ("none"); None or "all" keeps
    every one.
    """
    if trees is None:
        trees = treespec.select(None)
    arches = load_all(arch_dir)
    aliases = alias_table(arches)
    if variant and variant != "all":
        want = "" if variant in ("none", "plain") else variant
        known = {a.variant for a in arches.values()} - {""}
        if want and want not in known:
            raise ArchError(f"unknown variant '{variant}'; known: "
                            f"{', '.join(sorted(known)) or 'none'}, none, "
                            "all")
        arches = {n: a for n, a in arches.items() if a.variant == want}
    if not names or names == "all":
        return [a.on_tree(t) for t in trees for a in arches.values()
                if not a.removed_from(t.version)]
    tree_names = [t.name for t in trees]
    chosen: list[tuple[Arch, Optional[str]]] = []
    for n in (s.strip() for s in names.split(",")):
        if not n:
            continue
        only = None
        if "@" in n:
            n, only = n.split("@", 1)
            if only not in tree_names:
                raise ArchError(f"'{n}@{only}': tree {only} is not one of "
                                f"this run's ({', '.join(tree_names)}; "
                                "--tree chooses them)")
        n = aliases.get(n, n)
        if n not in arches:
            # an architecture's name picks its targets of the chosen variant
            same = [a for a in arches.values() if a.base == n]
            if same and variant and variant != "all":
                chosen += [(a, only) for a in same]
                continue
            raise ArchError(f"unknown architecture '{n}'; known: "
                            f"{', '.join(arches)} (one file each in "
                            f"{arch_dir}; `python3 -m matrix list` shows "
                            "the other names each takes)")
        chosen.append((arches[n], only))
    if not chosen:
        raise ArchError("no architecture selected; known: "
                        + ", ".join(arches))
    out = [a.on_tree(t) for t in trees for a, only in chosen
           if only in (None, t.name) and not a.removed_from(t.version)]
    if not out:
        why = "; ".join(sorted({f"{a.label}: {a.removed_from(t.version)}"
                                for t in trees for a, _ in chosen
                                if a.removed_from(t.version)}))
        raise ArchError(f"no target of --arch {names} is in tree(s) "
                        f"{', '.join(tree_names)}: {why}")
    # once each, though named twice (x86_64,amd64)
    return list({a.name: a for a in out}.values())


def removed(trees: list[TreeSpec], arch_dir: pathlib.Path = ARCH_DIR
            ) -> dict[str, str]:
    """LABEL@TREE -> why: the targets that are not in a tree of trees."""
    return {f"{a.label}@{t.name}": a.removed_from(t.version) or ""
            for t in trees for a in load_all(arch_dir).values()
            if a.removed_from(t.version)}
