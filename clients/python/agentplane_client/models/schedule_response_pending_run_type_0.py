from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleResponsePendingRunType0")


@_attrs_define
class ScheduleResponsePendingRunType0:
    """a run waiting for the agent's task to end (Allow, Replace)

    Attributes:
        time (datetime.datetime):
        trigger (str | Unset):
        replacing (int | Unset): Replace: the agent's task this run cancelled
    """

    time: datetime.datetime
    trigger: str | Unset = UNSET
    replacing: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        time = self.time.isoformat()

        trigger = self.trigger

        replacing = self.replacing

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "time": time,
            }
        )
        if trigger is not UNSET:
            field_dict["trigger"] = trigger
        if replacing is not UNSET:
            field_dict["replacing"] = replacing

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        time = datetime.datetime.fromisoformat(d.pop("time"))

        trigger = d.pop("trigger", UNSET)

        replacing = d.pop("replacing", UNSET)

        schedule_response_pending_run_type_0 = cls(
            time=time,
            trigger=trigger,
            replacing=replacing,
        )

        schedule_response_pending_run_type_0.additional_properties = d
        return schedule_response_pending_run_type_0

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
