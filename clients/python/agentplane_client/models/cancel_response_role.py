from enum import StrEnum


class CancelResponseRole(StrEnum):
    MANAGER = "manager"
    WORKER = "worker"

    def __str__(self) -> str:
        return str(self.value)
