from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SecretResponse")


@_attrs_define
class SecretResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        keys (list[str]):
        allowed_urls (list[str]): normalized URL prefixes (scheme://host:port[/path]) the secret may be sent to; []
            until bound by the first connector that names it
        created_at (datetime.datetime):
    """

    name: str
    namespace: str
    keys: list[str]
    allowed_urls: list[str]
    created_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        keys = self.keys

        allowed_urls = self.allowed_urls

        created_at = self.created_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "keys": keys,
                "allowedUrls": allowed_urls,
                "createdAt": created_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        keys = cast(list[str], d.pop("keys"))

        allowed_urls = cast(list[str], d.pop("allowedUrls"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        secret_response = cls(
            name=name,
            namespace=namespace,
            keys=keys,
            allowed_urls=allowed_urls,
            created_at=created_at,
        )

        secret_response.additional_properties = d
        return secret_response

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
