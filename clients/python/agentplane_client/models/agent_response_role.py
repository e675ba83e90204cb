from enum import StrEnum


class AgentResponseRole(StrEnum):
    MANAGER = "manager"
    WORKER = "worker"

    def __str__(self) -> str:
        return str(self.value)
