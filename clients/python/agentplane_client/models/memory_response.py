from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="MemoryResponse")


@_attrs_define
class MemoryResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        text (str): the memory's text, at most 65536 characters (and bytes)
        description (str | Unset): what the memory holds; shown to the agents it is attached to
        last_writer (str | Unset): "agent <name>" when an agent's memory_write tool wrote the text last
        last_written_at (datetime.datetime | Unset): when an agent's tool wrote the text last
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    text: str
    description: str | Unset = UNSET
    last_writer: str | Unset = UNSET
    last_written_at: datetime.datetime | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        text = self.text

        description = self.description

        last_writer = self.last_writer

        last_written_at: str | Unset = UNSET
        if not isinstance(self.last_written_at, Unset):
            last_written_at = self.last_written_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "text": text,
            }
        )
        if description is not UNSET:
            field_dict["description"] = description
        if last_writer is not UNSET:
            field_dict["lastWriter"] = last_writer
        if last_written_at is not UNSET:
            field_dict["lastWrittenAt"] = last_written_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        text = d.pop("text")

        description = d.pop("description", UNSET)

        last_writer = d.pop("lastWriter", UNSET)

        _last_written_at = d.pop("lastWrittenAt", UNSET)
        last_written_at: datetime.datetime | Unset
        if isinstance(_last_written_at, Unset):
            last_written_at = UNSET
        else:
            last_written_at = datetime.datetime.fromisoformat(_last_written_at)

        memory_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            text=text,
            description=description,
            last_writer=last_writer,
            last_written_at=last_written_at,
        )

        memory_response.additional_properties = d
        return memory_response

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
