// {{name}}: asks the judge model whether the agent's final text meets a rubric.
//
// Config: {{name}}: {rubric: "The answer is a polite greeting.", threshold: 0.7}.
// The case grants the judge with `judge: true` beside the grader entry; answers are
// recorded once (`evalhost run --judge record`) and replayed from judgments.jsonl.

import { ask } from "evalhost:grader/judge@0.4.0";

const NAME = "{{name}}";
const SCHEMA = {
  type: "object",
  properties: {
    rubric: { type: "string", minLength: 1 },
    threshold: { type: "number", minimum: 0, maximum: 1 },
  },
  required: ["rubric"],
  additionalProperties: false,
};
const VERDICT_SCHEMA = {
  type: "object",
  required: ["score", "reason"],
  additionalProperties: false,
  properties: {
    score: { type: "number", minimum: 0, maximum: 1 },
    reason: { type: "string" },
  },
};

// One call from a rubric to a verdict: the judge scores `text` from 0 to 1 with a reason;
// the verdict passes at `threshold` and its message is `score S: REASON`.
function askVerdict(rubric, text, threshold) {
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
        { role: "user", content: text },
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
  return { pass: score >= threshold, score, message: `score ${score.toFixed(2)}: ${reason}` };
}

// A thrown value is the `err` of the export's result: a `grade-error` variant.
function parseConfig(grader, text) {
  if (grader !== NAME) {
    throw { tag: "unknown-grader", val: grader };
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch (e) {
    throw { tag: "invalid-config", val: `config is not valid JSON: ${e.message}` };
  }
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

export function listGraders() {
  return [
    {
      name: NAME,
      version: "0.1.0",
      summary: "The judge scores the final text against the rubric",
      configSchema: JSON.stringify(SCHEMA),
    },
  ];
}

export function checkConfig(grader, config) {
  parseConfig(grader, config);
}

export function describe(grader, config) {
  const { rubric, threshold } = parseConfig(grader, config);
  return `the judge scores the final text against ${JSON.stringify(rubric)} at ${threshold.toFixed(2)} or more`;
}

export function grade(grader, config, evidence) {
  const { rubric, threshold } = parseConfig(grader, config);
  const verdict = askVerdict(rubric, evidence.finalText, threshold);
  return { ...verdict, message: `${NAME}: ${verdict.message}` };
}
