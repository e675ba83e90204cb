from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error import Error
from ...models.read_workspace_download import ReadWorkspaceDownload
from ...models.workspace_files_response import WorkspaceFilesResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    namespace: str | Unset = UNSET,
    path: str | Unset = UNSET,
    download: ReadWorkspaceDownload | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params["path"] = path

    json_download: str | Unset = UNSET
    if not isinstance(download, Unset):
        json_download = download.value

    params["download"] = json_download

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/agents/{name}/files".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | WorkspaceFilesResponse | None:
    if response.status_code == 200:
        response_200 = WorkspaceFilesResponse.from_dict(response.json())

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
) -> Response[Error | WorkspaceFilesResponse]:
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
    path: str | Unset = UNSET,
    download: ReadWorkspaceDownload | Unset = UNSET,
) -> Response[Error | WorkspaceFilesResponse]:
    """The agent's workspace, read-only: a directory's entries (sorted, at most 1000) or a file's UTF-8
    text (at most 1048576 bytes; `binary` files come without text). `..` and symbolic links leading out
    of the workspace are 400. With download=1, a regular file's bytes as they are (application/octet-
    stream, any size), as /download/{path}. 501 NotImplemented when agents run in pods (the server does
    not mount their workspaces).

    Args:
        name (str):
        namespace (str | Unset):
        path (str | Unset):
        download (ReadWorkspaceDownload | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WorkspaceFilesResponse]
    """

    kwargs = _get_kwargs(
        name=name,
        namespace=namespace,
        path=path,
        download=download,
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
    path: str | Unset = UNSET,
    download: ReadWorkspaceDownload | Unset = UNSET,
) -> Error | WorkspaceFilesResponse | None:
    """The agent's workspace, read-only: a directory's entries (sorted, at most 1000) or a file's UTF-8
    text (at most 1048576 bytes; `binary` files come without text). `..` and symbolic links leading out
    of the workspace are 400. With download=1, a regular file's bytes as they are (application/octet-
    stream, any size), as /download/{path}. 501 NotImplemented when agents run in pods (the server does
    not mount their workspaces).

    Args:
        name (str):
        namespace (str | Unset):
        path (str | Unset):
        download (ReadWorkspaceDownload | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WorkspaceFilesResponse
    """

    return sync_detailed(
        name=name,
        client=client,
        namespace=namespace,
        path=path,
        download=download,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
    path: str | Unset = UNSET,
    download: ReadWorkspaceDownload | Unset = UNSET,
) -> Response[Error | WorkspaceFilesResponse]:
    """The agent's workspace, read-only: a directory's entries (sorted, at most 1000) or a file's UTF-8
    text (at most 1048576 bytes; `binary` files come without text). `..` and symbolic links leading out
    of the workspace are 400. With download=1, a regular file's bytes as they are (application/octet-
    stream, any size), as /download/{path}. 501 NotImplemented when agents run in pods (the server does
    not mount their workspaces).

    Args:
        name (str):
        namespace (str | Unset):
        path (str | Unset):
        download (ReadWorkspaceDownload | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | WorkspaceFilesResponse]
    """

    kwargs = _get_kwargs(
        name=name,
        namespace=namespace,
        path=path,
        download=download,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    namespace: str | Unset = UNSET,
    path: str | Unset = UNSET,
    download: ReadWorkspaceDownload | Unset = UNSET,
) -> Error | WorkspaceFilesResponse | None:
    """The agent's workspace, read-only: a directory's entries (sorted, at most 1000) or a file's UTF-8
    text (at most 1048576 bytes; `binary` files come without text). `..` and symbolic links leading out
    of the workspace are 400. With download=1, a regular file's bytes as they are (application/octet-
    stream, any size), as /download/{path}. 501 NotImplemented when agents run in pods (the server does
    not mount their workspaces).

    Args:
        name (str):
        namespace (str | Unset):
        path (str | Unset):
        download (ReadWorkspaceDownload | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | WorkspaceFilesResponse
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            namespace=namespace,
            path=path,
            download=download,
        )
    ).parsed
