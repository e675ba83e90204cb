from enum import StrEnum


class MessageResponseDelivery(StrEnum):
    FOLLOWUP = "followUp"
    QUEUED = "queued"
    TASK = "task"

    def __str__(self) -> str:
        return str(self.value)
