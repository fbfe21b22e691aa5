"""Figures of the 2-D canonical model (Fig. 1) and of the basins, and the pieces the 3-D figures
(``plots3d``: Figs. 2, 5) share with them. Each figure function returns (figure, tidy data it plotted)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from scipy.ndimage import distance_transform_edt

from ..markov import MarkovChain
from . import canonical
from .settings import Fig1Settings

BASIN_COLOURS = {"I*": "#2ca02c", "I_min": "#d62728"}
SADDLE_COLOUR = "#ff7f0e"
ENERGY_LEVELS = sorted([*range(-9, 0), canonical.SADDLE_ENERGY, *range(0, 12)])


def panel_rows(panel: str, chain: MarkovChain, layer: str, **columns) -> pd.DataFrame:
    """The tidy rows of one layer of a panel: ``panel, p, q, layer`` then ``columns`` (scalars broadcast)."""
    arrays = {key: np.ravel(value) for key, value in columns.items()}
    size = max(len(a) for a in arrays.values())
    frame = pd.DataFrame({key: np.broadcast_to(a, size) if len(a) == 1 else a for key, a in arrays.items()})
    frame.insert(0, "layer", layer)
    frame.insert(0, "q", chain.q)
    frame.insert(0, "p", chain.p)
    frame.insert(0, "panel", panel)
    return frame


def chain_flows(flows: pd.DataFrame, chain: MarkovChain) -> pd.DataFrame:
    """The rows of ``flows`` integrated for ``chain``."""
    return flows[(flows.p == chain.p) & (flows.q == chain.q)]


def trajectory_rows(panel: str, chain: MarkovChain, flows: pd.DataFrame, coordinates: tuple[str, ...]) -> pd.DataFrame:
    """The rows of a panel's drawn flows: trajectory id, clock, ``coordinates``, energy and endpoint."""
    return panel_rows(
        panel,
        chain,
        "trajectory",
        id=flows.trajectory,
        t=flows.t,
        **{name: flows[name] for name in coordinates},
        value=flows.energy,
        label=flows.endpoint,
    )


def _critical_sets(ax, chain: MarkovChain, extent: float, panel: str) -> list[pd.DataFrame]:
    """Global-minimum curve, local minima/maxima on e = 0 and the saddle, drawn and tabulated."""
    w = np.linspace(-extent, extent, 601)
    locus = canonical.global_min_locus(chain, w)
    locus = np.where(locus <= extent, locus, np.nan)
    for sign in (1, -1):
        ax.plot(w, sign * locus, "k--", lw=1.2, label="global minima" if sign == 1 else None)
    marks = np.linspace(-extent, extent, 25)
    local_min = marks[canonical.is_local_min_line(chain, marks)]
    local_max = marks[~canonical.is_local_min_line(chain, marks)]
    ax.plot(local_min, np.zeros_like(local_min), "*", color="red", ms=7, label="local minima", zorder=4)
    ax.plot(local_max, np.zeros_like(local_max), ".", color="blue", ms=6, label="local maxima", zorder=4)
    ax.plot([canonical.SADDLE_W], [0], "^", color=SADDLE_COLOUR, ms=8, label="saddle", zorder=5)
    return [
        panel_rows(panel, chain, "global_min_locus", w=np.r_[w, w], e=np.r_[locus, -locus]),
        panel_rows(panel, chain, "local_min", w=local_min, e=0.0),
        panel_rows(panel, chain, "local_max", w=local_max, e=0.0),
        panel_rows(panel, chain, "saddle", w=[canonical.SADDLE_W], e=[0.0]),
    ]


