"""The make goal a run's messages name is generic over manifests: figures/all is `make figures`, any
other registered manifest `make build MANIFEST=<name>`, and the goal leads back to its target."""

import re

from helpers import ROOT
from replication.make_command import goal_of, make_command, other_manifests, target_of
from replication.registry import papers


def test_every_other_manifest_is_built_by_the_generic_goal():
    manifests = {manifest for paper in papers() for manifest in paper.manifests} - {"all"}
    assert other_manifests() == manifests and manifests  # the parts declare them (phase, plateau)
    for manifest in manifests:
        goal = goal_of([f"figures/{manifest}", "--cores", "2"])
        assert goal == f"build MANIFEST={manifest}" and target_of(goal) == f"figures/{manifest}"
        assert make_command(goal, variant="v") == f"make build MANIFEST={manifest} VARIANT=v"


def test_the_laptop_set_and_other_targets():
    assert goal_of(["figures/all"]) == "figures" and target_of("figures") == "figures/all"
    assert goal_of(["figures/diff/passed"]) == "diff" and target_of("diff") == "figures/diff/passed"
    assert goal_of(["figures/claims.md"]) == goal_of(["figures/nothing"]) == goal_of([]) == "figures"
    assert target_of("lint") == "figures/all"


def test_no_make_goal_or_variable_names_a_paper_or_part():
    """The Makefile is generic: a part's goals are `make build MANIFEST=<name>` and `make bless-manifest
    MANIFEST=<name> RUN_DIR=<dir>` (its run's cost measured as the part declares), never goals of its own."""
    makefile = (ROOT / "Makefile").read_text()
    goals = re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", makefile, re.M)
    variables = re.findall(r"^([A-Za-z_]\w*)\s*[?:+]?=", makefile, re.M)
    assert "bless-manifest" in goals and "RUN_DIR" in variables
    names = {name for paper in papers() for name in (paper.id, *(part.package for part in paper.parts))}
    names |= other_manifests()
    for word in goals + variables:
        words = set(re.split(r"[-_.]", word.lower()))
        assert not words & names and word.lower().replace("-", "_") not in names, word
