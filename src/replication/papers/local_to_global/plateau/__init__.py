"""The full transformer's loss landscape at the unigram plateau, cell by cell of the phase grid:
is the plateau point a minimum of the full loss, as the canonical model says above the line, or a
saddle? ``points`` trains the phase runs again to points on their plateau, ``hessian`` gives the
loss as a twice-differentiable function with Hessian-vector products and Lanczos, ``spectrum`` the
curvature at a point, ``analysis`` the tables and the saddle law, ``plots`` and ``claims`` read them.
Built by figures/plateau (docs/plateau.md), which reads the phase grid (figures/phase)."""

MANIFEST = "plateau"  # figures/plateau: its own manifest target
