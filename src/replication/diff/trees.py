"""A tree (a folder the pipeline built: its manifest ``figures/all``, its settings record
``figures/settings.yaml``) or a reference set, as ``make compare`` reads it: where it lies, its
figures and claims, and the command that builds it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from ..paths import FIGURES_ROOT, PROJECT_ROOT, figure_key, shown_tree
from ..variants import NAME_PATTERN
from .against_reference import reference_keys


class Tree:
    """A tree's figures and claims: a built tree (its manifest ``figures/all`` lists its figures, its
    record ``figures/settings.yaml`` says what made them) or a reference set (``settings.yaml``
    beside its PNGs). Anything else is refused in one line naming the command that builds it."""

    def __init__(self, label: str, root: Path):
        self.label, self.root = label, Path(root)
        manifest, record = self.root / FIGURES_ROOT / "all", self.root / FIGURES_ROOT / "settings.yaml"
        self.is_reference = not manifest.exists() and (self.root / "settings.yaml").is_file()
        if self.is_reference and not reference_keys(self.root):
            raise FileNotFoundError(f"{label}: the reference set {self.root} holds no figures; make bless writes it")
        if not self.is_reference and not (manifest.is_file() and record.is_file()):
            missing = "figures/all" if not manifest.is_file() else "figures/settings.yaml"
            raise FileNotFoundError(
                f"{label}: {shown_tree(self.root)} is not built (no {missing}); build it with: {build_command(label)}"
            )
        name = (self.record().get("name") or "") if label == "paper" else "paper"
        if name != "paper":  # "paper" names the paper's settings only: a root built otherwise is stale
            raise FileNotFoundError(
                f"paper: {shown_tree(self.root)} holds the settings '{name}', not the paper's; "
                "rebuild it with: make clean-paper && make figures"
            )

    def keys(self) -> list[str]:
        if self.is_reference:
            return reference_keys(self.root)
        manifest = pd.read_csv(self.root / FIGURES_ROOT / "all", sep="\t")
        return sorted(figure_key(path) for path in manifest.path if Path(path).suffix == ".pdf")

    def file(self, key: str, suffix: str) -> Path:
        return (self.root if self.is_reference else self.root / FIGURES_ROOT) / f"{key}.{suffix}"

    def claims(self) -> pd.DataFrame | None:
        path = self.root / ("claims.csv" if self.is_reference else "results/claims.csv")
        return pd.read_csv(path, dtype={"claim_id": str}) if path.exists() else None

    def record(self) -> dict:
        from ..variants import read_record

        return read_record(self.root) or {}


def locate(name: str, root: str | os.PathLike = ".", reference_set: str = "config") -> Path:
    """``paper`` (the project root's tree), ``reference`` (the reference set of B's settings),
    ``reference/<set>``, a variant's name (``variants/<name>``) or a folder."""
    from ..variants import VARIANTS_DIR

    root = Path(root)
    if name == "paper":
        return root
    if name == "reference" or name.startswith("reference/"):
        return PROJECT_ROOT / "figures" / "reference" / (name.partition("/")[2] or reference_set)
    if (root / VARIANTS_DIR / name).is_dir():
        return root / VARIANTS_DIR / name
    if Path(name).is_dir():
        return Path(name)
    raise FileNotFoundError(
        f"no tree named {name!r} (allowed: paper, reference, reference/<set>, a variant under variants/ or a "
        f"folder); a variant is built with: make figures VARIANT={name}"
    )


def build_command(label: str) -> str:
    """The command that builds the tree ``label`` names (``locate``'s kinds)."""
    if label == "paper":
        return "make figures"
    if label == "smoke":
        return "make figures CONFIG=config/smoke.yaml"
    if label == "reference" or label.startswith("reference/"):
        return "make bless"
    if re.fullmatch(NAME_PATTERN, label) and "/" not in label:
        return f"make figures VARIANT={label}"
    return f"make figures WORKDIR={label}"
