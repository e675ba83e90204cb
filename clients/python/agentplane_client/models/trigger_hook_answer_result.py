from enum import StrEnum


class TriggerHookAnswerResult(StrEnum):
    AGENTBUSY = "AgentBusy"
    AGENTMISSING = "AgentMissing"
    BADPAYLOAD = "BadPayload"
    BADSIGNATURE = "BadSignature"
    DUPLICATE = "Duplicate"
    SECRETMISSING = "SecretMissing"
    STARTED = "Started"

    def __str__(self) -> str:
        return str(self.value)
