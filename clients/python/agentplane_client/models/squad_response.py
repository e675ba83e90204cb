from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.squad_response_phase import SquadResponsePhase

if TYPE_CHECKING:
    from ..models.squad_response_members_item import SquadResponseMembersItem


T = TypeVar("T", bound="SquadResponse")


@_attrs_define
class SquadResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        phase (SquadResponsePhase):
        members (list[SquadResponseMembersItem]):
        orphan_ttl (str):
        orphaned_since (None | str):
        break_up_requested (bool):
        created_at (datetime.datetime):
    """

    name: str
    namespace: str
    phase: SquadResponsePhase
    members: list[SquadResponseMembersItem]
    orphan_ttl: str
    orphaned_since: None | str
    break_up_requested: bool
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        phase = self.phase.value

        members = []
        for members_item_data in self.members:
            members_item = members_item_data.to_dict()
            members.append(members_item)

        orphan_ttl = self.orphan_ttl

        orphaned_since: None | str
        orphaned_since = self.orphaned_since

        break_up_requested = self.break_up_requested

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "phase": phase,
                "members": members,
                "orphanTTL": orphan_ttl,
                "orphanedSince": orphaned_since,
                "breakUpRequested": break_up_requested,
                "createdAt": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_response_members_item import SquadResponseMembersItem

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        phase = SquadResponsePhase(d.pop("phase"))

        members = []
        _members = d.pop("members")
        for members_item_data in _members:
            members_item = SquadResponseMembersItem.from_dict(members_item_data)

            members.append(members_item)

        orphan_ttl = d.pop("orphanTTL")

        def _parse_orphaned_since(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        orphaned_since = _parse_orphaned_since(d.pop("orphanedSince"))

        break_up_requested = d.pop("breakUpRequested")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        squad_response = cls(
            name=name,
            namespace=namespace,
            phase=phase,
            members=members,
            orphan_ttl=orphan_ttl,
            orphaned_since=orphaned_since,
            break_up_requested=break_up_requested,
            created_at=created_at,
        )

        squad_response.additional_properties = d
        return squad_response

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
