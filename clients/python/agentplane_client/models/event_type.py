from enum import StrEnum


class EventType(StrEnum):
    APPROVAL_DECIDED = "approval_decided"
    APPROVAL_REQUESTED = "approval_requested"
    BUDGET_EXCEEDED = "budget_exceeded"
    BUDGET_WARNING = "budget_warning"
    CONTEXT_COMPACTED = "context_compacted"
    ERROR = "error"
    MESSAGE = "message"
    MODEL_RETRY = "model_retry"
    TASK_CANCELLED = "task_cancelled"
    TASK_COMPLETED = "task_completed"
    TASK_STARTED = "task_started"
    TEXT = "text"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    USER_MESSAGE = "user_message"

    def __str__(self) -> str:
        return str(self.value)
