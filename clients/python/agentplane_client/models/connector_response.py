from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.connector_response_auth_type import ConnectorResponseAuthType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.connector_response_status import ConnectorResponseStatus


T = TypeVar("T", bound="ConnectorResponse")


@_attrs_define
class ConnectorResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        service (str):
        display_name (str):
        url (str):
        attached_agents (int): number of agents using it
        agent_names (list[str]):
        status (ConnectorResponseStatus):
        created_at (datetime.datetime):
        auth_secret_name (str | Unset): "" when the connector sends no credential
        auth_secret_key (str | Unset):
        auth_type (ConnectorResponseAuthType | Unset):
        header_name (str | Unset):
    """

    name: str
    namespace: str
    service: str
    display_name: str
    url: str
    attached_agents: int
    agent_names: list[str]
    status: ConnectorResponseStatus
    created_at: datetime.datetime
    auth_secret_name: str | Unset = UNSET
    auth_secret_key: str | Unset = UNSET
    auth_type: ConnectorResponseAuthType | Unset = UNSET
    header_name: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        service = self.service

        display_name = self.display_name

        url = self.url

        attached_agents = self.attached_agents

        agent_names = self.agent_names

        status = self.status.to_dict()

        created_at = self.created_at.isoformat()

        auth_secret_name = self.auth_secret_name

        auth_secret_key = self.auth_secret_key

        auth_type: str | Unset = UNSET
        if not isinstance(self.auth_type, Unset):
            auth_type = self.auth_type.value

        header_name = self.header_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "service": service,
                "displayName": display_name,
                "url": url,
                "attachedAgents": attached_agents,
                "agentNames": agent_names,
                "status": status,
                "createdAt": created_at,
            }
        )
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
        from ..models.connector_response_status import ConnectorResponseStatus

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        service = d.pop("service")

        display_name = d.pop("displayName")

        url = d.pop("url")

        attached_agents = d.pop("attachedAgents")

        agent_names = cast(list[str], d.pop("agentNames"))

        status = ConnectorResponseStatus.from_dict(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        auth_secret_name = d.pop("authSecretName", UNSET)

        auth_secret_key = d.pop("authSecretKey", UNSET)

        _auth_type = d.pop("authType", UNSET)
        auth_type: ConnectorResponseAuthType | Unset
        if isinstance(_auth_type, Unset):
            auth_type = UNSET
        else:
            auth_type = ConnectorResponseAuthType(_auth_type)

        header_name = d.pop("headerName", UNSET)

        connector_response = cls(
            name=name,
            namespace=namespace,
            service=service,
            display_name=display_name,
            url=url,
            attached_agents=attached_agents,
            agent_names=agent_names,
            status=status,
            created_at=created_at,
            auth_secret_name=auth_secret_name,
            auth_secret_key=auth_secret_key,
            auth_type=auth_type,
            header_name=header_name,
        )

        connector_response.additional_properties = d
        return connector_response

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
