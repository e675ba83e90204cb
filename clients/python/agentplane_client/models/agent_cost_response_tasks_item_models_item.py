from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AgentCostResponseTasksItemModelsItem")


@_attrs_define
class AgentCostResponseTasksItemModelsItem:
    """
    Attributes:
        model (str):
        cost_usd (float):
        task_count (int):
        input_tokens (int):
        output_tokens (int):
        cache_read_tokens (int):
        cache_create_tokens (int):
    """

    model: str
    cost_usd: float
    task_count: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_create_tokens: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        model = self.model

        cost_usd = self.cost_usd

        task_count = self.task_count

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        cache_read_tokens = self.cache_read_tokens

        cache_create_tokens = self.cache_create_tokens

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "model": model,
                "costUSD": cost_usd,
                "taskCount": task_count,
                "inputTokens": input_tokens,
                "outputTokens": output_tokens,
                "cacheReadTokens": cache_read_tokens,
                "cacheCreateTokens": cache_create_tokens,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        model = d.pop("model")

        cost_usd = d.pop("costUSD")

        task_count = d.pop("taskCount")

        input_tokens = d.pop("inputTokens")

        output_tokens = d.pop("outputTokens")

        cache_read_tokens = d.pop("cacheReadTokens")

        cache_create_tokens = d.pop("cacheCreateTokens")

        agent_cost_response_tasks_item_models_item = cls(
            model=model,
            cost_usd=cost_usd,
            task_count=task_count,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_create_tokens=cache_create_tokens,
        )

        agent_cost_response_tasks_item_models_item.additional_properties = d
        return agent_cost_response_tasks_item_models_item

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
