from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.agent_cost_response_tasks_item_outcome import (
    AgentCostResponseTasksItemOutcome,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.agent_cost_response_tasks_item_events_item import (
        AgentCostResponseTasksItemEventsItem,
    )
    from ..models.agent_cost_response_tasks_item_models_item import (
        AgentCostResponseTasksItemModelsItem,
    )


T = TypeVar("T", bound="AgentCostResponseTasksItem")


@_attrs_define
class AgentCostResponseTasksItem:
    """
    Attributes:
        index (int):
        task (int):
        outcome (AgentCostResponseTasksItemOutcome):
        started_at (datetime.datetime):
        instruction (str):
        cost_usd (float):
        duration_ms (int):
        turns (int):
        input_tokens (int):
        output_tokens (int):
        cache_read_tokens (int):
        cache_create_tokens (int):
        models (list[AgentCostResponseTasksItemModelsItem]):
        event_count (int):
        completed_at (datetime.datetime | Unset):
        events (list[AgentCostResponseTasksItemEventsItem] | Unset): with ?events=true
    """

    index: int
    task: int
    outcome: AgentCostResponseTasksItemOutcome
    started_at: datetime.datetime
    instruction: str
    cost_usd: float
    duration_ms: int
    turns: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    models: list[AgentCostResponseTasksItemModelsItem]
    event_count: int
    completed_at: datetime.datetime | Unset = UNSET
    events: list[AgentCostResponseTasksItemEventsItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        index = self.index

        task = self.task

        outcome = self.outcome.value

        started_at = self.started_at.isoformat()

        instruction = self.instruction

        cost_usd = self.cost_usd

        duration_ms = self.duration_ms

        turns = self.turns

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        cache_read_tokens = self.cache_read_tokens

        cache_create_tokens = self.cache_create_tokens

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        event_count = self.event_count

        completed_at: str | Unset = UNSET
        if not isinstance(self.completed_at, Unset):
            completed_at = self.completed_at.isoformat()

        events: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.events, Unset):
            events = []
            for events_item_data in self.events:
                events_item = events_item_data.to_dict()
                events.append(events_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "index": index,
                "task": task,
                "outcome": outcome,
                "startedAt": started_at,
                "instruction": instruction,
                "costUSD": cost_usd,
                "durationMs": duration_ms,
                "turns": turns,
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "cacheReadTokens": cache_read_tokens,
                "cacheCreateTokens": cache_create_tokens,
                "models": models,
                "eventCount": event_count,
            }
        )
        if completed_at is not UNSET:
            field_dict["completedAt"] = completed_at
        if events is not UNSET:
            field_dict["events"] = events

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent_cost_response_tasks_item_events_item import (
            AgentCostResponseTasksItemEventsItem,
        )
        from ..models.agent_cost_response_tasks_item_models_item import (
            AgentCostResponseTasksItemModelsItem,
        )

        d = dict(src_dict)
        index = d.pop("index")

        task = d.pop("task")

        outcome = AgentCostResponseTasksItemOutcome(d.pop("outcome"))

        started_at = datetime.datetime.fromisoformat(d.pop("startedAt"))

        instruction = d.pop("instruction")

        cost_usd = d.pop("costUSD")

        duration_ms = d.pop("durationMs")

        turns = d.pop("turns")

        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        cache_read_tokens = d.pop("cacheReadTokens")

        cache_create_tokens = d.pop("cacheCreateTokens")

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = AgentCostResponseTasksItemModelsItem.from_dict(
                models_item_data
            )

            models.append(models_item)

        event_count = d.pop("eventCount")

        _completed_at = d.pop("completedAt", UNSET)
        completed_at: datetime.datetime | Unset
        if isinstance(_completed_at, Unset):
            completed_at = UNSET
        else:
            completed_at = datetime.datetime.fromisoformat(_completed_at)

        _events = d.pop("events", UNSET)
        events: list[AgentCostResponseTasksItemEventsItem] | Unset = UNSET
        if _events is not UNSET:
            events = []
            for events_item_data in _events:
                events_item = AgentCostResponseTasksItemEventsItem.from_dict(
                    events_item_data
                )

                events.append(events_item)

        agent_cost_response_tasks_item = cls(
            index=index,
            task=task,
            outcome=outcome,
            started_at=started_at,
            instruction=instruction,
            cost_usd=cost_usd,
            duration_ms=duration_ms,
            turns=turns,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_create_tokens=cache_create_tokens,
            models=models,
            event_count=event_count,
            completed_at=completed_at,
            events=events,
        )

        agent_cost_response_tasks_item.additional_properties = d
        return agent_cost_response_tasks_item

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
