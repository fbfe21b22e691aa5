"""The canonical low-rank models' loss landscape and gradient flow (Figs. 1, 2, 5, the basins; claims 1-4).

``canonical`` is the model theta = (e, w); ``canonical3d`` adds the attention scalar a,
theta = (e, w, a). ``flow`` integrates their gradient flows, ``flow_tables`` and ``basins`` measure
them, ``endpoint_loss`` checks where they end on sampled sequences, ``plots`` draws the figures.
Its rules (``rules/landscape.smk``), their scripts and the figures' captions (``report/``) lie here.
"""
