from enum import StrEnum


class ScheduleResponseLastRunType0Outcome(StrEnum):
    CANCELLED = "Cancelled"
    COMPLETE = "Complete"
    ERROR = "Error"
    FAILED = "Failed"
    MISSED = "Missed"
    QUEUED = "Queued"
    SKIPPED = "Skipped"
    STARTED = "Started"

    def __str__(self) -> str:
        return str(self.value)
