"""The README's table of what the pipeline reproduces is the paper registry, row for row, and its
links lead to files that exist."""

import re
from pathlib import Path

import pytest

from replication.registry import papers

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
HEADER = "| target | paper | figure | finding |"


def table_rows(text: str) -> list[tuple[str, str, str]]:
    """(path, paper, figure label) of each row of the table under ``HEADER``; a finding must be given."""
    lines = text.splitlines()
    start = lines.index(HEADER) + 2  # after the header and its |---| line
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        assert len(cells) == 4 and cells[3], f"README row needs target, paper, figure and a finding: {line}"
        target = re.fullmatch(r"`([^`]+)`", cells[0])
        assert target, f"README row's target is not one path in backticks: {line}"
        rows.append((target.group(1), cells[1], cells[2]))
    return rows


def registered() -> list[tuple[str, str, str]]:
    return [
        (item.path, paper.name, getattr(item, "figure", None) or item.table)
        for paper in papers()
        for item in (*paper.figures, *paper.tables)
    ]


def test_table_is_the_registry():
    rows = table_rows(README.read_text())
    assert len(rows) == len(set(rows)), "a figure is listed twice"
    assert sorted(rows) == sorted(registered())


def test_table_parser_sees_a_missing_and_an_extra_row():
    text = README.read_text()
    first = next(line for line in text.splitlines() if line.startswith("| `figures/"))
    assert sorted(table_rows(text.replace(first + "\n", ""))) != sorted(registered())
    extra = "| `figures/local_to_global/fig9.pdf` | Local to Global | Fig. 9 | not in the paper |"
    assert sorted(table_rows(text.replace(first, first + "\n" + extra))) != sorted(registered())
    with pytest.raises(AssertionError, match="a finding"):
        table_rows(text.replace(first, first.rsplit("|", 2)[0] + "| |"))


def test_relative_links_exist():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    assert links
    local = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_readme_stays_short():
    assert len(README.read_text().splitlines()) <= 150


def test_the_phase_cost_stated_is_the_measured_one():
    """The README's cost of figures/phase is the one its benchmark wrote from the reference run
    (docs/measurements/phase_cost.md: the grid's training and its jobs' start-ups, in CPU-h)."""
    report = (ROOT / "docs/measurements/phase_cost.md").read_text()
    measured = re.search(r"(\d+) CPU-s in all", report)
    row = next(line for line in README.read_text().splitlines() if "phase_heatmaps.pdf" in line)
    stated = re.search(r"\(([\d.]+) CPU-h on 2 cores", row)
    assert measured and stated, row
    assert abs(float(stated.group(1)) - int(measured.group(1)) / 3600) <= 0.05 + 1e-9  # stated to 0.1 CPU-h


def test_the_fast_tests_the_readme_names_exist_and_their_time_limit_is_the_measured_one():
    """README's fast-test command uses a declared marker; the default time limit covers the slowest
    fast test at the slowdown docs/testing.md measured under load."""
    import tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 'pytest -m "not pipeline"' in README.read_text()
    assert any(marker.startswith("pipeline:") for marker in options["markers"])
    testing = (ROOT / "docs" / "testing.md").read_text()
    slowest = float(re.search(r"slowest fast test at ([\d.]+) s", testing).group(1))
    slowdown = float(re.search(r"over\s+120 s at load 5, (\d+)x slower", testing).group(1))
    assert f"{options['timeout']} s by default" in testing
    assert options["timeout"] >= slowest * slowdown
