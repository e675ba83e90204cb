"""Contains all the data models used in inputs/outputs"""

from .agent_cost_response import AgentCostResponse
from .agent_cost_response_models_item import AgentCostResponseModelsItem
from .agent_cost_response_tasks_item import AgentCostResponseTasksItem
from .agent_cost_response_tasks_item_events_item import (
    AgentCostResponseTasksItemEventsItem,
)
from .agent_cost_response_tasks_item_models_item import (
    AgentCostResponseTasksItemModelsItem,
)
from .agent_cost_response_tasks_item_outcome import AgentCostResponseTasksItemOutcome
from .agent_patch_request import AgentPatchRequest
from .agent_patch_request_approval_type_0 import AgentPatchRequestApprovalType0
from .agent_patch_request_approval_type_0_on_timeout import (
    AgentPatchRequestApprovalType0OnTimeout,
)
from .agent_patch_request_budget_type_0 import AgentPatchRequestBudgetType0
from .agent_patch_request_budget_type_0_on_exceed import (
    AgentPatchRequestBudgetType0OnExceed,
)
from .agent_patch_request_lifecycle import AgentPatchRequestLifecycle
from .agent_response import AgentResponse
from .agent_response_approval import AgentResponseApproval
from .agent_response_approval_on_timeout import AgentResponseApprovalOnTimeout
from .agent_response_approvals_item import AgentResponseApprovalsItem
from .agent_response_approvals_item_decision import AgentResponseApprovalsItemDecision
from .agent_response_approvals_item_on_timeout import (
    AgentResponseApprovalsItemOnTimeout,
)
from .agent_response_budget import AgentResponseBudget
from .agent_response_budget_on_exceed import AgentResponseBudgetOnExceed
from .agent_response_lifecycle import AgentResponseLifecycle
from .agent_response_role import AgentResponseRole
from .agent_response_spend import AgentResponseSpend
from .agent_response_spend_day import AgentResponseSpendDay
from .agent_response_spend_month import AgentResponseSpendMonth
from .agent_response_status import AgentResponseStatus
from .agent_response_task_status import AgentResponseTaskStatus
from .agent_task_request import AgentTaskRequest
from .agent_task_request_approval import AgentTaskRequestApproval
from .agent_task_request_approval_on_timeout import AgentTaskRequestApprovalOnTimeout
from .agent_task_request_budget import AgentTaskRequestBudget
from .agent_task_request_budget_on_exceed import AgentTaskRequestBudgetOnExceed
from .agent_task_request_lifecycle import AgentTaskRequestLifecycle
from .agent_task_request_role import AgentTaskRequestRole
from .approval import Approval
from .approval_decision import ApprovalDecision
from .approval_decision_request import ApprovalDecisionRequest
from .approval_decision_request_decision import ApprovalDecisionRequestDecision
from .approval_list import ApprovalList
from .approval_on_timeout import ApprovalOnTimeout
from .budget_patch_request import BudgetPatchRequest
from .budget_patch_request_on_exceed import BudgetPatchRequestOnExceed
from .budget_patch_request_period import BudgetPatchRequestPeriod
from .budget_request import BudgetRequest
from .budget_request_on_exceed import BudgetRequestOnExceed
from .budget_request_period import BudgetRequestPeriod
from .budget_response import BudgetResponse
from .budget_response_agents_item import BudgetResponseAgentsItem
from .budget_response_on_exceed import BudgetResponseOnExceed
from .budget_response_period import BudgetResponsePeriod
from .budget_response_spent import BudgetResponseSpent
from .cancel_response import CancelResponse
from .cancel_response_approval import CancelResponseApproval
from .cancel_response_approval_on_timeout import CancelResponseApprovalOnTimeout
from .cancel_response_approvals_item import CancelResponseApprovalsItem
from .cancel_response_approvals_item_decision import CancelResponseApprovalsItemDecision
from .cancel_response_approvals_item_on_timeout import (
    CancelResponseApprovalsItemOnTimeout,
)
from .cancel_response_budget import CancelResponseBudget
from .cancel_response_budget_on_exceed import CancelResponseBudgetOnExceed
from .cancel_response_lifecycle import CancelResponseLifecycle
from .cancel_response_role import CancelResponseRole
from .cancel_response_spend import CancelResponseSpend
from .cancel_response_spend_day import CancelResponseSpendDay
from .cancel_response_spend_month import CancelResponseSpendMonth
from .cancel_response_status import CancelResponseStatus
from .cancel_response_task_status import CancelResponseTaskStatus
from .checkpoint_create_request import CheckpointCreateRequest
from .checkpoint_response import CheckpointResponse
from .checkpoint_response_phase import CheckpointResponsePhase
from .compact_request import CompactRequest
from .compact_response import CompactResponse
from .compact_response_status import CompactResponseStatus
from .connector_create_request import ConnectorCreateRequest
from .connector_create_request_auth_type import ConnectorCreateRequestAuthType
from .connector_response import ConnectorResponse
from .connector_response_auth_type import ConnectorResponseAuthType
from .connector_response_status import ConnectorResponseStatus
from .connector_response_status_phase import ConnectorResponseStatusPhase
from .connector_tools_response import ConnectorToolsResponse
from .connector_tools_response_tools_item import ConnectorToolsResponseToolsItem
from .deliver_trigger_body import DeliverTriggerBody
from .error import Error
from .error_details import ErrorDetails
from .error_details_causes_item import ErrorDetailsCausesItem
from .event import Event
from .event_payload import EventPayload
from .event_type import EventType
from .healthz_response_200 import HealthzResponse200
from .list_agents_response_200 import ListAgentsResponse200
from .list_budgets_response_200 import ListBudgetsResponse200
from .list_checkpoints_response_200 import ListCheckpointsResponse200
from .list_connectors_response_200 import ListConnectorsResponse200
from .list_events_response_200 import ListEventsResponse200
from .list_memories_response_200 import ListMemoriesResponse200
from .list_schedules_response_200 import ListSchedulesResponse200
from .list_secrets_response_200 import ListSecretsResponse200
from .list_skills_response_200 import ListSkillsResponse200
from .list_squads_response_200 import ListSquadsResponse200
from .list_triggers_response_200 import ListTriggersResponse200
from .list_webhooks_response_200 import ListWebhooksResponse200
from .mcp_message import McpMessage
from .mcp_message_error import McpMessageError
from .mcp_message_jsonrpc import McpMessageJsonrpc
from .mcp_message_params import McpMessageParams
from .mcp_message_result import McpMessageResult
from .memory_patch_request import MemoryPatchRequest
from .memory_request import MemoryRequest
from .memory_response import MemoryResponse
from .message_request import MessageRequest
from .message_response import MessageResponse
from .message_response_delivery import MessageResponseDelivery
from .openapi_response_200 import OpenapiResponse200
from .read_workspace_download import ReadWorkspaceDownload
from .readyz_response_200 import ReadyzResponse200
from .schedule_patch_request import SchedulePatchRequest
from .schedule_patch_request_concurrency_policy import (
    SchedulePatchRequestConcurrencyPolicy,
)
from .schedule_request import ScheduleRequest
from .schedule_request_concurrency_policy import ScheduleRequestConcurrencyPolicy
from .schedule_response import ScheduleResponse
from .schedule_response_concurrency_policy import ScheduleResponseConcurrencyPolicy
from .schedule_response_conditions_item import ScheduleResponseConditionsItem
from .schedule_response_conditions_item_status import (
    ScheduleResponseConditionsItemStatus,
)
from .schedule_response_last_run_type_0 import ScheduleResponseLastRunType0
from .schedule_response_last_run_type_0_outcome import (
    ScheduleResponseLastRunType0Outcome,
)
from .schedule_response_pending_run_type_0 import ScheduleResponsePendingRunType0
from .secret_create_request import SecretCreateRequest
from .secret_create_request_data import SecretCreateRequestData
from .secret_patch_request import SecretPatchRequest
from .secret_patch_request_data import SecretPatchRequestData
from .secret_replace_request import SecretReplaceRequest
from .secret_replace_request_data import SecretReplaceRequestData
from .secret_response import SecretResponse
from .skill_patch_request import SkillPatchRequest
from .skill_patch_request_files import SkillPatchRequestFiles
from .skill_request import SkillRequest
from .skill_request_files import SkillRequestFiles
from .skill_response import SkillResponse
from .skill_response_files import SkillResponseFiles
from .squad_checkpoint_response import SquadCheckpointResponse
from .squad_create_request import SquadCreateRequest
from .squad_create_request_members_item import SquadCreateRequestMembersItem
from .squad_create_request_members_item_ref import SquadCreateRequestMembersItemRef
from .squad_create_request_members_item_spec import SquadCreateRequestMembersItemSpec
from .squad_create_request_members_item_spec_approval import (
    SquadCreateRequestMembersItemSpecApproval,
)
from .squad_create_request_members_item_spec_approval_on_timeout import (
    SquadCreateRequestMembersItemSpecApprovalOnTimeout,
)
from .squad_create_request_members_item_spec_budget import (
    SquadCreateRequestMembersItemSpecBudget,
)
from .squad_create_request_members_item_spec_budget_on_exceed import (
    SquadCreateRequestMembersItemSpecBudgetOnExceed,
)
from .squad_create_request_members_item_spec_role import (
    SquadCreateRequestMembersItemSpecRole,
)
from .squad_member import SquadMember
from .squad_member_ref import SquadMemberRef
from .squad_member_spec import SquadMemberSpec
from .squad_member_spec_approval import SquadMemberSpecApproval
from .squad_member_spec_approval_on_timeout import SquadMemberSpecApprovalOnTimeout
from .squad_member_spec_budget import SquadMemberSpecBudget
from .squad_member_spec_budget_on_exceed import SquadMemberSpecBudgetOnExceed
from .squad_member_spec_role import SquadMemberSpecRole
from .squad_patch_request import SquadPatchRequest
from .squad_patch_request_members_item import SquadPatchRequestMembersItem
from .squad_patch_request_members_item_ref import SquadPatchRequestMembersItemRef
from .squad_patch_request_members_item_spec import SquadPatchRequestMembersItemSpec
from .squad_patch_request_members_item_spec_approval import (
    SquadPatchRequestMembersItemSpecApproval,
)
from .squad_patch_request_members_item_spec_approval_on_timeout import (
    SquadPatchRequestMembersItemSpecApprovalOnTimeout,
)
from .squad_patch_request_members_item_spec_budget import (
    SquadPatchRequestMembersItemSpecBudget,
)
from .squad_patch_request_members_item_spec_budget_on_exceed import (
    SquadPatchRequestMembersItemSpecBudgetOnExceed,
)
from .squad_patch_request_members_item_spec_role import (
    SquadPatchRequestMembersItemSpecRole,
)
from .squad_response import SquadResponse
from .squad_response_members_item import SquadResponseMembersItem
from .squad_response_phase import SquadResponsePhase
from .trigger_hook_answer import TriggerHookAnswer
from .trigger_hook_answer_result import TriggerHookAnswerResult
from .trigger_patch_request import TriggerPatchRequest
from .trigger_patch_request_secret_ref import TriggerPatchRequestSecretRef
from .trigger_patch_request_signature import TriggerPatchRequestSignature
from .trigger_patch_request_signature_algorithm import (
    TriggerPatchRequestSignatureAlgorithm,
)
from .trigger_request import TriggerRequest
from .trigger_request_secret_ref import TriggerRequestSecretRef
from .trigger_request_signature import TriggerRequestSignature
from .trigger_request_signature_algorithm import TriggerRequestSignatureAlgorithm
from .trigger_response import TriggerResponse
from .trigger_response_counts import TriggerResponseCounts
from .trigger_response_last_delivery import TriggerResponseLastDelivery
from .trigger_response_last_delivery_result import TriggerResponseLastDeliveryResult
from .trigger_response_secret_ref import TriggerResponseSecretRef
from .trigger_response_signature import TriggerResponseSignature
from .trigger_response_signature_algorithm import TriggerResponseSignatureAlgorithm
from .webhook_patch_request import WebhookPatchRequest
from .webhook_patch_request_event_types_item import WebhookPatchRequestEventTypesItem
from .webhook_patch_request_secret_ref import WebhookPatchRequestSecretRef
from .webhook_request import WebhookRequest
from .webhook_request_event_types_item import WebhookRequestEventTypesItem
from .webhook_request_secret_ref import WebhookRequestSecretRef
from .webhook_response import WebhookResponse
from .webhook_response_cursors import WebhookResponseCursors
from .webhook_response_cursors_additional_property import (
    WebhookResponseCursorsAdditionalProperty,
)
from .webhook_response_event_types_item import WebhookResponseEventTypesItem
from .webhook_response_last_delivery import WebhookResponseLastDelivery
from .webhook_response_last_failures_item import WebhookResponseLastFailuresItem
from .webhook_response_secret_ref import WebhookResponseSecretRef
from .workspace_files_response import WorkspaceFilesResponse
from .workspace_files_response_entries_item import WorkspaceFilesResponseEntriesItem
from .workspace_files_response_entries_item_type import (
    WorkspaceFilesResponseEntriesItemType,
)
from .workspace_files_response_type import WorkspaceFilesResponseType

