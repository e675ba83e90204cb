from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MessageRequest")


@_attrs_define
class MessageRequest:
    """
    Attributes:
        text (str): the message, at most 65536 characters
        from_ (str | Unset): who sends it: an agent of the same namespace (its log records the message as sent), or a
            person; default the authenticated user (at most 253 characters, one line)
        wake (bool | Unset): wake a sleeping receiver, which then takes the message (with any queued before it) as its
            next task
    """

    text: str
    from_: str | Unset = UNSET
    wake: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        from_ = self.from_

        wake = self.wake

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )
        if from_ is not UNSET:
            field_dict["from"] = from_
        if wake is not UNSET:
            field_dict["wake"] = wake

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        text = d.pop("text")

        from_ = d.pop("from", UNSET)

        wake = d.pop("wake", UNSET)

        message_request = cls(
            text=text,
            from_=from_,
            wake=wake,
        )

        return message_request
