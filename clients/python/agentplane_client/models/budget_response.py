from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.budget_response_on_exceed import BudgetResponseOnExceed
from ..models.budget_response_period import BudgetResponsePeriod
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.budget_response_agents_item import BudgetResponseAgentsItem
    from ..models.budget_response_spent import BudgetResponseSpent


T = TypeVar("T", bound="BudgetResponse")


@_attrs_define
class BudgetResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        period (BudgetResponsePeriod): "day" or "month" (UTC): the spend counts from the start of the current one
        on_exceed (BudgetResponseOnExceed): "Stop" ends the task with an error (reason BudgetExceeded); "Pause" holds it
            (status Paused) until the budget is raised or the task is cancelled; applies to every task of the namespace that
            asks the model
        period_start (str): the current period: its UTC day (YYYY-MM-DD) or month (YYYY-MM)
        spent (BudgetResponseSpent): the namespace's agents' spend in the period
        used (float): the most used limit's share: 0.8 warns, 1 acts
        agents (list[BudgetResponseAgentsItem]): each agent's part of spent, most first
        max_cost_usd (float | Unset): the most the model may cost, in US dollars (tokens priced at the list price of the
            model each response named), by all the namespace's agents in the period
        max_tokens (int | Unset): the most model tokens (input, output, cache reads and cache writes together), by all
            the namespace's agents in the period
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    period: BudgetResponsePeriod
    on_exceed: BudgetResponseOnExceed
    period_start: str
    spent: BudgetResponseSpent
    used: float
    agents: list[BudgetResponseAgentsItem]
    max_cost_usd: float | Unset = UNSET
    max_tokens: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        period = self.period.value

        on_exceed = self.on_exceed.value

        period_start = self.period_start

        spent = self.spent.to_dict()

        used = self.used

        agents = []
        for agents_item_data in self.agents:
            agents_item = agents_item_data.to_dict()
            agents.append(agents_item)

        max_cost_usd = self.max_cost_usd

        max_tokens = self.max_tokens

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "period": period,
                "onExceed": on_exceed,
                "periodStart": period_start,
                "spent": spent,
                "used": used,
                "agents": agents,
            }
        )
        if max_cost_usd is not UNSET:
            field_dict["maxCostUsd"] = max_cost_usd
        if max_tokens is not UNSET:
            field_dict["maxTokens"] = max_tokens

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.budget_response_agents_item import BudgetResponseAgentsItem
        from ..models.budget_response_spent import BudgetResponseSpent

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        period = BudgetResponsePeriod(d.pop("period"))

        on_exceed = BudgetResponseOnExceed(d.pop("onExceed"))

        period_start = d.pop("periodStart")

        spent = BudgetResponseSpent.from_dict(d.pop("spent"))

        used = d.pop("used")

        agents = []
        _agents = d.pop("agents")
        for agents_item_data in _agents:
            agents_item = BudgetResponseAgentsItem.from_dict(agents_item_data)

            agents.append(agents_item)

        max_cost_usd = d.pop("maxCostUsd", UNSET)

        max_tokens = d.pop("maxTokens", UNSET)

        budget_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            period=period,
            on_exceed=on_exceed,
            period_start=period_start,
            spent=spent,
            used=used,
            agents=agents,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
        )

        budget_response.additional_properties = d
        return budget_response

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
