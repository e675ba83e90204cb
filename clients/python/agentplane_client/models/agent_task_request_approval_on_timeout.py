from enum import StrEnum


class AgentTaskRequestApprovalOnTimeout(StrEnum):
    ALLOW = "allow"
    DENY = "deny"

    def __str__(self) -> str:
        return str(self.value)
