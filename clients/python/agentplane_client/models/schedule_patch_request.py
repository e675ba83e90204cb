from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.schedule_patch_request_concurrency_policy import (
    SchedulePatchRequestConcurrencyPolicy,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="SchedulePatchRequest")


@_attrs_define
class SchedulePatchRequest:
    """the fields given change; timeZone or startingDeadlineSeconds given as null is removed

    Attributes:
        agent (str | Unset): the agent each run gives a task (same namespace): lowercase letters, digits and hyphens,
            starting and ending with a letter or digit, at most 63 characters
        cron (str | Unset): five cron fields (minute hour day-of-month month day-of-week), or six with seconds first;
            names and ranges as in crontab
        time_zone (None | str | Unset): IANA time zone the cron is read in (e.g. "Europe/Paris"); UTC when unset
        instructions (str | Unset): the task each run gives the agent
        concurrency_policy (SchedulePatchRequestConcurrencyPolicy | Unset): when the agent is busy: Allow queues the run
            behind its task, Forbid skips it, Replace cancels the task and runs; default Allow
        suspend (bool | Unset): no run fires while true (a trigger still runs)
        starting_deadline_seconds (int | None | Unset): a run found this many seconds past its time (after downtime) is
            recorded as missed, never started late; unset: the latest missed run starts
    """

    agent: str | Unset = UNSET
    cron: str | Unset = UNSET
    time_zone: None | str | Unset = UNSET
    instructions: str | Unset = UNSET
    concurrency_policy: SchedulePatchRequestConcurrencyPolicy | Unset = UNSET
    suspend: bool | Unset = UNSET
    starting_deadline_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        cron = self.cron

        time_zone: None | str | Unset
        if isinstance(self.time_zone, Unset):
            time_zone = UNSET
        else:
            time_zone = self.time_zone

        instructions = self.instructions

        concurrency_policy: str | Unset = UNSET
        if not isinstance(self.concurrency_policy, Unset):
            concurrency_policy = self.concurrency_policy.value

        suspend = self.suspend

        starting_deadline_seconds: int | None | Unset
        if isinstance(self.starting_deadline_seconds, Unset):
            starting_deadline_seconds = UNSET
        else:
            starting_deadline_seconds = self.starting_deadline_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if agent is not UNSET:
            field_dict["agent"] = agent
        if cron is not UNSET:
            field_dict["cron"] = cron
        if time_zone is not UNSET:
            field_dict["timeZone"] = time_zone
        if instructions is not UNSET:
            field_dict["instructions"] = instructions
        if concurrency_policy is not UNSET:
            field_dict["concurrencyPolicy"] = concurrency_policy
        if suspend is not UNSET:
            field_dict["suspend"] = suspend
        if starting_deadline_seconds is not UNSET:
            field_dict["startingDeadlineSeconds"] = starting_deadline_seconds

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent = d.pop("agent", UNSET)

        cron = d.pop("cron", UNSET)

        def _parse_time_zone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        time_zone = _parse_time_zone(d.pop("timeZone", UNSET))

        instructions = d.pop("instructions", UNSET)

        _concurrency_policy = d.pop("concurrencyPolicy", UNSET)
        concurrency_policy: SchedulePatchRequestConcurrencyPolicy | Unset
        if isinstance(_concurrency_policy, Unset):
            concurrency_policy = UNSET
        else:
            concurrency_policy = SchedulePatchRequestConcurrencyPolicy(
                _concurrency_policy
            )

        suspend = d.pop("suspend", UNSET)

        def _parse_starting_deadline_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        starting_deadline_seconds = _parse_starting_deadline_seconds(
            d.pop("startingDeadlineSeconds", UNSET)
        )

        schedule_patch_request = cls(
            agent=agent,
            cron=cron,
            time_zone=time_zone,
            instructions=instructions,
            concurrency_policy=concurrency_policy,
            suspend=suspend,
            starting_deadline_seconds=starting_deadline_seconds,
        )

        return schedule_patch_request
