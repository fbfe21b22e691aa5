"""Typed settings: a frozen dataclass per config section, built once from the validated config.

Defaults live only in the schema (``validate_config`` fills them in), so the dataclasses declare
none: a field missing from the validated section is an error here, not a silent default.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping


def from_mapping(cls: type, mapping: Mapping):
    """``cls`` (a dataclass) from a validated config section; nested dataclasses, tuples and
    dicts of them are built from their own sub-sections."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    names = [field.name for field in dataclasses.fields(cls)]
    missing = [name for name in names if name not in mapping]
    unknown = sorted(set(mapping) - set(names))
    if missing or unknown:
        raise ValueError(
            f"{cls.__name__}: "
            + "; ".join(
                part
                for part in (
                    f"missing {', '.join(missing)}" if missing else "",
                    f"unknown {', '.join(unknown)}" if unknown else "",
                )
                if part
            )
            + f"; fields: {', '.join(names)}"
        )
    return cls(**{name: _convert(hints[name], mapping[name]) for name in names})


def _convert(hint, value):
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return from_mapping(hint, value)
    if origin is tuple:
        item = arguments[0]
        return tuple(_convert(item, element) for element in value)
    if origin in (dict, Mapping):
        return {key: _convert(arguments[1], element) for key, element in value.items()}
    if origin in (typing.Union, types.UnionType):
        return value  # e.g. float | None: the schema has checked it
    return value


class RuleParam(dict):
    """Typed settings as a Snakemake rule parameter.

    Snakemake reruns a job when its params change, but it compares only the repr of plain values
    (numbers, strings, lists, dicts, ...) and silently ignores any other object, a dataclass
    included. So a rule passes its settings as this dict of their fields (compared field by field)
    and the job's script, which receives params through pickle, gets the frozen dataclass back.
    """

    def __init__(self, settings):
        super().__init__(dataclasses.asdict(settings))
        self.settings_type = type(settings)

    def __reduce__(self):
        return (from_mapping, (self.settings_type, dict(self)))


def rule_param(value):
    """``value`` as a rule parameter whose every field counts for Snakemake's params trigger."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return RuleParam(value)
    return value
