"""What the spec files share: a YAML file that must hold a mapping, and a
config fragment with some symbols' lines left out."""
from __future__ import annotations

import pathlib
import re
from typing import Any, Iterable


def load_mapping(path: pathlib.Path, error: type) -> dict[str, Any]:
    """The mapping at the top of a YAML file; error(message) otherwise."""
    import yaml
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise error(f"{path}: expected a mapping at top level")
    return raw


def drop_config(text: str, symbols: Iterable[str]) -> str:
    """A config fragment without the lines that set (or unset) symbols."""
    symbols = list(symbols)
    if not symbols:
        return text
    line = re.compile(r"(# )?(%s)[= ]" % "|".join(map(re.escape, symbols)))
    return "".join(ln for ln in text.splitlines(keepends=True)
                   if not line.match(ln))
