from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.trigger_hook_answer_result import TriggerHookAnswerResult
from ..types import UNSET, Unset

T = TypeVar("T", bound="TriggerHookAnswer")


@_attrs_define
class TriggerHookAnswer:
    """
    Attributes:
        result (TriggerHookAnswerResult):
        trigger (str):
        namespace (str):
        agent (str):
        delivery_id (str): the delivery id header's value ("" without one)
        task (int | Unset): the task started (result Started)
        message (str | Unset):
    """

    result: TriggerHookAnswerResult
    trigger: str
    namespace: str
    agent: str
    delivery_id: str
    task: int | Unset = UNSET
    message: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        result = self.result.value

        trigger = self.trigger

        namespace = self.namespace

        agent = self.agent

        delivery_id = self.delivery_id

        task = self.task

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "result": result,
                "trigger": trigger,
                "namespace": namespace,
                "agent": agent,
                "deliveryId": delivery_id,
            }
        )
        if task is not UNSET:
            field_dict["task"] = task
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        result = TriggerHookAnswerResult(d.pop("result"))

        trigger = d.pop("trigger")

        namespace = d.pop("namespace")

        agent = d.pop("agent")

        delivery_id = d.pop("deliveryId")

        task = d.pop("task", UNSET)

        message = d.pop("message", UNSET)

        trigger_hook_answer = cls(
            result=result,
            trigger=trigger,
            namespace=namespace,
            agent=agent,
            delivery_id=delivery_id,
            task=task,
            message=message,
        )

        trigger_hook_answer.additional_properties = d
        return trigger_hook_answer

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
