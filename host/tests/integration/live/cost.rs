//! Cost as data (docs/cost.md): a live suite priced from `[prices]` in evalhost.toml, an
//! unknown model without a cost, and `--max-cost` stopping a suite once its budget is spent;
//! against a fake provider on 127.0.0.1.

use crate::support::live::*;
use serde_json::{Value, json};

/// A Chat Completions answer of `text`: `input` prompt tokens, `cached` of them cached, and
/// `output` completion tokens.
fn chat_text_cached(text: &str, input: u64, cached: u64, output: u64) -> Vec<String> {
    vec![
        json!({"choices":[{"index":0,"delta":{"role":"assistant","content":text}}]}).to_string(),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string(),
        json!({"choices":[],"usage":{"prompt_tokens":input,"completion_tokens":output,
            "prompt_tokens_details":{"cached_tokens":cached}}})
        .to_string(),
        "[DONE]".to_owned(),
    ]
}

const GREET: &str = "prompt: Say hello.\nruns: 1\ngraders:\n  - final_text_contains: hello\n";

fn report(dir: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// A project for `fake` whose evalhost.toml ends with `prices`.
fn priced(fake: &FakeProvider, prices: &str) -> Project {
    let project = Project::for_fake("openai-chat", fake, "");
    let toml = std::fs::read_to_string(project.path().join("evalhost.toml")).unwrap();
    std::fs::write(
        project.path().join("evalhost.toml"),
        format!("{toml}{prices}"),
    )
    .unwrap();
    project
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-12)
}

#[test]
fn a_live_suite_is_priced_from_evalhost_toml_and_an_unknown_model_has_no_cost() {
    let fake = FakeProvider::start(
        vec![],
        Step::Sse(chat_text_cached("Well hello there", 40, 10, 6)),
    );
    let project = priced(
        &fake,
        "\n[prices.\"fake-model\"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n",
    );
    project.case(
        "greet",
        "prompt: Say hello.\nruns: 2\ngraders:\n  - final_text_contains: hello\n",
    );
    project.case("wave", GREET);
    let out = project.path().join("out");
    let output = project.evalhost(&[
        "run",
        "--live",
        "--no-history",
        "--out",
        out.to_str().unwrap(),
        "cases",
    ]);
    output.assert_code(0);
    // 30 uncached input tokens at $2, 10 cached at $0.50, 6 output at $8 per million.
    let run_cost = (30.0 * 2.0 + 10.0 * 0.5 + 6.0 * 8.0) / 1e6;
    let json = report(&out);
    let greet = &json["cases"][0];
    assert_eq!(greet["name"], "greet");
    for run in greet["runs"].as_array().unwrap() {
        assert!(close(&run["cost_usd"], run_cost), "{run}");
        assert_eq!(run["usage"]["cached_input_tokens"], 10, "{run}");
        assert!(run.get("recorded_cost_usd").is_none(), "{run}");
    }
    assert!(
        close(&greet["summary"]["cost_usd"], 2.0 * run_cost),
        "{greet}"
    );
    assert!(greet["summary"].get("runs_without_price").is_none());
    assert!(
        close(&json["summary"]["cost_usd"], 3.0 * run_cost),
        "{json}"
    );
    assert_eq!(json["prices"]["as_of"], "2026-12-01");
    let file = json["prices"]["files"][0].as_str().unwrap();
    assert!(file.ends_with("evalhost.toml"), "{file}");
    assert!(json.get("budget").is_none());

    let stdout = output.stdout();
    let header = stdout.lines().find(|l| l.starts_with("CASE")).unwrap();
    assert!(header.ends_with("OUT_TOK  COST     STATUS"), "{header}");
    let row = stdout.lines().find(|l| l.starts_with("greet")).unwrap();
    assert!(row.ends_with("$0.0002  pass"), "{row}");
    assert!(
        stdout.contains(&format!(
            "Cost: $0.0003 (prices as of 2026-12-01, [prices] of {file}).\n"
        )),
        "{stdout}"
    );

    // A model the table does not know: its runs have no cost, and the report none at all.
    let out = project.path().join("out-unknown");
    let output = project.evalhost_with(
        &[
            "run",
            "--live",
            "--no-history",
            "--out",
            out.to_str().unwrap(),
            "cases",
        ],
        &[
            ("EVALHOST_TEST_KEY", SECRET),
            ("EVALHOST_MODEL", "model-nobody-prices"),
        ],
    );
    output.assert_code(0);
    let json = report(&out);
    assert!(json["summary"].get("cost_usd").is_none(), "{json}");
    assert!(json.get("prices").is_none(), "{json}");
    assert!(json["cases"][0]["runs"][0].get("cost_usd").is_none());
    assert!(!output.stdout().contains("Cost:"), "{}", output.stdout());
    assert!(!output.stdout().contains("COST"), "{}", output.stdout());
}

