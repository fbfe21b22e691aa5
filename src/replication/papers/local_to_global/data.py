"""Batches of binary Markov sequences from one uniform per symbol.

The next symbol is ``1[u < p]`` after a 0 and ``1[u < 1 - q]`` after a 1, with ``u`` uniform (float32
comparisons), and the first is ``1[u < pi_1]``. On the CPU one numba pass walks each sequence in order
(a few ns a symbol). Elsewhere, without a loop over positions: a step maps the current symbol to the
next through one of four maps of {0, 1}; where both agree the step *resets* the chain to a constant;
otherwise it keeps the symbol (possible only if p + q < 1) or flips it (only if p + q > 1). So a
symbol is the value of the last reset XOR the parity of the flips since then: a cumulative max and a
cumulative sum. Both give the same symbols from the same uniforms (tests/.../test_data.py).
"""

from __future__ import annotations

import numba
import numpy as np
import torch

from .markov import MarkovChain


def sample_sequences(
    chain: MarkovChain,
    shape: tuple[int, ...],
    length: int,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    """Sequences of ``length`` symbols from the stationary law, as int64 of shape ``(*shape, length)``.

    Draws exactly one uniform per symbol from ``generator`` (on ``device``), so a seed fixes the batch.
    """
    u = torch.rand(*shape, length, generator=generator, device=device)
    if u.device.type == "cpu":
        thresholds = np.array([chain.stationary[1], chain.p, 1 - chain.q], dtype=np.float32)
        symbols = torch.empty(u.shape, dtype=torch.int64)
        _walk(u.view(-1, length).numpy(), thresholds, symbols.view(-1, length).numpy())
        return symbols
    return symbols_in_bulk(chain, u)


@numba.njit(cache=True)
def _walk(uniforms, thresholds, symbols):
    """Each row of ``uniforms`` (sequences, length) float32 turned into its symbols, one after another:
    ``thresholds`` are pi_1 (the first symbol's), p (after a 0) and 1 - q (after a 1), in float32."""
    first, after_zero, after_one = thresholds[0], thresholds[1], thresholds[2]
    for row in range(uniforms.shape[0]):
        symbol = uniforms[row, 0] < first
        symbols[row, 0] = symbol
        for n in range(1, uniforms.shape[1]):
            symbol = uniforms[row, n] < (after_one if symbol else after_zero)
            symbols[row, n] = symbol


def symbols_in_bulk(chain: MarkovChain, u: torch.Tensor) -> torch.Tensor:
    """The symbols of uniforms ``u`` (..., length) without a loop over positions (module docstring)."""
    p, q = chain.p, chain.q
    length, device = u.shape[-1], u.device
    # Position 0 is a reset to a draw from pi; position n > 0 uses u[..., n] for the step n-1 -> n.
    low, high = min(p, 1 - q), max(p, 1 - q)
    start = u[..., :1] < chain.stationary[1]
    step = u[..., 1:]
    reset = torch.cat([torch.ones_like(start), (step < low) | (step >= high)], dim=-1)
    value = torch.cat([start, step < low], dim=-1)  # the constant a reset sets (u < low: 1)
    flips = torch.zeros_like(reset) if p + q < 1 else ~reset
    flips[..., 0] = False
    index = torch.arange(length, device=device).expand_as(reset)
    last = torch.where(reset, index, torch.zeros_like(index)).cummax(dim=-1).values
    parity = flips.long().cumsum(dim=-1)
    parity = parity - parity.gather(-1, last)
    return value.gather(-1, last).long() ^ (parity & 1)


class BatchStream:
    """Training or test batches ``(x, y)`` of B sequences of N + 1 symbols, drawn ``chunk`` batches at a time.

    Sampling many batches in one call keeps the per-step cost to an index into a tensor.
    """

    def __init__(self, chain: MarkovChain, batch_size: int, context: int, seed: int, chunk: int, device="cpu"):
        self.chain, self.batch_size, self.context, self.chunk = chain, batch_size, context, chunk
        self.device = torch.device(device)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self._buffer, self._next = None, chunk

    def __iter__(self):
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self._next == self.chunk:
            self._buffer = sample_sequences(
                self.chain, (self.chunk, self.batch_size), self.context + 1, self.generator, self.device
            )
            self._next = 0
        sequences = self._buffer[self._next]
        self._next += 1
        return sequences[:, :-1], sequences[:, 1:]
