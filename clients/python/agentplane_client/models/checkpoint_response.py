from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.checkpoint_response_phase import CheckpointResponsePhase
from ..types import UNSET, Unset

T = TypeVar("T", bound="CheckpointResponse")


@_attrs_define
class CheckpointResponse:
    """
    Attributes:
        name (str):
        agent (str):
        namespace (str):
        phase (CheckpointResponsePhase):
        created_at (datetime.datetime):
        from_checkpoint (str): what a new agent names in fromCheckpoint to start from it
        squad (None | str | Unset): the squad whose members' checkpoints of this name were taken together
        taken_at (datetime.datetime | None | Unset):
        task (int | None | Unset):
        during_task (bool | Unset): taken while that task ran, between two of its steps
        bytes_ (int | None | Unset):
        message (str | Unset):
    """

    name: str
    agent: str
    namespace: str
    phase: CheckpointResponsePhase
    created_at: datetime.datetime
    from_checkpoint: str
    squad: None | str | Unset = UNSET
    taken_at: datetime.datetime | None | Unset = UNSET
    task: int | None | Unset = UNSET
    during_task: bool | Unset = UNSET
    bytes_: int | None | Unset = UNSET
    message: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        agent = self.agent

        namespace = self.namespace

        phase = self.phase.value

        created_at = self.created_at.isoformat()

        from_checkpoint = self.from_checkpoint

        squad: None | str | Unset
        if isinstance(self.squad, Unset):
            squad = UNSET
        else:
            squad = self.squad

        taken_at: None | str | Unset
        if isinstance(self.taken_at, Unset):
            taken_at = UNSET
        elif isinstance(self.taken_at, datetime.datetime):
            taken_at = self.taken_at.isoformat()
        else:
            taken_at = self.taken_at

        task: int | None | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        else:
            task = self.task

        during_task = self.during_task

        bytes_: int | None | Unset
        if isinstance(self.bytes_, Unset):
            bytes_ = UNSET
        else:
            bytes_ = self.bytes_

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "agent": agent,
                "namespace": namespace,
                "phase": phase,
                "createdAt": created_at,
                "fromCheckpoint": from_checkpoint,
            }
        )
        if squad is not UNSET:
            field_dict["squad"] = squad
        if taken_at is not UNSET:
            field_dict["takenAt"] = taken_at
        if task is not UNSET:
            field_dict["task"] = task
        if during_task is not UNSET:
            field_dict["duringTask"] = during_task
        if bytes_ is not UNSET:
            field_dict["bytes"] = bytes_
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        agent = d.pop("agent")

        namespace = d.pop("namespace")

        phase = CheckpointResponsePhase(d.pop("phase"))

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        from_checkpoint = d.pop("fromCheckpoint")

        def _parse_squad(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        squad = _parse_squad(d.pop("squad", UNSET))

        def _parse_taken_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                taken_at_type_0 = datetime.datetime.fromisoformat(data)

                return taken_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        taken_at = _parse_taken_at(d.pop("takenAt", UNSET))

        def _parse_task(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        during_task = d.pop("duringTask", UNSET)

        def _parse_bytes_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        bytes_ = _parse_bytes_(d.pop("bytes", UNSET))

        message = d.pop("message", UNSET)

        checkpoint_response = cls(
            name=name,
            agent=agent,
            namespace=namespace,
            phase=phase,
            created_at=created_at,
            from_checkpoint=from_checkpoint,
            squad=squad,
            taken_at=taken_at,
            task=task,
            during_task=during_task,
            bytes_=bytes_,
            message=message,
        )

        checkpoint_response.additional_properties = d
        return checkpoint_response

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
