"""The closed-form model of the example paper."""

import numpy as np


def decay(t: np.ndarray, rate: float) -> np.ndarray:
    """y(t) = exp(-rate t)."""
    return np.exp(-rate * np.asarray(t, dtype=float))


def half_life_from_samples(t: np.ndarray, y: np.ndarray) -> float:
    """Where the sampled, falling curve crosses 1/2, by linear interpolation of log y."""
    return float(np.interp(np.log(0.5), np.log(y)[::-1], np.asarray(t)[::-1]))
