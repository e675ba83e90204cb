from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.skill_response_files import SkillResponseFiles


T = TypeVar("T", bound="SkillResponse")


@_attrs_define
class SkillResponse:
    """
    Attributes:
        name (str):
        namespace (str):
        created_at (datetime.datetime):
        description (str): its own, else its SKILL.md frontmatter's
        files (SkillResponseFiles): path -> text
    """

    name: str
    namespace: str
    created_at: datetime.datetime
    description: str
    files: SkillResponseFiles
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        namespace = self.namespace

        created_at = self.created_at.isoformat()

        description = self.description

        files = self.files.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "namespace": namespace,
                "createdAt": created_at,
                "description": description,
                "files": files,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.skill_response_files import SkillResponseFiles

        d = dict(src_dict)
        name = d.pop("name")

        namespace = d.pop("namespace")

        created_at = datetime.datetime.fromisoformat(d.pop("createdAt"))

        description = d.pop("description")

        files = SkillResponseFiles.from_dict(d.pop("files"))

        skill_response = cls(
            name=name,
            namespace=namespace,
            created_at=created_at,
            description=description,
            files=files,
        )

        skill_response.additional_properties = d
        return skill_response

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
