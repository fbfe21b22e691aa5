"""Sakamoto & Sato, Benign or Not-Benign Overfitting in Token Selection of Attention Mechanism
(arXiv 2409.17625 v1): data model, exact Gram-matrix trainer, conditions of Thm 4.2, figures."""

from replication.contract import Figure, Paper, SpecClaim

from . import settings
from .config_checks import check_ranges

_FIGURES = "figures/benign_overfitting"

# Heatmaps of the d x ||mu|| grid (one rule draws them all): stem -> the paper figure it reproduces.
HEATMAPS = {
    "fig4": "Fig. 4",
    "fig4_as_coded": "Fig. 4 (as coded)",
    "fig5": "Fig. 5",
    "fig6": "Fig. 6",
    "fig6_as_coded": "Fig. 6 (as coded)",
    "accuracy": "beyond the paper",
    "seed_spread": "beyond the paper (seed spread of Figs. 4-6)",
}
PANELS = ("a", "b", "c")  # Fig. 3

PAPER = Paper(
    id="benign_overfitting",
    name="Benign overfitting",
    title="Benign or Not-Benign Overfitting in Token Selection of Attention Mechanism",
    arxiv="2409.17625v1",
    figures=(
        Figure(f"{_FIGURES}/fig1.pdf", "Fig. 1", "fig1.rst"),
        Figure(f"{_FIGURES}/fig2.pdf", "Fig. 2", "fig2.rst"),
        *(Figure(f"{_FIGURES}/fig3{panel}.pdf", f"Fig. 3{panel}", "fig3.rst") for panel in PANELS),
        *(Figure(f"{_FIGURES}/{stem}.pdf", figure, "heatmaps.rst") for stem, figure in HEATMAPS.items()),
    ),
    # The expected results of spec section 4, one claim per figure.
    claims=(
        SpecClaim(
            "BO-fig1",
            "Fig. 1",
            "Hard token selection with p = mu_+ + mu_- + c noise: train/test accuracy 1.0/1.0 for "
            "c = 0.06 (benign), 1.0/~0.58 for c = 1 (harmful), 0.8/1.0 for c = 0.001 (not overfitting).",
            "1.0/1.0; 1.0/0.53-0.70; 0.8/1.0",
        ),
        SpecClaim(
            "BO-fig2",
            "Fig. 2",
            "During training clean samples' relevant-token probability r goes to 1 and noisy "
            "samples' to 0, so S = r(1 - r) rises then falls.",
            "final r: clean near 1, noisy near 0",
        ),
        SpecClaim(
            "BO-fig3",
            "Fig. 3",
            "Softmax dynamics over 10000 steps: (a) d=2000, ||mu||=20 benign; (b) d=4500, ||mu||=5 "
            "harmful, a noisy sample ends on an irrelevant token; (c) d=1000, ||mu||=80 not "
            "overfitting, a fitted noisy sample ends on token 2, a not-fitted one on token 0.",
            "final argmax tokens as stated",
        ),
        SpecClaim(
            "BO-fig4",
            "Fig. 4",
            "The Eq. 9 ratio (condition 1 of Thm 4.2) exceeds 1 in every cell of the d x ||mu|| grid.",
            "> 1 in all cells",
        ),
        SpecClaim(
            "BO-fig5",
            "Fig. 5",
            "Final train loss 0.41-0.54 and test loss 0.40-0.64; test loss high (~0.62-0.645) at "
            "||mu|| = 5, low (<= 0.43) for ||mu|| >= 40 and d >= 750.",
            "ranges as stated",
        ),
        SpecClaim(
            "BO-fig6",
            "Fig. 6",
            "The Eq. 10 class-balance ratio stays within ~0.5..2.5 in every cell.",
            "0.5 <= ratio <= 2.5",
        ),
    ),
    check_config=check_ranges,
    settings=settings.settings,
)
