from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.compact_response_status import CompactResponseStatus

T = TypeVar("T", bound="CompactResponse")


@_attrs_define
class CompactResponse:
    """
    Attributes:
        agent (str):
        namespace (str):
        task (str): the task number, as a string
        status (CompactResponseStatus):
        message (str):
    """

    agent: str
    namespace: str
    task: str
    status: CompactResponseStatus
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        namespace = self.namespace

        task = self.task

        status = self.status.value

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent": agent,
                "namespace": namespace,
                "task": task,
                "status": status,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent")

        namespace = d.pop("namespace")

        task = d.pop("task")

        status = CompactResponseStatus(d.pop("status"))

        message = d.pop("message")

        compact_response = cls(
            agent=agent,
            namespace=namespace,
            task=task,
            status=status,
            message=message,
        )

        compact_response.additional_properties = d
        return compact_response

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
