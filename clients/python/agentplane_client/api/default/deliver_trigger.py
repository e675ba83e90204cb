from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.deliver_trigger_body import DeliverTriggerBody
from ...models.error import Error
from ...models.trigger_hook_answer import TriggerHookAnswer
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    body: DeliverTriggerBody,
    namespace: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["namespace"] = namespace

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/triggers/{name}/hook".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Error | TriggerHookAnswer | None:
    if response.status_code == 202:
        response_202 = TriggerHookAnswer.from_dict(response.json())

        return response_202

    if response.status_code == 400:

        def _parse_response_400(data: object) -> Error | TriggerHookAnswer:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                response_400_type_0 = TriggerHookAnswer.from_dict(data)

                return response_400_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            response_400_type_1 = Error.from_dict(data)

            return response_400_type_1

        response_400 = _parse_response_400(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = TriggerHookAnswer.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Error.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = TriggerHookAnswer.from_dict(response.json())

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
) -> Response[Error | TriggerHookAnswer]:
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
    body: DeliverTriggerBody,
    namespace: str | Unset = UNSET,
) -> Response[Error | TriggerHookAnswer]:
    """An external sender's delivery. No bearer token: authenticated by the HMAC-SHA256 signature of the
    raw body with the trigger's secret, in the trigger's signature header (default X-Hub-Signature-256:
    "sha256=<hex>"). A delivery id seen before starts nothing (202 Duplicate).

    Args:
        name (str):
        namespace (str | Unset):
        body (DeliverTriggerBody): the sender's JSON payload; the template reads its fields

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Error | TriggerHookAnswer | TriggerHookAnswer]
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
    body: DeliverTriggerBody,
    namespace: str | Unset = UNSET,
) -> Error | TriggerHookAnswer | None:
    """An external sender's delivery. No bearer token: authenticated by the HMAC-SHA256 signature of the
    raw body with the trigger's secret, in the trigger's signature header (default X-Hub-Signature-256:
    "sha256=<hex>"). A delivery id seen before starts nothing (202 Duplicate).

    Args:
        name (str):
        namespace (str | Unset):
        body (DeliverTriggerBody): the sender's JSON payload; the template reads its fields

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Error | TriggerHookAnswer | TriggerHookAnswer
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
    body: DeliverTriggerBody,
    namespace: str | Unset = UNSET,
) -> Response[Error | TriggerHookAnswer]:
    """An external sender's delivery. No bearer token: authenticated by the HMAC-SHA256 signature of the
    raw body with the trigger's secret, in the trigger's signature header (default X-Hub-Signature-256:
    "sha256=<hex>"). A delivery id seen before starts nothing (202 Duplicate).

    Args:
        name (str):
        namespace (str | Unset):
        body (DeliverTriggerBody): the sender's JSON payload; the template reads its fields

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Error | Error | TriggerHookAnswer | TriggerHookAnswer]
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
    body: DeliverTriggerBody,
    namespace: str | Unset = UNSET,
) -> Error | TriggerHookAnswer | None:
    """An external sender's delivery. No bearer token: authenticated by the HMAC-SHA256 signature of the
    raw body with the trigger's secret, in the trigger's signature header (default X-Hub-Signature-256:
    "sha256=<hex>"). A delivery id seen before starts nothing (202 Duplicate).

    Args:
        name (str):
        namespace (str | Unset):
        body (DeliverTriggerBody): the sender's JSON payload; the template reads its fields

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Error | Error | TriggerHookAnswer | TriggerHookAnswer
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
            namespace=namespace,
        )
    ).parsed
