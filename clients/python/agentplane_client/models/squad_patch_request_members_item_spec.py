from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.squad_patch_request_members_item_spec_role import (
    SquadPatchRequestMembersItemSpecRole,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.squad_patch_request_members_item_spec_approval import (
        SquadPatchRequestMembersItemSpecApproval,
    )
    from ..models.squad_patch_request_members_item_spec_budget import (
        SquadPatchRequestMembersItemSpecBudget,
    )


T = TypeVar("T", bound="SquadPatchRequestMembersItemSpec")


@_attrs_define
class SquadPatchRequestMembersItemSpec:
    """the fields of a new agent (as on agent create); the squad controller creates it and turns the entry into a ref

    Attributes:
        instructions (str): the task prompt, at most 262144 characters
        system_prompt (str | Unset): placed before the built-in role prompt, at most 65536 characters
        model (str | Unset): a model identifier without whitespace or control characters, at most 256 characters, such
            as "claude-sonnet-4-5" (the default)
        template_ref (str | Unset): a DNS-1123 name (lowercase letters, digits, hyphens and dots, each dot-separated
            part starting and ending with a letter or digit, at most 253 characters) of a pod template: "default" (the
            default) or one the server is configured with
        role (SquadPatchRequestMembersItemSpecRole | Unset): manager (may orchestrate sub-agents) or worker; default
            manager
        connectors (list[str] | Unset): names of connectors to attach
        skills (list[str] | Unset): names of skills in the agent's namespace to attach (at most 16)
        memories (list[str] | Unset): names of memories in the agent's namespace to attach (at most 16)
        priority (int | Unset): an integer from -1000 to 1000, default 0: when the agent's work waits for a cap, higher
            goes first within its namespace
        approval (SquadPatchRequestMembersItemSpecApproval | Unset): tool calls that wait for a person to allow or deny
            them (docs/approvals.md)
        budget (SquadPatchRequestMembersItemSpecBudget | Unset): checked by the model proxy before every model request:
            a budget_warning event at 80%, the onExceed action at 100% (docs/budgets.md)
        from_checkpoint (str | Unset): "<agent>/<checkpoint>", each lowercase letters, digits and hyphens, starting and
            ending with a letter or digit, at most 63 characters: the new agent starts with a copy of that checkpoint's
            workspace and conversation; set on create only
    """

    instructions: str
    system_prompt: str | Unset = UNSET
    model: str | Unset = UNSET
    template_ref: str | Unset = UNSET
    role: SquadPatchRequestMembersItemSpecRole | Unset = UNSET
    connectors: list[str] | Unset = UNSET
    skills: list[str] | Unset = UNSET
    memories: list[str] | Unset = UNSET
    priority: int | Unset = UNSET
    approval: SquadPatchRequestMembersItemSpecApproval | Unset = UNSET
    budget: SquadPatchRequestMembersItemSpecBudget | Unset = UNSET
    from_checkpoint: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        instructions = self.instructions

        system_prompt = self.system_prompt

        model = self.model

        template_ref = self.template_ref

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        connectors: list[str] | Unset = UNSET
        if not isinstance(self.connectors, Unset):
            connectors = self.connectors

        skills: list[str] | Unset = UNSET
        if not isinstance(self.skills, Unset):
            skills = self.skills

        memories: list[str] | Unset = UNSET
        if not isinstance(self.memories, Unset):
            memories = self.memories

        priority = self.priority

        approval: dict[str, Any] | Unset = UNSET
        if not isinstance(self.approval, Unset):
            approval = self.approval.to_dict()

        budget: dict[str, Any] | Unset = UNSET
        if not isinstance(self.budget, Unset):
            budget = self.budget.to_dict()

        from_checkpoint = self.from_checkpoint

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "instructions": instructions,
            }
        )
        if system_prompt is not UNSET:
            field_dict["systemPrompt"] = system_prompt
        if model is not UNSET:
            field_dict["model"] = model
        if template_ref is not UNSET:
            field_dict["templateRef"] = template_ref
        if role is not UNSET:
            field_dict["role"] = role
        if connectors is not UNSET:
            field_dict["connectors"] = connectors
        if skills is not UNSET:
            field_dict["skills"] = skills
        if memories is not UNSET:
            field_dict["memories"] = memories
        if priority is not UNSET:
            field_dict["priority"] = priority
        if approval is not UNSET:
            field_dict["approval"] = approval
        if budget is not UNSET:
            field_dict["budget"] = budget
        if from_checkpoint is not UNSET:
            field_dict["fromCheckpoint"] = from_checkpoint

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_patch_request_members_item_spec_approval import (
            SquadPatchRequestMembersItemSpecApproval,
        )
        from ..models.squad_patch_request_members_item_spec_budget import (
            SquadPatchRequestMembersItemSpecBudget,
        )

        d = dict(src_dict)
        instructions = d.pop("instructions")

        system_prompt = d.pop("systemPrompt", UNSET)

        model = d.pop("model", UNSET)

        template_ref = d.pop("templateRef", UNSET)

        _role = d.pop("role", UNSET)
        role: SquadPatchRequestMembersItemSpecRole | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = SquadPatchRequestMembersItemSpecRole(_role)

        connectors = cast(list[str], d.pop("connectors", UNSET))

        skills = cast(list[str], d.pop("skills", UNSET))

        memories = cast(list[str], d.pop("memories", UNSET))

        priority = d.pop("priority", UNSET)

        _approval = d.pop("approval", UNSET)
        approval: SquadPatchRequestMembersItemSpecApproval | Unset
        if isinstance(_approval, Unset):
            approval = UNSET
        else:
            approval = SquadPatchRequestMembersItemSpecApproval.from_dict(_approval)

        _budget = d.pop("budget", UNSET)
        budget: SquadPatchRequestMembersItemSpecBudget | Unset
        if isinstance(_budget, Unset):
            budget = UNSET
        else:
            budget = SquadPatchRequestMembersItemSpecBudget.from_dict(_budget)

        from_checkpoint = d.pop("fromCheckpoint", UNSET)

        squad_patch_request_members_item_spec = cls(
            instructions=instructions,
            system_prompt=system_prompt,
            model=model,
            template_ref=template_ref,
            role=role,
            connectors=connectors,
            skills=skills,
            memories=memories,
            priority=priority,
            approval=approval,
            budget=budget,
            from_checkpoint=from_checkpoint,
        )

        return squad_patch_request_members_item_spec
