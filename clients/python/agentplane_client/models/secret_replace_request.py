from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.secret_replace_request_data import SecretReplaceRequestData


T = TypeVar("T", bound="SecretReplaceRequest")


@_attrs_define
class SecretReplaceRequest:
    """
    Attributes:
        data (SecretReplaceRequestData): key -> value; at least one key; keys match ^(?!\\.\\.)(?!\\.$)[-._a-zA-Z0-9]+$,
            at most 253 characters (checked by secretDataCauses)
        name (str | Unset): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most
            63 characters
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        allowed_urls (list[str] | Unset): URL prefixes the secret may be sent to (scheme://host[:port][/path]; path
            matched on segment boundaries). Omitted on create: bound to the URL of the first connector that names it;
            omitted on PUT: the binding is kept.
    """

    data: SecretReplaceRequestData
    name: str | Unset = UNSET
    namespace: str | Unset = UNSET
    allowed_urls: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        name = self.name

        namespace = self.namespace

        allowed_urls: list[str] | Unset = UNSET
        if not isinstance(self.allowed_urls, Unset):
            allowed_urls = self.allowed_urls

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "data": data,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if allowed_urls is not UNSET:
            field_dict["allowedUrls"] = allowed_urls

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.secret_replace_request_data import SecretReplaceRequestData

        d = dict(src_dict)
        data = SecretReplaceRequestData.from_dict(d.pop("data"))

        name = d.pop("name", UNSET)

        namespace = d.pop("namespace", UNSET)

        allowed_urls = cast(list[str], d.pop("allowedUrls", UNSET))

        secret_replace_request = cls(
            data=data,
            name=name,
            namespace=namespace,
            allowed_urls=allowed_urls,
        )

        return secret_replace_request
