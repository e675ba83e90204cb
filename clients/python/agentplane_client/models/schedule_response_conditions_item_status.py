from enum import StrEnum


class ScheduleResponseConditionsItemStatus(StrEnum):
    FALSE = "False"
    TRUE = "True"
    UNKNOWN = "Unknown"

    def __str__(self) -> str:
        return str(self.value)
