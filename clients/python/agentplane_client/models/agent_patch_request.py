from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.agent_patch_request_lifecycle import AgentPatchRequestLifecycle
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_patch_request_approval_type_0 import (
        AgentPatchRequestApprovalType0,
    )
    from ..models.agent_patch_request_budget_type_0 import AgentPatchRequestBudgetType0


T = TypeVar("T", bound="AgentPatchRequest")


@_attrs_define
class AgentPatchRequest:
    """
    Attributes:
        connectors (list[str] | Unset): names of connectors to attach
        skills (list[str] | Unset): names of skills in the agent's namespace to attach (at most 16)
        memories (list[str] | Unset): names of memories in the agent's namespace to attach (at most 16)
        lifecycle (AgentPatchRequestLifecycle | Unset): "Sleep", "Wake", "AutoDelete", or "" for always on
        model (str | Unset): a model identifier without whitespace or control characters, at most 256 characters, such
            as "claude-sonnet-4-5" (the default)
        system_prompt (str | Unset): placed before the built-in role prompt, at most 65536 characters
        priority (int | Unset): an integer from -1000 to 1000, default 0: when the agent's work waits for a cap, higher
            goes first within its namespace
        approval (AgentPatchRequestApprovalType0 | None | Unset): the approval policy from the next task on; null
            removes it
        budget (AgentPatchRequestBudgetType0 | None | Unset): checked by the model proxy before every model request: a
            budget_warning event at 80%, the onExceed action at 100% (docs/budgets.md); null removes it
        instructions (str | Unset): a follow-up for the running task, or a new task when the agent is idle
    """

    connectors: list[str] | Unset = UNSET
    skills: list[str] | Unset = UNSET
    memories: list[str] | Unset = UNSET
    lifecycle: AgentPatchRequestLifecycle | Unset = UNSET
    model: str | Unset = UNSET
    system_prompt: str | Unset = UNSET
    priority: int | Unset = UNSET
    approval: AgentPatchRequestApprovalType0 | None | Unset = UNSET
    budget: AgentPatchRequestBudgetType0 | None | Unset = UNSET
    instructions: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.agent_patch_request_approval_type_0 import (
            AgentPatchRequestApprovalType0,
        )
        from ..models.agent_patch_request_budget_type_0 import (
            AgentPatchRequestBudgetType0,
        )

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

        model = self.model

        system_prompt = self.system_prompt

        priority = self.priority

        approval: dict[str, Any] | None | Unset
        if isinstance(self.approval, Unset):
            approval = UNSET
        elif isinstance(self.approval, AgentPatchRequestApprovalType0):
            approval = self.approval.to_dict()
        else:
            approval = self.approval

        budget: dict[str, Any] | None | Unset
        if isinstance(self.budget, Unset):
            budget = UNSET
        elif isinstance(self.budget, AgentPatchRequestBudgetType0):
            budget = self.budget.to_dict()
        else:
            budget = self.budget

        instructions = self.instructions

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if connectors is not UNSET:
            field_dict["connectors"] = connectors
        if skills is not UNSET:
            field_dict["skills"] = skills
        if memories is not UNSET:
            field_dict["memories"] = memories
        if lifecycle is not UNSET:
            field_dict["lifecycle"] = lifecycle
        if model is not UNSET:
            field_dict["model"] = model
        if system_prompt is not UNSET:
            field_dict["systemPrompt"] = system_prompt
        if priority is not UNSET:
            field_dict["priority"] = priority
        if approval is not UNSET:
            field_dict["approval"] = approval
        if budget is not UNSET:
            field_dict["budget"] = budget
        if instructions is not UNSET:
            field_dict["instructions"] = instructions

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent_patch_request_approval_type_0 import (
            AgentPatchRequestApprovalType0,
        )
        from ..models.agent_patch_request_budget_type_0 import (
            AgentPatchRequestBudgetType0,
        )

        d = dict(src_dict)
        connectors = cast(list[str], d.pop("connectors", UNSET))

        skills = cast(list[str], d.pop("skills", UNSET))

        memories = cast(list[str], d.pop("memories", UNSET))

        _lifecycle = d.pop("lifecycle", UNSET)
        lifecycle: AgentPatchRequestLifecycle | Unset
        if isinstance(_lifecycle, Unset):
            lifecycle = UNSET
        else:
            lifecycle = AgentPatchRequestLifecycle(_lifecycle)

        model = d.pop("model", UNSET)

        system_prompt = d.pop("systemPrompt", UNSET)

        priority = d.pop("priority", UNSET)

        def _parse_approval(
            data: object,
        ) -> AgentPatchRequestApprovalType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approval_type_0 = AgentPatchRequestApprovalType0.from_dict(data)

                return approval_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentPatchRequestApprovalType0 | None | Unset, data)

        approval = _parse_approval(d.pop("approval", UNSET))

        def _parse_budget(data: object) -> AgentPatchRequestBudgetType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                budget_type_0 = AgentPatchRequestBudgetType0.from_dict(data)

                return budget_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgentPatchRequestBudgetType0 | None | Unset, data)

        budget = _parse_budget(d.pop("budget", UNSET))

        instructions = d.pop("instructions", UNSET)

        agent_patch_request = cls(
            connectors=connectors,
            skills=skills,
            memories=memories,
            lifecycle=lifecycle,
            model=model,
            system_prompt=system_prompt,
            priority=priority,
            approval=approval,
            budget=budget,
            instructions=instructions,
        )

        return agent_patch_request
