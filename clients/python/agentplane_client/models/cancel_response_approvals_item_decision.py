from enum import StrEnum


class CancelResponseApprovalsItemDecision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"

    def __str__(self) -> str:
        return str(self.value)
