from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.message_response_delivery import MessageResponseDelivery

T = TypeVar("T", bound="MessageResponse")


@_attrs_define
class MessageResponse:
    """
    Attributes:
        agent (str):
        namespace (str):
        from_ (str):
        delivery (MessageResponseDelivery): followUp: into the running task; task: a new task on the idle agent; queued:
            kept until the sleeping agent wakes
        task (int):
        woken (bool):
    """

    agent: str
    namespace: str
    from_: str
    delivery: MessageResponseDelivery
    task: int
    woken: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        namespace = self.namespace

        from_ = self.from_

        delivery = self.delivery.value

        task = self.task

        woken = self.woken

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent": agent,
                "namespace": namespace,
                "from": from_,
                "delivery": delivery,
                "task": task,
                "woken": woken,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent")

        namespace = d.pop("namespace")

        from_ = d.pop("from")

        delivery = MessageResponseDelivery(d.pop("delivery"))

        task = d.pop("task")

        woken = d.pop("woken")

        message_response = cls(
            agent=agent,
            namespace=namespace,
            from_=from_,
            delivery=delivery,
            task=task,
            woken=woken,
        )

        message_response.additional_properties = d
        return message_response

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
