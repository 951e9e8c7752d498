"""Write a small Inspect AI log with Inspect's own mock model, offline.

    pip install inspect_ai==0.3.285
    python3 make_log.py OUT_DIR [--json]

Three samples, run one at a time so the mock's scripted outputs go to them in order:

1. "What is 2+2?": the model calls the `add` tool, then answers "The answer is 4."
2. "What does notes.txt say?": the model calls the `read` tool, which fails (a ToolError,
   recorded as the tool message's `error`), then answers that it could not read it.
3. "Divide 1 by 0.": the model calls the `divide` tool, which raises: Inspect records the
   sample's `error` and the sample ends there.

Every scripted output carries its usage: without it Inspect counts tokens with a tiktoken
encoding it would download, and the sample fails offline. The log is written into OUT_DIR
as `arithmetic.eval` (a zip), or with `--json` as `arithmetic.json` (one document), renamed
from Inspect's own timestamped name; the script prints its path. `arithmetic.eval` beside
this script is its output.
"""

import os
import sys

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import ToolError, tool

MODEL = "mockllm/model"


@tool
def add():
    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: The first number.
            y: The second number.
        """
        return x + y

    return execute


@tool
def read():
    async def execute(path: str) -> str:
        """Read a text file.

        Args:
            path: The file's path.
        """
        raise ToolError(f"{path}: no such file")

    return execute


@tool
def divide():
    async def execute(x: int, y: int) -> str:
        """Divide x by y.

        Args:
            x: The dividend.
            y: The divisor.
        """
        return str(x / y)

    return execute


def usage(input_tokens: int, output_tokens: int, cache_read: int = 0) -> ModelUsage:
    return ModelUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
        input_tokens_cache_read=cache_read or None,
    )


def with_usage(output: ModelOutput, u: ModelUsage) -> ModelOutput:
    output.usage = u
    return output


def outputs() -> list[ModelOutput]:
    return [
        # Sample 1: a tool call, then the answer.
        with_usage(
            ModelOutput.for_tool_call(
                MODEL, "add", {"x": 2, "y": 2}, tool_call_id="call_add_1"
            ),
            usage(120, 18, cache_read=64),
        ),
        with_usage(ModelOutput.from_content(MODEL, "The answer is 4."), usage(150, 7)),
        # Sample 2: a tool call whose tool fails, then an answer without it.
        with_usage(
            ModelOutput.for_tool_call(
                MODEL, "read", {"path": "notes.txt"}, tool_call_id="call_read_1"
            ),
            usage(110, 15),
        ),
        with_usage(
            ModelOutput.from_content(MODEL, "I could not read notes.txt: it does not exist."),
            usage(140, 12),
        ),
        # Sample 3: a tool that raises: the sample errors.
        with_usage(
            ModelOutput.for_tool_call(
                MODEL, "divide", {"x": 1, "y": 0}, tool_call_id="call_divide_1"
            ),
            usage(100, 14),
        ),
    ]


@task
def arithmetic():
    return Task(
        dataset=[
            Sample(id=1, input="What is 2+2? Use the add tool.", target="4"),
            Sample(id="notes", input="What does notes.txt say?", target="exist"),
            Sample(id=3, input="Divide 1 by 0 with the divide tool.", target="never"),
        ],
        solver=[
            system_message("You are a careful assistant. Use the tools you are given."),
            use_tools([add(), read(), divide()]),
            generate(),
        ],
        scorer=includes(),
    )


def main() -> None:
    out_dir = sys.argv[1]
    log_format = "json" if "--json" in sys.argv[2:] else "eval"
    [log] = eval(
        arithmetic(),
        model=get_model(MODEL, custom_outputs=outputs()),
        log_dir=out_dir,
        log_format=log_format,
        max_samples=1,
        fail_on_error=False,
        display="none",
    )
    path = os.path.join(out_dir, f"arithmetic.{log_format}")
    os.replace(log.location, path)
    print(path)


if __name__ == "__main__":
    main()
