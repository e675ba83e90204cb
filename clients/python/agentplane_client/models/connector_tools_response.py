from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.connector_tools_response_tools_item import (
        ConnectorToolsResponseToolsItem,
    )


T = TypeVar("T", bound="ConnectorToolsResponse")


@_attrs_define
class ConnectorToolsResponse:
    """
    Attributes:
        connector (str):
        tools (list[ConnectorToolsResponseToolsItem]):
        namespace (str | Unset):
    """

    connector: str
    tools: list[ConnectorToolsResponseToolsItem]
    namespace: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        connector = self.connector

        tools = []
        for tools_item_data in self.tools:
            tools_item = tools_item_data.to_dict()
            tools.append(tools_item)

        namespace = self.namespace

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "connector": connector,
                "tools": tools,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.connector_tools_response_tools_item import (
            ConnectorToolsResponseToolsItem,
        )

        d = dict(src_dict)
        connector = d.pop("connector")

        tools = []
        _tools = d.pop("tools")
        for tools_item_data in _tools:
            tools_item = ConnectorToolsResponseToolsItem.from_dict(tools_item_data)

            tools.append(tools_item)

        namespace = d.pop("namespace", UNSET)

        connector_tools_response = cls(
            connector=connector,
            tools=tools,
            namespace=namespace,
        )

        connector_tools_response.additional_properties = d
        return connector_tools_response

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
