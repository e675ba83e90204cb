from enum import StrEnum


class ReadWorkspaceDownload(StrEnum):
    FALSE = "false"
    TRUE = "true"
    VALUE_0 = "1"
    VALUE_2 = "0"

    def __str__(self) -> str:
        return str(self.value)
