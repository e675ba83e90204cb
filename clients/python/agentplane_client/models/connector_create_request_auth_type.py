from enum import StrEnum


class ConnectorCreateRequestAuthType(StrEnum):
    BEARER = "bearer"
    HEADER = "header"
    TOKEN = "token"

    def __str__(self) -> str:
        return str(self.value)
