from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.webhook_response_event_types_item import WebhookResponseEventTypesItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.webhook_response_cursors import WebhookResponseCursors
    from ..models.webhook_response_last_delivery import WebhookResponseLastDelivery
    from ..models.webhook_response_last_failures_item import (
        WebhookResponseLastFailuresItem,
    )
    from ..models.webhook_response_secret_ref import WebhookResponseSecretRef


T = TypeVar("T", bound="WebhookResponse")


@_attrs_define
class WebhookResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        url (str): http(s) address that receives the deliveries (POST, JSON); loopback and private addresses only with
            --allow-private-connector-urls
        event_types (list[WebhookResponseEventTypesItem]): the agent event types delivered, e.g. task_completed, error,
            approval_requested
        secret_ref (WebhookResponseSecretRef): the signing key: a key of a secret in the same namespace
            ("whsec_<base64>" is decoded, as Standard Webhooks keys are)
        agents (list[str] | Unset): the agents of the namespace whose events are delivered; absent: all of them
        delivered (int | Unset): events the receiver acknowledged (2xx)
        failed (int | Unset): attempts that failed (retried)
        last_delivery (WebhookResponseLastDelivery | Unset): the latest acknowledged delivery
        last_failures (list[WebhookResponseLastFailuresItem] | Unset): the latest failed attempts, newest last
        cursors (WebhookResponseCursors | Unset): per agent: the last event seq delivered (or passed over); a restart
            resumes after it
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    url: str
    event_types: list[WebhookResponseEventTypesItem]
    secret_ref: WebhookResponseSecretRef
    agents: list[str] | Unset = UNSET
    delivered: int | Unset = UNSET
    failed: int | Unset = UNSET
    last_delivery: WebhookResponseLastDelivery | Unset = UNSET
    last_failures: list[WebhookResponseLastFailuresItem] | Unset = UNSET
    cursors: WebhookResponseCursors | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        url = self.url

        event_types = []
        for event_types_item_data in self.event_types:
            event_types_item = event_types_item_data.value
            event_types.append(event_types_item)

        secret_ref = self.secret_ref.to_dict()

        agents: list[str] | Unset = UNSET
        if not isinstance(self.agents, Unset):
            agents = self.agents

        delivered = self.delivered

        failed = self.failed

        last_delivery: dict[str, Any] | Unset = UNSET
        if not isinstance(self.last_delivery, Unset):
            last_delivery = self.last_delivery.to_dict()

        last_failures: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.last_failures, Unset):
            last_failures = []
            for last_failures_item_data in self.last_failures:
                last_failures_item = last_failures_item_data.to_dict()
                last_failures.append(last_failures_item)

        cursors: dict[str, Any] | Unset = UNSET
        if not isinstance(self.cursors, Unset):
            cursors = self.cursors.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "url": url,
                "eventTypes": event_types,
                "secretRef": secret_ref,
            }
        )
        if agents is not UNSET:
            field_dict["agents"] = agents
        if delivered is not UNSET:
            field_dict["delivered"] = delivered
        if failed is not UNSET:
            field_dict["failed"] = failed
        if last_delivery is not UNSET:
            field_dict["lastDelivery"] = last_delivery
        if last_failures is not UNSET:
            field_dict["lastFailures"] = last_failures
        if cursors is not UNSET:
            field_dict["cursors"] = cursors

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.webhook_response_cursors import WebhookResponseCursors
        from ..models.webhook_response_last_delivery import WebhookResponseLastDelivery
        from ..models.webhook_response_last_failures_item import (
            WebhookResponseLastFailuresItem,
        )
        from ..models.webhook_response_secret_ref import WebhookResponseSecretRef

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        url = d.pop("url")

        event_types = []
        _event_types = d.pop("eventTypes")
        for event_types_item_data in _event_types:
            event_types_item = WebhookResponseEventTypesItem(event_types_item_data)

            event_types.append(event_types_item)

        secret_ref = WebhookResponseSecretRef.from_dict(d.pop("secretRef"))

        agents = cast(list[str], d.pop("agents", UNSET))

        delivered = d.pop("delivered", UNSET)

        failed = d.pop("failed", UNSET)

        _last_delivery = d.pop("lastDelivery", UNSET)
        last_delivery: WebhookResponseLastDelivery | Unset
        if isinstance(_last_delivery, Unset):
            last_delivery = UNSET
        else:
            last_delivery = WebhookResponseLastDelivery.from_dict(_last_delivery)

        _last_failures = d.pop("lastFailures", UNSET)
        last_failures: list[WebhookResponseLastFailuresItem] | Unset = UNSET
        if _last_failures is not UNSET:
            last_failures = []
            for last_failures_item_data in _last_failures:
                last_failures_item = WebhookResponseLastFailuresItem.from_dict(
                    last_failures_item_data
                )

                last_failures.append(last_failures_item)

        _cursors = d.pop("cursors", UNSET)
        cursors: WebhookResponseCursors | Unset
        if isinstance(_cursors, Unset):
            cursors = UNSET
        else:
            cursors = WebhookResponseCursors.from_dict(_cursors)

        webhook_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            url=url,
            event_types=event_types,
            secret_ref=secret_ref,
            agents=agents,
            delivered=delivered,
            failed=failed,
            last_delivery=last_delivery,
            last_failures=last_failures,
            cursors=cursors,
        )

        webhook_response.additional_properties = d
        return webhook_response

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
