from enum import StrEnum


class ConnectorResponseAuthType(StrEnum):
    BEARER = "bearer"
    HEADER = "header"

    def __str__(self) -> str:
        return str(self.value)
