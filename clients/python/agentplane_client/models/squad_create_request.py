from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.squad_create_request_members_item import SquadCreateRequestMembersItem


T = TypeVar("T", bound="SquadCreateRequest")


@_attrs_define
class SquadCreateRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        members (list[SquadCreateRequestMembersItem]): at least two members
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        orphan_ttl (str | Unset): a duration such as 30s, 10m or 1h30m
    """

    name: str
    members: list[SquadCreateRequestMembersItem]
    namespace: str | Unset = UNSET
    orphan_ttl: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        members = []
        for members_item_data in self.members:
            members_item = members_item_data.to_dict()
            members.append(members_item)

        namespace = self.namespace

        orphan_ttl = self.orphan_ttl

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "members": members,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if orphan_ttl is not UNSET:
            field_dict["orphanTTL"] = orphan_ttl

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_create_request_members_item import (
            SquadCreateRequestMembersItem,
        )

        d = dict(src_dict)
        name = d.pop("name")

        members = []
        _members = d.pop("members")
        for members_item_data in _members:
            members_item = SquadCreateRequestMembersItem.from_dict(members_item_data)

            members.append(members_item)

        namespace = d.pop("namespace", UNSET)

        orphan_ttl = d.pop("orphanTTL", UNSET)

        squad_create_request = cls(
            name=name,
            members=members,
            namespace=namespace,
            orphan_ttl=orphan_ttl,
        )

        return squad_create_request
