from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.agent_cost_response_models_item import AgentCostResponseModelsItem
    from ..models.agent_cost_response_tasks_item import AgentCostResponseTasksItem


T = TypeVar("T", bound="AgentCostResponse")


@_attrs_define
class AgentCostResponse:
    """
    Attributes:
        agent (str):
        namespace (str):
        total_cost (float): US dollars over every task, whatever `limit` keeps
        task_count (int):
        input_tokens (int):
        output_tokens (int):
        cache_read_tokens (int):
        cache_create_tokens (int):
        models (list[AgentCostResponseModelsItem]): per model, most expensive first; a task with several models splits
            its cost by their tokens, weighted by price
        tasks (list[AgentCostResponseTasksItem]): per task, oldest first
    """

    agent: str
    namespace: str
    total_cost: float
    task_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    models: list[AgentCostResponseModelsItem]
    tasks: list[AgentCostResponseTasksItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        namespace = self.namespace

        total_cost = self.total_cost

        task_count = self.task_count

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        cache_read_tokens = self.cache_read_tokens

        cache_create_tokens = self.cache_create_tokens

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        tasks = []
        for tasks_item_data in self.tasks:
            tasks_item = tasks_item_data.to_dict()
            tasks.append(tasks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent": agent,
                "namespace": namespace,
                "totalCost": total_cost,
                "taskCount": task_count,
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "cacheReadTokens": cache_read_tokens,
                "cacheCreateTokens": cache_create_tokens,
                "models": models,
                "tasks": tasks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.agent_cost_response_models_item import AgentCostResponseModelsItem
        from ..models.agent_cost_response_tasks_item import AgentCostResponseTasksItem

        d = dict(src_dict)
        agent = d.pop("agent")

        namespace = d.pop("namespace")

        total_cost = d.pop("totalCost")

        task_count = d.pop("taskCount")

        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        cache_read_tokens = d.pop("cacheReadTokens")

        cache_create_tokens = d.pop("cacheCreateTokens")

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = AgentCostResponseModelsItem.from_dict(models_item_data)

            models.append(models_item)

        tasks = []
        _tasks = d.pop("tasks")
        for tasks_item_data in _tasks:
            tasks_item = AgentCostResponseTasksItem.from_dict(tasks_item_data)

            tasks.append(tasks_item)

        agent_cost_response = cls(
            agent=agent,
            namespace=namespace,
            total_cost=total_cost,
            task_count=task_count,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_create_tokens=cache_create_tokens,
            models=models,
            tasks=tasks,
        )

        agent_cost_response.additional_properties = d
        return agent_cost_response

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
