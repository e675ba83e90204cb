from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.trigger_response_last_delivery_result import (
    TriggerResponseLastDeliveryResult,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="TriggerResponseLastDelivery")


@_attrs_define
class TriggerResponseLastDelivery:
    """the latest delivery: when, its id and what came of it

    Attributes:
        time (str):
        id (str):
        result (TriggerResponseLastDeliveryResult):
        task (int | Unset):
        message (str | Unset):
    """

    time: str
    id: str
    result: TriggerResponseLastDeliveryResult
    task: int | Unset = UNSET
    message: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        time = self.time

        id = self.id

        result = self.result.value

        task = self.task

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "time": time,
                "id": id,
                "result": result,
            }
        )
        if task is not UNSET:
            field_dict["task"] = task
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        time = d.pop("time")

        id = d.pop("id")

        result = TriggerResponseLastDeliveryResult(d.pop("result"))

        task = d.pop("task", UNSET)

        message = d.pop("message", UNSET)

        trigger_response_last_delivery = cls(
            time=time,
            id=id,
            result=result,
            task=task,
            message=message,
        )

        trigger_response_last_delivery.additional_properties = d
        return trigger_response_last_delivery

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
