"""The benchmark suite as an inspect_ai task (generated samples: DIR/inspect/samples.jsonl).

The model is inspect's own mock, `mockllm/model`, answering each sample with its input (the
run's final text), so the scorers see the same final text evalhost's graders see. Five checks
per sample, as in the evalhost case: `includes()` for `final_text_contains` (the sample's
target) and four custom scorers for the rest (metadata `checks`: grader name and config).
Run by bench/run.sh: `inspect eval inspect_task.py -T samples=... --max-samples 2`.
"""

import json
import re

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, includes, scorer
from inspect_ai.solver import TaskState, generate


def echo(input, tools, tool_choice, config):
    output = ModelOutput.from_content(model="mockllm/model", content=input[-1].text)
    # With usage set, mockllm counts no tokens (its tokenizer would download an encoding).
    n = len(output.completion)
    output.usage = ModelUsage(input_tokens=n, output_tokens=n, total_tokens=2 * n)
    return output


def passes(check, state):
    """What the built-in grader of the same name decides."""
    grader, config = check["grader"], check["config"]
    meta = state.metadata
    text = state.output.completion
    calls = meta["calls"]
    names = [c["name"] for c in calls]
    if grader == "final_text_not_contains":
        return config not in text
    if grader == "final_text_matches":
        return re.search(config, text) is not None
    if grader == "tool_called":
        return config in names
    if grader == "tool_not_called":
        return config not in names
    if grader == "tool_order":
        i = 0
        for name in names:
            if i < len(config) and name == config[i]:
                i += 1
        return i == len(config)
    if grader == "result_status":
        n = config["call"]
        return len(calls) >= n and calls[n - 1]["status"] == config["status"]
    if grader == "file_exists":
        return config in meta["files"]
    if grader == "file_contains":
        return config["text"] in meta["files"].get(config["path"], "")
    if grader == "max_requests":
        return meta["requests"] <= config
    if grader == "max_tool_calls":
        return len(calls) <= config
    raise ValueError(f"no check for grader {grader}")


def check_scorer(k):
    async def score(state: TaskState, target: Target) -> Score:
        ok = passes(state.metadata["checks"][k], state)
        return Score(value=CORRECT if ok else INCORRECT)

    return score


@scorer(metrics=[accuracy()])
def check_2():
    return check_scorer(0)


@scorer(metrics=[accuracy()])
def check_3():
    return check_scorer(1)


@scorer(metrics=[accuracy()])
def check_4():
    return check_scorer(2)


@scorer(metrics=[accuracy()])
def check_5():
    return check_scorer(3)


@task
def bench_suite(samples: str):
    return Task(
        dataset=json_dataset(samples),
        solver=[generate()],
        scorer=[includes(), check_2(), check_3(), check_4(), check_5()],
        model=get_model("mockllm/model", custom_outputs=echo),
    )
