"""no_todo_comments: no TODO/FIXME comment left in the agent's workspace files.

Config (optional): {"markers": ["TODO", "FIXME"]}

Targets WIT 0.5.0 (wit/grader.wit): the host hands a run's evidence to the instance once
(`begin_run`) and then calls `grade_in_run` for each of the run's entries of this grader,
so the evidence is not converted into Python objects again for every call.
"""

import json
import os

import wit_world
from componentize_py_types import Err
from wit_world.imports import types

NAME = "no_todo_comments"
WORKSPACE = "/workspace"
# Where a comment starts in the languages an agent usually writes.
COMMENT_STARTS = ("#", "//", "/*", "*", "--", "<!--", ";")
SCHEMA = {
    "type": ["object", "null"],
    "properties": {
        "markers": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
    },
    "additionalProperties": False,
}


def parse_config(config: str) -> list[str]:
    try:
        value = json.loads(config)
    except ValueError as e:
        raise Err(types.GradeError_InvalidConfig(f"config is not valid JSON: {e}"))
    if value is None:
        return ["TODO", "FIXME"]
    if not isinstance(value, dict):
        raise Err(types.GradeError_InvalidConfig("expected a map like {markers: [TODO]}"))
    unknown = sorted(set(value) - {"markers"})
    if unknown:
        raise Err(types.GradeError_InvalidConfig(f"unknown field `{unknown[0]}`, expected `markers`"))
    markers = value.get("markers", ["TODO", "FIXME"])
    if (
        not isinstance(markers, list)
        or not markers
        or not all(isinstance(m, str) and m for m in markers)
    ):
        raise Err(types.GradeError_InvalidConfig("markers must be a non-empty list of non-empty strings"))
    return markers


def comment_with_marker(line: str, markers: list[str]) -> bool:
    for start in COMMENT_STARTS:
        at = line.find(start)
        if at >= 0 and any(m in line[at:] for m in markers):
            return True
    return False


def findings(markers: list[str]) -> list[str]:
    found = []
    for root, dirs, files in os.walk(WORKSPACE):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            for number, line in enumerate(lines, 1):
                if comment_with_marker(line, markers):
                    relative = os.path.relpath(path, WORKSPACE)
                    found.append(f"{relative}:{number} {json.dumps(line.strip())}")
    return found


class WitWorld(wit_world.WitWorld):
    def list_graders(self) -> list[types.GraderInfo]:
        return [
            types.GraderInfo(
                name=NAME,
                version="1.0.0",
                summary="No TODO/FIXME comment in the workspace files",
                config_schema=json.dumps(SCHEMA),
            )
        ]

    def check_config(self, grader: str, config: str) -> None:
        if grader != NAME:
            raise Err(types.GradeError_UnknownGrader(grader))
        parse_config(config)

    def describe(self, grader: str, config: str) -> str:
        if grader != NAME:
            raise Err(types.GradeError_UnknownGrader(grader))
        return "no comment in the workspace files contains " + " or ".join(parse_config(config))

    def begin_run(self, evidence: types.Evidence) -> None:
        # This grader reads only the workspace: the evidence is not kept.
        pass

    def grade_in_run(self, grader: str, config: str) -> types.Verdict:
        if grader != NAME:
            raise Err(types.GradeError_UnknownGrader(grader))
        found = findings(parse_config(config))
        if not found:
            return types.Verdict(pass_=True, score=1.0, message="")
        shown = ", ".join(found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        return types.Verdict(
            pass_=False,
            score=0.0,
            message=f"{NAME}: {len(found)} found: {shown}{more}",
        )

    def grade(self, grader: str, config: str, evidence: types.Evidence) -> types.Verdict:
        return self.grade_in_run(grader, config)
