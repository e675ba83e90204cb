from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.secret_patch_request_data import SecretPatchRequestData


T = TypeVar("T", bound="SecretPatchRequest")


@_attrs_define
class SecretPatchRequest:
    """
    Attributes:
        data (SecretPatchRequestData): key -> new value, or null to remove the key; keys not named are kept
        name (str | Unset): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most
            63 characters
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
    """

    data: SecretPatchRequestData
    name: str | Unset = UNSET
    namespace: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        data = self.data.to_dict()

        name = self.name

        namespace = self.namespace

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

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.secret_patch_request_data import SecretPatchRequestData

        d = dict(src_dict)
        data = SecretPatchRequestData.from_dict(d.pop("data"))

        name = d.pop("name", UNSET)

        namespace = d.pop("namespace", UNSET)

        secret_patch_request = cls(
            data=data,
            name=name,
            namespace=namespace,
        )

        return secret_patch_request
