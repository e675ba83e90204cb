from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.trigger_response_counts import TriggerResponseCounts
    from ..models.trigger_response_last_delivery import TriggerResponseLastDelivery
    from ..models.trigger_response_secret_ref import TriggerResponseSecretRef
    from ..models.trigger_response_signature import TriggerResponseSignature


T = TypeVar("T", bound="TriggerResponse")


@_attrs_define
class TriggerResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        hook_path (str): where senders POST
        agent (str): the agent (same namespace) that each accepted delivery gives a task
        secret_ref (TriggerResponseSecretRef): the shared secret: a key of a secret in the same namespace
        instructions (str): the task's instructions; {{a.b.c}} is the payload's field at that dotted path (an array
            index is a number), empty when absent
        signature (TriggerResponseSignature | Unset): how the sender signs the raw body; defaults are GitHub's (X-Hub-
            Signature-256: "sha256=<hex HMAC-SHA256>")
        delivery_id_header (str | Unset): the header naming the delivery: a repeated id starts nothing; default
            X-GitHub-Delivery
        last_delivery (TriggerResponseLastDelivery | Unset): the latest delivery: when, its id and what came of it
        counts (TriggerResponseCounts | Unset): deliveries by result (Started, Duplicate, BadSignature, AgentBusy,
            AgentMissing, SecretMissing, BadPayload)
        seen_deliveries (list[str] | Unset): the latest 256 delivery ids that started a task; a replay of one starts
            nothing
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    hook_path: str
    agent: str
    secret_ref: TriggerResponseSecretRef
    instructions: str
    signature: TriggerResponseSignature | Unset = UNSET
    delivery_id_header: str | Unset = UNSET
    last_delivery: TriggerResponseLastDelivery | Unset = UNSET
    counts: TriggerResponseCounts | Unset = UNSET
    seen_deliveries: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        hook_path = self.hook_path

        agent = self.agent

        secret_ref = self.secret_ref.to_dict()

        instructions = self.instructions

        signature: dict[str, Any] | Unset = UNSET
        if not isinstance(self.signature, Unset):
            signature = self.signature.to_dict()

        delivery_id_header = self.delivery_id_header

        last_delivery: dict[str, Any] | Unset = UNSET
        if not isinstance(self.last_delivery, Unset):
            last_delivery = self.last_delivery.to_dict()

        counts: dict[str, Any] | Unset = UNSET
        if not isinstance(self.counts, Unset):
            counts = self.counts.to_dict()

        seen_deliveries: list[str] | Unset = UNSET
        if not isinstance(self.seen_deliveries, Unset):
            seen_deliveries = self.seen_deliveries

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "hookPath": hook_path,
                "agent": agent,
                "secretRef": secret_ref,
                "instructions": instructions,
            }
        )
        if signature is not UNSET:
            field_dict["signature"] = signature
        if delivery_id_header is not UNSET:
            field_dict["deliveryIdHeader"] = delivery_id_header
        if last_delivery is not UNSET:
            field_dict["lastDelivery"] = last_delivery
        if counts is not UNSET:
            field_dict["counts"] = counts
        if seen_deliveries is not UNSET:
            field_dict["seenDeliveries"] = seen_deliveries

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.trigger_response_counts import TriggerResponseCounts
        from ..models.trigger_response_last_delivery import TriggerResponseLastDelivery
        from ..models.trigger_response_secret_ref import TriggerResponseSecretRef
        from ..models.trigger_response_signature import TriggerResponseSignature

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        hook_path = d.pop("hookPath")

        agent = d.pop("agent")

        secret_ref = TriggerResponseSecretRef.from_dict(d.pop("secretRef"))

        instructions = d.pop("instructions")

        _signature = d.pop("signature", UNSET)
        signature: TriggerResponseSignature | Unset
        if isinstance(_signature, Unset):
            signature = UNSET
        else:
            signature = TriggerResponseSignature.from_dict(_signature)

        delivery_id_header = d.pop("deliveryIdHeader", UNSET)

        _last_delivery = d.pop("lastDelivery", UNSET)
        last_delivery: TriggerResponseLastDelivery | Unset
        if isinstance(_last_delivery, Unset):
            last_delivery = UNSET
        else:
            last_delivery = TriggerResponseLastDelivery.from_dict(_last_delivery)

        _counts = d.pop("counts", UNSET)
        counts: TriggerResponseCounts | Unset
        if isinstance(_counts, Unset):
            counts = UNSET
        else:
            counts = TriggerResponseCounts.from_dict(_counts)

        seen_deliveries = cast(list[str], d.pop("seenDeliveries", UNSET))

        trigger_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            hook_path=hook_path,
            agent=agent,
            secret_ref=secret_ref,
            instructions=instructions,
            signature=signature,
            delivery_id_header=delivery_id_header,
            last_delivery=last_delivery,
            counts=counts,
            seen_deliveries=seen_deliveries,
        )

        trigger_response.additional_properties = d
        return trigger_response

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
