from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.schedule_response_concurrency_policy import (
    ScheduleResponseConcurrencyPolicy,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.schedule_response_conditions_item import (
        ScheduleResponseConditionsItem,
    )
    from ..models.schedule_response_last_run_type_0 import ScheduleResponseLastRunType0
    from ..models.schedule_response_pending_run_type_0 import (
        ScheduleResponsePendingRunType0,
    )


T = TypeVar("T", bound="ScheduleResponse")


@_attrs_define
class ScheduleResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        agent (str): the agent each run gives a task (same namespace): lowercase letters, digits and hyphens, starting
            and ending with a letter or digit, at most 63 characters
        cron (str): five cron fields (minute hour day-of-month month day-of-week), or six with seconds first; names and
            ranges as in crontab
        instructions (str): the task each run gives the agent
        concurrency_policy (ScheduleResponseConcurrencyPolicy): when the agent is busy: Allow queues the run behind its
            task, Forbid skips it, Replace cancels the task and runs; default Allow
        suspend (bool): no run fires while true (a trigger still runs)
        last_schedule_time (datetime.datetime | None): the last due time handled (started, queued, skipped or missed)
        next_schedule_time (datetime.datetime | None): the next due time (null while suspended)
        last_run (None | ScheduleResponseLastRunType0): the last run: its time, outcome, task and why
        pending_run (None | ScheduleResponsePendingRunType0): a run waiting for the agent's task to end (Allow, Replace)
        conditions (list[ScheduleResponseConditionsItem]): Ready: the cron and time zone are read and the agent exists
        time_zone (str | Unset): IANA time zone the cron is read in (e.g. "Europe/Paris"); UTC when unset
        starting_deadline_seconds (int | Unset): a run found this many seconds past its time (after downtime) is
            recorded as missed, never started late; unset: the latest missed run starts
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    agent: str
    cron: str
    instructions: str
    concurrency_policy: ScheduleResponseConcurrencyPolicy
    suspend: bool
    last_schedule_time: datetime.datetime | None
    next_schedule_time: datetime.datetime | None
    last_run: None | ScheduleResponseLastRunType0
    pending_run: None | ScheduleResponsePendingRunType0
    conditions: list[ScheduleResponseConditionsItem]
    time_zone: str | Unset = UNSET
    starting_deadline_seconds: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.schedule_response_last_run_type_0 import (
            ScheduleResponseLastRunType0,
        )
        from ..models.schedule_response_pending_run_type_0 import (
            ScheduleResponsePendingRunType0,
        )

        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        agent = self.agent

        cron = self.cron

        instructions = self.instructions

        concurrency_policy = self.concurrency_policy.value

        suspend = self.suspend

        last_schedule_time: None | str
        if isinstance(self.last_schedule_time, datetime.datetime):
            last_schedule_time = self.last_schedule_time.isoformat()
        else:
            last_schedule_time = self.last_schedule_time

        next_schedule_time: None | str
        if isinstance(self.next_schedule_time, datetime.datetime):
            next_schedule_time = self.next_schedule_time.isoformat()
        else:
            next_schedule_time = self.next_schedule_time

        last_run: dict[str, Any] | None
        if isinstance(self.last_run, ScheduleResponseLastRunType0):
            last_run = self.last_run.to_dict()
        else:
            last_run = self.last_run

        pending_run: dict[str, Any] | None
        if isinstance(self.pending_run, ScheduleResponsePendingRunType0):
            pending_run = self.pending_run.to_dict()
        else:
            pending_run = self.pending_run

        conditions = []
        for conditions_item_data in self.conditions:
            conditions_item = conditions_item_data.to_dict()
            conditions.append(conditions_item)

        time_zone = self.time_zone

        starting_deadline_seconds = self.starting_deadline_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "agent": agent,
                "cron": cron,
                "instructions": instructions,
                "concurrencyPolicy": concurrency_policy,
                "suspend": suspend,
                "lastScheduleTime": last_schedule_time,
                "nextScheduleTime": next_schedule_time,
                "lastRun": last_run,
                "pendingRun": pending_run,
                "conditions": conditions,
            }
        )
        if time_zone is not UNSET:
            field_dict["timeZone"] = time_zone
        if starting_deadline_seconds is not UNSET:
            field_dict["startingDeadlineSeconds"] = starting_deadline_seconds

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.schedule_response_conditions_item import (
            ScheduleResponseConditionsItem,
        )
        from ..models.schedule_response_last_run_type_0 import (
            ScheduleResponseLastRunType0,
        )
        from ..models.schedule_response_pending_run_type_0 import (
            ScheduleResponsePendingRunType0,
        )

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        agent = d.pop("agent")

        cron = d.pop("cron")

        instructions = d.pop("instructions")

        concurrency_policy = ScheduleResponseConcurrencyPolicy(
            d.pop("concurrencyPolicy")
        )

        suspend = d.pop("suspend")

        def _parse_last_schedule_time(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_schedule_time_type_0 = datetime.datetime.fromisoformat(data)

                return last_schedule_time_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_schedule_time = _parse_last_schedule_time(d.pop("lastScheduleTime"))

        def _parse_next_schedule_time(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_schedule_time_type_0 = datetime.datetime.fromisoformat(data)

                return next_schedule_time_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        next_schedule_time = _parse_next_schedule_time(d.pop("nextScheduleTime"))

        def _parse_last_run(data: object) -> None | ScheduleResponseLastRunType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_run_type_0 = ScheduleResponseLastRunType0.from_dict(data)

                return last_run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleResponseLastRunType0, data)

        last_run = _parse_last_run(d.pop("lastRun"))

        def _parse_pending_run(data: object) -> None | ScheduleResponsePendingRunType0:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                pending_run_type_0 = ScheduleResponsePendingRunType0.from_dict(data)

                return pending_run_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ScheduleResponsePendingRunType0, data)

        pending_run = _parse_pending_run(d.pop("pendingRun"))

        conditions = []
        _conditions = d.pop("conditions")
        for conditions_item_data in _conditions:
            conditions_item = ScheduleResponseConditionsItem.from_dict(
                conditions_item_data
            )

            conditions.append(conditions_item)

        time_zone = d.pop("timeZone", UNSET)

        starting_deadline_seconds = d.pop("startingDeadlineSeconds", UNSET)

        schedule_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            agent=agent,
            cron=cron,
            instructions=instructions,
            concurrency_policy=concurrency_policy,
            suspend=suspend,
            last_schedule_time=last_schedule_time,
            next_schedule_time=next_schedule_time,
            last_run=last_run,
            pending_run=pending_run,
            conditions=conditions,
            time_zone=time_zone,
            starting_deadline_seconds=starting_deadline_seconds,
        )

        schedule_response.additional_properties = d
        return schedule_response

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
