"""Times the README and the docs state are the measured ones: each "X min wall, Y CPU-min" beside a
command is that command's measurement in docs/measurements/build_times.json (written by
scripts/benchmarks/build_times.py), to the tenth of a minute it is stated to."""

from __future__ import annotations

import json
import re

import pytest

from helpers import ROOT

MEASUREMENTS = ROOT / "docs" / "measurements" / "build_times.json"
STATED = re.compile(r"(?P<wall>[\d.]+) min wall, (?P<cpu>[\d.]+) CPU-min")
# (file, a text on the line that states the time, the measured step)
STATEMENTS = [
    ("README.md", "`make env`, which both run first", "env"),
    ("README.md", "make figures   # creates .venv", "paper"),
    ("README.md", "# tiny settings, in variants/smoke/", "smoke"),
    ("README.md", "make phase CONFIG=config/smoke.yaml   ", "phase_smoke"),
    ("README.md", 'pytest -m "not pipeline"', "fast_tests"),
    ("docs/plateau.md", "figures/plateau --configfile config/smoke.yaml", "plateau_smoke"),
]


def stated_time(text: str, marker: str) -> tuple[str, str]:
    """(wall, CPU) in minutes as written on the one line of ``text`` holding ``marker``."""
    lines = [line for line in text.splitlines() if marker in line]
    assert len(lines) == 1, f"{len(lines)} lines hold {marker!r}"
    found = STATED.search(lines[0])
    assert found, f"no 'X min wall, Y CPU-min' on: {lines[0]}"
    return found["wall"], found["cpu"]


def measured_time(step: str) -> tuple[str, str]:
    run = json.loads(MEASUREMENTS.read_text())["runs"][step]
    return f"{run['wall_s'] / 60:.1f}", f"{run['cpu_s'] / 60:.1f}"


@pytest.mark.parametrize("path, marker, step", STATEMENTS, ids=[s[2] for s in STATEMENTS])
def test_a_stated_time_is_the_measured_one(path, marker, step):
    assert stated_time((ROOT / path).read_text(), marker) == measured_time(step), (
        f"{path}: the time stated for {step} is not docs/measurements/build_times.json's: "
        "write the measured one (or measure again: scripts/benchmarks/build_times.py --write)"
    )


def test_a_time_typed_by_hand_is_seen():
    wall, cpu = measured_time("smoke")
    line = f"make figures CONFIG=config/smoke.yaml   # ({wall} min wall, {cpu} CPU-min on 2 cores)"
    assert stated_time(line, "make figures CONFIG=config/smoke.yaml ") == measured_time("smoke")
    typed = line.replace(f"{wall} min wall", "2 min wall")
    assert stated_time(typed, "make figures CONFIG=config/smoke.yaml ") != measured_time("smoke")
    with pytest.raises(AssertionError, match="no 'X min wall"):
        stated_time("make figures CONFIG=config/smoke.yaml   # ~2 min", "make figures CONFIG=config/smoke.yaml ")


def test_the_fast_tests_use_both_cores():
    command = next(line for line in (ROOT / "README.md").read_text().splitlines() if 'pytest -m "not pipeline"' in line)
    assert re.search(r"pytest -m \"not pipeline\" -n 2\b", command), command
    assert json.loads(MEASUREMENTS.read_text())["runs"]["fast_tests"]["command"] in command
