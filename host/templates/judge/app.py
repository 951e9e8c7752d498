"""{{name}}: asks the judge model whether the agent's final text meets a rubric.

Config: {{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}.
The case grants the judge with `judge: true` beside the grader entry; answers are
recorded once (`evalhost run --judge record`) and replayed from judgments.jsonl.
"""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import judge, types

NAME = "{{name}}"
SCHEMA = {
    "type": "object",
    "properties": {
        "rubric": {"type": "string", "minLength": 1},
        "threshold": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["rubric"],
    "additionalProperties": False,
}
VERDICT_SCHEMA = {
    "type": "object",
    "required": ["score", "reason"],
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
}


def ask_verdict(rubric: str, text: str, threshold: float) -> types.Verdict:
    """One call from a rubric to a verdict: the judge scores `text` from 0 to 1 with a
    reason; the verdict passes at `threshold` and its message is `score S: REASON`."""
    question = judge.Question(
        messages=[
            types.Message(
                role="system",
                content="You grade an AI agent's work against a rubric. Score from 0 (fails "
                "the rubric) to 1 (fully meets it) and give a one-sentence reason.\n\n"
                f"Rubric:\n{rubric}",
            ),
            types.Message(role="user", content=text),
        ],
        schema=json.dumps(VERDICT_SCHEMA),
        max_output_tokens=400,
    )
    try:
        answer = judge.ask(question)
    except Err as e:
        # The host already decided the call's outcome from the judge's error; say why.
        raise Err(types.GradeError_Failed(str(e.value.value)))
    try:
        scored = json.loads(answer.text)
        score = min(1.0, max(0.0, float(scored["score"])))
        reason = str(scored.get("reason", "")).strip()
    except (ValueError, KeyError, TypeError) as e:
        raise Err(types.GradeError_Failed(f"the judge's answer is not a score: {e}"))
    return types.Verdict(
        pass_=score >= threshold, score=score, message=f"score {score:.2f}: {reason}"
    )


def parse_config(grader: str, config: str) -> tuple[str, float]:
    """The config's rubric and threshold; raises the grade-error the host shows."""
    if grader != NAME:
        raise Err(types.GradeError_UnknownGrader(grader))
    try:
        value = json.loads(config)
    except ValueError as e:
        raise Err(types.GradeError_InvalidConfig(f"config is not valid JSON: {e}"))
    if not isinstance(value, dict) or not set(value) <= {"rubric", "threshold"}:
        raise Err(types.GradeError_InvalidConfig("expected a map: {rubric: ..., threshold: 0.7}"))
    rubric = value.get("rubric")
    if not isinstance(rubric, str) or not rubric.strip():
        raise Err(types.GradeError_InvalidConfig("rubric must be a non-empty string"))
    threshold = value.get("threshold", 0.5)
    if not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise Err(types.GradeError_InvalidConfig("threshold must be a number from 0 to 1"))
    return rubric, float(threshold)


class WitWorld(wit_world.WitWorld):
    def list_graders(self) -> list[types.GraderInfo]:
        return [
            types.GraderInfo(
                name=NAME,
                version="0.1.0",
                summary="The judge scores the final text against the rubric",
                config_schema=json.dumps(SCHEMA),
            )
        ]

    def check_config(self, grader: str, config: str) -> None:
        parse_config(grader, config)

    def describe(self, grader: str, config: str) -> str:
        rubric, threshold = parse_config(grader, config)
        return f"the judge scores the final text against {json.dumps(rubric)} at {threshold:.2f} or more"

    def grade(self, grader: str, config: str, evidence: types.Evidence) -> types.Verdict:
        rubric, threshold = parse_config(grader, config)
        verdict = ask_verdict(rubric, evidence.final_text, threshold)
        verdict.message = f"{NAME}: {verdict.message}"
        return verdict
