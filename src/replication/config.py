"""Config validation: one clear line naming the key and what is allowed, before any job runs."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config, validate

from .errors import ConfigError
from .registry import config_schema, papers


def _allowed(schema: dict) -> str:
    """Describe, in words, what a (sub)schema accepts."""
    if "enum" in schema:
        return "one of " + ", ".join(repr(v) for v in schema["enum"])
    for alternatives in ("oneOf", "anyOf"):
        if alternatives in schema:
            return " or ".join(_allowed(sub) for sub in schema[alternatives])
    parts = []
    kind = schema.get("type")
    if kind:
        parts.append(kind if isinstance(kind, str) else " or ".join(kind))
    bounds = []
    for key, op in (("exclusiveMinimum", ">"), ("minimum", ">="), ("exclusiveMaximum", "<"), ("maximum", "<=")):
        if key in schema:
            bounds.append(f"{op} {schema[key]}")
    if bounds:
        parts.append(" and ".join(bounds))
    if "minItems" in schema:
        parts.append(f"at least {schema['minItems']} item(s)")
    if schema.get("additionalProperties") is False and "properties" in schema:
        parts.append("keys " + ", ".join(schema["properties"]))
    return ", ".join(parts) or "see workflow/schemas/config.schema.yaml"


def _describe(error: jsonschema.ValidationError) -> str:
    key = ".".join(str(part) for part in error.absolute_path) or "<top level>"
    return f"config key '{key}': {error.message}; allowed: {_allowed(error.schema)}"


def _coerce_scalars(node: Any) -> Any:
    """Numbers and booleans written as text (``--config`` passes nested values as strings)."""
    if isinstance(node, dict):
        return {key: _coerce_scalars(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_coerce_scalars(value) for value in node]
    if isinstance(node, str):
        for parse in (int, float):
            try:
                return parse(node)
            except ValueError:
                pass
        if node.lower() in ("true", "false"):
            return node.lower() == "true"
    return node


def _validate_against(config: dict, schema_path: str | os.PathLike) -> None:
    try:
        validate(config, str(schema_path), set_default=True)
    except WorkflowError as err:
        cause = err.__cause__ or err.__context__  # the jsonschema error behind Snakemake's
        if not isinstance(cause, jsonschema.ValidationError):
            raise ConfigError(str(err)) from None
        best = jsonschema.exceptions.best_match([cause])
        raise ConfigError(_describe(best)) from None


def apply_settings(config: dict, given: Iterable[Mapping] = ()) -> dict:
    """With ``settings: smoke``, every paper's smoke settings (its ``smoke.yaml``) merged over its
    section of ``config``, in place; then ``given`` (the config files and ``--config`` values of the
    command line, in order) merged again, so that what the user wrote wins. Any other value of
    ``settings`` leaves ``config`` as it is (the schema judges the value)."""
    if config.get("settings") != "smoke":
        return config
    for paper in papers():
        if paper.smoke_path.is_file():
            update_config(config, {paper.id: yaml.safe_load(paper.smoke_path.read_text()) or {}})
    for values in given:
        update_config(config, dict(values))
    return config


def validate_config(config: dict, schema_path: str | os.PathLike) -> dict:
    """Validate ``config`` in place (filling defaults) against the core schema at ``schema_path``
    merged with every paper's section, then each paper's own checks (``Paper.check_config``)."""
    config.update(_coerce_scalars(config))
    # snakemake.utils.validate reads its schema from a file: the merged one goes to a scratch file.
    with tempfile.TemporaryDirectory() as scratch:
        merged = Path(scratch) / "config.schema.json"
        merged.write_text(json.dumps(config_schema(schema_path)))
        _validate_against(config, merged)
    for paper in papers():
        if paper.check_config is not None:
            paper.check_config(config)
    return config
