from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.connector_create_request_auth_type import ConnectorCreateRequestAuthType
from ..types import UNSET, Unset

T = TypeVar("T", bound="ConnectorCreateRequest")


@_attrs_define
class ConnectorCreateRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        url (str): http(s) address of the MCP server (Streamable HTTP transport), without credentials
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        service (str | Unset): service kind label, e.g. "github"
        display_name (str | Unset): human-readable name; default the connector name
        auth_secret_name (str | Unset): name of the secret (same namespace) holding the token; with authSecretKey
        auth_secret_key (str | Unset): key inside that secret; with authSecretName
        auth_type (ConnectorCreateRequestAuthType | Unset): "bearer" (Authorization: Bearer <token>, the default;
            "token", as komputer-ai clients send it, is the same) or "header" (<headerName>: <token>, as komputer-ai's
            "header"); "oauth" is refused: not supported yet
        header_name (str | Unset): an HTTP header name; required with authType "header"
    """

    name: str
    url: str
    namespace: str | Unset = UNSET
    service: str | Unset = UNSET
    display_name: str | Unset = UNSET
    auth_secret_name: str | Unset = UNSET
    auth_secret_key: str | Unset = UNSET
    auth_type: ConnectorCreateRequestAuthType | Unset = UNSET
    header_name: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        url = self.url

        namespace = self.namespace

        service = self.service

        display_name = self.display_name

        auth_secret_name = self.auth_secret_name

        auth_secret_key = self.auth_secret_key

        auth_type: str | Unset = UNSET
        if not isinstance(self.auth_type, Unset):
            auth_type = self.auth_type.value

        header_name = self.header_name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "url": url,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if service is not UNSET:
            field_dict["service"] = service
        if display_name is not UNSET:
            field_dict["displayName"] = display_name
        if auth_secret_name is not UNSET:
            field_dict["authSecretName"] = auth_secret_name
        if auth_secret_key is not UNSET:
            field_dict["authSecretKey"] = auth_secret_key
        if auth_type is not UNSET:
            field_dict["authType"] = auth_type
        if header_name is not UNSET:
            field_dict["headerName"] = header_name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        url = d.pop("url")

        namespace = d.pop("namespace", UNSET)

        service = d.pop("service", UNSET)

        display_name = d.pop("displayName", UNSET)

        auth_secret_name = d.pop("authSecretName", UNSET)

        auth_secret_key = d.pop("authSecretKey", UNSET)

        _auth_type = d.pop("authType", UNSET)
        auth_type: ConnectorCreateRequestAuthType | Unset
        if isinstance(_auth_type, Unset):
            auth_type = UNSET
        else:
            auth_type = ConnectorCreateRequestAuthType(_auth_type)

        header_name = d.pop("headerName", UNSET)

        connector_create_request = cls(
            name=name,
            url=url,
            namespace=namespace,
            service=service,
            display_name=display_name,
            auth_secret_name=auth_secret_name,
            auth_secret_key=auth_secret_key,
            auth_type=auth_type,
            header_name=header_name,
        )

        return connector_create_request
