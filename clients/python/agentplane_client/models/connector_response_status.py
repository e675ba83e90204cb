from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.connector_response_status_phase import ConnectorResponseStatusPhase
from ..types import UNSET, Unset

T = TypeVar("T", bound="ConnectorResponseStatus")


@_attrs_define
class ConnectorResponseStatus:
    """
    Attributes:
        phase (ConnectorResponseStatusPhase):
        message (str):
        tool_count (int | Unset):
        last_checked_at (datetime.datetime | Unset):
    """

    phase: ConnectorResponseStatusPhase
    message: str
    tool_count: int | Unset = UNSET
    last_checked_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        phase = self.phase.value

        message = self.message

        tool_count = self.tool_count

        last_checked_at: str | Unset = UNSET
        if not isinstance(self.last_checked_at, Unset):
            last_checked_at = self.last_checked_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "phase": phase,
                "message": message,
            }
        )
        if tool_count is not UNSET:
            field_dict["toolCount"] = tool_count
        if last_checked_at is not UNSET:
            field_dict["lastCheckedAt"] = last_checked_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        phase = ConnectorResponseStatusPhase(d.pop("phase"))

        message = d.pop("message")

        tool_count = d.pop("toolCount", UNSET)

        _last_checked_at = d.pop("lastCheckedAt", UNSET)
        last_checked_at: datetime.datetime | Unset
        if isinstance(_last_checked_at, Unset):
            last_checked_at = UNSET
        else:
            last_checked_at = datetime.datetime.fromisoformat(_last_checked_at)

        connector_response_status = cls(
            phase=phase,
            message=message,
            tool_count=tool_count,
            last_checked_at=last_checked_at,
        )

        connector_response_status.additional_properties = d
        return connector_response_status

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
