# Shared set-up: the papers, config validation (before any job runs) and the figure registry.
import os
import re
import sys
from pathlib import Path

from snakemake.common.configfile import load_configfile

# This checkout, for an installed (not editable) package that cannot know it (replication.paths).
os.environ.setdefault("REPLICATION_ROOT", str(Path(workflow.basedir).parent))

from replication.config import apply_settings, validate_config
from replication.errors import ConfigError
from replication.make_command import goal_of
from replication.paths import PROJECT_ROOT, manifest_reference_set
from replication.paths import figure_paths  # not replication.plotting: parsing stays fast
from replication.registry import papers
from replication.settings import rule_param  # typed settings as params that trigger reruns
from replication.variants import check_root, check_tree, record_of

# Every paper package under src/replication/papers/ (replication.registry); the Snakefile includes their rules.
PAPERS = papers()


# The papers' full settings are the default wherever the workflow runs (e.g. --directory);
# --configfile and --config values are merged over them.
configfile: str(PROJECT_ROOT / "config" / "config.yaml")


# TREE: "" here; "<point>/" where a sweep includes this workflow as a module (replication.sweeps).
TREE = workflow.modifier.path_modifier.prefix or ""

try:
    # settings: smoke (config/smoke.yaml): each paper's smoke.yaml over its settings; what the
    # command line gives (Snakemake keeps --config values in config_settings.config) still wins.
    # A sweep's module gets its config resolved already (replication.variants.resolve).
    if not TREE:
        apply_settings(
            config,
            [load_configfile(path) for path in workflow.config_settings.configfiles or ()]
            + [workflow.config_settings.config or {}],
        )
    validate_config(config, PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml")
    # The project root holds the paper's settings only; a tree holds one set of settings
    # (figures/settings.yaml): other settings go to a variant. The advice names the make goal of
    # the targets asked for (parsing comes before Snakemake keeps them: they are read from argv).
    if not TREE:
        check_root(config, Path("."), goal=goal_of(sys.argv[1:]))
    check_tree(config, Path(TREE or "."), goal=goal_of(sys.argv[1:]))
except ConfigError as error:
    # One clear line, no traceback: the key and what it allows.
    sys.exit(f"Invalid config: {error}")

# What the tree's figures are made with: name (paper, smoke or the variant's), sha256 and settings.
SETTINGS_RECORD = record_of(config)


def paper_report(manifest):
    """A smoke tree's claims report is read beside the committed report of the same manifest at the
    papers' settings: the failures that hold there are expected at smoke settings."""
    path = PROJECT_ROOT / "figures" / "reference" / manifest_reference_set(manifest) / "claims.csv"
    return [str(path)] if SETTINGS_RECORD.get("over") == "smoke" and path.is_file() else []


# Each paper's settings, typed, built once here from its validated section (Paper.settings): its
# rule files read them (SETTINGS["<id>"].<part>) and type nothing again.
SETTINGS = {paper.id: paper.typed_settings(config[paper.id]) for paper in PAPERS}

# Absolute: the papers' rule files live in their packages.
ENVIRONMENT = str(PROJECT_ROOT / "environment.yml")

# Every figure target of every paper, by manifest (registry.Figure.manifest): {"path": pdf,
# "paper": ..., "figure": ...}. figures/<manifest> lists them; "all" is the laptop set, the one
# the references and the figure diff cover.
MANIFESTS = list(dict.fromkeys(name for paper in PAPERS for name in paper.manifests))
FIGURES_BY_MANIFEST = {
    manifest: [
        {"path": figure.path, "paper": paper.name, "figure": figure.figure}
        for paper in PAPERS
        for figure in paper.figures
        if figure.manifest == manifest
    ]
    for manifest in MANIFESTS
}
FIGURES = FIGURES_BY_MANIFEST["all"]
# The manifests other than the laptop set figures/all: each its own target, claims report and reference set.
OTHER_MANIFESTS = [manifest for manifest in MANIFESTS if manifest != "all"]

# Tables of the papers (Markdown, LaTeX), by manifest: listed in figures/<manifest> like the figures.
TABLES_BY_MANIFEST = {
    manifest: [
        {"path": table.path, "paper": paper.name, "figure": table.table}
        for paper in PAPERS
        for table in paper.tables
        if table.manifest == manifest
    ]
    for manifest in MANIFESTS
}
TABLES = TABLES_BY_MANIFEST["all"]


# Every per-area claims table (replication.claims format), by manifest; each manifest's claims
# report merges its own (figures/claims.md for "all", figures/<manifest>_claims.md otherwise).
CLAIM_TABLES_BY_MANIFEST = {manifest: [] for manifest in MANIFESTS}
CLAIM_TABLES = CLAIM_TABLES_BY_MANIFEST["all"]
CLAIMS_REPORT = "figures/claims.md"  # figures/all's; figures/<manifest>_claims.md for the others


def register_claims(csv_path, manifest="all"):
    CLAIM_TABLES_BY_MANIFEST.setdefault(manifest, []).append(csv_path)
    return csv_path


# The claims tables the papers' parts declare (Part.claims); a rule file registers any other itself.
for _paper in PAPERS:
    for _path, _manifest in _paper.claim_tables:
        register_claims(_path, _manifest)


def figure_files(pdf):
    """The PDF, PNG and tidy CSV of a figure, as rule outputs."""
    return [str(path) for path in figure_paths(pdf).values()]


def figure_outputs(paper, pdf, subcategory=None):
    """Outputs of a figure rule: the PDF and PNG (in the report, with the paper's caption of the
    figure) and the CSV. ``pdf`` may hold wildcards; its caption is that of the first registered
    figure that matches."""
    paths = figure_paths(pdf)
    pattern = re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(str(pdf))) + "$")
    figure = next((f for f in paper.figures if pattern.match(f.path)), None)
    if figure is None:
        raise ValueError(f"{paper.id}: {pdf} is not in the paper's figure list")
    caption = str(paper.caption_path(figure))
    category = paper.name
    # The report says which settings each image shows (the tree's record, checked above).
    labels = {"figure": f"{figure.figure} ({paths['png'].name})", "settings": SETTINGS_RECORD["name"]}
    return {
        "pdf": str(paths["pdf"]),
        "png": report(str(paths["png"]), caption=caption, category=category, subcategory=subcategory, labels=labels),
        "csv": str(paths["csv"]),
    }
