from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.squad_create_request_members_item_spec_approval_on_timeout import (
    SquadCreateRequestMembersItemSpecApprovalOnTimeout,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="SquadCreateRequestMembersItemSpecApproval")


@_attrs_define
class SquadCreateRequestMembersItemSpecApproval:
    """tool calls that wait for a person to allow or deny them (docs/approvals.md)

    Attributes:
        tools (list[str]): tool names needing approval; * matches any characters, e.g. ["Bash", "Write",
            "mcp__github__*"]
        allowed_commands (list[str] | Unset): Bash commands that never need approval, as patterns over the whole command
            (* any characters); one with a shell operator never matches
        timeout_seconds (int | Unset): how long a request waits for a decision, in seconds (default 600, at most 7 days)
        on_timeout (SquadCreateRequestMembersItemSpecApprovalOnTimeout | Unset): the decision once the timeout passes:
            "deny" (default) or "allow"
    """

    tools: list[str]
    allowed_commands: list[str] | Unset = UNSET
    timeout_seconds: int | Unset = UNSET
    on_timeout: SquadCreateRequestMembersItemSpecApprovalOnTimeout | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        tools = self.tools

        allowed_commands: list[str] | Unset = UNSET
        if not isinstance(self.allowed_commands, Unset):
            allowed_commands = self.allowed_commands

        timeout_seconds = self.timeout_seconds

        on_timeout: str | Unset = UNSET
        if not isinstance(self.on_timeout, Unset):
            on_timeout = self.on_timeout.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "tools": tools,
            }
        )
        if allowed_commands is not UNSET:
            field_dict["allowedCommands"] = allowed_commands
        if timeout_seconds is not UNSET:
            field_dict["timeoutSeconds"] = timeout_seconds
        if on_timeout is not UNSET:
            field_dict["onTimeout"] = on_timeout

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        tools = cast(list[str], d.pop("tools"))

        allowed_commands = cast(list[str], d.pop("allowedCommands", UNSET))

        timeout_seconds = d.pop("timeoutSeconds", UNSET)

        _on_timeout = d.pop("onTimeout", UNSET)
        on_timeout: SquadCreateRequestMembersItemSpecApprovalOnTimeout | Unset
        if isinstance(_on_timeout, Unset):
            on_timeout = UNSET
        else:
            on_timeout = SquadCreateRequestMembersItemSpecApprovalOnTimeout(_on_timeout)

        squad_create_request_members_item_spec_approval = cls(
            tools=tools,
            allowed_commands=allowed_commands,
            timeout_seconds=timeout_seconds,
            on_timeout=on_timeout,
        )

        return squad_create_request_members_item_spec_approval