__all__ = (
    "AgentCostResponse",
    "AgentCostResponseModelsItem",
    "AgentCostResponseTasksItem",
    "AgentCostResponseTasksItemEventsItem",
    "AgentCostResponseTasksItemModelsItem",
    "AgentCostResponseTasksItemOutcome",
    "AgentPatchRequest",
    "AgentPatchRequestApprovalType0",
    "AgentPatchRequestApprovalType0OnTimeout",
    "AgentPatchRequestBudgetType0",
    "AgentPatchRequestBudgetType0OnExceed",
    "AgentPatchRequestLifecycle",
    "AgentResponse",
    "AgentResponseApproval",
    "AgentResponseApprovalOnTimeout",
    "AgentResponseApprovalsItem",
    "AgentResponseApprovalsItemDecision",
    "AgentResponseApprovalsItemOnTimeout",
    "AgentResponseBudget",
    "AgentResponseBudgetOnExceed",
    "AgentResponseLifecycle",
    "AgentResponseRole",
    "AgentResponseSpend",
    "AgentResponseSpendDay",
    "AgentResponseSpendMonth",
    "AgentResponseStatus",
    "AgentResponseTaskStatus",
    "AgentTaskRequest",
    "AgentTaskRequestApproval",
    "AgentTaskRequestApprovalOnTimeout",
    "AgentTaskRequestBudget",
    "AgentTaskRequestBudgetOnExceed",
    "AgentTaskRequestLifecycle",
    "AgentTaskRequestRole",
    "Approval",
    "ApprovalDecision",
    "ApprovalDecisionRequest",
    "ApprovalDecisionRequestDecision",
    "ApprovalList",
    "ApprovalOnTimeout",
    "BudgetPatchRequest",
    "BudgetPatchRequestOnExceed",
    "BudgetPatchRequestPeriod",
    "BudgetRequest",
    "BudgetRequestOnExceed",
    "BudgetRequestPeriod",
    "BudgetResponse",
    "BudgetResponseAgentsItem",
    "BudgetResponseOnExceed",
    "BudgetResponsePeriod",
    "BudgetResponseSpent",
    "CancelResponse",
    "CancelResponseApproval",
    "CancelResponseApprovalOnTimeout",
    "CancelResponseApprovalsItem",
    "CancelResponseApprovalsItemDecision",
    "CancelResponseApprovalsItemOnTimeout",
    "CancelResponseBudget",
    "CancelResponseBudgetOnExceed",
    "CancelResponseLifecycle",
    "CancelResponseRole",
    "CancelResponseSpend",
    "CancelResponseSpendDay",
    "CancelResponseSpendMonth",
    "CancelResponseStatus",
    "CancelResponseTaskStatus",
    "CheckpointCreateRequest",
    "CheckpointResponse",
    "CheckpointResponsePhase",
    "CompactRequest",
    "CompactResponse",
    "CompactResponseStatus",
    "ConnectorCreateRequest",
    "ConnectorCreateRequestAuthType",
    "ConnectorResponse",
    "ConnectorResponseAuthType",
    "ConnectorResponseStatus",
    "ConnectorResponseStatusPhase",
    "ConnectorToolsResponse",
    "ConnectorToolsResponseToolsItem",
    "DeliverTriggerBody",
    "Error",
    "ErrorDetails",
    "ErrorDetailsCausesItem",
    "Event",
    "EventPayload",
    "EventType",
    "HealthzResponse200",
    "ListAgentsResponse200",
    "ListBudgetsResponse200",
    "ListCheckpointsResponse200",
    "ListConnectorsResponse200",
    "ListEventsResponse200",
    "ListMemoriesResponse200",
    "ListSchedulesResponse200",
    "ListSecretsResponse200",
    "ListSkillsResponse200",
    "ListSquadsResponse200",
    "ListTriggersResponse200",
    "ListWebhooksResponse200",
    "McpMessage",
    "McpMessageError",
    "McpMessageJsonrpc",
    "McpMessageParams",
    "McpMessageResult",
    "MemoryPatchRequest",
    "MemoryRequest",
    "MemoryResponse",
    "MessageRequest",
    "MessageResponse",
    "MessageResponseDelivery",
    "OpenapiResponse200",
    "ReadWorkspaceDownload",
    "ReadyzResponse200",
    "SchedulePatchRequest",
    "SchedulePatchRequestConcurrencyPolicy",
    "ScheduleRequest",
    "ScheduleRequestConcurrencyPolicy",
    "ScheduleResponse",
    "ScheduleResponseConcurrencyPolicy",
    "ScheduleResponseConditionsItem",
    "ScheduleResponseConditionsItemStatus",
    "ScheduleResponseLastRunType0",
    "ScheduleResponseLastRunType0Outcome",
    "ScheduleResponsePendingRunType0",
    "SecretCreateRequest",
    "SecretCreateRequestData",
    "SecretPatchRequest",
    "SecretPatchRequestData",
    "SecretReplaceRequest",
    "SecretReplaceRequestData",
    "SecretResponse",
    "SkillPatchRequest",
    "SkillPatchRequestFiles",
    "SkillRequest",
    "SkillRequestFiles",
    "SkillResponse",
    "SkillResponseFiles",
    "SquadCheckpointResponse",
    "SquadCreateRequest",
    "SquadCreateRequestMembersItem",
    "SquadCreateRequestMembersItemRef",
    "SquadCreateRequestMembersItemSpec",
    "SquadCreateRequestMembersItemSpecApproval",
    "SquadCreateRequestMembersItemSpecApprovalOnTimeout",
    "SquadCreateRequestMembersItemSpecBudget",
    "SquadCreateRequestMembersItemSpecBudgetOnExceed",
    "SquadCreateRequestMembersItemSpecRole",
    "SquadMember",
    "SquadMemberRef",
    "SquadMemberSpec",
    "SquadMemberSpecApproval",
    "SquadMemberSpecApprovalOnTimeout",
    "SquadMemberSpecBudget",
    "SquadMemberSpecBudgetOnExceed",
    "SquadMemberSpecRole",
    "SquadPatchRequest",
    "SquadPatchRequestMembersItem",
    "SquadPatchRequestMembersItemRef",
    "SquadPatchRequestMembersItemSpec",
    "SquadPatchRequestMembersItemSpecApproval",
    "SquadPatchRequestMembersItemSpecApprovalOnTimeout",
    "SquadPatchRequestMembersItemSpecBudget",
    "SquadPatchRequestMembersItemSpecBudgetOnExceed",
    "SquadPatchRequestMembersItemSpecRole",
    "SquadResponse",
    "SquadResponseMembersItem",
    "SquadResponsePhase",
    "TriggerHookAnswer",
    "TriggerHookAnswerResult",
    "TriggerPatchRequest",
    "TriggerPatchRequestSecretRef",
    "TriggerPatchRequestSignature",
    "TriggerPatchRequestSignatureAlgorithm",
    "TriggerRequest",
    "TriggerRequestSecretRef",
    "TriggerRequestSignature",
    "TriggerRequestSignatureAlgorithm",
    "TriggerResponse",
    "TriggerResponseCounts",
    "TriggerResponseLastDelivery",
    "TriggerResponseLastDeliveryResult",
    "TriggerResponseSecretRef",
    "TriggerResponseSignature",
    "TriggerResponseSignatureAlgorithm",
    "WebhookPatchRequest",
    "WebhookPatchRequestEventTypesItem",
    "WebhookPatchRequestSecretRef",
    "WebhookRequest",
    "WebhookRequestEventTypesItem",
    "WebhookRequestSecretRef",
    "WebhookResponse",
    "WebhookResponseCursors",
    "WebhookResponseCursorsAdditionalProperty",
    "WebhookResponseEventTypesItem",
    "WebhookResponseLastDelivery",
    "WebhookResponseLastFailuresItem",
    "WebhookResponseSecretRef",
    "WorkspaceFilesResponse",
    "WorkspaceFilesResponseEntriesItem",
    "WorkspaceFilesResponseEntriesItemType",
    "WorkspaceFilesResponseType",
)
