from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.workspace_files_response_entries_item_type import (
    WorkspaceFilesResponseEntriesItemType,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="WorkspaceFilesResponseEntriesItem")


@_attrs_define
class WorkspaceFilesResponseEntriesItem:
    """
    Attributes:
        name (str):
        type_ (WorkspaceFilesResponseEntriesItemType):
        size (int | Unset):
    """

    name: str
    type_: WorkspaceFilesResponseEntriesItemType
    size: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        type_ = self.type_.value

        size = self.size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "type": type_,
            }
        )
        if size is not UNSET:
            field_dict["size"] = size

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        type_ = WorkspaceFilesResponseEntriesItemType(d.pop("type"))

        size = d.pop("size", UNSET)

        workspace_files_response_entries_item = cls(
            name=name,
            type_=type_,
            size=size,
        )

        workspace_files_response_entries_item.additional_properties = d
        return workspace_files_response_entries_item

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
