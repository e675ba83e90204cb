from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CompactRequest")


@_attrs_define
class CompactRequest:
    """
    Attributes:
        instructions (str | Unset): what the summary should keep, handed to the engine's /compact (at most 4096
            characters)
    """

    instructions: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        instructions = self.instructions

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if instructions is not UNSET:
            field_dict["instructions"] = instructions

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        instructions = d.pop("instructions", UNSET)

        compact_request = cls(
            instructions=instructions,
        )

        return compact_request
