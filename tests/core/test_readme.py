"""The README's table of what the pipeline reproduces is the paper registry, row for row, its
findings state the verdicts of the committed claims reports, and its links lead to files that exist."""

import csv
import re
from pathlib import Path

import pytest

from replication.registry import papers

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
HEADER = "| target | paper | figure | finding |"


def table_rows(text: str) -> list[tuple[str, str, str]]:
    """(path, paper, figure label) of each row of the table under ``HEADER``; a finding must be given."""
    return [row[:3] for row in table_cells(text)]


def table_cells(text: str) -> list[tuple[str, str, str, str]]:
    """(path, paper, figure label, finding) of each row of the table under ``HEADER``."""
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
        rows.append((target.group(1), cells[1], cells[2], cells[3]))
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


# --- The verdicts the findings state, against the committed claims reports ------------------------
#
# A finding may open with a claims clause, ``**<selectors>: <verdict>** — <words>``:
#   selectors  claims of the row's paper, comma-separated: a claim_id of the report ("L2G-6 (6d)"), its
#              name (the part in parentheses, "6d"), or the spec claim the rows declare (their `spec`:
#              "L2G-6", or "beyond the paper"): its claims about the row's figure number, leaving out
#              those whose figure label is another row's label
#   verdict    "holds" / "fails" (one checked claim), "not checkable", or "<x> of <y> hold" (checked
#              claims), then optionally "; <names> fail(s)" and "; <names or a count> not checkable",
#              which must be given wherever a selected claim is not checkable.
# The report is the committed claims.csv of the row's manifest (figures/all: the config set).

CLAUSE = re.compile(r"\*\*(?P<selectors>[^*]+?): (?P<verdict>[^*]+)\*\*(?: — |$)")
REPORT_SETS = {"all": "config"}  # manifest -> its reference set under figures/reference (else its own name)


def split_names(text: str) -> list[str]:
    """Comma-separated names; a comma inside parentheses ("5w (p=0.2, q=0.9)") does not split."""
    return [name.strip() for name in re.split(r",(?![^()]*\))", text) if name.strip()]


def claim_name(claim: dict) -> str:
    """A report row's own name: ``L2G-6 (6d)`` filed under ``L2G-6`` -> ``6d``; a claim beyond the paper,
    or one that is its spec claim itself ("L2G-1"), is named by its id."""
    filed = f"{claim['spec']} ("
    return claim["claim_id"][len(filed) : -1] if claim["claim_id"].startswith(filed) else claim["claim_id"]


def figure_numbers(label: str) -> set[str]:
    """The figure numbers a label names before any parenthesis: ``Figs. 1, 2`` -> {1, 2}, ``Fig. 3a`` -> {3a}."""
    head = label.split("(", 1)[0]
    return set(re.findall(r"\d+[a-z]?", head)) if re.match(r"Figs?\. ", head) else set()


def claims_report(manifest: str) -> list[dict] | None:
    """The committed claims of ``manifest``'s reference set, or None where none is committed."""
    path = ROOT / "figures" / "reference" / REPORT_SETS.get(manifest, manifest) / "claims.csv"
    if not path.exists():
        return None
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def registered_rows() -> dict[str, tuple[str, str, str]]:
    """Each registered path -> (paper name, its label, its manifest)."""
    return {
        item.path: (paper.name, getattr(item, "figure", None) or item.table, item.manifest)
        for paper in papers()
        for item in (*paper.figures, *paper.tables)
    }


def select(selectors: str, paper: str, label: str, labels: set[str], report: list[dict]) -> list[dict]:
    """The report's claims a row's selectors name (``labels``: the paper's other rows' labels)."""
    own = [claim for claim in report if claim["paper"] == paper]
    numbers = figure_numbers(label)
    chosen: dict[str, dict] = {}
    for selector in split_names(selectors):
        exact = [c for c in own if selector in (c["claim_id"], claim_name(c))]
        spec = [
            c
            for c in own
            if c["spec"] == selector
            and (not numbers or numbers & figure_numbers(c["figure"]))
            and (c["figure"] == label or c["figure"] not in labels)
        ]
        assert exact or spec, f"{label}: no claim {selector!r} of {paper} in the claims report"
        chosen.update({c["claim_id"]: c for c in exact or spec})
    return list(chosen.values())


