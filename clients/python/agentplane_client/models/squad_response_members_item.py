from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SquadResponseMembersItem")


@_attrs_define
class SquadResponseMembersItem:
    """
    Attributes:
        name (str | Unset):
        phase (str | Unset):
        task_status (str | Unset):
        ready (bool | Unset): the member's worker is connected
    """

    name: str | Unset = UNSET
    phase: str | Unset = UNSET
    task_status: str | Unset = UNSET
    ready: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        phase = self.phase

        task_status = self.task_status

        ready = self.ready

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if phase is not UNSET:
            field_dict["phase"] = phase
        if task_status is not UNSET:
            field_dict["taskStatus"] = task_status
        if ready is not UNSET:
            field_dict["ready"] = ready

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        phase = d.pop("phase", UNSET)

        task_status = d.pop("taskStatus", UNSET)

        ready = d.pop("ready", UNSET)

        squad_response_members_item = cls(
            name=name,
            phase=phase,
            task_status=task_status,
            ready=ready,
        )

        squad_response_members_item.additional_properties = d
        return squad_response_members_item

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
