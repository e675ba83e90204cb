from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MemoryRequest")


@_attrs_define
class MemoryRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        text (str): the memory's text, at most 65536 characters (and bytes)
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        description (str | Unset): what the memory holds; shown to the agents it is attached to
    """

    name: str
    text: str
    namespace: str | Unset = UNSET
    description: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        text = self.text

        namespace = self.namespace

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "text": text,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        text = d.pop("text")

        namespace = d.pop("namespace", UNSET)

        description = d.pop("description", UNSET)

        memory_request = cls(
            name=name,
            text=text,
            namespace=namespace,
            description=description,
        )

        return memory_request
