from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_response_last_run_type_0_outcome import (
    ScheduleResponseLastRunType0Outcome,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleResponseLastRunType0")


@_attrs_define
class ScheduleResponseLastRunType0:
    """the last run: its time, outcome, task and why

    Attributes:
        time (datetime.datetime): the run's scheduled time (a trigger's: when it was asked for)
        outcome (ScheduleResponseLastRunType0Outcome): Started, Queued, Skipped, Missed or Failed; once its task ended,
            the task's end (Complete, Error, Cancelled)
        task (int | Unset): the agent's task number the run gave it
        reason (str | Unset): why it was queued, skipped, missed or failed
        triggered (bool | Unset): asked for (trigger), not due by the cron
    """

    time: datetime.datetime
    outcome: ScheduleResponseLastRunType0Outcome
    task: int | Unset = UNSET
    reason: str | Unset = UNSET
    triggered: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        time = self.time.isoformat()

        outcome = self.outcome.value

        task = self.task

        reason = self.reason

        triggered = self.triggered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "time": time,
                "outcome": outcome,
            }
        )
        if task is not UNSET:
            field_dict["task"] = task
        if reason is not UNSET:
            field_dict["reason"] = reason
        if triggered is not UNSET:
            field_dict["triggered"] = triggered

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        time = datetime.datetime.fromisoformat(d.pop("time"))

        outcome = ScheduleResponseLastRunType0Outcome(d.pop("outcome"))

        task = d.pop("task", UNSET)

        reason = d.pop("reason", UNSET)

        triggered = d.pop("triggered", UNSET)

        schedule_response_last_run_type_0 = cls(
            time=time,
            outcome=outcome,
            task=task,
            reason=reason,
            triggered=triggered,
        )

        schedule_response_last_run_type_0.additional_properties = d
        return schedule_response_last_run_type_0

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
