from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.skill_patch_request_files import SkillPatchRequestFiles


T = TypeVar("T", bound="SkillPatchRequest")


@_attrs_define
class SkillPatchRequest:
    """the fields given change; files, when given, replaces all the files

    Attributes:
        description (str | Unset): what the skill is for; default the SKILL.md frontmatter's description
        files (SkillPatchRequestFiles | Unset): the skill's files by path (a relative path of "/"-separated segments of
            letters, digits, ".", "_" and "-" (no "." or ".." segment), at most 200 characters): "SKILL.md" is required and
            starts with a frontmatter naming the skill (name: <the Skill's name>) and saying what it is for (description:
            ...); at most 32 files, 262144 bytes in all
    """

    description: str | Unset = UNSET
    files: SkillPatchRequestFiles | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        description = self.description

        files: dict[str, Any] | Unset = UNSET
        if not isinstance(self.files, Unset):
            files = self.files.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if description is not UNSET:
            field_dict["description"] = description
        if files is not UNSET:
            field_dict["files"] = files

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.skill_patch_request_files import SkillPatchRequestFiles

        d = dict(src_dict)
        description = d.pop("description", UNSET)

        _files = d.pop("files", UNSET)
        files: SkillPatchRequestFiles | Unset
        if isinstance(_files, Unset):
            files = UNSET
        else:
            files = SkillPatchRequestFiles.from_dict(_files)

        skill_patch_request = cls(
            description=description,
            files=files,
        )

        return skill_patch_request
