from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_response_conditions_item_status import (
    ScheduleResponseConditionsItemStatus,
)

T = TypeVar("T", bound="ScheduleResponseConditionsItem")


@_attrs_define
class ScheduleResponseConditionsItem:
    """
    Attributes:
        type_ (str): the aspect of the object this condition describes
        status (ScheduleResponseConditionsItemStatus):
        reason (str): why, in one CamelCase word
        message (str): why, for a person
        last_transition_time (datetime.datetime): when status last changed
    """

    type_: str
    status: ScheduleResponseConditionsItemStatus
    reason: str
    message: str
    last_transition_time: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_

        status = self.status.value

        reason = self.reason

        message = self.message

        last_transition_time = self.last_transition_time.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "type": type_,
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": last_transition_time,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        type_ = d.pop("type")

        status = ScheduleResponseConditionsItemStatus(d.pop("status"))

        reason = d.pop("reason")

        message = d.pop("message")

        last_transition_time = datetime.datetime.fromisoformat(
            d.pop("lastTransitionTime")
        )

        schedule_response_conditions_item = cls(
            type_=type_,
            status=status,
            reason=reason,
            message=message,
            last_transition_time=last_transition_time,
        )

        schedule_response_conditions_item.additional_properties = d
        return schedule_response_conditions_item

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
