from enum import StrEnum


class CancelResponseStatus(StrEnum):
    FAILED = "Failed"
    PAUSED = "Paused"
    PENDING = "Pending"
    QUEUED = "Queued"
    RUNNING = "Running"
    SLEEPING = "Sleeping"

    def __str__(self) -> str:
        return str(self.value)
