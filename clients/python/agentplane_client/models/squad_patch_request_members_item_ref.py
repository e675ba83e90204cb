from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="SquadPatchRequestMembersItemRef")


@_attrs_define
class SquadPatchRequestMembersItemRef:
    """an existing agent that is asleep and in no other squad

    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        namespace (str | Unset): the squad's own namespace, if given
    """

    name: str
    namespace: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace", UNSET)

        squad_patch_request_members_item_ref = cls(
            name=name,
            namespace=namespace,
        )

        return squad_patch_request_members_item_ref
