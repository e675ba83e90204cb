from enum import StrEnum


class CancelResponseBudgetOnExceed(StrEnum):
    PAUSE = "Pause"
    STOP = "Stop"

    def __str__(self) -> str:
        return str(self.value)
