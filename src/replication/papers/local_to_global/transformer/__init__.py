"""The full single-layer transformer trained on Markov chains (Figs. 3, 4, 6; Tables 1, 2; claims 5, 6).

``model`` is the transformer (its one forward pass), ``attention`` the paths of its attention and
``fast_attention`` the exact attention for binary tokens that training runs; ``train``
trains one run, ``jobs`` says where each training job's files lie and how soon it runs;
``structure``, ``ablation``, ``plots``, ``tables`` and ``claims`` read the runs. Its rules
(``rules/transformer.smk``), their scripts and the figures' captions (``report/``) lie here.
"""

from pathlib import Path

import yaml

from replication.contract import Figure, Part, Table

_SECTION = yaml.load((Path(__file__).parent.parent / "schema.yaml").read_text(), Loader=yaml.CSafeLoader)
_TRANSFORMER = _SECTION["properties"]["transformer"]
# Listed once, as the config's allowed values (schema.yaml): the transformer's initialisations and
# attention implementations.
INITS = tuple(_TRANSFORMER["$defs"]["experiment"]["properties"]["inits"]["items"]["enum"])
ATTENTIONS = tuple(_TRANSFORMER["properties"]["attention"]["enum"])

_FIGURES = "figures/local_to_global"

# What it makes (captions in report/): the paper gathers it (replication.contract.Part).
PART = Part(
    "transformer",
    figures=(
        Figure(f"{_FIGURES}/fig3.pdf", "Fig. 3", "fig3.rst"),
        Figure(f"{_FIGURES}/fig4.pdf", "Fig. 4", "fig4.rst"),
        Figure(f"{_FIGURES}/fig4_long.pdf", "Fig. 4 (longer horizon)", "fig4_long.rst"),
        Figure(f"{_FIGURES}/fig6.pdf", "Fig. 6", "fig6.rst"),
        Figure(f"{_FIGURES}/fig3_ablation.pdf", "Fig. 3 (ablation: the authors' settings)", "ablation.rst"),
        Figure(f"{_FIGURES}/fig6_ablation.pdf", "Fig. 6 (ablation: the authors' settings)", "ablation.rst"),
    ),
    tables=(
        Table(f"{_FIGURES}/table1.md", "Table 1"),
        Table(f"{_FIGURES}/table1.tex", "Table 1"),
        Table(f"{_FIGURES}/table2.md", "Table 2"),
        Table(f"{_FIGURES}/table2.tex", "Table 2"),
    ),
    claims=("results/local_to_global/claims_transformer.csv",),
)
