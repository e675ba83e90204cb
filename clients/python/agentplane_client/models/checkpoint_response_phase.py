from enum import StrEnum


class CheckpointResponsePhase(StrEnum):
    FAILED = "Failed"
    PENDING = "Pending"
    READY = "Ready"

    def __str__(self) -> str:
        return str(self.value)
