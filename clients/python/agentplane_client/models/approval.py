from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.approval_decision import ApprovalDecision
from ..models.approval_on_timeout import ApprovalOnTimeout
from ..types import UNSET, Unset

T = TypeVar("T", bound="Approval")


@_attrs_define
class Approval:
    """
    Attributes:
        id (str): the engine's tool-use id (the tool_call event's id)
        task (int):
        tool (str):
        requested_at (datetime.datetime):
        expires_at (datetime.datetime): when the onTimeout decision applies
        on_timeout (ApprovalOnTimeout): "allow" or "deny"
        input_ (Any | Unset): the tool's input (cut to 4 KiB of JSON; the approval_requested event carries all of it)
        decision (ApprovalDecision | Unset): "allow" or "deny"
        reason (str | Unset):
        decided_by (str | Unset): the user who decided, or system:agentplane:approval-timeout
        decided_at (datetime.datetime | Unset):
        handed_over (bool | Unset): the worker took the decision
    """

    id: str
    task: int
    tool: str
    requested_at: datetime.datetime
    expires_at: datetime.datetime
    on_timeout: ApprovalOnTimeout
    input_: Any | Unset = UNSET
    decision: ApprovalDecision | Unset = UNSET
    reason: str | Unset = UNSET
    decided_by: str | Unset = UNSET
    decided_at: datetime.datetime | Unset = UNSET
    handed_over: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        task = self.task

        tool = self.tool

        requested_at = self.requested_at.isoformat()

        expires_at = self.expires_at.isoformat()

        on_timeout = self.on_timeout.value

        input_ = self.input_

        decision: str | Unset = UNSET
        if not isinstance(self.decision, Unset):
            decision = self.decision.value

        reason = self.reason

        decided_by = self.decided_by

        decided_at: str | Unset = UNSET
        if not isinstance(self.decided_at, Unset):
            decided_at = self.decided_at.isoformat()

        handed_over = self.handed_over

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "task": task,
                "tool": tool,
                "requestedAt": requested_at,
                "expiresAt": expires_at,
                "onTimeout": on_timeout,
            }
        )
        if input_ is not UNSET:
            field_dict["input"] = input_
        if decision is not UNSET:
            field_dict["decision"] = decision
        if reason is not UNSET:
            field_dict["reason"] = reason
        if decided_by is not UNSET:
            field_dict["decidedBy"] = decided_by
        if decided_at is not UNSET:
            field_dict["decidedAt"] = decided_at
        if handed_over is not UNSET:
            field_dict["handedOver"] = handed_over

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        task = d.pop("task")

        tool = d.pop("tool")

        requested_at = datetime.datetime.fromisoformat(d.pop("requestedAt"))

        expires_at = datetime.datetime.fromisoformat(d.pop("expiresAt"))

        on_timeout = ApprovalOnTimeout(d.pop("onTimeout"))

        input_ = d.pop("input", UNSET)

        _decision = d.pop("decision", UNSET)
        decision: ApprovalDecision | Unset
        if isinstance(_decision, Unset):
            decision = UNSET
        else:
            decision = ApprovalDecision(_decision)

        reason = d.pop("reason", UNSET)

        decided_by = d.pop("decidedBy", UNSET)

        _decided_at = d.pop("decidedAt", UNSET)
        decided_at: datetime.datetime | Unset
        if isinstance(_decided_at, Unset):
            decided_at = UNSET
        else:
            decided_at = datetime.datetime.fromisoformat(_decided_at)

        handed_over = d.pop("handedOver", UNSET)

        approval = cls(
            id=id,
            task=task,
            tool=tool,
            requested_at=requested_at,
            expires_at=expires_at,
            on_timeout=on_timeout,
            input_=input_,
            decision=decision,
            reason=reason,
            decided_by=decided_by,
            decided_at=decided_at,
            handed_over=handed_over,
        )

        approval.additional_properties = d
        return approval

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
