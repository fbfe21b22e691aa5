"""The replicated papers: one package per paper."""
