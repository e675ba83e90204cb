from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.budget_request_on_exceed import BudgetRequestOnExceed
from ..models.budget_request_period import BudgetRequestPeriod
from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetRequest")


@_attrs_define
class BudgetRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        period (BudgetRequestPeriod): "day" or "month" (UTC): the spend counts from the start of the current one
        on_exceed (BudgetRequestOnExceed): "Stop" ends the task with an error (reason BudgetExceeded); "Pause" holds it
            (status Paused) until the budget is raised or the task is cancelled; applies to every task of the namespace that
            asks the model
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        max_cost_usd (float | Unset): the most the model may cost, in US dollars (tokens priced at the list price of the
            model each response named), by all the namespace's agents in the period
        max_tokens (int | Unset): the most model tokens (input, output, cache reads and cache writes together), by all
            the namespace's agents in the period
    """

    name: str
    period: BudgetRequestPeriod
    on_exceed: BudgetRequestOnExceed
    namespace: str | Unset = UNSET
    max_cost_usd: float | Unset = UNSET
    max_tokens: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        period = self.period.value

        on_exceed = self.on_exceed.value

        namespace = self.namespace

        max_cost_usd = self.max_cost_usd

        max_tokens = self.max_tokens

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "period": period,
                "onExceed": on_exceed,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if max_cost_usd is not UNSET:
            field_dict["maxCostUsd"] = max_cost_usd
        if max_tokens is not UNSET:
            field_dict["maxTokens"] = max_tokens

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        period = BudgetRequestPeriod(d.pop("period"))

        on_exceed = BudgetRequestOnExceed(d.pop("onExceed"))

        namespace = d.pop("namespace", UNSET)

        max_cost_usd = d.pop("maxCostUsd", UNSET)

        max_tokens = d.pop("maxTokens", UNSET)

        budget_request = cls(
            name=name,
            period=period,
            on_exceed=on_exceed,
            namespace=namespace,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
        )

        return budget_request
