from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.skill_request_files import SkillRequestFiles


T = TypeVar("T", bound="SkillRequest")


@_attrs_define
class SkillRequest:
    """
    Attributes:
        name (str): lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 63
            characters
        files (SkillRequestFiles): the skill's files by path (a relative path of "/"-separated segments of letters,
            digits, ".", "_" and "-" (no "." or ".." segment), at most 200 characters): "SKILL.md" is required and starts
            with a frontmatter naming the skill (name: <the Skill's name>) and saying what it is for (description: ...); at
            most 32 files, 262144 bytes in all
        namespace (str | Unset): a DNS label: lowercase letters, digits and hyphens, starting and ending with a letter
            or digit, at most 63 characters
        description (str | Unset): what the skill is for; default the SKILL.md frontmatter's description
    """

    name: str
    files: SkillRequestFiles
    namespace: str | Unset = UNSET
    description: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        files = self.files.to_dict()

        namespace = self.namespace

        description = self.description

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "files": files,
            }
        )
        if namespace is not UNSET:
            field_dict["namespace"] = namespace
        if description is not UNSET:
            field_dict["description"] = description

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.skill_request_files import SkillRequestFiles

        d = dict(src_dict)
        name = d.pop("name")

        files = SkillRequestFiles.from_dict(d.pop("files"))

        namespace = d.pop("namespace", UNSET)

        description = d.pop("description", UNSET)

        skill_request = cls(
            name=name,
            files=files,
            namespace=namespace,
            description=description,
        )

        return skill_request
