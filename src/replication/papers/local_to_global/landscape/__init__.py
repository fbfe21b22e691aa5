"""The canonical low-rank models' loss landscape and gradient flow (Figs. 1, 2, 5, the basins; claims 1-4).

``canonical`` is the model theta = (e, w); ``canonical3d`` adds the attention scalar a,
theta = (e, w, a). ``flow`` integrates their gradient flows, ``flow_tables`` and ``basins`` measure
them, ``endpoint_loss`` checks where they end on sampled sequences, ``plots`` draws the figures.
Its rules (``rules/landscape.smk``), their scripts and the figures' captions (``report/``) lie here.
"""

from replication.contract import Figure, Part

_FIGURES = "figures/local_to_global"

# What it makes (captions in report/): the paper gathers it (replication.contract.Part).
PART = Part(
    "landscape",
    figures=(
        Figure(f"{_FIGURES}/fig1.pdf", "Fig. 1", "fig1.rst"),
        Figure(f"{_FIGURES}/fig2.pdf", "Fig. 2", "fig2.rst"),
        Figure(f"{_FIGURES}/fig5.pdf", "Fig. 5", "fig5.rst"),
        Figure(f"{_FIGURES}/basins.pdf", "Basins of initialisation (beyond the paper)", "basins.rst"),
    ),
    claims=("results/local_to_global/claims_landscape.csv",),
)
