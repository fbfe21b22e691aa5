"""Sakamoto & Sato, Benign or Not-Benign Overfitting in Token Selection of Attention Mechanism
(arXiv 2409.17625 v1): data model, exact Gram-matrix trainer, conditions of Thm 4.2, figures."""
