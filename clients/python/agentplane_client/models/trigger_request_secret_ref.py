from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="TriggerRequestSecretRef")


@_attrs_define
class TriggerRequestSecretRef:
    """the shared secret: a key of a secret in the same namespace

    Attributes:
        name (str): a secret of agentplane's secret store in the same namespace (POST /api/v1/secrets)
        key (str | Unset): the key in that secret; default "secret"
    """

    name: str
    key: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        key = self.key

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if key is not UNSET:
            field_dict["key"] = key

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        key = d.pop("key", UNSET)

        trigger_request_secret_ref = cls(
            name=name,
            key=key,
        )

        return trigger_request_secret_ref
