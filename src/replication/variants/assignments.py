"""The settings a variant is given on the command line (``SET=``, ``--set``, ``--sets``) and its name.

``split_assignments`` splits ``SET``'s text into ``key.path=value`` words, ``parse_assignments``
reads them into an overlay of the config; ``derived_name`` names a variant from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import yaml

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.=,+-]*"


def split_assignments(text: str) -> list[str]:
    """``SET``'s text as assignments: split on whitespace outside brackets, braces and quotes, so
    ``a=[1, 2] b='x y'`` is two. ConfigError (one line) for an unclosed bracket or quote."""
    from ..errors import ConfigError

    parts, current, closers, quote = [], "", [], ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            closers.append("]" if char == "[" else "}")
        elif char in "]}":
            if not closers or closers.pop() != char:
                raise ConfigError(f"settings {text!r}: unmatched {char!r}; allowed: key.path=value ..., e.g. a=[1, 2]")
        elif char.isspace() and not closers:
            parts.append(current)
            current = ""
            continue
        current += char
    if quote or closers:
        raise ConfigError(f"settings {text!r}: unclosed {quote or closers[-1]!r}; allowed: key.path=value ...")
    return [part for part in [*parts, current] if part]


def parse_assignments(assignments: Iterable[str]) -> dict:
    """``["a.b=2e-3", "c=[1, 2]"]`` -> ``{"a": {"b": 0.002}, "c": [1, 2]}`` (values read as YAML)."""
    from ..errors import ConfigError

    overlay: dict = {}
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", key.strip()):
            raise ConfigError(f"setting {assignment!r}: allowed: key.path=value, e.g. section.key=3")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as error:
            problem = getattr(error, "problem", None) or type(error).__name__
            raise ConfigError(
                f"setting {assignment!r}: the value is not YAML ({problem}); allowed: a number, a word, "
                "a list [1, 2] or a mapping {a: 1}"
            ) from None
        if isinstance(value, str) and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+", value):
            value = float(value)  # YAML 1.1 reads 2e-3 as text
        node = overlay
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return overlay


def derived_name(assignments: Iterable[str]) -> str:
    """A variant name from its settings: the last key part and value of each, e.g. ``lr=0.002``."""
    parts = []
    for assignment in assignments:
        key, _, text = assignment.partition("=")
        parts.append(f"{key.strip().split('.')[-1]}={re.sub(r'[^A-Za-z0-9_.+-]+', '_', text.strip())}")
    return ",".join(parts) or "paper"


def check_name(name: str) -> str:
    from ..errors import ConfigError

    if not re.fullmatch(NAME_PATTERN, name) or name in ("paper", "reference"):
        raise ConfigError(
            f"variant name {name!r}: allowed: letters, digits and _ . = , + - (not 'paper' or 'reference')"
        )
    return name
