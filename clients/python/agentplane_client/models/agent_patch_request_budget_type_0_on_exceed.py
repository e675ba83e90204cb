from enum import StrEnum


class AgentPatchRequestBudgetType0OnExceed(StrEnum):
    PAUSE = "Pause"
    STOP = "Stop"

    def __str__(self) -> str:
        return str(self.value)
