from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AgentResponseSpendMonth")


@_attrs_define
class AgentResponseSpendMonth:
    """the current UTC month (start YYYY-MM)

    Attributes:
        start (str):
        tokens (int):
        cost_usd (float):
    """

    start: str
    tokens: int
    cost_usd: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        start = self.start

        tokens = self.tokens

        cost_usd = self.cost_usd

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "start": start,
                "tokens": tokens,
                "costUsd": cost_usd,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        start = d.pop("start")

        tokens = d.pop("tokens")

        cost_usd = d.pop("costUsd")

        agent_response_spend_month = cls(
            start=start,
            tokens=tokens,
            cost_usd=cost_usd,
        )

        agent_response_spend_month.additional_properties = d
        return agent_response_spend_month

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
