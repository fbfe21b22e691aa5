"""Claims of the transformer experiments (spec §5 items 5-6, Sec. 5 of the paper and its figure
captions), judged per seed over the runs behind Figs. 3, 4 and 6.

Every sentence of Sec. 5 and of the captions of Figs. 3, 4 and 6 is a row: ``checked`` over the
runs (rule, number of runs, fraction that holds with a Clopper-Pearson interval), or
``not checkable`` with the reason.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from replication.claims import Claim

from ..markov import MarkovChain
from .settings import TransformerClaimSettings
from .structure_claims import Structure, checked, structure_claims


def mean_curve(fig4: pd.DataFrame, init: str) -> pd.Series:
    """Mean over seeds of the smoothed test loss of ``init``, indexed by step."""
    return fig4[fig4.init == init].groupby("step").test_loss_smoothed.mean()


def _seeds(frame: pd.DataFrame) -> list[int]:
    return sorted(frame.seed.unique()) if "seed" in frame else [1]


def _iterations(iterations: list[int | None]) -> str:
    """Per seed, the iteration at which something first happened, or "never"."""
    return ", ".join("never" if iteration is None else str(iteration) for iteration in iterations)


def loss_claims(fig4: pd.DataFrame, chain: MarkovChain, settings: TransformerClaimSettings) -> list[Claim]:
    """Fig. 4: the plateau of the standard init, ours at the entropy rate, and where the standard init ends."""
    tol, (start, stop) = settings.tolerance, settings.plateau
    standard = fig4[fig4.init == "standard"]
    seeds = _seeds(standard)
    gaps, covered = [], True
    for seed in seeds:
        curve = standard[standard.seed == seed].set_index("step").test_loss_smoothed
        window = curve[(curve.index >= start) & (curve.index <= stop)]
        covered &= len(window) > 0 and window.index.max() >= stop
        gaps.append(float((window - chain.unigram_loss).abs().max()) if len(window) else np.inf)
    mean_gap = float((mean_curve(fig4, "standard").loc[start:stop] - chain.unigram_loss).abs().max())
    claims = [
        checked(
            "5a",
            "Fig. 4",
            f"Standard init: test loss within {tol} of H(pi) = {chain.unigram_loss:.4f} "
            f"over iterations {start}..{stop}.",
            max(gaps),
            f"max |loss - H(pi)| <= {tol} per seed",
            [covered and g <= tol for g in gaps],
            (
                f"per seed (smoothed) {', '.join(f'{g:.4f}' for g in gaps)}; mean curve {mean_gap:.4f}"
                if covered
                else f"the runs do not reach iteration {stop}"
            ),
            "per seed; ",
            spec="L2G-5",
        )
    ]

    ours = fig4[fig4.init == "ours"]
    at_stop, firsts = [], []
    for seed in _seeds(ours):
        curve = ours[ours.seed == seed].set_index("step").test_loss_smoothed
        upto = curve[curve.index <= stop]
        at_stop.append(
            float(abs(upto.iloc[-1] - chain.bigram_loss)) if len(upto) and upto.index[-1] == stop else np.inf
        )
        reached = curve[(curve - chain.bigram_loss).abs() <= tol]
        firsts.append(int(reached.index[0]) if len(reached) else None)
    claims.append(
        checked(
            "5b",
            "Fig. 4",
            f"Our init: test loss within {tol} of the entropy rate {chain.bigram_loss:.4f} by iteration {stop}.",
            max(at_stop),
            f"|loss - entropy rate| <= {tol} at iteration {stop} per seed",
            [g <= tol for g in at_stop],
            f"per seed {', '.join(f'{g:.4f}' for g in at_stop)}; first within {tol} at iterations "
            f"{_iterations(firsts)}",
            "per seed; ",
            spec="L2G-5",
        )
    )

    # The caption and Sec. 5.2: the standard init "converges to a local minimum" whose final test
    # loss "matches the unigram loss". Judged at the runs' last iteration (fig4_long).
    finals, escapes = [], []
    for seed in seeds:
        curve = standard[standard.seed == seed].set_index("step").test_loss_smoothed
        finals.append(float(curve.iloc[-1]))
        below = curve[(curve.index > start) & (curve < chain.unigram_loss - tol)]
        escapes.append(int(below.index[0]) if len(below) else None)
    last = int(standard.step.max()) if len(standard) else 0
    claims.append(
        checked(
            "5c",
            "Fig. 4 (caption; Sec. 5.2)",
            "Standard init converges to the unigram local minimum: its final test loss matches H(pi).",
            max(abs(f - chain.unigram_loss) for f in finals) if finals else np.nan,
            f"|loss - H(pi)| <= {tol} at the last iteration ({last}) per seed",
            [abs(f - chain.unigram_loss) <= tol for f in finals],
            f"final losses {', '.join(f'{f:.4f}' for f in finals)} (entropy rate {chain.bigram_loss:.4f}); below "
            f"H(pi) - {tol} from iterations {_iterations(escapes)}; see fig4_long",
            "per seed; ",
            spec="L2G-5",
        )
    )
    return claims


def transformer_claims(
    fig4: pd.DataFrame,
    fig3: pd.DataFrame,
    fig6: pd.DataFrame,
    chain: MarkovChain,
    fig3_chain: MarkovChain,
    settings: TransformerClaimSettings,
    ablation3: pd.DataFrame | None = None,
    ablation6: pd.DataFrame | None = None,
) -> list[Claim]:
    """``fig4``: the long-horizon Fig. 4 data of ``chain``; ``fig3``/``fig6``: the structure tables of
    Figs. 3 and 6 (one row per seed, matrix and checkpoint; Fig. 3 of ``fig3_chain``); ``ablation*``:
    the ablation tables."""
    if "seed" not in fig3:
        fig3, fig6 = fig3.assign(seed=1), fig6.assign(seed=1)
    structure = Structure(fig3, fig6, settings, fig3_chain, chain, ablation3, ablation6)
    return loss_claims(fig4, chain, settings) + structure_claims(structure)
