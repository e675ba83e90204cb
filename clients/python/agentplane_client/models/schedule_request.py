from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.schedule_request_concurrency_policy import (
    ScheduleRequestConcurrencyPolicy,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleRequest")


@_attrs_define
class ScheduleRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        agent (str): the agent each run gives a task (same namespace): lowercase letters, digits and hyphens, starting
            and ending with a letter or digit, at most 63 characters
        cron (str): five cron fields (minute hour day-of-month month day-of-week), or six with seconds first; names and
            ranges as in crontab
        instructions (str): the task each run gives the agent
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        time_zone (str | Unset): IANA time zone the cron is read in (e.g. "Europe/Paris"); UTC when unset
        concurrency_policy (ScheduleRequestConcurrencyPolicy | Unset): when the agent is busy: Allow queues the run
            behind its task, Forbid skips it, Replace cancels the task and runs; default Allow
        suspend (bool | Unset): no run fires while true (a trigger still runs)
        starting_deadline_seconds (int | Unset): a run found this many seconds past its time (after downtime) is
            recorded as missed, never started late; unset: the latest missed run starts
    """

    name: str
    agent: str
    cron: str
    instructions: str
    namespace: str | Unset = UNSET
    time_zone: str | Unset = UNSET
    concurrency_policy: ScheduleRequestConcurrencyPolicy | Unset = UNSET
    suspend: bool | Unset = UNSET
    starting_deadline_seconds: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        agent = self.agent

        cron = self.cron

        instructions = self.instructions

        namespace = self.namespace

        time_zone = self.time_zone

        concurrency_policy: str | Unset = UNSET
        if not isinstance(self.concurrency_policy, Unset):
            concurrency_policy = self.concurrency_policy.value

        suspend = self.suspend

        starting_deadline_seconds = self.starting_deadline_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "agent": agent,
                "cron": cron,
                "instructions": instructions,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if time_zone is not UNSET:
            field_dict["timeZone"] = time_zone
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
        name = d.pop("name")

        agent = d.pop("agent")

        cron = d.pop("cron")

        instructions = d.pop("instructions")

        namespace = d.pop("namespace", UNSET)

        time_zone = d.pop("timeZone", UNSET)

        _concurrency_policy = d.pop("concurrencyPolicy", UNSET)
        concurrency_policy: ScheduleRequestConcurrencyPolicy | Unset
        if isinstance(_concurrency_policy, Unset):
            concurrency_policy = UNSET
        else:
            concurrency_policy = ScheduleRequestConcurrencyPolicy(_concurrency_policy)

        suspend = d.pop("suspend", UNSET)

        starting_deadline_seconds = d.pop("startingDeadlineSeconds", UNSET)

        schedule_request = cls(
            name=name,
            agent=agent,
            cron=cron,
            instructions=instructions,
            namespace=namespace,
            time_zone=time_zone,
            concurrency_policy=concurrency_policy,
            suspend=suspend,
            starting_deadline_seconds=starting_deadline_seconds,
        )

        return schedule_request
