from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.webhook_request_event_types_item import WebhookRequestEventTypesItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.webhook_request_secret_ref import WebhookRequestSecretRef


T = TypeVar("T", bound="WebhookRequest")


@_attrs_define
class WebhookRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        url (str): http(s) address that receives the deliveries (POST, JSON); loopback and private addresses only with
            --allow-private-connector-urls
        event_types (list[WebhookRequestEventTypesItem]): the agent event types delivered, e.g. task_completed, error,
            approval_requested
        secret_ref (WebhookRequestSecretRef): the signing key: a key of a secret in the same namespace ("whsec_<base64>"
            is decoded, as Standard Webhooks keys are)
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        agents (list[str] | Unset): the agents of the namespace whose events are delivered; absent: all of them
    """

    name: str
    url: str
    event_types: list[WebhookRequestEventTypesItem]
    secret_ref: WebhookRequestSecretRef
    namespace: str | Unset = UNSET
    agents: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        url = self.url

        event_types = []
        for event_types_item_data in self.event_types:
            event_types_item = event_types_item_data.value
            event_types.append(event_types_item)

        secret_ref = self.secret_ref.to_dict()

        namespace = self.namespace

        agents: list[str] | Unset = UNSET
        if not isinstance(self.agents, Unset):
            agents = self.agents

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "url": url,
                "eventTypes": event_types,
                "secretRef": secret_ref,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if agents is not UNSET:
            field_dict["agents"] = agents

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.webhook_request_secret_ref import WebhookRequestSecretRef

        d = dict(src_dict)
        name = d.pop("name")

        url = d.pop("url")

        event_types = []
        _event_types = d.pop("eventTypes")
        for event_types_item_data in _event_types:
            event_types_item = WebhookRequestEventTypesItem(event_types_item_data)

            event_types.append(event_types_item)

        secret_ref = WebhookRequestSecretRef.from_dict(d.pop("secretRef"))

        namespace = d.pop("namespace", UNSET)

        agents = cast(list[str], d.pop("agents", UNSET))

        webhook_request = cls(
            name=name,
            url=url,
            event_types=event_types,
            secret_ref=secret_ref,
            namespace=namespace,
            agents=agents,
        )

        return webhook_request
