from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.approval import Approval
from ...models.approval_decision_request import ApprovalDecisionRequest
from ...models.error import Error
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    id: str,
    *,
    body: ApprovalDecisionRequest,
    namespace: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/agents/{name}/approvals/{id}".format(
            name=quote(str(name), safe=""),
            id=quote(str(id), safe=""),
        ),
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Approval | Error | None:
    if response.status_code == 200:
        response_200 = Approval.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Error.from_dict(response.json())

        return response_400

    if response.status_code == 403:
        response_403 = Error.from_dict(response.json())

        return response_403

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
) -> Response[Approval | Error]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ApprovalDecisionRequest,
    namespace: str | Unset = UNSET,
) -> Response[Approval | Error]:
    """Decides a pending tool-call approval: allow runs the tool, deny hands the model the refusal (with
    the reason) and the task goes on. An approval_decided event names the decider. A verb of its own:
    create on agents/approvals (RBAC), or a token with the verb "approve" (embedded home), apart from
    changing the agent. 404 for an id the running task does not have, 409 for one decided already.

    Args:
        name (str):
        id (str):
        namespace (str | Unset):
        body (ApprovalDecisionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Approval | Error]
    """

    kwargs = _get_kwargs(
        name=name,
        id=id,
        body=body,
        namespace=namespace,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ApprovalDecisionRequest,
    namespace: str | Unset = UNSET,
) -> Approval | Error | None:
    """Decides a pending tool-call approval: allow runs the tool, deny hands the model the refusal (with
    the reason) and the task goes on. An approval_decided event names the decider. A verb of its own:
    create on agents/approvals (RBAC), or a token with the verb "approve" (embedded home), apart from
    changing the agent. 404 for an id the running task does not have, 409 for one decided already.

    Args:
        name (str):
        id (str):
        namespace (str | Unset):
        body (ApprovalDecisionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Approval | Error
    """

    return sync_detailed(
        name=name,
        id=id,
        client=client,
        body=body,
        namespace=namespace,
    ).parsed


async def asyncio_detailed(
    name: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ApprovalDecisionRequest,
    namespace: str | Unset = UNSET,
) -> Response[Approval | Error]:
    """Decides a pending tool-call approval: allow runs the tool, deny hands the model the refusal (with
    the reason) and the task goes on. An approval_decided event names the decider. A verb of its own:
    create on agents/approvals (RBAC), or a token with the verb "approve" (embedded home), apart from
    changing the agent. 404 for an id the running task does not have, 409 for one decided already.

    Args:
        name (str):
        id (str):
        namespace (str | Unset):
        body (ApprovalDecisionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Approval | Error]
    """

    kwargs = _get_kwargs(
        name=name,
        id=id,
        body=body,
        namespace=namespace,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: ApprovalDecisionRequest,
    namespace: str | Unset = UNSET,
) -> Approval | Error | None:
    """Decides a pending tool-call approval: allow runs the tool, deny hands the model the refusal (with
    the reason) and the task goes on. An approval_decided event names the decider. A verb of its own:
    create on agents/approvals (RBAC), or a token with the verb "approve" (embedded home), apart from
    changing the agent. 404 for an id the running task does not have, 409 for one decided already.

    Args:
        name (str):
        id (str):
        namespace (str | Unset):
        body (ApprovalDecisionRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Approval | Error
    """

    return (
        await asyncio_detailed(
            name=name,
            id=id,
            client=client,
            body=body,
            namespace=namespace,
        )
    ).parsed
