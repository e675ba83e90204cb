from enum import StrEnum


class AgentPatchRequestApprovalType0OnTimeout(StrEnum):
    ALLOW = "allow"
    DENY = "deny"

    def __str__(self) -> str:
        return str(self.value)
