from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.webhook_patch_request_event_types_item import (
    WebhookPatchRequestEventTypesItem,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.webhook_patch_request_secret_ref import WebhookPatchRequestSecretRef


T = TypeVar("T", bound="WebhookPatchRequest")


@_attrs_define
class WebhookPatchRequest:
    """the fields given change; agents given as null is removed (every agent of the namespace again)

    Attributes:
        url (str | Unset): http(s) address that receives the deliveries (POST, JSON); loopback and private addresses
            only with --allow-private-connector-urls
        event_types (list[WebhookPatchRequestEventTypesItem] | Unset): the agent event types delivered, e.g.
            task_completed, error, approval_requested
        agents (list[str] | None | Unset): the agents of the namespace whose events are delivered; absent: all of them
        secret_ref (WebhookPatchRequestSecretRef | Unset): the signing key: a key of a secret in the same namespace
            ("whsec_<base64>" is decoded, as Standard Webhooks keys are)
    """

    url: str | Unset = UNSET
    event_types: list[WebhookPatchRequestEventTypesItem] | Unset = UNSET
    agents: list[str] | None | Unset = UNSET
    secret_ref: WebhookPatchRequestSecretRef | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        url = self.url

        event_types: list[str] | Unset = UNSET
        if not isinstance(self.event_types, Unset):
            event_types = []
            for event_types_item_data in self.event_types:
                event_types_item = event_types_item_data.value
                event_types.append(event_types_item)

        agents: list[str] | None | Unset
        if isinstance(self.agents, Unset):
            agents = UNSET
        elif isinstance(self.agents, list):
            agents = self.agents

        else:
            agents = self.agents

        secret_ref: dict[str, Any] | Unset = UNSET
        if not isinstance(self.secret_ref, Unset):
            secret_ref = self.secret_ref.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if url is not UNSET:
            field_dict["url"] = url
        if event_types is not UNSET:
            field_dict["eventTypes"] = event_types
        if agents is not UNSET:
            field_dict["agents"] = agents
        if secret_ref is not UNSET:
            field_dict["secretRef"] = secret_ref

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.webhook_patch_request_secret_ref import (
            WebhookPatchRequestSecretRef,
        )

        d = dict(src_dict)
        url = d.pop("url", UNSET)

        _event_types = d.pop("eventTypes", UNSET)
        event_types: list[WebhookPatchRequestEventTypesItem] | Unset = UNSET
        if _event_types is not UNSET:
            event_types = []
            for event_types_item_data in _event_types:
                event_types_item = WebhookPatchRequestEventTypesItem(
                    event_types_item_data
                )

                event_types.append(event_types_item)

        def _parse_agents(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                agents_type_0 = cast(list[str], data)

                return agents_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        agents = _parse_agents(d.pop("agents", UNSET))

        _secret_ref = d.pop("secretRef", UNSET)
        secret_ref: WebhookPatchRequestSecretRef | Unset
        if isinstance(_secret_ref, Unset):
            secret_ref = UNSET
        else:
            secret_ref = WebhookPatchRequestSecretRef.from_dict(_secret_ref)

        webhook_patch_request = cls(
            url=url,
            event_types=event_types,
            agents=agents,
            secret_ref=secret_ref,
        )

        return webhook_patch_request
