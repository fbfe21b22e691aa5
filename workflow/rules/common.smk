# Shared set-up: config validation (before any job runs) and the figure registry.
import sys
from pathlib import Path

from replication.config import ConfigError, validate_config
from replication.paths import figure_paths  # not replication.plotting: parsing stays fast


# The papers' full settings are the default wherever the workflow runs (e.g. --directory);
# --configfile and --config values are merged over them.
configfile: str(Path(workflow.basedir).parent / "config" / "config.yaml")


try:
    validate_config(config, Path(workflow.basedir) / "schemas" / "config.schema.yaml")
except ConfigError as error:
    # One clear line, no traceback: the key and what it allows.
    sys.exit(f"Invalid config: {error}")

ENVIRONMENT = "../../environment.yml"

# Every figure target: {"path": pdf, "paper": ..., "figure": ...}; figures/all lists them.
FIGURES = []


def register_figure(pdf, paper, figure):
    FIGURES.append({"path": pdf, "paper": paper, "figure": figure})
    return pdf


# Tables of the papers (Markdown, LaTeX): listed in figures/all like the figures.
TABLES = []


def register_table(path, paper, table):
    TABLES.append({"path": path, "paper": paper, "figure": table})
    return path


# Every per-area claims table (replication.claims format); the claims report merges them.
CLAIM_TABLES = []


def register_claims(csv_path):
    CLAIM_TABLES.append(csv_path)
    return csv_path


def figure_files(pdf):
    """The PDF, PNG and tidy CSV of a figure, as rule outputs."""
    return [str(path) for path in figure_paths(pdf).values()]


def figure_outputs(pdf, caption, category, subcategory=None):
    """Outputs of a figure rule: the PDF and PNG (in the report, with a caption) and the CSV."""
    paths = figure_paths(pdf)
    return {
        "pdf": str(paths["pdf"]),
        "png": report(str(paths["png"]), caption=caption, category=category, subcategory=subcategory),
        "csv": str(paths["csv"]),
    }
