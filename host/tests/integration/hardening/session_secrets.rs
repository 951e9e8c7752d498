//! One secret per run session, from the attacker's side: under `--jobs 2` an external agent
//! tries every other session of the endpoint (the old addresses `/s/<n>`, and `/s/<n>-<its own
//! secret>`) while a victim run waits for its one scripted answer. Each attempt is refused, the
//! victim passes with its answer and its log holds none of the attacker's requests; the
//! control is the attacker's own session, which answers the same request.

use std::path::Path;

use crate::support::evalhost::Evalhost;

/// The attacker: asks every other session number for 4 s, then its own session (the
/// control); writes what it got to `attack.txt`.
const ATTACKER: &str = r#"import json, os, re, time, urllib.error, urllib.request
base = os.environ["OPENAI_BASE_URL"]
m = re.fullmatch(r"(http://[^/]+)/s/(\d+)-([0-9a-f]{32})/v1", base)
root, n, secret = m.group(1), int(m.group(2)), m.group(3)
def post(url, text):
    body = json.dumps({"model": "m", "input": text}).encode()
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
tries, stolen, statuses = 0, [], set()
deadline = time.time() + 4
while time.time() < deadline:
    for k in range(0, n + 4):
        if k == n:
            continue
        for token in (str(k), f"{k}-{secret}", f"{k}-" + "0" * 32):
            status, body = post(f"{root}/s/{token}/v1/responses", "attack")
            tries += 1
            statuses.add(status)
            if status == 200:
                stolen.append(body)
    time.sleep(0.1)
own_status, own = post(base + "/responses", "attacker asks")
with open("attack.txt", "w") as f:
    if stolen:
        f.write("STOLEN " + " ".join(stolen))
    else:
        f.write(f"refused {tries} statuses {sorted(statuses)}\n")
    f.write(f"own {own_status} {own}\n")
"#;

/// The victim: waits while the attacker tries, then asks its session once.
const VICTIM: &str = r#"import json, os, time, urllib.request
time.sleep(2)
body = json.dumps({"model": "m", "input": "victim asks"}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/responses", data=body,
                                 headers={"content-type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as r:
    print(r.read().decode())
"#;

fn block(text: &str) -> String {
    text.lines().map(|l| format!("      {l}\n")).collect()
}

fn case(name: &str, script: &str, answer: &str, asks: &str, graders: &str) -> String {
    format!(
        "name: {name}
prompt: Go.
workspace:
  files:
    agent.py: |
{script}agent: {{command: [python3, agent.py], timeout_secs: 60}}
model:
  - text: {answer}
    expect_input_contains: {asks}
graders:
  - final_text_contains: {answer}
{graders}",
        script = block(script)
    )
}

fn log(out: &Path, case: &str) -> String {
    std::fs::read_to_string(out.join(case).join("run-1.jsonl")).unwrap()
}

#[test]
fn a_run_cannot_reach_another_run_s_session_under_jobs_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases");
    std::fs::create_dir(&cases).unwrap();
    std::fs::write(
        cases.join("attacker.yaml"),
        case(
            "attacker",
            ATTACKER,
            "attacker's own answer",
            "attacker asks",
            "  - file_contains: {path: attack.txt, text: refused}\n",
        ),
    )
    .unwrap();
    std::fs::write(
        cases.join("victim.yaml"),
        case(
            "victim",
            VICTIM,
            "victim's answer",
            "victim asks",
            "  - no_endpoint_errors: {}\n",
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = Evalhost::new()
        .args(["run", "--jobs", "2", "--out"])
        .arg(&out)
        .arg(&cases)
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-cache"),
        )
        .run();
    let attack = std::fs::read_to_string(out.join("attacker/run-1.workspace/attack.txt"))
        .unwrap_or_default();
    output.assert_code(0);
    // Every attempt was refused (404 on the suite's endpoint; 403 where the run has a listener
    // of its own session), and the control reached the attacker's own session.
    assert!(attack.starts_with("refused "), "{attack}");
    assert!(
        ["statuses [404]", "statuses [403]", "statuses [403, 404]"]
            .iter()
            .any(|s| attack.contains(s)),
        "{attack}"
    );
    assert!(attack.contains("own 200 "), "{attack}");
    assert!(attack.contains("attacker's own answer"), "{attack}");
    let tries: usize = attack["refused ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_default();
    assert!(tries >= 6, "{attack}");
    // The victim got its answer, and its log holds only its own request.
    let victim = log(&out, "victim");
    assert!(victim.contains("victim's answer"), "{victim}");
    assert!(!victim.contains("attack"), "{victim}");
    assert_eq!(victim.matches("\"type\":\"model_request\"").count(), 1);
    assert!(!log(&out, "attacker").contains("victim"));
}
