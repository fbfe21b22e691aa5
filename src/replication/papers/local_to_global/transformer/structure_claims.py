"""Claims of Figs. 3 and 6 (Sec. 5.1), one function each: rank one, components along e, e on the
hypercube, the other matrices, judged per seed over the runs behind the figures."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from replication.claims import Claim, not_checkable, over_seeds

from .. import PAPER
from ..markov import MarkovChain
from .settings import TransformerClaimSettings

OTHER_MATRICES = ("W_Q", "W_K", "W_O", "W_2")


def checked(claim_id, figure, statement, measured, threshold, outcomes, reason, rule_prefix="", *, spec) -> Claim:
    stats = over_seeds(outcomes)
    rule = f"{rule_prefix}{stats.pop('rule')}"
    return Claim(
        PAPER.name,
        claim_id,
        figure,
        statement,
        float(measured),
        threshold,
        reason=reason,
        rule=rule,
        spec=spec,
        **stats,
    )


def _at(frame: pd.DataFrame, matrix: str, step: int) -> pd.DataFrame:
    return frame[(frame.matrix == matrix) & (frame.step == step)].sort_values("seed")


def _component_along_e(row) -> float:
    """Largest |cos| of e with W's top singular vectors, on whichever side is R^d."""
    return float(np.nanmax([row.cos_e_input, row.cos_e_output]))


@dataclass(frozen=True)
class Structure:
    """What the structure claims read: the structure tables of Figs. 3 and 6 (one row per seed,
    matrix and checkpoint), the thresholds, the chains the figures trained on, the ablation tables,
    and the checkpoints of Fig. 3 judged (``step``, the paper's last snapshot; ``final``)."""

    fig3: pd.DataFrame
    fig6: pd.DataFrame
    settings: TransformerClaimSettings
    fig3_chain: MarkovChain
    fig4_chain: MarkovChain
    ablation3: pd.DataFrame | None
    ablation6: pd.DataFrame | None

    @property
    def step(self) -> int:
        steps = sorted(self.fig3.step.unique())
        return self.settings.structure_step if self.settings.structure_step in steps else steps[-1]

    @property
    def final(self) -> int:
        return int(self.fig3.step.max())


def rank_one_at_snapshot(data: Structure) -> Claim:
    fig3, step, share = data.fig3, data.step, data.settings.share_fig3
    shares = fig3[fig3.matrix.isin(["W_1", "W_V"]) & (fig3.step == step)].groupby("seed").top_share.min()
    return checked(
        "6a",
        "Fig. 3",
        f"Standard init: W_1 and W_V are ~rank one at iteration {step} (the figure's last snapshot).",
        shares.min(),
        f"min top-singular-value share >= {share}",
        shares >= share,
        "per seed min over W_1, W_V: " + ", ".join(f"{v:.3f}" for v in shares),
        "per seed; ",
        spec="L2G-6",
    )


def rank_one_at_convergence(data: Structure) -> Claim:
    fig3, final, share = data.fig3, data.final, data.settings.share_fig3
    last = fig3[fig3.step == final]
    converged = last.groupby("seed").top_share.min()
    return checked(
        "6a-all",
        "Fig. 3 (caption)",
        f"At convergence all the parameter matrices ({', '.join(sorted(fig3.matrix.unique()))}) are ~rank one.",
        converged.min(),
        f"min share >= {share} at iteration {final}",
        converged >= share,
        "weakest per seed: "
        + ", ".join(
            f"{fig3.loc[g.top_share.idxmin(), 'matrix']} {g.top_share.min():.3f}" for _, g in last.groupby("seed")
        ),
        "per seed; ",
        spec="L2G-6",
    )


def w1_along_e(data: Structure) -> Claim:
    w1, cos_e = _at(data.fig3, "W_1", data.step), data.settings.cos_e
    return checked(
        "6c",
        "Fig. 3 (Sec. 5.1)",
        f"W_1's component in R^d (its input side) is the embedding e (iteration {data.step}).",
        w1.cos_e_input.min(),
        f"|cos| >= {cos_e}",
        w1.cos_e_input >= cos_e,
        "per seed "
        + ", ".join(f"{v:.3f}" for v in w1.cos_e_input)
        + f"; at iteration {data.final}: "
        + ", ".join(f"{v:.3f}" for v in _at(data.fig3, "W_1", data.final).cos_e_input),
        "per seed; ",
        spec="L2G-6",
    )


