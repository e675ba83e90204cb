from enum import StrEnum


class CompactResponseStatus(StrEnum):
    COMPACTING = "compacting"

    def __str__(self) -> str:
        return str(self.value)