def verdict_errors(claims: list[dict], verdict: str) -> list[str]:
    """How ``verdict`` (the clause's words after the colon) disagrees with ``claims``; [] if it agrees."""
    checked = [c for c in claims if c["kind"] == "checked"]
    held = [c for c in checked if c["holds"] == "True"]
    failing = {claim_name(c) for c in checked if c["holds"] != "True"}
    unchecked = {claim_name(c) for c in claims if c["kind"] == "not checkable"}
    head, *tail = [part.strip() for part in verdict.split(";")]
    count = re.fullmatch(r"(\d+) of (\d+) hold", head)
    stated = {"holds": (1, 1), "fails": (0, 1), "not checkable": (0, 0)}.get(head)
    stated = (int(count.group(1)), int(count.group(2))) if count else stated
    errors = []
    if stated is None:
        return [f"verdict {head!r} is none of: holds, fails, not checkable, <x> of <y> hold"]
    if stated != (len(held), len(checked)):
        errors.append(f"states {head!r}; the report: {len(held)} of {len(checked)} checked claims hold")
    if head == "not checkable" and not unchecked:
        errors.append("states 'not checkable'; the report checks every one of them")
    said_unchecked = head == "not checkable"
    for part in tail:
        if match := re.fullmatch(r"(.+) fails?", part):
            if set(split_names(match.group(1))) != failing:
                errors.append(
                    f"names {match.group(1)!r} as failing; the report: {', '.join(sorted(failing)) or 'none'}"
                )
        elif match := re.fullmatch(r"(.+) not checkable", part):
            said_unchecked = True
            given = match.group(1)
            if (len(unchecked) != int(given)) if given.isdigit() else (set(split_names(given)) != unchecked):
                errors.append(f"names {given!r} not checkable; the report: {', '.join(sorted(unchecked)) or 'none'}")
        else:
            errors.append(f"{part!r} is neither '<names> fail' nor '<names> not checkable'")
    if unchecked and not said_unchecked:
        errors.append(f"leaves out the claims that are not checkable: {', '.join(sorted(unchecked))}")
    return errors


def finding_errors(text: str) -> list[str]:
    """Every disagreement of the README's findings with the committed claims reports: a clause whose
    verdict is not the report's, a claim of a report that no finding names, a finding that says
    "reproduced" where a claim it names fails, a clause where no report is committed."""
    rows = registered_rows()
    labels = {paper: {label for name, label, _ in rows.values() if name == paper} for paper, _, _ in rows.values()}
    errors, named = [], set()
    for path, paper, label, finding in table_cells(text):
        manifest = rows[path][2] if path in rows else "all"
        clause = CLAUSE.match(finding)
        if clause is None:
            if re.search(r"reproduc", finding, flags=re.I):
                errors.append(f"{path}: says reproduced without the claims it rests on")
            continue
        report = claims_report(manifest)
        if report is None:
            errors.append(f"{path}: cites claims, but no claims report of figures/{manifest} is committed")
            continue
        claims = select(clause["selectors"], paper, label, labels[paper] - {label}, report)
        named |= {(manifest, paper, c["claim_id"]) for c in claims}
        errors += [f"{path}: {error}" for error in verdict_errors(claims, clause["verdict"])]
        fails = any(c["kind"] == "checked" and c["holds"] != "True" for c in claims)
        if fails and re.search(r"reproduc", finding[clause.end() :], flags=re.I):
            errors.append(f"{path}: says reproduced where a claim it names fails")
    for manifest in sorted({manifest for _, _, manifest in rows.values()}):
        for claim in claims_report(manifest) or []:
            key = (manifest, claim["paper"], claim["claim_id"])
            if claim["kind"] != "documentation" and key not in named:
                errors.append(f"no finding names {claim['paper']} {claim['claim_id']} (figures/{manifest})")
    return errors


def test_findings_state_the_claims_reports_verdicts():
    assert finding_errors(README.read_text()) == []


def test_findings_check_fails_on_a_flipped_verdict():
    """Each kind of drift is caught: a count, a name of a failing claim, a verdict word, a claim left
    out, a "reproduced" over a failing claim."""
    text = README.read_text()
    fig3 = next(line for line in text.splitlines() if "`figures/local_to_global/fig3.pdf`" in line)
    fig4 = next(line for line in text.splitlines() if "`figures/local_to_global/fig4.pdf`" in line)
    fig5 = next(line for line in text.splitlines() if "`figures/benign_overfitting/fig5.pdf`" in line)
    count = re.search(r"(\d+) of (\d+) hold", fig3)
    drifted = {
        "count": fig3.replace(count.group(0), f"{int(count.group(1)) + 1} of {count.group(2)} hold"),
        "name": fig3.replace("6d, 6d-output fail", "6d fails"),
        "word": fig4.replace("5c fails", "5c holds"),
        "unchecked left out": fig3.replace("; 6g, 6h not checkable", ""),
        "reproduced": fig4.replace(" — ", " — reproduced: "),
    }
    originals = {"count": fig3, "name": fig3, "word": fig4, "unchecked left out": fig3, "reproduced": fig4}
    for kind, line in drifted.items():
        assert line != originals[kind], kind
        assert finding_errors(text.replace(originals[kind], line)), kind
    unnamed = fig5.split("**")[0] + fig5.split("**", 2)[2].removeprefix(" — ")
    assert any("no finding names" in e for e in finding_errors(text.replace(fig5, unnamed)))
