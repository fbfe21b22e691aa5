"""Replication of two ML-theory papers on how transformers train.

Subpackages:
- ``local_to_global``: Makkuva et al., *Local to Global* (arXiv 2406.03072).
- ``benign_overfitting``: Sakamoto & Sato, *Benign or Not-Benign Overfitting in Token
  Selection* (arXiv 2409.17625 v1).

Shared modules: ``io`` (atomic writes, logs), ``plotting`` (style and the one figure-saving
function), ``config`` (validation) and ``claims`` (the claims table format).
"""
