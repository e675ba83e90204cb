from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.event import Event
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    namespace: str | Unset = UNSET,
    since: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params["since"] = since

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/agents/{name}/ws".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | Event | None:
    if response.status_code == 101:
        response_101 = Event.from_dict(response.json())

        return response_101

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 426:
        response_426 = Error.from_dict(response.json())

        return response_426

    if response.status_code == 429:
        response_429 = Error.from_dict(response.json())

        return response_429

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | Event]:
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
    namespace: str | Unset = UNSET,
    since: int | Unset = UNSET,
) -> Response[Error | Event]:
    """WebSocket upgrade: each text message is one Event (JSON). Errors before the upgrade are plain HTTP.
    Without `since` the replay starts at the current task's first event; `since=N` replays every event
    with a greater seq (seqs never repeat for an agent name, so a cursor from a deleted agent of the
    same name resumes on the new one). The server closes the socket with code 4410, reason "agent
    deleted", when the agent is deleted (or marked for deletion), and with 4404 "agent not found" if it
    vanished during the upgrade; 1011 if the replay failed. A plain GET (no `Upgrade: websocket`) is 426
    UpgradeRequired.

    Args:
        name (str):
        namespace (str | Unset):
        since (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Event]
    """

    kwargs = _get_kwargs(
        name=name,
        namespace=namespace,
        since=since,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
    since: int | Unset = UNSET,
) -> Error | Event | None:
    """WebSocket upgrade: each text message is one Event (JSON). Errors before the upgrade are plain HTTP.
    Without `since` the replay starts at the current task's first event; `since=N` replays every event
    with a greater seq (seqs never repeat for an agent name, so a cursor from a deleted agent of the
    same name resumes on the new one). The server closes the socket with code 4410, reason "agent
    deleted", when the agent is deleted (or marked for deletion), and with 4404 "agent not found" if it
    vanished during the upgrade; 1011 if the replay failed. A plain GET (no `Upgrade: websocket`) is 426
    UpgradeRequired.

    Args:
        name (str):
        namespace (str | Unset):
        since (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Event
    """

    return sync_detailed(
        name=name,
        client=client,
        namespace=namespace,
        since=since,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
    since: int | Unset = UNSET,
) -> Response[Error | Event]:
    """WebSocket upgrade: each text message is one Event (JSON). Errors before the upgrade are plain HTTP.
    Without `since` the replay starts at the current task's first event; `since=N` replays every event
    with a greater seq (seqs never repeat for an agent name, so a cursor from a deleted agent of the
    same name resumes on the new one). The server closes the socket with code 4410, reason "agent
    deleted", when the agent is deleted (or marked for deletion), and with 4404 "agent not found" if it
    vanished during the upgrade; 1011 if the replay failed. A plain GET (no `Upgrade: websocket`) is 426
    UpgradeRequired.

    Args:
        name (str):
        namespace (str | Unset):
        since (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Event]
    """

    kwargs = _get_kwargs(
        name=name,
        namespace=namespace,
        since=since,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
    since: int | Unset = UNSET,
) -> Error | Event | None:
    """WebSocket upgrade: each text message is one Event (JSON). Errors before the upgrade are plain HTTP.
    Without `since` the replay starts at the current task's first event; `since=N` replays every event
    with a greater seq (seqs never repeat for an agent name, so a cursor from a deleted agent of the
    same name resumes on the new one). The server closes the socket with code 4410, reason "agent
    deleted", when the agent is deleted (or marked for deletion), and with 4404 "agent not found" if it
    vanished during the upgrade; 1011 if the replay failed. A plain GET (no `Upgrade: websocket`) is 426
    UpgradeRequired.

    Args:
        name (str):
        namespace (str | Unset):
        since (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Event
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            namespace=namespace,
            since=since,
        )
    ).parsed