def _ablation3_note(data: Structure) -> str:
    """The W_V alignment of each Fig. 3 ablation variant at the judged checkpoint, and which recover e."""
    if data.ablation3 is None or not len(data.ablation3):
        return ""
    rows = data.ablation3[(data.ablation3.matrix == "W_V") & (data.ablation3.step == data.step)]
    cos_e = data.settings.cos_e
    recovered = [r.variant for r in rows.itertuples() if r.variant != "pipeline" and _component_along_e(r) >= cos_e]
    return (
        "; ablation (fig3_ablation.csv), W_V output/input |cos e| at this iteration: "
        + ", ".join(f"{r.variant} {r.cos_e_output:.2f}/{r.cos_e_input:.2f}" for r in rows.itertuples())
        + "; recovered by: "
        + (", ".join(recovered) if recovered else "none")
    )


def wv_along_e(data: Structure) -> Claim:
    wv, cos_e = _at(data.fig3, "W_V", data.step), data.settings.cos_e
    either = wv.apply(_component_along_e, axis=1)
    return checked(
        "6d",
        "Fig. 3 (Sec. 5.1)",
        "W_V has a component equal to the embedding e (a top singular vector along e, either side; "
        f"iteration {data.step}).",
        either.mean(),
        f"|cos| >= {cos_e} on either side",
        either >= cos_e,
        "measured = seed mean; per seed output/input side "
        + ", ".join(f"{r.cos_e_output:.2f}/{r.cos_e_input:.2f}" for r in wv.itertuples())
        + _ablation3_note(data),
        "per seed; ",
        spec="L2G-6",
    )


def wv_output_along_e(data: Structure) -> Claim:
    wv, cos_e = _at(data.fig3, "W_V", data.step), data.settings.cos_e
    return checked(
        "6d-output",
        "Fig. 3 (authors' snapshot)",
        f"As in the authors' Fig. 3 snapshot: W_V's output-side singular vector along e (iteration {data.step}).",
        wv.cos_e_output.mean(),
        f"|cos| >= {cos_e}",
        wv.cos_e_output >= cos_e,
        "measured = seed mean; per seed "
        + ", ".join(f"{v:.3f}" for v in wv.cos_e_output)
        + " (authors' snapshot: 0.996 against W_1's input direction)",
        "per seed; ",
        spec="L2G-6",
    )


def e_on_hypercube(data: Structure) -> Claim:
    flatness, least = _at(data.fig3, "W_1", data.step).e_flatness, data.settings.flatness
    return checked(
        "6e",
        "Fig. 3 (Sec. 5.1)",
        f"The embedding e has all entries +-1 up to scale (iteration {data.step}).",
        flatness.min(),
        f"min|e_i| / max|e_i| >= {least}",
        flatness >= least,
        "per seed "
        + ", ".join(f"{v:.3f}" for v in flatness)
        + f"; at iteration {data.final}: "
        + ", ".join(f"{v:.3f}" for v in _at(data.fig3, "W_1", data.final).e_flatness),
        "per seed; ",
        spec="L2G-6",
    )


def _others(data: Structure) -> pd.DataFrame:
    return data.fig3[data.fig3.matrix.isin(OTHER_MATRICES) & (data.fig3.step == data.final)]


def others_rank_one(data: Structure) -> Claim | None:
    others, share = _others(data), data.settings.share_fig3
    if not len(others):
        return None
    rank = others.groupby("seed").top_share.min()
    return checked(
        "6f-rank",
        "Fig. 3 (Sec. 5.1)",
        f"The same for W_K, W_Q, W_2 (and W_O): ~rank one at iteration {data.final}.",
        rank.min(),
        f"min share >= {share}",
        rank >= share,
        "per matrix, seed mean: " + ", ".join(f"{m} {g.top_share.mean():.3f}" for m, g in others.groupby("matrix")),
        "per seed, every matrix; ",
        spec="L2G-6",
    )


def others_along_e(data: Structure) -> Claim | None:
    others, cos_e = _others(data), data.settings.cos_e
    if not len(others):
        return None
    along = others.assign(along=others.apply(_component_along_e, axis=1)).groupby("seed").along.min()
    return checked(
        "6f-e",
        "Fig. 3 (Sec. 5.1)",
        f"The same for W_K, W_Q, W_2 (and W_O): a component along e at iteration {data.final}.",
        along.min(),
        f"|cos| >= {cos_e} on either side",
        along >= cos_e,
        "per matrix, seed mean of the larger side: "
        + ", ".join(f"{m} {g.apply(_component_along_e, axis=1).mean():.3f}" for m, g in others.groupby("matrix")),
        "per seed, every matrix; ",
        spec="L2G-6",
    )


