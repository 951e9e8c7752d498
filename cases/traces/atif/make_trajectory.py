"""Write a small ATIF trajectory with Harbor's own trajectory models, or validate one.

    python3 make_trajectory.py OUT.json          # build, validate, write OUT.json
    python3 make_trajectory.py --validate FILE   # check FILE with Harbor's validator

Harbor 0.26.0 declares Python >= 3.12, so `pip install harbor` refuses on 3.11. Its ATIF
models (`harbor.models.trajectories`) and validator (`harbor.utils.trajectory_validator`)
need only pydantic 2 and import on 3.11; install the wheel without its dependencies:

    pip install --no-deps --ignore-requires-python harbor==0.26.0

(or unpack the wheel from `pip download --no-deps --python-version 3.12
--only-binary=:all: harbor==0.26.0` and put it on PYTHONPATH). Not every Harbor module
imports on 3.11: `harbor.utils.trajectory_utils` (its `format_trajectory_json`) pulls in
`harbor.models.agent.context`, whose `typing.TypedDict` pydantic refuses below 3.12. So
the file is written as that function writes it for a trajectory without token-id arrays:
`json.dumps(trajectory.to_json_dict(), indent=2)`, no final newline.

The session (fixed ids and times, so the file is the same every time):

1. user: the task, "Print the greeting in greeting.txt."
2. agent: calls `bash` with `cat greeting.txt`; the observation is the file's text.
3. agent: calls `bash` with `cat greeting.md`, which fails (`extra.is_error`, as Harbor's
   pi and Kimi converters mark a failed tool result: ATIF itself has no error flag).
4. agent: the final message.

Agent steps carry their token usage (`metrics`); `final_metrics` the totals.
"""

import json
import sys
from datetime import datetime, timedelta, timezone

from harbor.models.trajectories import (
    Agent,
    FinalMetrics,
    Metrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from harbor.utils.trajectory_validator import TrajectoryValidator

START = datetime(2026, 12, 3, 10, 0, 0, tzinfo=timezone.utc)
MODEL = "openai/gpt-5-mini"

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the task's workspace.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
}


def at(ms: int) -> str:
    """The ISO 8601 time `ms` after the start, as Harbor's agents write it."""
    return (START + timedelta(milliseconds=ms)).isoformat()


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(
        tool_call_id=call_id, function_name="bash", arguments={"command": command}
    )


def trajectory() -> Trajectory:
    steps = [
        Step(
            step_id=1,
            timestamp=at(0),
            source="user",
            message="Print the greeting in greeting.txt.",
        ),
        Step(
            step_id=2,
            timestamp=at(1_250),
            source="agent",
            model_name=MODEL,
            message="I will read the file.",
            reasoning_content="The greeting is in greeting.txt; cat prints it.",
            tool_calls=[bash("call_1", "cat greeting.txt")],
            observation=Observation(
                results=[
                    ObservationResult(
                        source_call_id="call_1", content="Hello from Harbor!\n"
                    )
                ]
            ),
            metrics=Metrics(prompt_tokens=120, completion_tokens=18, cached_tokens=0),
        ),
        Step(
            step_id=3,
            timestamp=at(2_000),
            source="agent",
            model_name=MODEL,
            message="",
            tool_calls=[bash("call_2", "cat greeting.md")],
            observation=Observation(
                results=[
                    ObservationResult(
                        source_call_id="call_2",
                        content="cat: greeting.md: No such file or directory\n",
                        extra={"is_error": True},
                    )
                ]
            ),
            metrics=Metrics(prompt_tokens=150, completion_tokens=9, cached_tokens=100),
        ),
        Step(
            step_id=4,
            timestamp=at(2_750),
            source="agent",
            model_name=MODEL,
            message="greeting.txt says: Hello from Harbor!",
            metrics=Metrics(prompt_tokens=190, completion_tokens=11, cached_tokens=140),
        ),
    ]
    return Trajectory(
        schema_version="ATIF-v1.8",
        session_id="0199e0a4-2b7c-7d1e-9a3f-5c2d8e6f1a40",
        agent=Agent(
            name="example-agent",
            version="1.0.0",
            model_name=MODEL,
            tool_definitions=[BASH],
        ),
        steps=steps,
        final_metrics=FinalMetrics(
            total_prompt_tokens=460,
            total_completion_tokens=38,
            total_cached_tokens=240,
            total_steps=len(steps),
        ),
    )


def validate(path: str) -> bool:
    """Check the file at `path` with Harbor's own validator (its pydantic models)."""
    validator = TrajectoryValidator()
    if validator.validate(path):
        return True
    for error in validator.get_errors():
        print(f"{path}: {error}", file=sys.stderr)
    return False


def main() -> None:
    if sys.argv[1:2] == ["--validate"] and len(sys.argv) == 3:
        sys.exit(0 if validate(sys.argv[2]) else 1)
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    made = trajectory()
    document = made.to_json_dict()
    # What was written reads back as what was built.
    assert Trajectory.model_validate(document) == made
    with open(sys.argv[1], "w") as f:
        f.write(json.dumps(document, indent=2))
    if not validate(sys.argv[1]):
        sys.exit(1)
    print(sys.argv[1])


if __name__ == "__main__":
    main()
