{{^judge}}
// {{name}}: passes when the agent's final text contains a word.
//
// Config: {{name}}: {word: hello}. Replace the check with your own.
{{/judge}}
{{#judge}}
// {{name}}: asks the judge model whether the agent's final text meets a rubric.
//
// Config: {{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}.
// The case grants the judge with `judge: true` beside the grader entry; answers are
// recorded once (`evalhost run --judge record`) and replayed from judgments.jsonl.
{{/judge}}
//
// Targets WIT 0.5.0 (wit/grader.wit): the host hands an instance the run's evidence once
// (`beginRun`, kept in `run`) and calls `gradeInRun` for each of the run's entries of this
// component. A thrown value is the `err` of an export's result: a `grade-error` variant.
{{#judge}}

import { ask } from "evalhost:grader/judge@0.5.0";
{{/judge}}

const NAME = "{{name}}";
{{^judge}}
const SUMMARY = "The final text contains the word";
const SCHEMA = {
  type: "object",
  properties: { word: { type: "string", minLength: 1 } },
  required: ["word"],
  additionalProperties: false,
};
{{/judge}}
{{#judge}}
const SUMMARY = "The judge scores the final text against the rubric";
const SCHEMA = {
  type: "object",
  properties: {
    rubric: { type: "string", minLength: 1 },
    threshold: { type: "number", minimum: 0, maximum: 1 },
  },
  required: ["rubric"],
  additionalProperties: false,
};
// The judge's answer: a score and a reason.
const VERDICT_SCHEMA = {
  type: "object",
  required: ["score", "reason"],
  additionalProperties: false,
  properties: {
    score: { type: "number", minimum: 0, maximum: 1 },
    reason: { type: "string" },
  },
};
{{/judge}}

// The run this instance grades, as `beginRun` handed it (one run per instance).
let run = null;

function quote(text) {
  return JSON.stringify(text);
}

// At most 120 characters of `text`, quoted, with `...` when cut.
function excerpt(text) {
  const chars = Array.from(text);
  return quote(chars.length > 120 ? `${chars.slice(0, 120).join("")}...` : text);
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw { tag: "invalid-config", val: `config is not valid JSON: ${e.message}` };
  }
}

{{^judge}}
// The config's word.
function parseConfig(grader, text) {
  if (grader !== NAME) {
    throw { tag: "unknown-grader", val: grader };
  }
  const config = parseJson(text);
  if (config === null || typeof config !== "object" || Object.keys(config).join() !== "word") {
    throw { tag: "invalid-config", val: "expected a map with one field: {word: hello}" };
  }
  if (typeof config.word !== "string" || config.word === "") {
    throw { tag: "invalid-config", val: "word must be a non-empty string" };
  }
  return config.word;
}

function description(word) {
  return `final text contains ${quote(word)}`;
}

// A pass says what was found, a fail what was seen: every report shows both.
function check(word, evidence) {
  const seen = `final text ${excerpt(evidence.finalText)}`;
  if (evidence.finalText.includes(word)) {
    return { pass: true, score: 1.0, message: `${NAME} ${quote(word)}: found in ${seen}` };
  }
  return { pass: false, score: 0.0, message: `${NAME} ${quote(word)}: ${seen}` };
}
{{/judge}}
{{#judge}}
// The config's rubric and threshold.
function parseConfig(grader, text) {
  if (grader !== NAME) {
    throw { tag: "unknown-grader", val: grader };
  }
  const config = parseJson(text);
  if (config === null || typeof config !== "object" ||
      Object.keys(config).some((k) => k !== "rubric" && k !== "threshold")) {
    throw { tag: "invalid-config", val: "expected a map: {rubric: ..., threshold: 0.7}" };
  }
  if (typeof config.rubric !== "string" || config.rubric.trim() === "") {
    throw { tag: "invalid-config", val: "rubric must be a non-empty string" };
  }
  const threshold = config.threshold ?? 0.5;
  if (typeof threshold !== "number" || threshold < 0 || threshold > 1) {
    throw { tag: "invalid-config", val: "threshold must be a number from 0 to 1" };
  }
  return { rubric: config.rubric, threshold };
}

function description({ rubric, threshold }) {
  return `the judge scores the final text against ${quote(rubric)} at ${threshold.toFixed(2)} or more`;
}

// One question: the judge scores the final text from 0 to 1 with a reason; the verdict
// passes at the threshold, and its message, `NAME: score S: REASON`, says why either way.
function check({ rubric, threshold }, evidence) {
  let answer;
  try {
    answer = ask({
      messages: [
        {
          role: "system",
          content:
            "You grade an AI agent's work against a rubric. Score from 0 (fails the rubric) " +
            "to 1 (fully meets it) and give a one-sentence reason.\n\nRubric:\n" + rubric,
        },
        { role: "user", content: evidence.finalText },
      ],
      schema: JSON.stringify(VERDICT_SCHEMA),
      maxOutputTokens: 400,
    });
  } catch (e) {
    // The host already decided the call's outcome from the judge's error; say why.
    const why = e && e.payload ? e.payload.val : String(e);
    throw { tag: "failed", val: String(why) };
  }
  let score, reason;
  try {
    const scored = JSON.parse(answer.text);
    score = Math.min(1, Math.max(0, Number(scored.score)));
    reason = String(scored.reason ?? "").trim();
    if (Number.isNaN(score)) throw new Error("no numeric score");
  } catch (e) {
    throw { tag: "failed", val: `the judge's answer is not a score: ${e.message}` };
  }
  return { pass: score >= threshold, score, message: `${NAME}: score ${score.toFixed(2)}: ${reason}` };
}
{{/judge}}

export function listGraders() {
  return [{ name: NAME, version: "0.1.0", summary: SUMMARY, configSchema: JSON.stringify(SCHEMA) }];
}

export function checkConfig(grader, config) {
  parseConfig(grader, config);
}

export function describe(grader, config) {
  return description(parseConfig(grader, config));
}

export function beginRun(evidence) {
  run = evidence;
}

export function gradeInRun(grader, config) {
  const parsed = parseConfig(grader, config);
  if (run === null) {
    throw { tag: "failed", val: "grade-in-run was called before begin-run" };
  }
  return check(parsed, run);
}

export function grade(grader, config, evidence) {
  return check(parseConfig(grader, config), evidence);
}
