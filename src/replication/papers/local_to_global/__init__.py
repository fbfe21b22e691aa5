"""Local to Global (arXiv 2406.03072): Markov data, canonical low-rank models, transformers."""