def every_chain(data: Structure) -> Claim:
    fig3, fig4 = data.fig3_chain, data.fig4_chain
    return not_checkable(
        PAPER.name,
        "6g",
        "Fig. 3 (Sec. 5.1)",
        "The same conclusion holds for all values of (p, q) in (0, 1)^2.",
        f"not in this report: figures/all trains p = {fig3.p:g}, q = {fig3.q:g} for Fig. 3 (and "
        f"{fig4.p:g}/{fig4.q:g} for Fig. 4); it is checked per (p, q) cell by the phase diagram, rows 6g of "
        "figures/phase_claims.md (target figures/phase, `make phase`; docs/phase-diagram.md)",
        spec="L2G-6",
    )


def optimiser_setting(data: Structure) -> Claim:
    return not_checkable(
        PAPER.name,
        "6h",
        "Fig. 3 (Sec. 5.1)",
        "Trained with SGD from the standard init with std 0.001.",
        "a setting, not a result; the authors' code uses AdamW and its snapshots imply std 0.02, which "
        "the pipeline follows (Table 2); optimizer.name: sgd and sigma are config values",
        spec="L2G-6",
    )


def rank_one_init_stays(data: Structure) -> Claim:
    fig6, share = data.fig6, data.settings.share_fig6
    steps6 = sorted(fig6.step.unique())
    judged = fig6[fig6.matrix.isin(["W_1", "W_V"])]
    shares6 = judged.groupby("seed").top_share.min()
    weakest = fig6.loc[judged.top_share.idxmin()]
    note = ""
    if data.ablation6 is not None and len(data.ablation6):
        rows = data.ablation6[(data.ablation6.matrix == "W_V") & (data.ablation6.step == data.ablation6.step.max())]
        note = (
            "; ablation (fig6_ablation.csv), W_V share and output/input |cos e| at the last checkpoint: "
            + ", ".join(
                f"{r.variant} {r.top_share:.3f} {r.cos_e_output:.2f}/{r.cos_e_input:.2f}" for r in rows.itertuples()
            )
        )
    return checked(
        "6b",
        "Fig. 6 (caption)",
        f"Rank-one init: W_1 and W_V stay rank one at every checkpoint ({', '.join(map(str, steps6))}).",
        shares6.min(),
        f"min top-singular-value share >= {share}",
        shares6 >= share,
        f"lowest: {weakest.matrix} at iteration {int(weakest.step)} (seed {int(weakest.seed)}); W_V's input side "
        f"|cos e| {weakest.cos_e_input:.4f}" + note,
        "per seed; ",
        spec="L2G-6",
    )


def rank_one_init_rest(data: Structure) -> Claim | None:
    fig6, share = data.fig6, data.settings.share_fig6
    rest = fig6[fig6.matrix == "W_2"]
    if not len(rest):
        return None
    shares_rest = rest.groupby("seed").top_share.min()
    standard_ones = fig6[fig6.matrix.isin(["W_Q", "W_K", "W_O"]) & (fig6.step == fig6.step.max())]
    return checked(
        "6b-rest",
        "Fig. 6 (Sec. 5.1)",
        "A similar conclusion holds for the remaining weight matrices: W_2 (rank-one init) stays rank one.",
        shares_rest.min(),
        f"min share >= {share} at every checkpoint",
        shares_rest >= share,
        "W_Q, W_K, W_O start from the standard init (spec §4); their share at the last checkpoint, seed mean: "
        + ", ".join(f"{m} {g.top_share.mean():.3f}" for m, g in standard_ones.groupby("matrix")),
        "per seed; ",
        spec="L2G-6",
    )


# Figs. 3 and 6 (Sec. 5.1), in the order of the claims table; None: the data has no such matrix.
STRUCTURE_CLAIMS = (
    rank_one_at_snapshot,
    rank_one_at_convergence,
    w1_along_e,
    wv_along_e,
    wv_output_along_e,
    e_on_hypercube,
    others_rank_one,
    others_along_e,
    every_chain,
    optimiser_setting,
    rank_one_init_stays,
    rank_one_init_rest,
)


def structure_claims(data: Structure) -> list[Claim]:
    """Figs. 3 and 6 (Sec. 5.1): rank one, components along e, e on the hypercube, the other matrices."""
    data = dataclasses.replace(data, fig3=data.fig3.reset_index(drop=True), fig6=data.fig6.reset_index(drop=True))
    return [claim for claim in (judge(data) for judge in STRUCTURE_CLAIMS) if claim is not None]
