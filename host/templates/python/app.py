{{^judge}}
"""{{name}}: passes when the agent's final text contains a word.

Config: {{name}}: {word: hello}. Replace the check with your own.
{{/judge}}
{{#judge}}
"""{{name}}: asks the judge model whether the agent's final text meets a rubric.

Config: {{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}.
The case grants the judge with `judge: true` beside the grader entry; answers are
recorded once (`evalhost run --judge record`) and replayed from judgments.jsonl.
{{/judge}}

Targets WIT 0.5.0 (wit/grader.wit): the host hands an instance the run's evidence once
(`begin_run`, kept in RUN) and calls `grade_in_run` for each of the run's entries of this
component, so the evidence is not converted into Python objects again for every entry.
"""

import json

import wit_world
from componentize_py_types import Err
{{^judge}}
from wit_world.imports import types
{{/judge}}
{{#judge}}
from wit_world.imports import judge, types
{{/judge}}

NAME = "{{name}}"
{{^judge}}
SUMMARY = "The final text contains the word"
SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "minLength": 1}},
    "required": ["word"],
    "additionalProperties": False,
}
{{/judge}}
{{#judge}}
SUMMARY = "The judge scores the final text against the rubric"
SCHEMA = {
    "type": "object",
    "properties": {
        "rubric": {"type": "string", "minLength": 1},
        "threshold": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["rubric"],
    "additionalProperties": False,
}
# The judge's answer: a score and a reason.
VERDICT_SCHEMA = {
    "type": "object",
    "required": ["score", "reason"],
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string"},
    },
}
{{/judge}}

# The run this instance grades, as `begin_run` handed it (one run per instance).
RUN: types.Evidence | None = None


def quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def excerpt(text: str) -> str:
    """At most 120 characters of `text`, quoted, with `...` when cut."""
    return quote(text[:120] + "...") if len(text) > 120 else quote(text)


{{^judge}}
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


def description(word: str) -> str:
    return f"final text contains {quote(word)}"


def check(word: str, evidence: types.Evidence) -> types.Verdict:
    """A pass says what was found, a fail what was seen: every report shows both."""
    seen = f"final text {excerpt(evidence.final_text)}"
    if word in evidence.final_text:
        return types.Verdict(pass_=True, score=1.0, message=f"{NAME} {quote(word)}: found in {seen}")
    return types.Verdict(pass_=False, score=0.0, message=f"{NAME} {quote(word)}: {seen}")
{{/judge}}
{{#judge}}
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
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise Err(types.GradeError_InvalidConfig("threshold must be a number from 0 to 1"))
    return rubric, float(threshold)


def description(config: tuple[str, float]) -> str:
    rubric, threshold = config
    return f"the judge scores the final text against {quote(rubric)} at {threshold:.2f} or more"


def check(config: tuple[str, float], evidence: types.Evidence) -> types.Verdict:
    """One question: the judge scores the final text from 0 to 1 with a reason; the verdict
    passes at the threshold, and its message, `NAME: score S: REASON`, says why either way."""
    rubric, threshold = config
    question = judge.Question(
        messages=[
            types.Message(
                role="system",
                content="You grade an AI agent's work against a rubric. Score from 0 (fails "
                "the rubric) to 1 (fully meets it) and give a one-sentence reason.\n\n"
                f"Rubric:\n{rubric}",
            ),
            types.Message(role="user", content=evidence.final_text),
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
        pass_=score >= threshold, score=score, message=f"{NAME}: score {score:.2f}: {reason}"
    )
{{/judge}}


class WitWorld(wit_world.WitWorld):
    def list_graders(self) -> list[types.GraderInfo]:
        return [
            types.GraderInfo(
                name=NAME, version="0.1.0", summary=SUMMARY, config_schema=json.dumps(SCHEMA)
            )
        ]

    def check_config(self, grader: str, config: str) -> None:
        parse_config(grader, config)

    def describe(self, grader: str, config: str) -> str:
        return description(parse_config(grader, config))

    def begin_run(self, evidence: types.Evidence) -> None:
        global RUN
        RUN = evidence

    def grade_in_run(self, grader: str, config: str) -> types.Verdict:
        parsed = parse_config(grader, config)
        if RUN is None:
            raise Err(types.GradeError_Failed("grade-in-run was called before begin-run"))
        return check(parsed, RUN)

    def grade(self, grader: str, config: str, evidence: types.Evidence) -> types.Verdict:
        return check(parse_config(grader, config), evidence)
