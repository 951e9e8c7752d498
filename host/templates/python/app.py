"""{{name}}: passes when the agent's final text contains a word.

Config: {{name}}: {word: hello}. Replace the check with your own.
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import types

NAME = "{{name}}"
SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "minLength": 1}},
    "required": ["word"],
    "additionalProperties": False,
}


def parse_config(grader: str, config: str) -> str:
    """The config's word; raises the grade-error the host shows at the grader entry."""
    if grader != NAME:
        raise Err(types.GradeError_UnknownGrader(grader))
    try:
        value = json.loads(config)
    except ValueError as e:
        raise Err(types.GradeError_InvalidConfig(f"config is not valid JSON: {e}"))
    if not isinstance(value, dict) or set(value) != {"word"}:
        raise Err(types.GradeError_InvalidConfig("expected a map with one field: {word: hello}"))
    if not isinstance(value["word"], str) or not value["word"]:
        raise Err(types.GradeError_InvalidConfig("word must be a non-empty string"))
    return value["word"]


class WitWorld(wit_world.WitWorld):
    def list_graders(self) -> list[types.GraderInfo]:
        return [
            types.GraderInfo(
                name=NAME,
                version="0.1.0",
                summary="The final text contains the word",
                config_schema=json.dumps(SCHEMA),
            )
        ]

    def check_config(self, grader: str, config: str) -> None:
        parse_config(grader, config)

    def grade(self, grader: str, config: str, evidence: types.Evidence) -> types.Verdict:
        word = parse_config(grader, config)
        if word in evidence.final_text:
            return types.Verdict(pass_=True, score=1.0, message="")
        return types.Verdict(
            pass_=False,
            score=0.0,
            message=f"{NAME} {json.dumps(word)}: final text {json.dumps(evidence.final_text[:120])}",
        )
