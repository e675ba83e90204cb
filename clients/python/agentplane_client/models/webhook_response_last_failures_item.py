from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="WebhookResponseLastFailuresItem")


@_attrs_define
class WebhookResponseLastFailuresItem:
    """
    Attributes:
        time (str):
        agent (str):
        seq (int):
        type_ (str):
        status (int): the receiver's HTTP status; 0 when none came
        message (str | Unset):
    """

    time: str
    agent: str
    seq: int
    type_: str
    status: int
    message: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        time = self.time

        agent = self.agent

        seq = self.seq

        type_ = self.type_

        status = self.status

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "time": time,
                "agent": agent,
                "seq": seq,
                "type": type_,
                "status": status,
            }
        )
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        time = d.pop("time")

        agent = d.pop("agent")

        seq = d.pop("seq")

        type_ = d.pop("type")

        status = d.pop("status")

        message = d.pop("message", UNSET)

        webhook_response_last_failures_item = cls(
            time=time,
            agent=agent,
            seq=seq,
            type_=type_,
            status=status,
            message=message,
        )

        webhook_response_last_failures_item.additional_properties = d
        return webhook_response_last_failures_item

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
