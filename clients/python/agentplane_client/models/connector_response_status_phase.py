from enum import StrEnum


class ConnectorResponseStatusPhase(StrEnum):
    ERROR = "Error"
    READY = "Ready"
    SECRETMISSING = "SecretMissing"
    UNAUTHORIZED = "Unauthorized"
    UNKNOWN = "Unknown"
    UNREACHABLE = "Unreachable"

    def __str__(self) -> str:
        return str(self.value)
