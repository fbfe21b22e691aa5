"""Figures of the canonical models (Figs. 1, 2, 5, basins). Each function returns (figure, tidy data it plotted)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from scipy.ndimage import distance_transform_edt

from ..markov import MarkovChain
from . import canonical
from .settings import Canonical3dFlowSettings, Fig1Settings

BASIN_COLOURS = {"I*": "#2ca02c", "I_min": "#d62728"}
SADDLE_COLOUR = "#ff7f0e"
ENERGY_LEVELS = sorted([*range(-9, 0), canonical.SADDLE_ENERGY, *range(0, 12)])


def _rows(panel: str, chain: MarkovChain, layer: str, **columns) -> pd.DataFrame:
    arrays = {key: np.ravel(value) for key, value in columns.items()}
    size = max(len(a) for a in arrays.values())
    frame = pd.DataFrame({key: np.broadcast_to(a, size) if len(a) == 1 else a for key, a in arrays.items()})
    frame.insert(0, "layer", layer)
    frame.insert(0, "q", chain.q)
    frame.insert(0, "p", chain.p)
    frame.insert(0, "panel", panel)
    return frame


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
        _rows(panel, chain, "global_min_locus", w=np.r_[w, w], e=np.r_[locus, -locus]),
        _rows(panel, chain, "local_min", w=local_min, e=0.0),
        _rows(panel, chain, "local_max", w=local_max, e=0.0),
        _rows(panel, chain, "saddle", w=[canonical.SADDLE_W], e=[0.0]),
    ]


def _field(ax, chain: MarkovChain, extent: float, points: int, panel: str) -> pd.DataFrame:
    """The normalised -grad L field as a grey quiver."""
    w, e = np.meshgrid(np.linspace(-extent, extent, points), np.linspace(-extent, extent, points))
    de, dw = canonical.gradient(chain, e, w)
    norm = np.hypot(de, dw)
    with np.errstate(invalid="ignore", divide="ignore"):
        de, dw = np.where(norm > 0, -de / norm, 0.0), np.where(norm > 0, -dw / norm, 0.0)
    ax.quiver(w, e, dw, de, color="0.55", angles="xy", scale=points * 1.4, width=0.003, headwidth=4)
    return _rows(panel, chain, "field", w=w, e=e, dw=dw, de=de)


def _frame_axes(ax, extent: float, title: str) -> None:
    ax.set_xlim(-extent, extent)
    ax.set_ylim(-extent, extent)
    ax.set_aspect("equal")
    ax.set_xlabel("$w$")
    ax.set_ylabel("$e$")
    if title:
        ax.set_title(title)


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
        # Energy lines, field, critical sets and integrated flows.
        ax = row[0]
        panel = next(letters)
        energy = canonical.energy(e, w)
        lines = ax.contour(w, e, np.ma.masked_invalid(energy), levels=ENERGY_LEVELS, cmap="viridis", linewidths=0.9)
        colorbar = fig.colorbar(lines, ax=ax, location="top", shrink=0.8, pad=0.02)
        colorbar.set_label(f"({panel}) {name}: energy $E(e, w)$, flows")
        data.append(_rows(panel, chain, "energy", w=w, e=e, value=energy))
        data.append(_field(ax, chain, extent, settings.quiver_points, panel))
        data.extend(_critical_sets(ax, chain, extent, panel))
        mine = flows[(flows.p == chain.p) & (flows.q == chain.q)]
        for index, path in mine.groupby("trajectory"):
            ax.plot(path.w, path.e, color="black", lw=1.0, label="gradient flow" if index == 0 else None)
            ax.plot(path.w.iloc[0], path.e.iloc[0], "o", color="black", ms=3)
        if len(mine):
            data.append(
                _rows(
                    panel,
                    chain,
                    "trajectory",
                    id=mine.trajectory,
                    t=mine.t,
                    w=mine.w,
                    e=mine.e,
                    value=mine.energy,
                    label=mine.endpoint,
                )
            )
        _frame_axes(ax, extent, None)
        ax.legend(loc="lower left", framealpha=0.9)

        # Basins predicted by the theorems, with the saddle's flow lines.
        ax = row[1]
        panel = next(letters)
        basin = canonical.predicted_basin(chain, e, w)
        to_local = (basin == canonical.LOCAL_MIN).astype(float)
        ax.pcolormesh(
            w,
            e,
            to_local,
            cmap=ListedColormap([BASIN_COLOURS["I*"], BASIN_COLOURS["I_min"]]),
            vmin=0,
            vmax=1,
            alpha=0.35,
            shading="auto",
            rasterized=True,
        )
        data.append(_rows(panel, chain, "basin", w=w, e=e, label=np.where(to_local > 0, "I_min", "I*")))
        data.append(_field(ax, chain, extent, settings.quiver_points, panel))
        data.extend(_critical_sets(ax, chain, extent, panel))
        # The saddle's stable flow lines bound I_min: right of the saddle for p+q > 1 (Thm 2),
        # left of it for p+q < 1 (Thm 8).
        left = -np.geomspace(extent, 1e-4, 2000)
        left = left[(left >= canonical.SADDLE_W) if chain.switching > 1 else (left <= canonical.SADDLE_W)]
        g = canonical.separatrix(left)
        g = np.where(g <= extent, g, np.nan)
        for sign in (1, -1):
            ax.plot(left, sign * g, color=SADDLE_COLOUR, lw=2, label="$e=\\pm g(w)$" if sign == 1 else None)
        data.append(_rows(panel, chain, "separatrix", w=np.r_[left, left], e=np.r_[g, -g]))
        for label in ("I*", "I_min"):
            mask = (to_local > 0) if label == "I_min" else (to_local == 0)
            if mask.any():  # label each basin at its point farthest from the others
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
        _frame_axes(ax, extent, f"({panel}) {name}: basins")
        ax.legend(loc="lower left", framealpha=0.9)
    fig.tight_layout()
    return fig, pd.concat(data, ignore_index=True)


ENDPOINT_COLOURS = {
    canonical.GLOBAL_MIN: BASIN_COLOURS["I*"],
    canonical.LOCAL_MIN: BASIN_COLOURS["I_min"],
    canonical.LOCAL_MAX: "#1f77b4",
    canonical.SADDLE: SADDLE_COLOUR,
    "stationary": "#9467bd",
    canonical.UNCONVERGED: "0.4",
}


def _inside(values: np.ndarray, extent: float) -> np.ndarray:
    return np.where(np.abs(values) <= extent, values, np.nan)


def _canonical3d_critical_sets(ax, chain: MarkovChain, extent: float, panel: str) -> list[pd.DataFrame]:
    """The critical sets of the (e, w, a) model inside the cube [-extent, extent]^3 (axes w, a, e)."""
    from . import canonical3d

    data = []
    # The e = 0 plane: local minima where (p+q-1)(1+2w|w|) > 0, local maxima elsewhere.
    w = np.linspace(-extent, extent, 121)
    a = np.linspace(-extent, extent, 2)
    ww, aa = np.meshgrid(w, a)
    local = canonical.is_local_min_line(chain, ww)
    for name, mask, colour in (
        ("local_min", local, BASIN_COLOURS["I_min"]),
        ("local_max", ~local, ENDPOINT_COLOURS[canonical.LOCAL_MAX]),
    ):
        if not mask.any():  # a zoomed cube may hold only one of the two regions
            continue
        ax.plot_surface(
            np.where(mask, ww, np.nan),
            aa,
            np.zeros_like(ww),
            color=colour,
            alpha=0.18,
            linewidth=0,
            shade=False,
            rasterized=True,
        )
        data.append(_rows(panel, chain, f"{name}_plane", w=ww[mask], a=aa[mask], e=0.0))
    # The global-minimum surface as a graph a(e, w), drawn where it lies inside the cube.
    e, w = np.meshgrid(np.linspace(-extent, extent, 71), np.linspace(-extent, extent, 71))
    a = _inside(canonical3d.global_min_scalar(chain, e, w), extent)
    ax.plot_surface(w, a, e, color="0.25", alpha=0.22, linewidth=0, shade=False, rstride=1, cstride=1, rasterized=True)
    keep = ~np.isnan(a)
    data.append(_rows(panel, chain, "global_min_surface", w=w[keep], a=a[keep], e=e[keep]))
    # Saddle line e = 0, w = -1/sqrt 2 and the stationary set a = -1/e^2 on the same w.
    if abs(canonical.SADDLE_W) <= extent:
        ax.plot([canonical.SADDLE_W] * 2, [-extent, extent], [0, 0], color=SADDLE_COLOUR, lw=2.5, label="saddle line")
        data.append(_rows(panel, chain, "saddle_line", w=canonical.SADDLE_W, a=[-extent, extent], e=0.0))
        e = np.linspace(-extent, extent, 801)
        a = canonical3d.stationary_scalar(e)
        e, a = e[np.abs(a) <= extent], a[np.abs(a) <= extent]
        for sign in (1, -1):
            branch = np.sign(e) == sign
            ax.plot(
                np.full(branch.sum(), canonical.SADDLE_W),
                a[branch],
                e[branch],
                color=ENDPOINT_COLOURS["stationary"],
                lw=2,
                label="stationary set" if sign == 1 else None,
            )
        data.append(_rows(panel, chain, "stationary_set", w=canonical.SADDLE_W, a=a, e=e))
    return data


def _canonical3d_trajectories(ax, chain: MarkovChain, flows: pd.DataFrame, extent: float, panel: str) -> pd.DataFrame:
    """Flows coloured by where they end; the parts outside the cube are cut away."""
    mine = flows[(flows.p == chain.p) & (flows.q == chain.q)]
    for label, group in mine.groupby("endpoint", sort=True):
        colour = ENDPOINT_COLOURS.get(label, "0.4")
        starts, ends = [], []
        for index, (_, path) in enumerate(group.groupby("trajectory")):
            points = path[["w", "a", "e"]].to_numpy()
            inside = np.cumsum((np.abs(points) > extent).any(axis=1)) == 0  # drawn up to where it leaves the cube
            ax.plot(
                *points[inside].T,
                color=colour,
                lw=1.1,
                label=f"flow to {label.replace('_', ' ')}" if index == 0 else None,
            )
            starts.append(points[0])
            if inside[-1]:
                ends.append(points[-1])
        ax.scatter(*np.array(starts).T, color=colour, s=6, depthshade=False)
        if ends:
            ax.scatter(*np.array(ends).T, color=colour, s=14, marker="x", depthshade=False)
    return _rows(
        panel,
        chain,
        "trajectory",
        id=mine.trajectory,
        t=mine.t,
        w=mine.w,
        a=mine.a,
        e=mine.e,
        value=mine.energy,
        label=mine.endpoint,
    )


def _frame_cube(ax, extent: float, view: tuple[float, float]) -> None:
    for setter in (ax.set_xlim, ax.set_ylim, ax.set_zlim):
        setter(-extent, extent)
    ax.set_xlabel("$w$")
    ax.set_ylabel("$a$")
    ax.set_zlabel("$e$")
    ax.view_init(elev=view[0], azim=view[1])
    ax.set_box_aspect((1, 1, 1))


def canonical3d_landscape(
    flows: pd.DataFrame, settings: Canonical3dFlowSettings, zoomed: bool
) -> tuple[plt.Figure, pd.DataFrame]:
    """Figs. 2 (``zoomed=False``) and 5: one 3-D panel per chain with the critical sets and flows.

    Fig. 5 adds |e| against the flow's clock under each panel: the local-minimum plane e = 0
    attracts (p+q>1) or repels (p+q<1) the flows started next to it.
    """
    chains, extent = list(settings.chains), settings.extent
    rows = 2 if zoomed else 1
    fig = plt.figure(figsize=(5.2 * len(chains), 5.0 + 2.6 * (rows - 1)))
    grid = fig.add_gridspec(rows, len(chains), height_ratios=[2.2, 1][:rows])
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    data = []
    for column, chain in enumerate(chains):
        panel = next(letters)
        name = f"p={chain.p:g}, q={chain.q:g}" + (" (p+q<1)" if chain.switching < 1 else " (p+q>1)")
        ax = fig.add_subplot(grid[0, column], projection="3d")
        critical = _canonical3d_critical_sets(ax, chain, extent, panel)
        drawn = {frame.layer.iloc[0] for frame in critical if len(frame)}
        data.extend(critical)
        data.append(_canonical3d_trajectories(ax, chain, flows, extent, panel))
        _frame_cube(ax, extent, tuple(settings.view))
        ax.set_title(f"({panel}) {name}", pad=0)
        surfaces = [
            Patch(color=colour, alpha=0.3, label=label)
            for layer, colour, label in (
                ("local_min_plane", BASIN_COLOURS["I_min"], "local minima ($e=0$)"),
                ("local_max_plane", ENDPOINT_COLOURS[canonical.LOCAL_MAX], "local maxima ($e=0$)"),
                ("global_min_surface", "0.25", "global minima"),
            )
            if layer in drawn
        ]
        handles, _ = ax.get_legend_handles_labels()
        ax.legend(handles=surfaces + handles, loc="upper left", fontsize=6, framealpha=0.85)
        if zoomed:
            ax2 = fig.add_subplot(grid[1, column])
            mine = flows[(flows.p == chain.p) & (flows.q == chain.q) & (flows.t > 0)]
            for _, path in mine.groupby("trajectory"):
                ax2.plot(path.t, path.e.abs(), color=ENDPOINT_COLOURS.get(path.endpoint.iloc[0], "0.4"), lw=0.8)
            ax2.set_xscale("log")
            ax2.set_yscale("log")
            ax2.set_ylim(1e-8, 2 * max(1.0, mine.e.abs().max()))  # below, the integrator's floor
            ax2.set_xlabel("flow time $t$")
            ax2.set_ylabel("$|e|$")
            ax2.set_title(
                f"({panel}') distance to the plane $e=0$: " + ("attracting" if chain.switching > 1 else "repelling")
            )
            data.append(_rows(f"{panel}'", chain, "abs_e", id=mine.trajectory, t=mine.t, e=mine.e.abs()))
    fig.tight_layout()
    return fig, pd.concat(data, ignore_index=True)


def basins_figure(basins: pd.DataFrame) -> tuple[plt.Figure, pd.DataFrame]:
    """Fraction of N(0, sigma^2 I) starts whose flow ends at a local minimum, against sigma."""
    import seaborn as sns

    frame = basins.assign(chain=[f"p={p:g}, q={q:g}" for p, q in zip(basins.p, basins.q)])
    order = list(dict.fromkeys(frame.chain))
    palette = dict(zip(order, sns.color_palette("deep", len(order))))
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
