from enum import StrEnum


class AgentPatchRequestLifecycle(StrEnum):
    AUTODELETE = "AutoDelete"
    SLEEP = "Sleep"
    VALUE_0 = ""
    WAKE = "Wake"

    def __str__(self) -> str:
        return str(self.value)
