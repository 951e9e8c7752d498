#!/usr/bin/env node
// Replays one AgentCompany fixture through @mariozechner/pi-agent-core's `Agent` (the seed's
// tool-loop replay): each user turn of the fixture is one `agent.prompt(...)` of one
// conversation; the model is a pi-ai `openai-responses` model whose base URL is the run's model
// endpoint (evalhost serves the fixture's recorded assistant turns there); the tools are defined
// from the fixture's calls and answered, in call order, with the recorded results (replay
// executors). A call the recording does not answer (another tool at that position, or none
// left) and a recorded result left unused are hard errors, as in the seed.
//
// Usage: node replay.mjs FIXTURE.jsonl SYSTEM.txt
// Environment: OPENAI_BASE_URL (required), OPENAI_API_KEY, OPENAI_MODEL.
// Exit status: 0 replayed; 1 the replay failed (the reason on stderr); 2 bad usage.

import { readFileSync } from "node:fs";

import { Agent } from "@mariozechner/pi-agent-core";

import { readFixture } from "./fixture.mjs";

const [fixturePath, systemPath] = process.argv.slice(2);
const baseUrl = process.env.OPENAI_BASE_URL;
if (!fixturePath || !systemPath || !baseUrl) {
  process.stderr.write(
    "usage: OPENAI_BASE_URL=URL node replay.mjs FIXTURE.jsonl SYSTEM.txt\n",
  );
  process.exit(2);
}

const fixture = readFixture(fixturePath);
const systemPrompt = readFileSync(systemPath, "utf8");
const modelId = process.env.OPENAI_MODEL || "scripted";

/** A pi-ai model speaking OpenAI Responses to the run's endpoint. */
const model = {
  id: modelId,
  name: modelId,
  api: "openai-responses",
  provider: "openai",
  baseUrl,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 200000,
  maxTokens: 32000,
};

let used = 0;
let replayFailure;

/** The replay executor of `name`: the next recorded result, if the recording has it here. */
function replayTool(definition) {
  return {
    ...definition,
    label: definition.name,
    execute: async () => {
      const position = used++;
      const recorded = fixture.recorded[position];
      if (!recorded || recorded.name !== definition.name) {
        replayFailure ??=
          `tool call ${position + 1} (${definition.name}): ` +
          (recorded
            ? `the recording has a result for \`${recorded.name}\` at this position`
            : `replay exhausted: the recording has ${fixture.recorded.length} tool result(s)`);
        agent.abort();
        throw new Error(replayFailure);
      }
      if (recorded.isError) throw new Error(recorded.text);
      return { content: [{ type: "text", text: recorded.text }], details: {} };
    },
  };
}

const agent = new Agent({
  initialState: {
    systemPrompt,
    model,
    thinkingLevel: "off",
    tools: fixture.tools.map(replayTool),
  },
  // One call at a time, in the order the model made them, as they were recorded.
  toolExecution: "sequential",
});

for (const text of fixture.userTurns) {
  await agent.prompt(text);
  if (replayFailure) fail(replayFailure);
  if (agent.state.errorMessage) fail(`pi-agent-core: ${agent.state.errorMessage}`);
}
if (used !== fixture.recorded.length) {
  fail(
    `replay incomplete: ${used} of the ${fixture.recorded.length} recorded tool results were used`,
  );
}
const last = agent.state.messages.at(-1);
const answer =
  last?.role === "assistant"
    ? last.content
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join("")
    : "";
process.stdout.write(`${answer}\n`);

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
