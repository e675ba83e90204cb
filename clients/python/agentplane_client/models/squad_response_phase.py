from enum import StrEnum


class SquadResponsePhase(StrEnum):
    ORPHANED = "Orphaned"
    PENDING = "Pending"
    RUNNING = "Running"
    SLEEPING = "Sleeping"

    def __str__(self) -> str:
        return str(self.value)
