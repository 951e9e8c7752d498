"""no_todo_comments: no TODO/FIXME comment left in the agent's workspace files.

Config (optional): {"markers": ["TODO", "FIXME"]}

Targets WIT 0.5.0 (wit/grader.wit): the host hands a run's evidence to the instance once
(`begin_run`) and then calls `grade_in_run` for each of the run's entries of this grader,
so the evidence is not converted into Python objects again for every call. The verdict's
message says what was seen, on a pass (how many files were read) as on a fail.
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
# Where the run's workspace is (`/workspace`, or empty for a run without one), as
# `begin_run` handed it; None before it.
RUN_WORKSPACE: str | None = None
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


def findings(markers: list[str]) -> tuple[list[str], int]:
    """Every `file:line "text"` whose line has a marker inside a comment, and how many text
    files were read."""
    found = []
    read = 0
    for root, dirs, files in os.walk(WORKSPACE):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            read += 1
            for number, line in enumerate(lines, 1):
                if comment_with_marker(line, markers):
                    relative = os.path.relpath(path, WORKSPACE)
                    found.append(f"{relative}:{number} {json.dumps(line.strip())}")
    return found, read


def check(markers: list[str], workspace: str) -> types.Verdict:
    """The verdict's message says what was seen, on a pass as on a fail."""
    if workspace == "":
        # A run read from a trace has no workspace: nothing here can be checked.
        raise Err(types.GradeError_NotEvaluable(f"{NAME}: the run has no workspace"))
    found, read = findings(markers)
    if not found:
        files = "1 file" if read == 1 else f"{read} files"
        return types.Verdict(pass_=True, score=1.0, message=f"{NAME}: 0 found in {files}")
    shown = ", ".join(found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return types.Verdict(
        pass_=False,
        score=0.0,
        message=f"{NAME}: {len(found)} found: {shown}{more}",
    )


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
        return "no comment in the workspace files mentions " + " or ".join(parse_config(config))

    def begin_run(self, evidence: types.Evidence) -> None:
        # This grader reads the workspace; of the evidence it keeps only where that is.
        global RUN_WORKSPACE
        RUN_WORKSPACE = evidence.workspace

    def grade_in_run(self, grader: str, config: str) -> types.Verdict:
        if grader != NAME:
            raise Err(types.GradeError_UnknownGrader(grader))
        markers = parse_config(config)
        if RUN_WORKSPACE is None:
            raise Err(types.GradeError_Failed("grade-in-run was called before begin-run"))
        return check(markers, RUN_WORKSPACE)

    def grade(self, grader: str, config: str, evidence: types.Evidence) -> types.Verdict:
        if grader != NAME:
            raise Err(types.GradeError_UnknownGrader(grader))
        return check(parse_config(config), evidence.workspace)
