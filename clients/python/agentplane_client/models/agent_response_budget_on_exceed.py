from enum import StrEnum


class AgentResponseBudgetOnExceed(StrEnum):
    PAUSE = "Pause"
    STOP = "Stop"

    def __str__(self) -> str:
        return str(self.value)
