from enum import StrEnum


class AgentResponseTaskStatus(StrEnum):
    CANCELLED = "Cancelled"
    COMPLETE = "Complete"
    ERROR = "Error"
    INPROGRESS = "InProgress"
    VALUE_0 = ""

    def __str__(self) -> str:
        return str(self.value)
