"""An architecture file's `trees:` mapping: what differs for one kernel
tree's version (matrix/spec/arch.py's module doc shows it)."""
from __future__ import annotations

import re
from typing import Any, Optional


class OverrideError(ValueError):
    """A bad `trees:` entry (matrix/spec/arch.py makes it an ArchError)."""


def _reasons(raw: Any, what: str, where: str) -> dict[str, str]:
    if not isinstance(raw, dict) or not all(
            isinstance(r, str) and r.strip() for r in raw.values()):
        raise OverrideError(f"{where}: {what}")
    return {str(k): r.strip() for k, r in raw.items()}

OVERRIDE_KEYS = ("kernel", "qemu", "module_params", "known_failures",
                 "boot_warnings", "removed")


def parse_overrides(raw: Any, qemu_keys: Optional[list[str]], where: str
                    ) -> tuple[tuple[str, Any], ...]:
    """A file's `trees:` mapping, checked: version -> override (qemu_keys:
    the fields of the file's qemu: section, None without one)."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise OverrideError(f"{where}: trees must map a tree's version "
                        "(\"6.12\") to what differs there")
    out = []
    for version, ov in raw.items():
        w = f"{where}:trees:{version}"
        # unquoted, 6.10 would be the number 6.1
        if not isinstance(version, str) or \
                not re.fullmatch(r"\d+\.\d+", version):
            raise OverrideError(f"{w}: a tree's version is major.minor "
                            "(quote it: \"6.12\")")
        if not isinstance(ov, dict) or set(ov) - set(OVERRIDE_KEYS):
            raise OverrideError(f"{w}: expected a mapping of "
                            f"{', '.join(OVERRIDE_KEYS)}")
        ov = dict(ov)
        if "removed" in ov and (set(ov) != {"removed"} or not isinstance(
                ov["removed"], str) or not ov["removed"].strip()):
            raise OverrideError(f"{w}:removed: the reason the architecture is "
                            "not in that tree, and nothing else")
        if "kernel" in ov:
            k = ov["kernel"]
            if not isinstance(k, dict) or not k or \
                    set(k) - {"config", "drop"} or not all(
                        re.fullmatch(r"CONFIG_[A-Z0-9_]+", str(d))
                        for d in k.get("drop") or []):
                raise OverrideError(f"{w}:kernel: only config (lines added "
                                    "to the fragment) and drop (the "
                                    "CONFIG_ symbols whose lines of the "
                                    "fragment the tree has no more) "
                                    "differ per tree")
            ov["kernel"] = {"config": str(k.get("config") or ""),
                            "drop": [str(d) for d in k.get("drop") or []]}
        if "qemu" in ov:
            q = ov["qemu"]
            names = qemu_keys or []
            if qemu_keys is None or not isinstance(q, dict) or set(q) - set(names):
                raise OverrideError(f"{w}:qemu: keys of the file's qemu: "
                                f"section ({', '.join(names)})")
            ov["qemu"] = {k: (int(v) if k == "smp" else str(v))
                          for k, v in q.items()}
        if "module_params" in ov:
            if not isinstance(ov["module_params"], dict):
                raise OverrideError(f"{w}: module_params must map module to "
                                "params")
            ov["module_params"] = {str(m): str(v) for m, v in
                                   ov["module_params"].items()}
        for key in ("known_failures", "boot_warnings"):
            if key in ov:
                ov[key] = _reasons(ov[key], f"{key} must map to the "
                                   "reason", w)
        out.append((version, ov))
    return tuple(out)
