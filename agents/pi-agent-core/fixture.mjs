// An AgentCompany fixture as the replay needs it: the user turns, the tools it calls (defined
// from the calls: name, a description, a parameter schema inferred from the recorded
// arguments) and the recorded tool results in the order the calls were made.
//
// evalhost checks the fixture (shape, turn order, drift) before it starts this adapter, so
// this reader only extracts; a line it cannot read is still a hard error naming the line.

import { readFileSync } from "node:fs";

/** Read `path` (JSONL: meta, turn lines, assertions). */
export function readFixture(path) {
  const lines = readFileSync(path, "utf8").split("\n");
  let meta;
  const userTurns = [];
  const calls = [];
  const results = new Map();
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let record;
    try {
      record = JSON.parse(line);
    } catch (error) {
      throw new Error(`${path}:${index + 1}: invalid JSON: ${error.message}`);
    }
    if (record.type === "meta") meta = record;
    if (record.type !== "turn") return;
    const blocks = Array.isArray(record.content) ? record.content : [];
    const text = blocks
      .filter((b) => b.type === "text")
      .map((b) => b.text)
      .join("");
    if (record.role === "user") userTurns.push(text);
    if (record.role === "assistant") {
      for (const block of blocks) {
        if (block.type === "toolCall") calls.push(block);
      }
    }
    if (record.role === "toolResult") {
      results.set(record.toolUseId, { text, isError: record.isError === true });
    }
  });
  if (!meta) throw new Error(`${path}:1: no meta line`);
  if (userTurns.length === 0) throw new Error(`${path}: no user turn`);
  const recorded = calls.map((call) => {
    const result = results.get(call.id);
    if (!result) throw new Error(`${path}: tool call ${call.id} (${call.name}) has no toolResult`);
    return { name: call.name, ...result };
  });
  return { meta, userTurns, recorded, tools: toolDefinitions(meta.fixtureId, calls) };
}

/** One definition per tool name, in order of first call. */
function toolDefinitions(fixtureId, calls) {
  const byName = new Map();
  for (const call of calls) {
    const properties = byName.get(call.name) ?? new Map();
    byName.set(call.name, properties);
    for (const [key, value] of Object.entries(call.arguments ?? {})) {
      const type = jsonType(value);
      const seen = properties.get(key);
      properties.set(key, seen === undefined || seen === type ? type : null);
    }
  }
  return [...byName].map(([name, properties]) => ({
    name,
    description: `Replays the results recorded for \`${name}\` in fixture ${fixtureId}.`,
    parameters: {
      type: "object",
      properties: Object.fromEntries(
        [...properties].map(([key, type]) => [key, type === null ? {} : { type }]),
      ),
      additionalProperties: true,
    },
  }));
}

/** The JSON Schema type of a JSON value. */
function jsonType(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
