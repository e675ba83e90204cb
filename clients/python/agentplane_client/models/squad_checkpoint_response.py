from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.checkpoint_response import CheckpointResponse


T = TypeVar("T", bound="SquadCheckpointResponse")


@_attrs_define
class SquadCheckpointResponse:
    """
    Attributes:
        squad (str):
        name (str):
        namespace (str):
        checkpoints (list[CheckpointResponse]): one per member, named "<member>.<checkpoint>"
    """

    squad: str
    name: str
    namespace: str
    checkpoints: list[CheckpointResponse]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        squad = self.squad

        name = self.name

        namespace = self.namespace

        checkpoints = []
        for checkpoints_item_data in self.checkpoints:
            checkpoints_item = checkpoints_item_data.to_dict()
            checkpoints.append(checkpoints_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "squad": squad,
                "name": name,
                "namespace": namespace,
                "checkpoints": checkpoints,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.checkpoint_response import CheckpointResponse

        d = dict(src_dict)
        squad = d.pop("squad")

        name = d.pop("name")

        namespace = d.pop("namespace")

        checkpoints = []
        _checkpoints = d.pop("checkpoints")
        for checkpoints_item_data in _checkpoints:
            checkpoints_item = CheckpointResponse.from_dict(checkpoints_item_data)

            checkpoints.append(checkpoints_item)

        squad_checkpoint_response = cls(
            squad=squad,
            name=name,
            namespace=namespace,
            checkpoints=checkpoints,
        )

        squad_checkpoint_response.additional_properties = d
        return squad_checkpoint_response

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
