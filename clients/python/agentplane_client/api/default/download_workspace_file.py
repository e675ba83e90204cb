from http import HTTPStatus
from io import BytesIO
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...types import UNSET, File, Response, Unset


def _get_kwargs(
    name: str,
    path: str,
    *,
    namespace: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/agents/{name}/download/{path}".format(
            name=quote(str(name), safe=""),
            path=quote(str(path), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | File | None:
    if response.status_code == 200:
        response_200 = File(payload=BytesIO(response.content))

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 501:
        response_501 = Error.from_dict(response.json())

        return response_501

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Error | File]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    path: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
) -> Response[Error | File]:
    """A regular file of the agent's workspace, its bytes as they are (any size; Content-Disposition names
    it). The same confinement as /files: `..` and symbolic links leading out of the workspace are 400, a
    directory is 400. 501 when agents run in pods. The same as /files?path=<path>&download=1.

    Args:
        name (str):
        path (str):
        namespace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | File]
    """

    kwargs = _get_kwargs(
        name=name,
        path=path,
        namespace=namespace,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    path: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
) -> Error | File | None:
    """A regular file of the agent's workspace, its bytes as they are (any size; Content-Disposition names
    it). The same confinement as /files: `..` and symbolic links leading out of the workspace are 400, a
    directory is 400. 501 when agents run in pods. The same as /files?path=<path>&download=1.

    Args:
        name (str):
        path (str):
        namespace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | File
    """

    return sync_detailed(
        name=name,
        path=path,
        client=client,
        namespace=namespace,
    ).parsed


async def asyncio_detailed(
    name: str,
    path: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
) -> Response[Error | File]:
    """A regular file of the agent's workspace, its bytes as they are (any size; Content-Disposition names
    it). The same confinement as /files: `..` and symbolic links leading out of the workspace are 400, a
    directory is 400. 501 when agents run in pods. The same as /files?path=<path>&download=1.

    Args:
        name (str):
        path (str):
        namespace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | File]
    """

    kwargs = _get_kwargs(
        name=name,
        path=path,
        namespace=namespace,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    path: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
) -> Error | File | None:
    """A regular file of the agent's workspace, its bytes as they are (any size; Content-Disposition names
    it). The same confinement as /files: `..` and symbolic links leading out of the workspace are 400, a
    directory is 400. 501 when agents run in pods. The same as /files?path=<path>&download=1.

    Args:
        name (str):
        path (str):
        namespace (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | File
    """

    return (
        await asyncio_detailed(
            name=name,
            path=path,
            client=client,
            namespace=namespace,
        )
    ).parsed