def _field(ax, chain: MarkovChain, extent: float, points: int, panel: str) -> pd.DataFrame:
    """The normalised -grad L field as a grey quiver."""
    w, e = np.meshgrid(np.linspace(-extent, extent, points), np.linspace(-extent, extent, points))
    de, dw = canonical.gradient(chain, e, w)
    norm = np.hypot(de, dw)
    with np.errstate(invalid="ignore", divide="ignore"):
        de, dw = np.where(norm > 0, -de / norm, 0.0), np.where(norm > 0, -dw / norm, 0.0)
    ax.quiver(w, e, dw, de, color="0.55", angles="xy", scale=points * 1.4, width=0.003, headwidth=4)
    return panel_rows(panel, chain, "field", w=w, e=e, dw=dw, de=de)


def _frame_axes(ax, extent: float, title: str) -> None:
    ax.set_xlim(-extent, extent)
    ax.set_ylim(-extent, extent)
    ax.set_aspect("equal")
    ax.set_xlabel("$w$")
    ax.set_ylabel("$e$")
    if title:
        ax.set_title(title)


def _flow_panel(ax, chain: MarkovChain, flows: pd.DataFrame, w, e, settings: Fig1Settings, panel: str, name: str):
    """Fig. 1's left panel: energy lines, the field, the critical sets and the chain's integrated ``flows``."""
    extent = settings.extent
    energy = canonical.energy(e, w)
    lines = ax.contour(w, e, np.ma.masked_invalid(energy), levels=ENERGY_LEVELS, cmap="viridis", linewidths=0.9)
    colorbar = ax.figure.colorbar(lines, ax=ax, location="top", shrink=0.8, pad=0.02)
    colorbar.set_label(f"({panel}) {name}: energy $E(e, w)$, flows")
    data = [panel_rows(panel, chain, "energy", w=w, e=e, value=energy)]
    data.append(_field(ax, chain, extent, settings.quiver_points, panel))
    data.extend(_critical_sets(ax, chain, extent, panel))
    for index, path in flows.groupby("trajectory"):
        ax.plot(path.w, path.e, color="black", lw=1.0, label="gradient flow" if index == 0 else None)
        ax.plot(path.w.iloc[0], path.e.iloc[0], "o", color="black", ms=3)
    if len(flows):
        data.append(trajectory_rows(panel, chain, flows, ("w", "e")))
    _frame_axes(ax, extent, None)
    ax.legend(loc="lower left", framealpha=0.9)
    return data


def _separatrix(ax, chain: MarkovChain, extent: float, panel: str) -> pd.DataFrame:
    """The saddle's stable flow lines, which bound I_min: right of the saddle for p+q > 1 (Thm 2),
    left of it for p+q < 1 (Thm 8)."""
    left = -np.geomspace(extent, 1e-4, 2000)
    left = left[(left >= canonical.SADDLE_W) if chain.switching > 1 else (left <= canonical.SADDLE_W)]
    g = canonical.separatrix(left)
    g = np.where(g <= extent, g, np.nan)
    for sign in (1, -1):
        ax.plot(left, sign * g, color=SADDLE_COLOUR, lw=2, label="$e=\\pm g(w)$" if sign == 1 else None)
    return panel_rows(panel, chain, "separatrix", w=np.r_[left, left], e=np.r_[g, -g])


def _label_basins(ax, w, e, to_local) -> None:
    """Each basin's name at its point farthest from the others (``to_local``: 1 in I_min, 0 in I*)."""
    for label in ("I*", "I_min"):
        mask = (to_local > 0) if label == "I_min" else (to_local == 0)
        if not mask.any():
            continue
        row_index, col_index = np.unravel_index(
            np.argmax(distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1]), mask.shape
        )
        label_e = e[row_index, col_index]
        label_e += 0.5 if abs(label_e) < 0.3 else 0.0  # keep clear of the e = 0 markers
        ax.text(
            w[row_index, col_index],
            label_e,
            "$I_{min}$" if label == "I_min" else "$I^*$",
            fontsize=14,
            ha="center",
            va="center",
            color=BASIN_COLOURS[label],
            weight="bold",
        )


