from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CheckpointCreateRequest")


@_attrs_define
class CheckpointCreateRequest:
    """
    Attributes:
        name (str): the checkpoint's name among the agent's checkpoints: lowercase letters, digits and hyphens, starting
            and ending with a letter or digit, at most 63 characters
    """

    name: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        checkpoint_create_request = cls(
            name=name,
        )

        return checkpoint_create_request
