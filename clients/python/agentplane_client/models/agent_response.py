from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_response_lifecycle import AgentResponseLifecycle
from ..models.agent_response_role import AgentResponseRole
from ..models.agent_response_status import AgentResponseStatus
from ..models.agent_response_task_status import AgentResponseTaskStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_response_approval import AgentResponseApproval
    from ..models.agent_response_approvals_item import AgentResponseApprovalsItem
    from ..models.agent_response_budget import AgentResponseBudget
    from ..models.agent_response_spend import AgentResponseSpend


T = TypeVar("T", bound="AgentResponse")


@_attrs_define
class AgentResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        model (str):
        status (AgentResponseStatus):
        created_at (datetime.datetime):
        task_status (AgentResponseTaskStatus | Unset):
        last_task_message (str | Unset):
        role (AgentResponseRole | Unset):
        template_ref (str | Unset):
        connectors (list[str] | Unset):
        skills (list[str] | Unset): names of skills in the agent's namespace to attach (at most 16)
        memories (list[str] | Unset): names of memories in the agent's namespace to attach (at most 16)
        lifecycle (AgentResponseLifecycle | Unset):
        priority (int | Unset):
        queue_position (int | Unset): while Queued: the agent's place in its namespace's line
        approval (AgentResponseApproval | Unset): tool calls that wait for a person to allow or deny them
            (docs/approvals.md)
        approvals (list[AgentResponseApprovalsItem] | Unset):
        budget (AgentResponseBudget | Unset): checked by the model proxy before every model request: a budget_warning
            event at 80%, the onExceed action at 100% (docs/budgets.md)
        spend (AgentResponseSpend | Unset): model spend of the agent's ended tasks, metered by the model proxy: in all,
            this UTC day and this UTC month
        from_checkpoint (str | Unset): the checkpoint it started from, "<agent>/<checkpoint>"
    """

    name: str
    namespace: str
    model: str
    status: AgentResponseStatus
    created_at: datetime.datetime
    task_status: AgentResponseTaskStatus | Unset = UNSET
    last_task_message: str | Unset = UNSET
    role: AgentResponseRole | Unset = UNSET
    template_ref: str | Unset = UNSET
    connectors: list[str] | Unset = UNSET
    skills: list[str] | Unset = UNSET
    memories: list[str] | Unset = UNSET
    lifecycle: AgentResponseLifecycle | Unset = UNSET
    priority: int | Unset = UNSET
    queue_position: int | Unset = UNSET
    approval: AgentResponseApproval | Unset = UNSET
    approvals: list[AgentResponseApprovalsItem] | Unset = UNSET
    budget: AgentResponseBudget | Unset = UNSET
    spend: AgentResponseSpend | Unset = UNSET
    from_checkpoint: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        model = self.model

        status = self.status.value

        created_at = self.created_at.isoformat()

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
        from ..models.agent_response_approval import AgentResponseApproval
        from ..models.agent_response_approvals_item import AgentResponseApprovalsItem
        from ..models.agent_response_budget import AgentResponseBudget
        from ..models.agent_response_spend import AgentResponseSpend

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        model = d.pop("model")

        status = AgentResponseStatus(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        _task_status = d.pop("taskStatus", UNSET)
        task_status: AgentResponseTaskStatus | Unset
        if isinstance(_task_status, Unset):
            task_status = UNSET
        else:
            task_status = AgentResponseTaskStatus(_task_status)

        last_task_message = d.pop("lastTaskMessage", UNSET)

        _role = d.pop("role", UNSET)
        role: AgentResponseRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = AgentResponseRole(_role)

        template_ref = d.pop("templateRef", UNSET)

        connectors = cast(list[str], d.pop("connectors", UNSET))

        skills = cast(list[str], d.pop("skills", UNSET))

        memories = cast(list[str], d.pop("memories", UNSET))

        _lifecycle = d.pop("lifecycle", UNSET)
        lifecycle: AgentResponseLifecycle | Unset
        if isinstance(_lifecycle, Unset):
            lifecycle = UNSET
        else:
            lifecycle = AgentResponseLifecycle(_lifecycle)

        priority = d.pop("priority", UNSET)

        queue_position = d.pop("queuePosition", UNSET)

        _approval = d.pop("approval", UNSET)
        approval: AgentResponseApproval | Unset
        if isinstance(_approval, Unset):
            approval = UNSET
        else:
            approval = AgentResponseApproval.from_dict(_approval)

        _approvals = d.pop("approvals", UNSET)
        approvals: list[AgentResponseApprovalsItem] | Unset = UNSET
        if _approvals is not UNSET:
            approvals = []
            for approvals_item_data in _approvals:
                approvals_item = AgentResponseApprovalsItem.from_dict(
                    approvals_item_data
                )

                approvals.append(approvals_item)

        _budget = d.pop("budget", UNSET)
        budget: AgentResponseBudget | Unset
        if isinstance(_budget, Unset):
            budget = UNSET
        else:
            budget = AgentResponseBudget.from_dict(_budget)

        _spend = d.pop("spend", UNSET)
        spend: AgentResponseSpend | Unset
        if isinstance(_spend, Unset):
            spend = UNSET
        else:
            spend = AgentResponseSpend.from_dict(_spend)

        from_checkpoint = d.pop("fromCheckpoint", UNSET)

        agent_response = cls(
            name=name,
            namespace=namespace,
            model=model,
            status=status,
            created_at=created_at,
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

        agent_response.additional_properties = d
        return agent_response

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
