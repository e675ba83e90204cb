from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.trigger_patch_request_secret_ref import TriggerPatchRequestSecretRef
    from ..models.trigger_patch_request_signature import TriggerPatchRequestSignature


T = TypeVar("T", bound="TriggerPatchRequest")


@_attrs_define
class TriggerPatchRequest:
    """
    Attributes:
        agent (str | Unset): the agent (same namespace) that each accepted delivery gives a task
        secret_ref (TriggerPatchRequestSecretRef | Unset): the shared secret: a key of a secret in the same namespace
        signature (TriggerPatchRequestSignature | Unset): how the sender signs the raw body; defaults are GitHub's
            (X-Hub-Signature-256: "sha256=<hex HMAC-SHA256>")
        delivery_id_header (str | Unset): the header naming the delivery: a repeated id starts nothing; default
            X-GitHub-Delivery
        instructions (str | Unset): the task's instructions; {{a.b.c}} is the payload's field at that dotted path (an
            array index is a number), empty when absent
    """

    agent: str | Unset = UNSET
    secret_ref: TriggerPatchRequestSecretRef | Unset = UNSET
    signature: TriggerPatchRequestSignature | Unset = UNSET
    delivery_id_header: str | Unset = UNSET
    instructions: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        secret_ref: dict[str, Any] | Unset = UNSET
        if not isinstance(self.secret_ref, Unset):
            secret_ref = self.secret_ref.to_dict()

        signature: dict[str, Any] | Unset = UNSET
        if not isinstance(self.signature, Unset):
            signature = self.signature.to_dict()

        delivery_id_header = self.delivery_id_header

        instructions = self.instructions

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if agent is not UNSET:
            field_dict["agent"] = agent
        if secret_ref is not UNSET:
            field_dict["secretRef"] = secret_ref
        if signature is not UNSET:
            field_dict["signature"] = signature
        if delivery_id_header is not UNSET:
            field_dict["deliveryIdHeader"] = delivery_id_header
        if instructions is not UNSET:
            field_dict["instructions"] = instructions

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.trigger_patch_request_secret_ref import (
            TriggerPatchRequestSecretRef,
        )
        from ..models.trigger_patch_request_signature import (
            TriggerPatchRequestSignature,
        )

        d = dict(src_dict)
        agent = d.pop("agent", UNSET)

        _secret_ref = d.pop("secretRef", UNSET)
        secret_ref: TriggerPatchRequestSecretRef | Unset
        if isinstance(_secret_ref, Unset):
            secret_ref = UNSET
        else:
            secret_ref = TriggerPatchRequestSecretRef.from_dict(_secret_ref)

        _signature = d.pop("signature", UNSET)
        signature: TriggerPatchRequestSignature | Unset
        if isinstance(_signature, Unset):
            signature = UNSET
        else:
            signature = TriggerPatchRequestSignature.from_dict(_signature)

        delivery_id_header = d.pop("deliveryIdHeader", UNSET)

        instructions = d.pop("instructions", UNSET)

        trigger_patch_request = cls(
            agent=agent,
            secret_ref=secret_ref,
            signature=signature,
            delivery_id_header=delivery_id_header,
            instructions=instructions,
        )

        return trigger_patch_request
