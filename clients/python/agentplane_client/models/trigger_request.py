from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.trigger_request_secret_ref import TriggerRequestSecretRef
    from ..models.trigger_request_signature import TriggerRequestSignature


T = TypeVar("T", bound="TriggerRequest")


@_attrs_define
class TriggerRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        agent (str): the agent (same namespace) that each accepted delivery gives a task
        secret_ref (TriggerRequestSecretRef): the shared secret: a key of a secret in the same namespace
        instructions (str): the task's instructions; {{a.b.c}} is the payload's field at that dotted path (an array
            index is a number), empty when absent
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        signature (TriggerRequestSignature | Unset): how the sender signs the raw body; defaults are GitHub's (X-Hub-
            Signature-256: "sha256=<hex HMAC-SHA256>")
        delivery_id_header (str | Unset): the header naming the delivery: a repeated id starts nothing; default
            X-GitHub-Delivery
    """

    name: str
    agent: str
    secret_ref: TriggerRequestSecretRef
    instructions: str
    namespace: str | Unset = UNSET
    signature: TriggerRequestSignature | Unset = UNSET
    delivery_id_header: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        agent = self.agent

        secret_ref = self.secret_ref.to_dict()

        instructions = self.instructions

        namespace = self.namespace

        signature: dict[str, Any] | Unset = UNSET
        if not isinstance(self.signature, Unset):
            signature = self.signature.to_dict()

        delivery_id_header = self.delivery_id_header

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "agent": agent,
                "secretRef": secret_ref,
                "instructions": instructions,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if signature is not UNSET:
            field_dict["signature"] = signature
        if delivery_id_header is not UNSET:
            field_dict["deliveryIdHeader"] = delivery_id_header

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.trigger_request_secret_ref import TriggerRequestSecretRef
        from ..models.trigger_request_signature import TriggerRequestSignature

        d = dict(src_dict)
        name = d.pop("name")

        agent = d.pop("agent")

        secret_ref = TriggerRequestSecretRef.from_dict(d.pop("secretRef"))

        instructions = d.pop("instructions")

        namespace = d.pop("namespace", UNSET)

        _signature = d.pop("signature", UNSET)
        signature: TriggerRequestSignature | Unset
        if isinstance(_signature, Unset):
            signature = UNSET
        else:
            signature = TriggerRequestSignature.from_dict(_signature)

        delivery_id_header = d.pop("deliveryIdHeader", UNSET)

        trigger_request = cls(
            name=name,
            agent=agent,
            secret_ref=secret_ref,
            instructions=instructions,
            namespace=namespace,
            signature=signature,
            delivery_id_header=delivery_id_header,
        )

        return trigger_request
