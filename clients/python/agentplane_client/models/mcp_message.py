from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.mcp_message_jsonrpc import McpMessageJsonrpc
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_message_error import McpMessageError
    from ..models.mcp_message_params import McpMessageParams
    from ..models.mcp_message_result import McpMessageResult


T = TypeVar("T", bound="McpMessage")


@_attrs_define
class McpMessage:
    """a JSON-RPC 2.0 message of the MCP protocol (initialize, tools/list, tools/call, notifications...)

    Attributes:
        jsonrpc (McpMessageJsonrpc | Unset):
        id (int | None | str | Unset):
        method (str | Unset):
        params (McpMessageParams | Unset):
        result (McpMessageResult | Unset):
        error (McpMessageError | Unset):
    """

    jsonrpc: McpMessageJsonrpc | Unset = UNSET
    id: int | None | str | Unset = UNSET
    method: str | Unset = UNSET
    params: McpMessageParams | Unset = UNSET
    result: McpMessageResult | Unset = UNSET
    error: McpMessageError | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        jsonrpc: str | Unset = UNSET
        if not isinstance(self.jsonrpc, Unset):
            jsonrpc = self.jsonrpc.value

        id: int | None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        method = self.method

        params: dict[str, Any] | Unset = UNSET
        if not isinstance(self.params, Unset):
            params = self.params.to_dict()

        result: dict[str, Any] | Unset = UNSET
        if not isinstance(self.result, Unset):
            result = self.result.to_dict()

        error: dict[str, Any] | Unset = UNSET
        if not isinstance(self.error, Unset):
            error = self.error.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if jsonrpc is not UNSET:
            field_dict["jsonrpc"] = jsonrpc
        if id is not UNSET:
            field_dict["id"] = id
        if method is not UNSET:
            field_dict["method"] = method
        if params is not UNSET:
            field_dict["params"] = params
        if result is not UNSET:
            field_dict["result"] = result
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_message_error import McpMessageError
        from ..models.mcp_message_params import McpMessageParams
        from ..models.mcp_message_result import McpMessageResult

        d = dict(src_dict)
        _jsonrpc = d.pop("jsonrpc", UNSET)
        jsonrpc: McpMessageJsonrpc | Unset
        if isinstance(_jsonrpc, Unset):
            jsonrpc = UNSET
        else:
            jsonrpc = McpMessageJsonrpc(_jsonrpc)

        def _parse_id(data: object) -> int | None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        method = d.pop("method", UNSET)

        _params = d.pop("params", UNSET)
        params: McpMessageParams | Unset
        if isinstance(_params, Unset):
            params = UNSET
        else:
            params = McpMessageParams.from_dict(_params)

        _result = d.pop("result", UNSET)
        result: McpMessageResult | Unset
        if isinstance(_result, Unset):
            result = UNSET
        else:
            result = McpMessageResult.from_dict(_result)

        _error = d.pop("error", UNSET)
        error: McpMessageError | Unset
        if isinstance(_error, Unset):
            error = UNSET
        else:
            error = McpMessageError.from_dict(_error)

        mcp_message = cls(
            jsonrpc=jsonrpc,
            id=id,
            method=method,
            params=params,
            result=result,
            error=error,
        )

        mcp_message.additional_properties = d
        return mcp_message

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
