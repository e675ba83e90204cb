from enum import StrEnum


class TriggerResponseSignatureAlgorithm(StrEnum):
    SHA256 = "sha256"

    def __str__(self) -> str:
        return str(self.value)