#[test]
fn max_cost_refuses_requests_once_spent_and_stops_starting_runs() {
    // The first answer costs $0.40 (40 input tokens at $10,000 a million); the budget is
    // $0.30, so a's second request is refused and b, c never start.
    let fake = FakeProvider::start(
        vec![Step::Sse(chat_call(
            "call_1",
            "write_file",
            &json!({"path": "b.txt", "content": "hello"}),
            40,
            0,
        ))],
        Step::Sse(chat_text("hello", 40, 0)),
    );
    let project = priced(
        &fake,
        "\n[prices.\"fake-model\"]\ninput = 10000\noutput = 0\n",
    );
    project.case(
        "a-write",
        "prompt: Write hello to b.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: b.txt, text: hello}\n",
    );
    project.case("b-greet", GREET);
    project.case("c-greet", GREET);
    let out = project.path().join("out");
    let output = project.evalhost(&[
        "run",
        "--live",
        "--no-history",
        "--jobs",
        "1",
        "--max-cost",
        "0.30",
        "--out",
        out.to_str().unwrap(),
        "cases",
    ]);
    output.assert_code(130);
    assert!(
        output.stderr().contains(
            "Stopped by --max-cost: the budget was spent, 2 runs not made; the report covers the runs that finished"
        ),
        "{}",
        output.stderr()
    );
    // The suite needed at least 4 requests; one was sent.
    assert_eq!(fake.received().len(), 1);
    let json = report(&out);
    assert_eq!(json["interrupted"], true);
    let budget = &json["budget"];
    assert!(close(&budget["max_cost_usd"], 0.30), "{budget}");
    assert!(close(&budget["spent_usd"], 0.40), "{budget}");
    assert_eq!(budget["exhausted"], true);
    let cancelled: Vec<(&str, bool)> = json["cancelled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["case"].as_str().unwrap(), c["started"].as_bool().unwrap()))
        .collect();
    assert_eq!(cancelled, [("b-greet", false), ("c-greet", false)]);
    // What finished: a's run, errored by the refused request, and costed.
    let a = &json["cases"][0];
    assert_eq!(a["name"], "a-write");
    let run = &a["runs"][0];
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("not sent: the suite's --max-cost budget of $0.3 is spent ($0.4000 so far)"),
        "{error}"
    );
    assert!(close(&run["cost_usd"], 0.40), "{run}");
    assert_eq!(json["cases"][1]["runs"], json!([]));
    let stdout = output.stdout();
    assert!(
        stdout.contains("Budget: --max-cost $0.3000 reached: model requests were refused from then on and the suite stopped starting runs ($0.4000 spent, retries included).\n"),
        "{stdout}"
    );
}

#[test]
fn max_cost_without_a_price_for_the_model_is_refused_before_anything_runs() {
    let fake = FakeProvider::start(vec![], Step::Sse(chat_text("hello", 40, 6)));
    let project = Project::for_fake("openai-chat", &fake, "");
    project.case("greet", GREET);
    let output = project.evalhost(&["run", "--live", "--no-history", "--max-cost", "1", "cases"]);
    output.assert_code(2);
    let stderr = output.stderr();
    assert!(
        stderr.contains("--max-cost needs a price for the model `fake-model`")
            && stderr.contains("[prices.\"fake-model\"]"),
        "{stderr}"
    );
    assert!(fake.received().is_empty());
    // --max-cost is live mode's.
    let output = project.evalhost(&["run", "--max-cost", "1", "cases"]);
    output.assert_code(2);
    assert!(output.stderr().contains("--live"), "{}", output.stderr());
}
