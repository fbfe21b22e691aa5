"""Figures of the 3-D canonical model (e, w, a): Figs. 2 and 5. Each returns (figure, tidy data it plotted)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from ..markov import MarkovChain
from . import canonical
from .plots import BASIN_COLOURS, SADDLE_COLOUR, chain_flows, panel_rows, trajectory_rows
from .settings import Canonical3dFlowSettings

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
        data.append(panel_rows(panel, chain, f"{name}_plane", w=ww[mask], a=aa[mask], e=0.0))
    # The global-minimum surface as a graph a(e, w), drawn where it lies inside the cube.
    e, w = np.meshgrid(np.linspace(-extent, extent, 71), np.linspace(-extent, extent, 71))
    a = _inside(canonical3d.global_min_scalar(chain, e, w), extent)
    ax.plot_surface(w, a, e, color="0.25", alpha=0.22, linewidth=0, shade=False, rstride=1, cstride=1, rasterized=True)
    keep = ~np.isnan(a)
    data.append(panel_rows(panel, chain, "global_min_surface", w=w[keep], a=a[keep], e=e[keep]))
    # Saddle line e = 0, w = -1/sqrt 2 and the stationary set a = -1/e^2 on the same w.
    if abs(canonical.SADDLE_W) <= extent:
        ax.plot([canonical.SADDLE_W] * 2, [-extent, extent], [0, 0], color=SADDLE_COLOUR, lw=2.5, label="saddle line")
        data.append(panel_rows(panel, chain, "saddle_line", w=canonical.SADDLE_W, a=[-extent, extent], e=0.0))
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
        data.append(panel_rows(panel, chain, "stationary_set", w=canonical.SADDLE_W, a=a, e=e))
    return data


def _canonical3d_trajectories(ax, chain: MarkovChain, flows: pd.DataFrame, extent: float, panel: str) -> pd.DataFrame:
    """Flows coloured by where they end; the parts outside the cube are cut away."""
    mine = chain_flows(flows, chain)
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
    return trajectory_rows(panel, chain, mine, ("w", "a", "e"))


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
            mine = chain_flows(flows, chain)
            mine = mine[mine.t > 0]
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
            data.append(panel_rows(f"{panel}'", chain, "abs_e", id=mine.trajectory, t=mine.t, e=mine.e.abs()))
    fig.tight_layout()
    return fig, pd.concat(data, ignore_index=True)
