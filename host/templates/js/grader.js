// {{name}}: passes when the agent's final text contains a word.
//
// Config: {{name}}: {word: hello}. Replace the check with your own.

const NAME = "{{name}}";
const SCHEMA = {
  type: "object",
  properties: { word: { type: "string", minLength: 1 } },
  required: ["word"],
  additionalProperties: false,
};

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
  if (config === null || typeof config !== "object" || Object.keys(config).join() !== "word") {
    throw { tag: "invalid-config", val: "expected a map with one field: {word: hello}" };
  }
  if (typeof config.word !== "string" || config.word === "") {
    throw { tag: "invalid-config", val: "word must be a non-empty string" };
  }
  return config.word;
}

export function listGraders() {
  return [
    {
      name: NAME,
      version: "0.1.0",
      summary: "The final text contains the word",
      configSchema: JSON.stringify(SCHEMA),
    },
  ];
}

export function checkConfig(grader, config) {
  parseConfig(grader, config);
}

export function grade(grader, config, evidence) {
  const word = parseConfig(grader, config);
  if (evidence.finalText.includes(word)) {
    return { pass: true, score: 1.0, message: "" };
  }
  return {
    pass: false,
    score: 0.0,
    message: `${NAME} ${JSON.stringify(word)}: final text ${JSON.stringify(evidence.finalText.slice(0, 120))}`,
  };
}
