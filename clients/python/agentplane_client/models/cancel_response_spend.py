from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cancel_response_spend_day import CancelResponseSpendDay
    from ..models.cancel_response_spend_month import CancelResponseSpendMonth


T = TypeVar("T", bound="CancelResponseSpend")


@_attrs_define
class CancelResponseSpend:
    """model spend of the agent's ended tasks, metered by the model proxy: in all, this UTC day and this UTC month

    Attributes:
        tokens (int):
        cost_usd (float):
        day (CancelResponseSpendDay | Unset): the current UTC day (start YYYY-MM-DD)
        month (CancelResponseSpendMonth | Unset): the current UTC month (start YYYY-MM)
    """

    tokens: int
    cost_usd: float
    day: CancelResponseSpendDay | Unset = UNSET
    month: CancelResponseSpendMonth | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        tokens = self.tokens

        cost_usd = self.cost_usd

        day: dict[str, Any] | Unset = UNSET
        if not isinstance(self.day, Unset):
            day = self.day.to_dict()

        month: dict[str, Any] | Unset = UNSET
        if not isinstance(self.month, Unset):
            month = self.month.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "tokens": tokens,
                "costUsd": cost_usd,
            }
        )
        if day is not UNSET:
            field_dict["day"] = day
        if month is not UNSET:
            field_dict["month"] = month

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cancel_response_spend_day import CancelResponseSpendDay
        from ..models.cancel_response_spend_month import CancelResponseSpendMonth

        d = dict(src_dict)
        tokens = d.pop("tokens")

        cost_usd = d.pop("costUsd")

        _day = d.pop("day", UNSET)
        day: CancelResponseSpendDay | Unset
        if isinstance(_day, Unset):
            day = UNSET
        else:
            day = CancelResponseSpendDay.from_dict(_day)

        _month = d.pop("month", UNSET)
        month: CancelResponseSpendMonth | Unset
        if isinstance(_month, Unset):
            month = UNSET
        else:
            month = CancelResponseSpendMonth.from_dict(_month)

        cancel_response_spend = cls(
            tokens=tokens,
            cost_usd=cost_usd,
            day=day,
            month=month,
        )

        cancel_response_spend.additional_properties = d
        return cancel_response_spend

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
