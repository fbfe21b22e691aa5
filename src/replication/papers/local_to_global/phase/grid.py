"""The (p, q) grid of the phase diagram: which points are its cells, and a cell's chain, name and key."""

from __future__ import annotations

from dataclasses import dataclass

from ..markov import MarkovChain

# The line p + q = 1 (i.i.d. data, no gap to close) is left out of the grid; float sums such as
# 0.7 + 0.3 miss 1 by rounding only.
_ON_THE_LINE = 1e-9


def off_the_line(p: float, q: float) -> bool:
    """Whether (p, q) is a cell of the grid: not on the line p + q = 1."""
    return abs(p + q - 1) > _ON_THE_LINE


@dataclass(frozen=True)
class Cell:
    """One cell of the grid, made from whichever of its chain, its name or its key is at hand; the
    three always agree.

    ``name``: its folder and wildcard value (``p0.2_q0.3``); ``key``: the (p, q) of its rows in the
    tables; ``label``: how its claims name it (``p=0.2, q=0.3``).
    """

    chain: MarkovChain

    @classmethod
    def named(cls, name: str) -> Cell:
        """The cell of a name (inverse of ``name``)."""
        p, q = name.removeprefix("p").split("_q")
        return cls(MarkovChain(float(p), float(q)))

    @classmethod
    def keyed(cls, p: float, q: float) -> Cell:
        """The cell of a table row's (p, q)."""
        return cls(MarkovChain(p, q))

    @property
    def name(self) -> str:
        return f"p{self.chain.p:g}_q{self.chain.q:g}"

    @property
    def key(self) -> tuple[float, float]:
        return self.chain.p, self.chain.q

    @property
    def label(self) -> str:
        return f"p={self.chain.p:g}, q={self.chain.q:g}"
