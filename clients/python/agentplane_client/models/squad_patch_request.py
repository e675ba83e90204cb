from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.squad_patch_request_members_item import SquadPatchRequestMembersItem


T = TypeVar("T", bound="SquadPatchRequest")


@_attrs_define
class SquadPatchRequest:
    """
    Attributes:
        members (list[SquadPatchRequestMembersItem] | Unset): the new member list, replacing the old: members left out
            leave (as by DELETE .../members/{agent}), new ones join (as by POST .../members)
        orphan_ttl (str | Unset): a duration such as 30s, 10m or 1h30m
    """

    members: list[SquadPatchRequestMembersItem] | Unset = UNSET
    orphan_ttl: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        members: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.members, Unset):
            members = []
            for members_item_data in self.members:
                members_item = members_item_data.to_dict()
                members.append(members_item)

        orphan_ttl = self.orphan_ttl

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if members is not UNSET:
            field_dict["members"] = members
        if orphan_ttl is not UNSET:
            field_dict["orphanTTL"] = orphan_ttl

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_patch_request_members_item import (
            SquadPatchRequestMembersItem,
        )

        d = dict(src_dict)
        _members = d.pop("members", UNSET)
        members: list[SquadPatchRequestMembersItem] | Unset = UNSET
        if _members is not UNSET:
            members = []
            for members_item_data in _members:
                members_item = SquadPatchRequestMembersItem.from_dict(members_item_data)

                members.append(members_item)

        orphan_ttl = d.pop("orphanTTL", UNSET)

        squad_patch_request = cls(
            members=members,
            orphan_ttl=orphan_ttl,
        )

        return squad_patch_request
