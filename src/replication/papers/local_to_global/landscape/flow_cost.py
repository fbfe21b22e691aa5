"""Benchmark: gradient flows of the canonical models, starts per second for 2-D and 3-D batches.

    .venv/bin/python -m replication.papers.local_to_global.landscape.flow_cost
    .venv/bin/python -m replication.papers.local_to_global.landscape.flow_cost --starts 1000 --sigmas 0.1 1 2

A batch of starts is one ODE system (``integrate_flow``). The basins use the clocked field (same
orbits and limits, Jacobian of order one) with an explicit solver; it is compared with the plain
field -grad L under the explicit solver and under LSODA, at a scale where the plain flow is still
affordable. The machine may be shared: the load average is printed next to the numbers.
"""

from __future__ import annotations

import os
import time

import numpy as np

from replication.command_line import command_parser
from replication.papers.local_to_global.landscape import canonical3d
from replication.papers.local_to_global.landscape.basins import MODELS, flow_endpoints
from replication.papers.local_to_global.landscape.flow import integrate_flow
from replication.papers.local_to_global.markov import MarkovChain


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--starts", type=int, default=1000, help="flows per batch (default: %(default)s)")
    parser.add_argument(
        "--sigmas", type=float, nargs="+", default=[0.1, 1.0, 2.0], help="std of the starts, one batch each"
    )
    parser.add_argument("--flow-time", type=float, default=1000.0, help="time each flow is integrated over")
    parser.add_argument("--compare-starts", type=int, default=100, help="flows of the solver comparison")
    parser.add_argument("--compare-sigma", type=float, default=0.5, help="std of the solver comparison's starts")
    args = parser.parse_args()
    chain = MarkovChain(0.9, 0.9)
    normal = np.random.default_rng(0).standard_normal((args.starts, 3))
    print(load())
    print(f"clocked field, DOP853, p=q=0.9, {args.starts} starts, horizon {args.flow_time:g}:")
    for model in MODELS:
        for sigma in args.sigmas:
            starts = sigma * normal[:, : 2 if model == "2d" else 3]
            seconds = timed(lambda model=model, starts=starts: flow_endpoints(chain, model, starts, args.flow_time))
            print(f"  {model} sigma={sigma:<5g} {seconds:7.2f} s  {len(starts) / seconds:9.0f} starts/s")

    starts = args.compare_sigma * normal[: args.compare_starts]
    print(f"3-D, {args.compare_starts} starts, sigma={args.compare_sigma:g}, to the horizon once:")
    clocked = timed(lambda: flow_endpoints(chain, "3d", starts, args.flow_time, rounds=1))
    print(f"  clocked, DOP853     {clocked:7.2f} s  {len(starts) / clocked:9.0f} starts/s")
    for method in ("DOP853", "LSODA"):
        plain = timed(
            lambda method=method: integrate_flow(
                canonical3d.flow_gradient(chain), starts, args.flow_time, method=method, atol=1e-30
            )
        )
        print(
            f"  plain,   {method:<10} {plain:7.2f} s  {len(starts) / plain:9.0f} starts/s  "
            f"({plain / clocked:.1f}x the clocked time)"
        )
    print(load())


if __name__ == "__main__":
    main()
