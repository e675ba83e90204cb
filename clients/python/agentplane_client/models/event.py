from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

if TYPE_CHECKING:
    from ..models.event_payload import EventPayload


T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """
    Attributes:
        seq (int):
        agent_name (str):
        namespace (str):
        task (int):
        type_ (EventType):
        timestamp (datetime.datetime):
        payload (EventPayload): By type: task_started{instructions}, text{content}, thinking{content}, tool_call{id,
            tool, input}, tool_result{id, tool, output, isError}, user_message{content}, model_retry{attempt, of, delayMs,
            status, message} (the model proxy retries a failed model request), context_compacted{trigger: manual|auto,
            pre_tokens, post_tokens?} (the engine compacted the session), approval_requested{id, tool, input, expiresAt,
            onTimeout, deciders} (a tool call waits for a person), approval_decided{id, tool, decision: allow|deny, reason?,
            decidedBy}, message{from, to, text, direction: received|sent, delivery: followUp|task|queued} (a message between
            agents, docs/messages.md), task_completed{result, cost_usd, duration_ms, turns, stop_reason, session_id,
            usage?{input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens}, model_usage?{<model>:
            usage}}, task_cancelled{reason, cost_usd?, usage?, model_usage?}, error{message, reason, cost_usd?, usage?,
            model_usage?}. cost_usd and the usage are the task's own, not its session's running total.
    """

    seq: int
    agent_name: str
    namespace: str
    task: int
    type_: EventType
    timestamp: datetime.datetime
    payload: EventPayload
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        agent_name = self.agent_name

        namespace = self.namespace

        task = self.task

        type_ = self.type_.value

        timestamp = self.timestamp.isoformat()

        payload = self.payload.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "agentName": agent_name,
                "namespace": namespace,
                "task": task,
                "type": type_,
                "timestamp": timestamp,
                "payload": payload,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_payload import EventPayload

        d = dict(src_dict)
        seq = d.pop("seq")

        agent_name = d.pop("agentName")

        namespace = d.pop("namespace")

        task = d.pop("task")

        type_ = EventType(d.pop("type"))

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        payload = EventPayload.from_dict(d.pop("payload"))

        event = cls(
            seq=seq,
            agent_name=agent_name,
            namespace=namespace,
            task=task,
            type_=type_,
            timestamp=timestamp,
            payload=payload,
        )

        event.additional_properties = d
        return event

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
