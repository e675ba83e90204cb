from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.approval_decision_request_decision import ApprovalDecisionRequestDecision
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalDecisionRequest")


@_attrs_define
class ApprovalDecisionRequest:
    """
    Attributes:
        decision (ApprovalDecisionRequestDecision): "allow" or "deny"
        reason (str | Unset): why; a deny passes it to the model
    """

    decision: ApprovalDecisionRequestDecision
    reason: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.value

        reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
            }
        )
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        decision = ApprovalDecisionRequestDecision(d.pop("decision"))

        reason = d.pop("reason", UNSET)

        approval_decision_request = cls(
            decision=decision,
            reason=reason,
        )

        return approval_decision_request
