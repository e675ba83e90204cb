from enum import StrEnum


class BudgetRequestOnExceed(StrEnum):
    PAUSE = "Pause"
    STOP = "Stop"

    def __str__(self) -> str:
        return str(self.value)
