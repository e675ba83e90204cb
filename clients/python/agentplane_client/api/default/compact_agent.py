from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.compact_request import CompactRequest
from ...models.compact_response import CompactResponse
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    body: CompactRequest | Unset = UNSET,
    namespace: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/agents/{name}/compact".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CompactResponse | Error | None:
    if response.status_code == 200:
        response_200 = CompactResponse.from_dict(response.json())

        return response_200

    if response.status_code == 202:
        response_202 = CompactResponse.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Error.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Error.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Error.from_dict(response.json())

        return response_415

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[CompactResponse | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: CompactRequest | Unset = UNSET,
    namespace: str | Unset = UNSET,
) -> Response[CompactResponse | Error]:
    """Compacts the running task's session with the engine's own compaction (its /compact): after the turn
    in progress the engine summarises the conversation so far, reports a context_compacted event, and
    the task goes on. 409 when no task is in progress (nothing running to compact). The body is
    optional. 202 when the worker has not taken the request within 5 s: it stays stored for the task,
    which takes it at its next turn.

    Args:
        name (str):
        namespace (str | Unset):
        body (CompactRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CompactResponse | Error]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
        namespace=namespace,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: CompactRequest | Unset = UNSET,
    namespace: str | Unset = UNSET,
) -> CompactResponse | Error | None:
    """Compacts the running task's session with the engine's own compaction (its /compact): after the turn
    in progress the engine summarises the conversation so far, reports a context_compacted event, and
    the task goes on. 409 when no task is in progress (nothing running to compact). The body is
    optional. 202 when the worker has not taken the request within 5 s: it stays stored for the task,
    which takes it at its next turn.

    Args:
        name (str):
        namespace (str | Unset):
        body (CompactRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CompactResponse | Error
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
        namespace=namespace,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: CompactRequest | Unset = UNSET,
    namespace: str | Unset = UNSET,
) -> Response[CompactResponse | Error]:
    """Compacts the running task's session with the engine's own compaction (its /compact): after the turn
    in progress the engine summarises the conversation so far, reports a context_compacted event, and
    the task goes on. 409 when no task is in progress (nothing running to compact). The body is
    optional. 202 when the worker has not taken the request within 5 s: it stays stored for the task,
    which takes it at its next turn.

    Args:
        name (str):
        namespace (str | Unset):
        body (CompactRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CompactResponse | Error]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
        namespace=namespace,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: CompactRequest | Unset = UNSET,
    namespace: str | Unset = UNSET,
) -> CompactResponse | Error | None:
    """Compacts the running task's session with the engine's own compaction (its /compact): after the turn
    in progress the engine summarises the conversation so far, reports a context_compacted event, and
    the task goes on. 409 when no task is in progress (nothing running to compact). The body is
    optional. 202 when the worker has not taken the request within 5 s: it stays stored for the task,
    which takes it at its next turn.

    Args:
        name (str):
        namespace (str | Unset):
        body (CompactRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CompactResponse | Error
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
            namespace=namespace,
        )
    ).parsed
