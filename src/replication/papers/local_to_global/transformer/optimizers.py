"""The runs' optimisers, stepped at the rate the loop gives them (schedule.py).

AdamW calls the kernel that ``torch.optim.AdamW(fused=True)`` runs, with the state that class keeps
(``exp_avg``, ``exp_avg_sq``, ``step`` per parameter), so its updates are the same bit for bit
(tests/local_to_global/transformer/test_optimizer.py steps both). It does not derive from
torch.optim.Optimizer, whose construction and every step import torch._dynamo (to keep the compiler
out of them): 1.1-1.4 CPU-s in every training job, more than a smoke run's training.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class ParameterGroup:
    params: list[torch.Tensor]
    weight_decay: float


class AdamW:
    """Decoupled weight decay per group; eps is torch.optim.AdamW's default."""

    def __init__(self, groups: list[ParameterGroup], lr: float, betas: tuple[float, float], eps: float = 1e-8):
        self.groups, self.lr, self.betas, self.eps = groups, lr, tuple(betas), eps
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    def zero_grad(self) -> None:
        """Every gradient to None, as torch.optim does by default."""
        for group in self.groups:
            for param in group.params:
                param.grad = None

    def _state(self, param: torch.Tensor) -> dict[str, torch.Tensor]:
        if param not in self.state:  # as torch.optim.AdamW(fused=True) starts it
            zeros = torch.zeros_like(param, memory_format=torch.preserve_format)
            self.state[param] = {
                "step": torch.zeros((), dtype=torch.float32, device=param.device),
                "exp_avg": zeros,
                "exp_avg_sq": zeros.clone(),
            }
        return self.state[param]

    @torch.no_grad()
    def step(self) -> None:
        beta1, beta2 = self.betas
        for group in self.groups:
            params = [param for param in group.params if param.grad is not None]
            if not params:
                continue
            states = [self._state(param) for param in params]
            steps = [state["step"] for state in states]
            torch._foreach_add_(steps, 1)
            torch._fused_adamw_(
                params,
                [param.grad for param in params],
                [state["exp_avg"] for state in states],
                [state["exp_avg_sq"] for state in states],
                [],
                steps,
                amsgrad=False,
                lr=self.lr,
                beta1=beta1,
                beta2=beta2,
                weight_decay=group.weight_decay,
                eps=self.eps,
                maximize=False,
                grad_scale=None,
                found_inf=None,
            )


class SGD:
    """torch.optim.SGD with momentum (foreach) at the rate set on ``lr``: a variant's optimiser only."""

    def __init__(self, groups: list[ParameterGroup], lr: float, momentum: float):
        self.groups = groups
        self._sgd = torch.optim.SGD(
            [{"params": group.params, "weight_decay": group.weight_decay} for group in groups],
            lr=lr,
            momentum=momentum,
            foreach=True,
        )

    @property
    def lr(self) -> float:
        return self._sgd.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for group in self._sgd.param_groups:
            group["lr"] = value

    @property
    def momentum(self) -> float:
        return self._sgd.param_groups[0]["momentum"]

    def zero_grad(self) -> None:
        self._sgd.zero_grad(set_to_none=True)

    def step(self) -> None:
        self._sgd.step()
