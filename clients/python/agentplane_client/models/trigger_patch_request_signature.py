from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.trigger_patch_request_signature_algorithm import (
    TriggerPatchRequestSignatureAlgorithm,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="TriggerPatchRequestSignature")


@_attrs_define
class TriggerPatchRequestSignature:
    """how the sender signs the raw body; defaults are GitHub's (X-Hub-Signature-256: "sha256=<hex HMAC-SHA256>")

    Attributes:
        header (str | Unset): the header carrying the signature; default X-Hub-Signature-256 (GitHub)
        algorithm (TriggerPatchRequestSignatureAlgorithm | Unset): HMAC-SHA256 of the raw body, hex; the only one
        prefix (str | Unset): what precedes the hex digest; default "sha256="
    """

    header: str | Unset = UNSET
    algorithm: TriggerPatchRequestSignatureAlgorithm | Unset = UNSET
    prefix: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        header = self.header

        algorithm: str | Unset = UNSET
        if not isinstance(self.algorithm, Unset):
            algorithm = self.algorithm.value

        prefix = self.prefix

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if header is not UNSET:
            field_dict["header"] = header
        if algorithm is not UNSET:
            field_dict["algorithm"] = algorithm
        if prefix is not UNSET:
            field_dict["prefix"] = prefix

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        header = d.pop("header", UNSET)

        _algorithm = d.pop("algorithm", UNSET)
        algorithm: TriggerPatchRequestSignatureAlgorithm | Unset
        if isinstance(_algorithm, Unset):
            algorithm = UNSET
        else:
            algorithm = TriggerPatchRequestSignatureAlgorithm(_algorithm)

        prefix = d.pop("prefix", UNSET)

        trigger_patch_request_signature = cls(
            header=header,
            algorithm=algorithm,
            prefix=prefix,
        )

        return trigger_patch_request_signature
