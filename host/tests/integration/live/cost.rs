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

/// A Chat Completions call of `name` with `arguments`: `input` prompt tokens, `cached` of them
/// cached, and `output` completion tokens.
fn chat_call_cached(
    id: &str,
    name: &str,
    arguments: &Value,
    input: u64,
    cached: u64,
    output: u64,
) -> Vec<String> {
    let call = json!({"index":0,"id":id,"type":"function",
        "function":{"name":name,"arguments":arguments.to_string()}});
    vec![
        json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[call]}}]})
            .to_string(),
        json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}).to_string(),
        json!({"choices":[],"usage":{"prompt_tokens":input,"completion_tokens":output,
            "prompt_tokens_details":{"cached_tokens":cached}}})
        .to_string(),
        "[DONE]".to_owned(),
    ]
}

/// `record --live` keeps the live model and each response's usage in the replay case, and a
/// replay of it reports what the recording cost at today's prices: the cost the same live run
/// has in a live suite's report. A replay case without the recorded model (or whose model has
/// no price) has no recorded cost at all.
#[test]
fn a_replayed_recording_shows_what_its_live_run_cost() {
    // Two live runs of the same case, each answered alike: one by `run --live`, one recorded.
    let answers = || {
        [
            Step::Sse(chat_call_cached(
                "call_1",
                "write_file",
                &json!({"path": "b.txt", "content": "hello"}),
                30,
                0,
                4,
            )),
            Step::Sse(chat_text_cached("Wrote hello to b.txt", 50, 20, 6)),
        ]
    };
    let fake = FakeProvider::start(
        answers().into_iter().chain(answers()).collect(),
        Step::Status(400, None, "unexpected extra request"),
    );
    let project = priced(
        &fake,
        "\n[prices.\"fake-model\"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n",
    );
    project.case(
        "write",
        "prompt: Write hello to b.txt.\napprove: all\nruns: 1\ngraders:\n  - file_contains: {path: b.txt, text: hello}\n",
    );
    let live_out = project.path().join("out-live");
    project
        .evalhost(&[
            "run",
            "--live",
            "--no-history",
            "--out",
            live_out.to_str().unwrap(),
            "cases/write.yaml",
        ])
        .assert_code(0);
    let live = report(&live_out);
    let live_run = &live["cases"][0]["runs"][0];
    // 60 uncached input tokens at $2, 20 cached at $0.50, 10 output at $8 per million.
    let live_cost = (60.0 * 2.0 + 20.0 * 0.5 + 10.0 * 8.0) / 1e6;
    assert!(close(&live_run["cost_usd"], live_cost), "{live_run}");

    let recorded_path = project.path().join("replay/write-recorded.yaml");
    std::fs::create_dir_all(recorded_path.parent().unwrap()).unwrap();
    project
        .evalhost(&[
            "record",
            "--live",
            "cases/write.yaml",
            "--output",
            "replay/write-recorded.yaml",
        ])
        .assert_code(0);
    assert_eq!(fake.received().len(), 4);
    let recorded = std::fs::read_to_string(&recorded_path).unwrap();
    assert!(
        recorded.contains("recorded: {model: \"fake-model\"}\nmodel:\n"),
        "{recorded}"
    );
    assert!(
        recorded
            .contains("    usage: {input_tokens: 30, cached_input_tokens: 0, output_tokens: 4}\n")
            && recorded.contains(
                "    usage: {input_tokens: 50, cached_input_tokens: 20, output_tokens: 6}\n"
            ),
        "{recorded}"
    );

    // Replay: no provider, the recording's usage reported as recorded, and its cost.
    let replay_out = project.path().join("out-replay");
    let output = project.evalhost(&[
        "run",
        "--no-history",
        "--out",
        replay_out.to_str().unwrap(),
        "replay/write-recorded.yaml",
    ]);
    output.assert_code(0);
    assert_eq!(
        fake.received().len(),
        4,
        "replay must not call the provider"
    );
    let replay = report(&replay_out);
    let case = &replay["cases"][0];
    let run = &case["runs"][0];
    assert_eq!(run["pass"], true, "{run}");
    assert_eq!(run["recorded_cost_usd"], live_run["cost_usd"], "{run}");
    assert!(run.get("cost_usd").is_none(), "{run}");
    assert_eq!(run["usage"], live_run["usage"], "{run}");
    assert!(
        close(&case["summary"]["recorded_cost_usd"], live_cost),
        "{case}"
    );
    assert!(
        close(&replay["summary"]["recorded_cost_usd"], live_cost),
        "{replay}"
    );
    assert!(replay["summary"].get("cost_usd").is_none(), "{replay}");
    assert_eq!(replay["prices"]["as_of"], "2026-12-01");
    let file = replay["prices"]["files"][0].as_str().unwrap();
    let stdout = output.stdout();
    assert!(
        stdout.contains(&format!(
            "Recorded cost: $0.0002 (what the live runs these cases replay cost, at prices as of 2026-12-01, [prices] of {file}).\n"
        )),
        "{stdout}"
    );

    // Controls: without the recorded model, and with a model the table does not price, the
    // same replay has no recorded cost, and the report no cost at all.
    for (name, edit) in [
        ("write-unattributed", ""),
        (
            "write-unpriced",
            "recorded: {model: \"model-nobody-prices\"}\n",
        ),
    ] {
        let text = recorded
            .replace("name: \"write-recorded\"", &format!("name: \"{name}\""))
            .replace("recorded: {model: \"fake-model\"}\n", edit);
        assert_ne!(text, recorded);
        std::fs::write(project.path().join(format!("replay/{name}.yaml")), text).unwrap();
        let out = project.path().join(format!("out-{name}"));
        let output = project.evalhost(&[
            "run",
            "--no-history",
            "--out",
            out.to_str().unwrap(),
            &format!("replay/{name}.yaml"),
        ]);
        output.assert_code(0);
        let json = report(&out);
        let run = &json["cases"][0]["runs"][0];
        assert_eq!(run["pass"], true, "{name}: {run}");
        // The recording's usage is still what the replay reports.
        assert_eq!(run["usage"], live_run["usage"], "{name}: {run}");
        assert!(run.get("recorded_cost_usd").is_none(), "{name}: {run}");
        assert!(
            json["summary"].get("recorded_cost_usd").is_none(),
            "{name}: {json}"
        );
        assert!(json.get("prices").is_none(), "{name}: {json}");
        assert!(
            !output.stdout().contains("Recorded cost"),
            "{name}: {}",
            output.stdout()
        );
    }
}
