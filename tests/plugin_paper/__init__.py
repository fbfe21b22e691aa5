"""An example paper, added to the pipeline through the paper contract alone: y(t) = exp(-k t).

Copied by tests/workflow/test_plugin_paper.py to src/replication/papers/exponential_decay/ (the package
name is the paper's id). One parameter (the rate k), one figure, two claims: the half-life
ln 2 / k, which holds, and y(1) < 0.01, which does not at the default k = 2.
"""

from replication.contract import Figure, Paper, SpecClaim

PAPER = Paper(
    id="exponential_decay",
    name="Exponential decay",
    title="Exponential decay: an example paper",
    arxiv="9999.00001",  # not a real paper: sorts after the real ones
    figures=(Figure("figures/exponential_decay/fig1.pdf", "Fig. 1", "fig1.rst"),),
    claims=(
        SpecClaim("ED-1", "Fig. 1", "y falls to one half at t = ln 2 / k.", "|t_half - ln 2 / k| <= 1e-3"),
        SpecClaim("ED-2", "Fig. 1", "y(1) is below 0.01.", "y(1) < 0.01"),
    ),
)
