"""The full single-layer transformer trained on Markov chains (Figs. 3, 4, 6; Tables 1, 2; claims 5, 6).

``model`` is the transformer (its one forward pass), ``attention`` the paths of its attention and
``fast_attention`` the exact attention for binary tokens that training runs; ``train``
trains one run, ``jobs`` says where each training job's files lie and how soon it runs;
``structure``, ``ablation``, ``plots``, ``tables`` and ``claims`` read the runs. Its rules
(``rules/transformer.smk``), their scripts and the figures' captions (``report/``) lie here.
"""

from pathlib import Path

import yaml

_SECTION = yaml.load((Path(__file__).parent.parent / "schema.yaml").read_text(), Loader=yaml.CSafeLoader)
_TRANSFORMER = _SECTION["properties"]["transformer"]
# Listed once, as the config's allowed values (schema.yaml): the transformer's initialisations and
# attention implementations.
INITS = tuple(_TRANSFORMER["$defs"]["experiment"]["properties"]["inits"]["items"]["enum"])
ATTENTIONS = tuple(_TRANSFORMER["properties"]["attention"]["enum"])
