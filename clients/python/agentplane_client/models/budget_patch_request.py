from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.budget_patch_request_on_exceed import BudgetPatchRequestOnExceed
from ..models.budget_patch_request_period import BudgetPatchRequestPeriod
from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetPatchRequest")


@_attrs_define
class BudgetPatchRequest:
    """the fields given change; maxTokens or maxCostUsd given as null is removed (one limit must stay)

    Attributes:
        period (BudgetPatchRequestPeriod | Unset): "day" or "month" (UTC): the spend counts from the start of the
            current one
        max_cost_usd (float | None | Unset): the most the model may cost, in US dollars (tokens priced at the list price
            of the model each response named), by all the namespace's agents in the period
        max_tokens (int | None | Unset): the most model tokens (input, output, cache reads and cache writes together),
            by all the namespace's agents in the period
        on_exceed (BudgetPatchRequestOnExceed | Unset): "Stop" ends the task with an error (reason BudgetExceeded);
            "Pause" holds it (status Paused) until the budget is raised or the task is cancelled; applies to every task of
            the namespace that asks the model
    """

    period: BudgetPatchRequestPeriod | Unset = UNSET
    max_cost_usd: float | None | Unset = UNSET
    max_tokens: int | None | Unset = UNSET
    on_exceed: BudgetPatchRequestOnExceed | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        period: str | Unset = UNSET
        if not isinstance(self.period, Unset):
            period = self.period.value

        max_cost_usd: float | None | Unset
        if isinstance(self.max_cost_usd, Unset):
            max_cost_usd = UNSET
        else:
            max_cost_usd = self.max_cost_usd

        max_tokens: int | None | Unset
        if isinstance(self.max_tokens, Unset):
            max_tokens = UNSET
        else:
            max_tokens = self.max_tokens

        on_exceed: str | Unset = UNSET
        if not isinstance(self.on_exceed, Unset):
            on_exceed = self.on_exceed.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if period is not UNSET:
            field_dict["period"] = period
        if max_cost_usd is not UNSET:
            field_dict["maxCostUsd"] = max_cost_usd
        if max_tokens is not UNSET:
            field_dict["maxTokens"] = max_tokens
        if on_exceed is not UNSET:
            field_dict["onExceed"] = on_exceed

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        _period = d.pop("period", UNSET)
        period: BudgetPatchRequestPeriod | Unset
        if isinstance(_period, Unset):
            period = UNSET
        else:
            period = BudgetPatchRequestPeriod(_period)

        def _parse_max_cost_usd(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_cost_usd = _parse_max_cost_usd(d.pop("maxCostUsd", UNSET))

        def _parse_max_tokens(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_tokens = _parse_max_tokens(d.pop("maxTokens", UNSET))

        _on_exceed = d.pop("onExceed", UNSET)
        on_exceed: BudgetPatchRequestOnExceed | Unset
        if isinstance(_on_exceed, Unset):
            on_exceed = UNSET
        else:
            on_exceed = BudgetPatchRequestOnExceed(_on_exceed)

        budget_patch_request = cls(
            period=period,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
            on_exceed=on_exceed,
        )

        return budget_patch_request
