from enum import StrEnum


class TriggerPatchRequestSignatureAlgorithm(StrEnum):
    SHA256 = "sha256"

    def __str__(self) -> str:
        return str(self.value)
