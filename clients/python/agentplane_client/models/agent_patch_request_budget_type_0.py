from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.agent_patch_request_budget_type_0_on_exceed import (
    AgentPatchRequestBudgetType0OnExceed,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentPatchRequestBudgetType0")


@_attrs_define
class AgentPatchRequestBudgetType0:
    """checked by the model proxy before every model request: a budget_warning event at 80%, the onExceed action at 100%
    (docs/budgets.md); null removes it

        Attributes:
            on_exceed (AgentPatchRequestBudgetType0OnExceed): "Stop" ends the task with an error (reason BudgetExceeded);
                "Pause" holds it (status Paused) until the budget is raised or the task is cancelled
            max_cost_usd (float | Unset): the most the model may cost, in US dollars (tokens priced at the list price of the
                model each response named)
            max_tokens (int | Unset): the most model tokens (input, output, cache reads and cache writes together)
            per_task (bool | Unset): true: the limits apply to each task on its own; default false: to all of the agent's
                tasks together
    """

    on_exceed: AgentPatchRequestBudgetType0OnExceed
    max_cost_usd: float | Unset = UNSET
    max_tokens: int | Unset = UNSET
    per_task: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        on_exceed = self.on_exceed.value

        max_cost_usd = self.max_cost_usd

        max_tokens = self.max_tokens

        per_task = self.per_task

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "onExceed": on_exceed,
            }
        )
        if max_cost_usd is not UNSET:
            field_dict["maxCostUsd"] = max_cost_usd
        if max_tokens is not UNSET:
            field_dict["maxTokens"] = max_tokens
        if per_task is not UNSET:
            field_dict["perTask"] = per_task

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        on_exceed = AgentPatchRequestBudgetType0OnExceed(d.pop("onExceed"))

        max_cost_usd = d.pop("maxCostUsd", UNSET)

        max_tokens = d.pop("maxTokens", UNSET)

        per_task = d.pop("perTask", UNSET)

        agent_patch_request_budget_type_0 = cls(
            on_exceed=on_exceed,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
            per_task=per_task,
        )

        return agent_patch_request_budget_type_0
