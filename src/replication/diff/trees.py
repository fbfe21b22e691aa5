"""A tree (a folder the pipeline built: its manifest ``figures/all``, its settings record
``figures/settings.yaml``) or a reference set, as ``make compare`` reads it: where it lies, its
figures and claims, and the command that builds it."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pandas as pd

from ..make_command import PAPER_CONFIG, make_command
from ..paths import FIGURES_ROOT, PROJECT_ROOT, figure_key, shown_tree
from .against_reference import reference_keys

REFERENCE_SETS = PROJECT_ROOT / "figures" / "reference"


class Tree:
    """A tree's figures and claims: a built tree (its manifest ``figures/all`` lists its figures, its
    record ``figures/settings.yaml`` says what made them) or a reference set (``settings.yaml``
    beside its PNGs). Anything else is refused in one line naming the command that builds it, over
    ``base`` (the config file of the other side's settings) where the tree does not record its own."""

    def __init__(self, label: str, root: Path, base: Path = PAPER_CONFIG):
        self.label, self.root = label, Path(root)
        manifest, record = self.root / FIGURES_ROOT / "all", self.root / FIGURES_ROOT / "settings.yaml"
        self.is_reference = not manifest.exists() and (self.root / "settings.yaml").is_file()
        if self.is_reference and not reference_keys(self.root):
            raise FileNotFoundError(f"{label}: the reference set {self.root} holds no figures; make bless writes it")
        if not self.is_reference and not (manifest.is_file() and record.is_file()):
            missing = "figures/all" if not manifest.is_file() else "figures/settings.yaml"
            raise FileNotFoundError(
                f"{label}: {shown_tree(self.root)} is not built (no {missing}); build it with: "
                f"{build_command(label, self.root, base)}"
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


def locate(name: str, root: str | os.PathLike = ".", reference_set: str = "config", base: Path = PAPER_CONFIG) -> Path:
    """``paper`` (the project root's tree), ``reference`` (the reference set of B's settings),
    ``reference/<set>``, a variant's name (``variants/<name>``) or a folder. FileNotFoundError (one
    line) for any other name: the trees there are, and the command that builds it over ``base``."""
    from ..variants import VARIANTS_DIR, trees

    root = Path(root)
    if name == "paper":
        return root
    if name == "reference" or name.startswith("reference/"):
        return REFERENCE_SETS / (name.partition("/")[2] or reference_set)
    if (root / VARIANTS_DIR / name).is_dir():
        return root / VARIANTS_DIR / name
    if Path(name).is_dir():
        return Path(name)
    built = list(trees(root))
    references = [f"reference/{path.name}" for path in sorted(REFERENCE_SETS.glob("*")) if path.is_dir()]
    close = difflib.get_close_matches(name, built + references, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    tree = Path(name) if "/" in name else root / VARIANTS_DIR / name
    raise FileNotFoundError(
        f"no tree named {name!r}: {hint}the trees: {', '.join(built + references)} (or a folder); "
        f"build it with: {build_command(name, tree, base)}"
    )


def build_command(label: str, tree: Path, base: Path = PAPER_CONFIG) -> str:
    """The command that builds the tree ``label`` names (``locate``'s kinds), lying at ``tree``: over
    its recorded base, else over ``base``."""
    from ..variants import VARIANTS_DIR, tree_base, variant_command

    if label == "paper":
        return "make figures"
    if label == "reference" or label.startswith("reference/"):
        return "make bless"
    if tree.parent.name == VARIANTS_DIR.name and tree.name == label:
        return variant_command(label, tree.parent.parent, base)
    return make_command("figures", tree_base(tree, base), workdir=tree)
