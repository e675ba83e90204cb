from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cancel_response_lifecycle import CancelResponseLifecycle
from ..models.cancel_response_role import CancelResponseRole
from ..models.cancel_response_status import CancelResponseStatus
from ..models.cancel_response_task_status import CancelResponseTaskStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cancel_response_approval import CancelResponseApproval
    from ..models.cancel_response_approvals_item import CancelResponseApprovalsItem
    from ..models.cancel_response_budget import CancelResponseBudget
    from ..models.cancel_response_spend import CancelResponseSpend


T = TypeVar("T", bound="CancelResponse")


@_attrs_define
class CancelResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        model (str):
        status (CancelResponseStatus):
        created_at (datetime.datetime):
        cancelled (bool): false when no task was in progress (nothing to cancel)
        message (str): what happened, e.g. "nothing was running: ..."
        task_status (CancelResponseTaskStatus | Unset):
        last_task_message (str | Unset):
        role (CancelResponseRole | Unset):
        template_ref (str | Unset):
        connectors (list[str] | Unset):
        skills (list[str] | Unset): names of skills in the agent's namespace to attach (at most 16)
        memories (list[str] | Unset): names of memories in the agent's namespace to attach (at most 16)
        lifecycle (CancelResponseLifecycle | Unset):
        priority (int | Unset):
        queue_position (int | Unset): while Queued: the agent's place in its namespace's line
        approval (CancelResponseApproval | Unset): tool calls that wait for a person to allow or deny them
            (docs/approvals.md)
        approvals (list[CancelResponseApprovalsItem] | Unset):
        budget (CancelResponseBudget | Unset): checked by the model proxy before every model request: a budget_warning
            event at 80%, the onExceed action at 100% (docs/budgets.md)
        spend (CancelResponseSpend | Unset): model spend of the agent's ended tasks, metered by the model proxy: in all,
            this UTC day and this UTC month
        from_checkpoint (str | Unset): the checkpoint it started from, "<agent>/<checkpoint>"
    """

    name: str
    namespace: str
    model: str
    status: CancelResponseStatus
    created_at: datetime.datetime
    cancelled: bool
    message: str
    task_status: CancelResponseTaskStatus | Unset = UNSET
    last_task_message: str | Unset = UNSET
    role: CancelResponseRole | Unset = UNSET
    template_ref: str | Unset = UNSET
    connectors: list[str] | Unset = UNSET
    skills: list[str] | Unset = UNSET
    memories: list[str] | Unset = UNSET
    lifecycle: CancelResponseLifecycle | Unset = UNSET
    priority: int | Unset = UNSET
    queue_position: int | Unset = UNSET
    approval: CancelResponseApproval | Unset = UNSET
    approvals: list[CancelResponseApprovalsItem] | Unset = UNSET
    budget: CancelResponseBudget | Unset = UNSET
    spend: CancelResponseSpend | Unset = UNSET
    from_checkpoint: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        model = self.model

        status = self.status.value

        created_at = self.created_at.isoformat()

        cancelled = self.cancelled

        message = self.message

        task_status: str | Unset = UNSET
        if not isinstance(self.task_status, Unset):
            task_status = self.task_status.value

        last_task_message = self.last_task_message

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        template_ref = self.template_ref

        connectors: list[str] | Unset = UNSET
        if not isinstance(self.connectors, Unset):
            connectors = self.connectors

        skills: list[str] | Unset = UNSET
        if not isinstance(self.skills, Unset):
            skills = self.skills

        memories: list[str] | Unset = UNSET
        if not isinstance(self.memories, Unset):
            memories = self.memories

        lifecycle: str | Unset = UNSET
        if not isinstance(self.lifecycle, Unset):
            lifecycle = self.lifecycle.value

        priority = self.priority

        queue_position = self.queue_position

        approval: dict[str, Any] | Unset = UNSET
        if not isinstance(self.approval, Unset):
            approval = self.approval.to_dict()

        approvals: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.approvals, Unset):
            approvals = []
            for approvals_item_data in self.approvals:
                approvals_item = approvals_item_data.to_dict()
                approvals.append(approvals_item)

        budget: dict[str, Any] | Unset = UNSET
        if not isinstance(self.budget, Unset):
            budget = self.budget.to_dict()

        spend: dict[str, Any] | Unset = UNSET
        if not isinstance(self.spend, Unset):
            spend = self.spend.to_dict()

        from_checkpoint = self.from_checkpoint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "model": model,
                "status": status,
                "createdAt": created_at,
                "cancelled": cancelled,
                "message": message,
            }
        )
        if task_status is not UNSET:
            field_dict["taskStatus"] = task_status
        if last_task_message is not UNSET:
            field_dict["lastTaskMessage"] = last_task_message
        if role is not UNSET:
            field_dict["role"] = role
        if template_ref is not UNSET:
            field_dict["templateRef"] = template_ref
        if connectors is not UNSET:
            field_dict["connectors"] = connectors
        if skills is not UNSET:
            field_dict["skills"] = skills
        if memories is not UNSET:
            field_dict["memories"] = memories
        if lifecycle is not UNSET:
            field_dict["lifecycle"] = lifecycle
        if priority is not UNSET:
            field_dict["priority"] = priority
        if queue_position is not UNSET:
            field_dict["queuePosition"] = queue_position
        if approval is not UNSET:
            field_dict["approval"] = approval
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if budget is not UNSET:
            field_dict["budget"] = budget
        if spend is not UNSET:
            field_dict["spend"] = spend
        if from_checkpoint is not UNSET:
            field_dict["fromCheckpoint"] = from_checkpoint

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cancel_response_approval import CancelResponseApproval
        from ..models.cancel_response_approvals_item import CancelResponseApprovalsItem
        from ..models.cancel_response_budget import CancelResponseBudget
        from ..models.cancel_response_spend import CancelResponseSpend

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        model = d.pop("model")

        status = CancelResponseStatus(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        cancelled = d.pop("cancelled")

        message = d.pop("message")

        _task_status = d.pop("taskStatus", UNSET)
        task_status: CancelResponseTaskStatus | Unset
        if isinstance(_task_status, Unset):
            task_status = UNSET
        else:
            task_status = CancelResponseTaskStatus(_task_status)

        last_task_message = d.pop("lastTaskMessage", UNSET)

        _role = d.pop("role", UNSET)
        role: CancelResponseRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = CancelResponseRole(_role)

        template_ref = d.pop("templateRef", UNSET)

        connectors = cast(list[str], d.pop("connectors", UNSET))

        skills = cast(list[str], d.pop("skills", UNSET))

        memories = cast(list[str], d.pop("memories", UNSET))

        _lifecycle = d.pop("lifecycle", UNSET)
        lifecycle: CancelResponseLifecycle | Unset
        if isinstance(_lifecycle, Unset):
            lifecycle = UNSET
        else:
            lifecycle = CancelResponseLifecycle(_lifecycle)

        priority = d.pop("priority", UNSET)

        queue_position = d.pop("queuePosition", UNSET)

        _approval = d.pop("approval", UNSET)
        approval: CancelResponseApproval | Unset
        if isinstance(_approval, Unset):
            approval = UNSET
        else:
            approval = CancelResponseApproval.from_dict(_approval)

        _approvals = d.pop("approvals", UNSET)
        approvals: list[CancelResponseApprovalsItem] | Unset = UNSET
        if _approvals is not UNSET:
            approvals = []
            for approvals_item_data in _approvals:
                approvals_item = CancelResponseApprovalsItem.from_dict(
                    approvals_item_data
                )

                approvals.append(approvals_item)

        _budget = d.pop("budget", UNSET)
        budget: CancelResponseBudget | Unset
        if isinstance(_budget, Unset):
            budget = UNSET
        else:
            budget = CancelResponseBudget.from_dict(_budget)

        _spend = d.pop("spend", UNSET)
        spend: CancelResponseSpend | Unset
        if isinstance(_spend, Unset):
            spend = UNSET
        else:
            spend = CancelResponseSpend.from_dict(_spend)

        from_checkpoint = d.pop("fromCheckpoint", UNSET)

        cancel_response = cls(
            name=name,
            namespace=namespace,
            model=model,
            status=status,
            created_at=created_at,
            cancelled=cancelled,
            message=message,
            task_status=task_status,
            last_task_message=last_task_message,
            role=role,
            template_ref=template_ref,
            connectors=connectors,
            skills=skills,
            memories=memories,
            lifecycle=lifecycle,
            priority=priority,
            queue_position=queue_position,
            approval=approval,
            approvals=approvals,
            budget=budget,
            spend=spend,
            from_checkpoint=from_checkpoint,
        )

        cancel_response.additional_properties = d
        return cancel_response

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
