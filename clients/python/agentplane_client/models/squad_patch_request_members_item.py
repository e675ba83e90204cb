from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.squad_patch_request_members_item_ref import (
        SquadPatchRequestMembersItemRef,
    )
    from ..models.squad_patch_request_members_item_spec import (
        SquadPatchRequestMembersItemSpec,
    )


T = TypeVar("T", bound="SquadPatchRequestMembersItem")


@_attrs_define
class SquadPatchRequestMembersItem:
    """exactly one of {"ref": {"name"}} or {"name", "spec"}

    Attributes:
        ref (SquadPatchRequestMembersItemRef | Unset): an existing agent that is asleep and in no other squad
        name (str | Unset): the name of a new agent, with spec
        spec (SquadPatchRequestMembersItemSpec | Unset): the fields of a new agent (as on agent create); the squad
            controller creates it and turns the entry into a ref
    """

    ref: SquadPatchRequestMembersItemRef | Unset = UNSET
    name: str | Unset = UNSET
    spec: SquadPatchRequestMembersItemSpec | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        ref: dict[str, Any] | Unset = UNSET
        if not isinstance(self.ref, Unset):
            ref = self.ref.to_dict()

        name = self.name

        spec: dict[str, Any] | Unset = UNSET
        if not isinstance(self.spec, Unset):
            spec = self.spec.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if ref is not UNSET:
            field_dict["ref"] = ref
        if name is not UNSET:
            field_dict["name"] = name
        if spec is not UNSET:
            field_dict["spec"] = spec

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_patch_request_members_item_ref import (
            SquadPatchRequestMembersItemRef,
        )
        from ..models.squad_patch_request_members_item_spec import (
            SquadPatchRequestMembersItemSpec,
        )

        d = dict(src_dict)
        _ref = d.pop("ref", UNSET)
        ref: SquadPatchRequestMembersItemRef | Unset
        if isinstance(_ref, Unset):
            ref = UNSET
        else:
            ref = SquadPatchRequestMembersItemRef.from_dict(_ref)

        name = d.pop("name", UNSET)

        _spec = d.pop("spec", UNSET)
        spec: SquadPatchRequestMembersItemSpec | Unset
        if isinstance(_spec, Unset):
            spec = UNSET
        else:
            spec = SquadPatchRequestMembersItemSpec.from_dict(_spec)

        squad_patch_request_members_item = cls(
            ref=ref,
            name=name,
            spec=spec,
        )

        return squad_patch_request_members_item
