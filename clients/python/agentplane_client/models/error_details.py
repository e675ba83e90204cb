from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.error_details_causes_item import ErrorDetailsCausesItem


T = TypeVar("T", bound="ErrorDetails")


@_attrs_define
class ErrorDetails:
    """
    Attributes:
        kind (str | Unset):
        name (str | Unset):
        causes (list[ErrorDetailsCausesItem] | Unset):
    """

    kind: str | Unset = UNSET
    name: str | Unset = UNSET
    causes: list[ErrorDetailsCausesItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        name = self.name

        causes: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.causes, Unset):
            causes = []
            for causes_item_data in self.causes:
                causes_item = causes_item_data.to_dict()
                causes.append(causes_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if kind is not UNSET:
            field_dict["kind"] = kind
        if name is not UNSET:
            field_dict["name"] = name
        if causes is not UNSET:
            field_dict["causes"] = causes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.error_details_causes_item import ErrorDetailsCausesItem

        d = dict(src_dict)
        kind = d.pop("kind", UNSET)

        name = d.pop("name", UNSET)

        _causes = d.pop("causes", UNSET)
        causes: list[ErrorDetailsCausesItem] | Unset = UNSET
        if _causes is not UNSET:
            causes = []
            for causes_item_data in _causes:
                causes_item = ErrorDetailsCausesItem.from_dict(causes_item_data)

                causes.append(causes_item)

        error_details = cls(
            kind=kind,
            name=name,
            causes=causes,
        )

        error_details.additional_properties = d
        return error_details

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
