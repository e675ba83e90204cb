from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.mcp_message import McpMessage
from ...types import Response


def _get_kwargs(
    *,
    body: list[McpMessage] | McpMessage,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/mcp",
    }

    if isinstance(body, McpMessage):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = []
        for componentsschemas_mcp_messages_type_1_item_data in body:
            componentsschemas_mcp_messages_type_1_item = (
                componentsschemas_mcp_messages_type_1_item_data.to_dict()
            )
            _kwargs["json"].append(componentsschemas_mcp_messages_type_1_item)

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | Error | McpMessage | list[McpMessage] | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> list[McpMessage] | McpMessage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_mcp_messages_type_0 = McpMessage.from_dict(data)

                return componentsschemas_mcp_messages_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, list):
                raise TypeError()
            componentsschemas_mcp_messages_type_1 = []
            _componentsschemas_mcp_messages_type_1 = data
            for (
                componentsschemas_mcp_messages_type_1_item_data
            ) in _componentsschemas_mcp_messages_type_1:
                componentsschemas_mcp_messages_type_1_item = McpMessage.from_dict(
                    componentsschemas_mcp_messages_type_1_item_data
                )

                componentsschemas_mcp_messages_type_1.append(
                    componentsschemas_mcp_messages_type_1_item
                )

            return componentsschemas_mcp_messages_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = cast(Any, None)
        return response_202

    if response.status_code == 400:

        def _parse_response_400(data: object) -> Error | McpMessage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_400_type_0 = Error.from_dict(data)

                return response_400_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_400_type_1 = McpMessage.from_dict(data)

            return response_400_type_1

        response_400 = _parse_response_400(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Error.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

    if response.status_code == 406:

        def _parse_response_406(data: object) -> Error | McpMessage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_406_type_0 = Error.from_dict(data)

                return response_406_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_406_type_1 = McpMessage.from_dict(data)

            return response_406_type_1

        response_406 = _parse_response_406(response.json())

        return response_406

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:

        def _parse_response_415(data: object) -> Error | McpMessage:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_415_type_0 = Error.from_dict(data)

                return response_415_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_415_type_1 = McpMessage.from_dict(data)

            return response_415_type_1

        response_415 = _parse_response_415(response.json())

        return response_415

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | Error | McpMessage | list[McpMessage]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: list[McpMessage] | McpMessage,
) -> Response[Any | Error | McpMessage | list[McpMessage]]:
    """MCP over Streamable HTTP, stateless (no Mcp-Session-Id): a JSON-RPC message or batch in, the answer
    as JSON. The client must accept both application/json and text/event-stream (else 406). GET (a
    stream of the server's own) and DELETE (ending a session) are 405 with `Allow: POST`: the server has
    neither. Every tool call is authorized as the REST request it stands for; a refusal is a tool result
    with isError (docs/mcp.md).

    Args:
        body (list[McpMessage] | McpMessage):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | Error | McpMessage | list[McpMessage] | McpMessage]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: list[McpMessage] | McpMessage,
) -> Any | Error | McpMessage | list[McpMessage] | None:
    """MCP over Streamable HTTP, stateless (no Mcp-Session-Id): a JSON-RPC message or batch in, the answer
    as JSON. The client must accept both application/json and text/event-stream (else 406). GET (a
    stream of the server's own) and DELETE (ending a session) are 405 with `Allow: POST`: the server has
    neither. Every tool call is authorized as the REST request it stands for; a refusal is a tool result
    with isError (docs/mcp.md).

    Args:
        body (list[McpMessage] | McpMessage):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | Error | McpMessage | list[McpMessage] | McpMessage
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: list[McpMessage] | McpMessage,
) -> Response[Any | Error | McpMessage | list[McpMessage]]:
    """MCP over Streamable HTTP, stateless (no Mcp-Session-Id): a JSON-RPC message or batch in, the answer
    as JSON. The client must accept both application/json and text/event-stream (else 406). GET (a
    stream of the server's own) and DELETE (ending a session) are 405 with `Allow: POST`: the server has
    neither. Every tool call is authorized as the REST request it stands for; a refusal is a tool result
    with isError (docs/mcp.md).

    Args:
        body (list[McpMessage] | McpMessage):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Error | Error | McpMessage | list[McpMessage] | McpMessage]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: list[McpMessage] | McpMessage,
) -> Any | Error | McpMessage | list[McpMessage] | None:
    """MCP over Streamable HTTP, stateless (no Mcp-Session-Id): a JSON-RPC message or batch in, the answer
    as JSON. The client must accept both application/json and text/event-stream (else 406). GET (a
    stream of the server's own) and DELETE (ending a session) are 405 with `Allow: POST`: the server has
    neither. Every tool call is authorized as the REST request it stands for; a refusal is a tool result
    with isError (docs/mcp.md).

    Args:
        body (list[McpMessage] | McpMessage):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Error | Error | McpMessage | list[McpMessage] | McpMessage
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
