from enum import StrEnum


class AgentCostResponseTasksItemOutcome(StrEnum):
    CANCELLED = "cancelled"
    COMPLETED = "completed"
    ERROR = "error"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)
