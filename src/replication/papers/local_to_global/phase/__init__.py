"""Phase diagram of the transformer over (p, q): where the standard init stays at the unigram
plateau, for how long, and whether the canonical model's prediction (p + q > 1: stays; p + q < 1:
reaches the entropy rate) holds beyond the paper's two chains. Built by figures/phase, not by
figures/all: it is a cluster-sized workload (docs/phase-diagram.md)."""

MANIFEST = "phase"  # figures/phase: its own manifest target, beside the laptop set figures/all
