from enum import StrEnum


class SquadPatchRequestMembersItemSpecRole(StrEnum):
    MANAGER = "manager"
    WORKER = "worker"

    def __str__(self) -> str:
        return str(self.value)
