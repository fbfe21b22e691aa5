"""Local to Global (arXiv 2406.03072): Markov data, canonical low-rank models, transformers.

Four parts, each a subpackage with its rules, scripts and captions beside its code. The paper's two
halves: ``landscape`` (the canonical models' loss landscape and gradient flow: Figs. 1, 2, 5 and the
basins) and ``transformer`` (the single-layer transformer: Figs. 3, 4, 6, Tables 1, 2). Beyond the
paper, each with its own manifest: ``phase`` (the transformer over a grid of (p, q): where the
standard init stays on the unigram plateau and for how long, against the canonical model's
prediction; ``figures/phase``) and ``plateau`` (the Hessian of the full loss at points on that
plateau, cell by cell: a minimum or a saddle, whether the escape follows AdamW's linearised step, and what
decides the escape at a few cells, by sweeps of the init's scale and the batch size;
``figures/plateau``, which reads the phase grid). Shared here: the Markov chain (``markov``), its
sampled sequences (``data``), the config section (``schema.yaml``, ``smoke.yaml``) and its checks
(``config_checks``). One line per module: docs/local_to_global_layout.md.
"""

from replication.contract import Paper, SpecClaim

from . import landscape, phase, plateau, settings, transformer
from .config_checks import check_config

PAPER = Paper(
    id="local_to_global",
    name="Local to Global",
    title="Local to Global: Learning Dynamics and Effect of Initialization for Transformers",
    arxiv="2406.03072",
    # Each part declares its figures, tables and claims tables beside its rules (its PART).
    figures=(),
    parts=(landscape.PART, transformer.PART, phase.PART, plateau.PART),
    # Spec section 5, items 1-6; a claims-table row names the one it reports by its spec column.
    claims=(
        SpecClaim(
            "L2G-1",
            "Fig. 1",
            "Gradient-flow endpoints match the basin predicted by Thms 2/8 on a grid of starts.",
            "agreement on every start",
        ),
        SpecClaim(
            "L2G-2",
            "Figs. 1, 2",
            "Energy is constant along the gradient flow (2-D and 3-D).",
            "relative drift < 1e-8",
        ),
        SpecClaim(
            "L2G-3",
            "Figs. 1, 2",
            "Endpoint losses: H(pi) at local minima, the entropy rate at global minima.",
            "endpoint loss equals H(pi) / entropy rate",
        ),
        SpecClaim(
            "L2G-4",
            "Figs. 2, 5",
            "From N(0, sigma^2 I) with small sigma: p+q>1 ends in the local-minimum basin with "
            "probability ~1, p+q<1 with probability ~0.",
            "sigma <= basins.claims.small_sigma: fraction >= basins.claims.fraction_high (p+q>1), "
            "<= basins.claims.fraction_low (p+q<1)",
        ),
        SpecClaim(
            "L2G-5",
            "Fig. 4",
            "Standard init's test loss stays within 0.01 of H(pi) over iterations 200..600; "
            "ours is within 0.01 of the entropy rate by iteration 600.",
            "|loss - reference| <= 0.01",
        ),
        SpecClaim(
            "L2G-6",
            "Figs. 3, 6",
            "W_1 and W_V become rank one: top-singular-value share at the last checkpoint (Fig. 3), "
            "and at every checkpoint from the rank-one init (Fig. 6).",
            ">= 0.9 (Fig. 3), >= 0.99 (Fig. 6)",
        ),
    ),
    check_config=check_config,
    settings=settings.settings,
)
