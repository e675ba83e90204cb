from enum import StrEnum


class SchedulePatchRequestConcurrencyPolicy(StrEnum):
    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"

    def __str__(self) -> str:
        return str(self.value)
