"""Two trees side by side (``make compare A=... B=...``): what their settings differ in, which claims
changed verdict (``claim_changes``), and per figure and data column how far B moved from A, in
multiples of the figure's numerical-noise envelope (``figure_changes``).

Envelopes come from the reference set of B's settings (``diff.reference_set``): they were measured at
those settings' base, which is the noise a variant's figures carry too as long as it does not change
how they are computed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from ..command_line import command_parser
from ..io import write_csv, write_text
from ..paths import PROJECT_ROOT, shown_path
from .claim_changes import compare_claims
from .figure_changes import compare_figures, verdicts_between_trees
from .trees import Tree, locate


def compare_settings(a: Tree, b: Tree) -> pd.DataFrame:
    from ..variants import differences

    record_a, record_b = a.record(), b.record()
    rows = [
        {"key": key, "a": repr(old), "b": repr(new)}
        for key, old, new in differences(record_a.get("settings", {}), record_b.get("settings", {}))
    ]
    return pd.DataFrame(rows, columns=["key", "a", "b"])


def compare_trees(a: Tree, b: Tree, out_dir: str | os.PathLike, settings: dict, envelope_dir: Path | None) -> dict:
    """Write ``report.html``, ``report.md``, ``figures.csv``, ``settings.csv`` and ``claims.csv`` of
    B against A into ``out_dir``; return the tables."""
    from .envelopes import read_envelope
    from .report import compare_html, compare_markdown

    out_dir = Path(out_dir)
    envelopes = read_envelope(envelope_dir) if envelope_dir else {}
    figures, panels = compare_figures(a, b, out_dir, settings, envelopes)
    tables = {
        "settings": compare_settings(a, b),
        "claims": compare_claims(a, b),
        "figures": figures,
        "verdicts": verdicts_between_trees(figures),
    }
    for name in ("settings", "claims", "figures"):
        write_csv(tables[name], out_dir / f"{name}.csv")
    context = {
        "a": a,
        "b": b,
        "k": float(settings["envelope_factor"]),
        "envelope_dir": shown_path(envelope_dir) if envelope_dir else "none (floors only)",
        "panels": panels,
        **tables,
    }
    write_text(compare_markdown(context), out_dir / "report.md")
    write_text(compare_html(context), out_dir / "report.html")
    return tables


def summary_line(a: str, b: str, tables: dict) -> str:
    """What ``make compare`` prints and its report opens with (``report.compare_headline``)."""
    from .report import compare_headline

    return compare_headline(a, b, tables)


def envelope_set(settings: dict) -> Path | None:
    """The reference set whose recorded settings are closest to ``settings``: its envelopes are the
    noise of figures computed the way these are (sets without an envelope, such as the phase
    diagram's, are not candidates)."""
    from ..variants import closest_tree, read_record
    from .envelopes import ENVELOPE_FILE

    sets = PROJECT_ROOT / "figures" / "reference"
    candidates = {
        p.name: p for p in sorted(sets.glob("*")) if p.is_dir() and read_record(p) and (p / ENVELOPE_FILE).is_file()
    }
    return closest_tree(settings, candidates)


def side_base(name: str, root: str | os.PathLike) -> Path:
    """The config file the tree ``name`` was built over: the base a command suggested for the other
    side builds over."""
    from ..make_command import CONFIG_DIR, PAPER_CONFIG
    from ..variants import tree_base

    try:
        return tree_base(locate(name, root))
    except FileNotFoundError:  # not built: a config file's own tree (smoke) is over that file
        own_config = CONFIG_DIR / f"{name}.yaml"
        return own_config if own_config.is_file() else PAPER_CONFIG


def main(argv: list[str] | None = None) -> int:
    from ..errors import ConfigError
    from ..variants import resolve

    parser = command_parser(__spec__, __doc__)
    parser.add_argument("a", help="paper, reference, reference/<set>, a variant or a folder")
    parser.add_argument("b", help="the same kinds")
    parser.add_argument("--out", help="report folder (default: compare/<a>-vs-<b>)")
    parser.add_argument("--root", default=".", help="the project's tree (default: here)")
    args = parser.parse_args(argv)
    base_a, base_b = side_base(args.b, args.root), side_base(args.a, args.root)
    try:
        b = Tree(args.b, locate(args.b, args.root, base=base_b), base_b)
        envelope_dir = envelope_set(b.record().get("settings", {}))
        a = Tree(args.a, locate(args.a, args.root, envelope_dir.name if envelope_dir else "config", base_a), base_a)
        diff_settings = resolve([])["diff"]  # the project's k and floors, as `make diff` uses them
    except (FileNotFoundError, ConfigError) as error:
        print(f"Cannot compare: {error}", file=sys.stderr)
        return 2
    out = Path(args.out or Path(args.root) / "compare" / f"{args.a.replace('/', '_')}-vs-{args.b.replace('/', '_')}")
    tables = compare_trees(a, b, out, diff_settings, envelope_dir)
    print(summary_line(args.a, args.b, tables) + f"; report: {out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
