from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.squad_response import SquadResponse


T = TypeVar("T", bound="ListSquadsResponse200")


@_attrs_define
class ListSquadsResponse200:
    """
    Attributes:
        squads (list[SquadResponse]):
    """

    squads: list[SquadResponse]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        squads = []
        for squads_item_data in self.squads:
            squads_item = squads_item_data.to_dict()
            squads.append(squads_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "squads": squads,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.squad_response import SquadResponse

        d = dict(src_dict)
        squads = []
        _squads = d.pop("squads")
        for squads_item_data in _squads:
            squads_item = SquadResponse.from_dict(squads_item_data)

            squads.append(squads_item)

        list_squads_response_200 = cls(
            squads=squads,
        )

        list_squads_response_200.additional_properties = d
        return list_squads_response_200

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