def _basin_panel(ax, chain: MarkovChain, w, e, settings: Fig1Settings, panel: str, name: str) -> list[pd.DataFrame]:
    """Fig. 1's right panel: the basins predicted by the theorems, with the saddle's flow lines."""
    extent = settings.extent
    to_local = (canonical.predicted_basin(chain, e, w) == canonical.LOCAL_MIN).astype(float)
    colours = ListedColormap([BASIN_COLOURS["I*"], BASIN_COLOURS["I_min"]])
    ax.pcolormesh(w, e, to_local, cmap=colours, vmin=0, vmax=1, alpha=0.35, shading="auto", rasterized=True)
    data = [panel_rows(panel, chain, "basin", w=w, e=e, label=np.where(to_local > 0, "I_min", "I*"))]
    data.append(_field(ax, chain, extent, settings.quiver_points, panel))
    data.extend(_critical_sets(ax, chain, extent, panel))
    data.append(_separatrix(ax, chain, extent, panel))
    _label_basins(ax, w, e, to_local)
    _frame_axes(ax, extent, f"({panel}) {name}: basins")
    ax.legend(loc="lower left", framealpha=0.9)
    return data


def fig1(flows: pd.DataFrame, settings: Fig1Settings) -> tuple[plt.Figure, pd.DataFrame]:
    """Fig. 1: per chain, (energy lines + field + flows) and (basins + separatrices)."""
    chains, extent = list(settings.chains), settings.extent
    fig, axes = plt.subplots(len(chains), 2, figsize=(9, 4.6 * len(chains)), squeeze=False)
    grid = np.linspace(-extent, extent, settings.contour_points)
    w, e = np.meshgrid(grid, grid)
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    data = []
    for row, chain in zip(axes, chains):
        name = f"p={chain.p:g}, q={chain.q:g}"
        data.extend(_flow_panel(row[0], chain, chain_flows(flows, chain), w, e, settings, next(letters), name))
        data.extend(_basin_panel(row[1], chain, w, e, settings, next(letters), name))
    fig.tight_layout()
    return fig, pd.concat(data, ignore_index=True)


def basins_figure(basins: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Fraction of N(0, sigma^2 I) starts whose flow ends at a local minimum, against sigma."""
    frame = basins.assign(chain=[f"p={p:g}, q={q:g}" for p, q in zip(basins.p, basins.q)])
    order = list(dict.fromkeys(frame.chain))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]  # the style's palette (seaborn's "deep")
    palette = {chain: cycle[index % len(cycle)] for index, chain in enumerate(order)}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, (model, title) in zip(axes, (("2d", "(a) 2-D model $(e, w)$"), ("3d", "(b) 3-D model $(e, w, a)$"))):
        mine = frame[frame.model == model]
        for index, (chain, line) in enumerate(mine.groupby("chain", sort=False)):
            # Chains with the same sign of p+q-1 can coincide exactly (the orbits are those of
            # grad D; the chain only picks the sign and the level D*): styles keep each visible.
            ax.plot(
                line.sigma,
                line.fraction_local_min,
                color=palette[chain],
                label=f"{chain}, flows",
                ls=("-", "--", ":", "-.")[index % 4],
                marker="osD^"[index % 4],
                ms=8 - 1.5 * (index % 4),
                lw=2.2 - 0.4 * (index % 4),
            )
            if model == "2d":
                ax.plot(
                    line.sigma,
                    line.fraction_local_min_theory,
                    "x",
                    color="black",
                    ms=7,
                    label="Thms 2/8 (same starts)" if chain == order[0] else None,
                )
        ax.set_xscale("log")
        ax.set_xlabel(r"initialisation scale $\sigma$")
        ax.set_title(title)
        ax.set_ylim(-0.03, 1.03)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("fraction ending at a local minimum")
    fig.tight_layout()
    columns = ["model", "p", "q", "sigma", "n_starts", "fraction_local_min", "fraction_local_min_theory"]
    return fig, frame[columns].reset_index(drop=True)
