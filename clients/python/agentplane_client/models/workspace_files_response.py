from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.workspace_files_response_type import WorkspaceFilesResponseType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.workspace_files_response_entries_item import (
        WorkspaceFilesResponseEntriesItem,
    )


T = TypeVar("T", bound="WorkspaceFilesResponse")


@_attrs_define
class WorkspaceFilesResponse:
    """
    Attributes:
        agent (str):
        namespace (str):
        path (str):
        type_ (WorkspaceFilesResponseType):
        truncated (bool):
        entries (list[WorkspaceFilesResponseEntriesItem] | Unset):
        size (int | Unset):
        content (str | Unset):
        binary (bool | Unset):
    """

    agent: str
    namespace: str
    path: str
    type_: WorkspaceFilesResponseType
    truncated: bool
    entries: list[WorkspaceFilesResponseEntriesItem] | Unset = UNSET
    size: int | Unset = UNSET
    content: str | Unset = UNSET
    binary: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        namespace = self.namespace

        path = self.path

        type_ = self.type_.value

        truncated = self.truncated

        entries: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.entries, Unset):
            entries = []
            for entries_item_data in self.entries:
                entries_item = entries_item_data.to_dict()
                entries.append(entries_item)

        size = self.size

        content = self.content

        binary = self.binary

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent": agent,
                "namespace": namespace,
                "path": path,
                "type": type_,
                "truncated": truncated,
            }
        )
        if entries is not UNSET:
            field_dict["entries"] = entries
        if size is not UNSET:
            field_dict["size"] = size
        if content is not UNSET:
            field_dict["content"] = content
        if binary is not UNSET:
            field_dict["binary"] = binary

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workspace_files_response_entries_item import (
            WorkspaceFilesResponseEntriesItem,
        )

        d = dict(src_dict)
        agent = d.pop("agent")

        namespace = d.pop("namespace")

        path = d.pop("path")

        type_ = WorkspaceFilesResponseType(d.pop("type"))

        truncated = d.pop("truncated")

        _entries = d.pop("entries", UNSET)
        entries: list[WorkspaceFilesResponseEntriesItem] | Unset = UNSET
        if _entries is not UNSET:
            entries = []
            for entries_item_data in _entries:
                entries_item = WorkspaceFilesResponseEntriesItem.from_dict(
                    entries_item_data
                )

                entries.append(entries_item)

        size = d.pop("size", UNSET)

        content = d.pop("content", UNSET)

        binary = d.pop("binary", UNSET)

        workspace_files_response = cls(
            agent=agent,
            namespace=namespace,
            path=path,
            type_=type_,
            truncated=truncated,
            entries=entries,
            size=size,
            content=content,
            binary=binary,
        )

        workspace_files_response.additional_properties = d
        return workspace_files_response

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
