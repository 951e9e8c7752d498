//! One secret per session: a session is reached only with its own token, over the server's
//! address or a listener of its own (`Session::serve_on`), where another token is refused and
//! recorded in the listener's session; and what a session keeps of the requests it is sent is
//! bounded, while its script still reads every whole body.

use evalhost::case::{Location, ScriptReply, ScriptStep};
use evalhost::internals::model::{ModelServer, Outcome, Session};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn text(text: &str) -> ScriptStep {
    ScriptStep {
        reply: ScriptReply::Text(text.to_owned()),
        expect_input_contains: None,
        location: Location::default(),
        usage: None,
    }
}

const REQUEST: &str = r#"{"model":"m","input":"hi"}"#;

/// POST `body` to `url`: the status and the body as JSON (`null` when it is not).
async fn post(client: &reqwest::Client, url: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn client() -> reqwest::Client {
    evalhost::internals::tls::install_crypto_provider();
    reqwest::Client::new()
}

/// The session's token: the last segment of its Anthropic base URL.
fn token(session: &Session) -> String {
    let path = session.path();
    assert!(session.anthropic_base_url().ends_with(path));
    path.strip_prefix("/s/").expect("/s/<token>").to_owned()
}

fn answer_text(answer: &Value) -> &str {
    answer["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn a_session_is_reached_only_with_its_own_token() {
    let server = ModelServer::start().await.expect("start");
    let attacker = server.script(vec![text("attacker's")]);
    let victim = server.script(vec![text("victim's")]);
    let client = client();
    let (victim_token, attacker_token) = (token(&victim), token(&attacker));
    let (victim_n, victim_secret) = victim_token.split_once('-').expect("n-secret");
    let (_, attacker_secret) = attacker_token.split_once('-').expect("n-secret");
    assert_eq!(victim_secret.len(), 32, "128 bits in hex");
    assert_ne!(victim_secret, attacker_secret);
    let addr = server.addr();

    // The old addresses (`/s/0`, `/s/1`), the victim's number with the attacker's secret, and
    // the victim's secret with one digit changed: each refused, in the dialect's shape.
    let mut changed = victim_secret.to_owned().into_bytes();
    changed[31] = if changed[31] == b'0' { b'1' } else { b'0' };
    let changed = String::from_utf8(changed).expect("hex");
    for guess in [
        "0".to_owned(),
        "1".to_owned(),
        victim_n.to_owned(),
        format!("{victim_n}-{attacker_secret}"),
        format!("{victim_n}-{changed}"),
        format!("{victim_n}-{victim_secret}0"),
    ] {
        let (status, error) = post(
            &client,
            &format!("http://{addr}/s/{guess}/v1/responses"),
            REQUEST,
        )
        .await;
        assert_eq!(status, 404, "{guess}");
        let message = error["error"]["message"].as_str().expect("message");
        assert!(
            message.starts_with("no session is open with this token"),
            "{message}"
        );
        let (status, error) = post(
            &client,
            &format!("http://{addr}/s/{guess}/v1/messages"),
            REQUEST,
        )
        .await;
        assert_eq!(status, 404);
        assert_eq!(error["type"], "error", "Anthropic's error shape: {error}");
    }
    assert!(victim.record().is_empty(), "nothing reached the victim");
    assert_eq!(victim.unused_steps(), 1);

    // Control: the victim's own URL, and the attacker's, are served.
    let (status, answer) = post(
        &client,
        &format!("{}/responses", victim.base_url()),
        REQUEST,
    )
    .await;
    assert_eq!((status, answer_text(&answer)), (200, "victim's"));
    let (status, answer) = post(
        &client,
        &format!("{}/responses", attacker.base_url()),
        REQUEST,
    )
    .await;
    assert_eq!((status, answer_text(&answer)), (200, "attacker's"));
    assert_eq!(victim.record().len(), 1);
}

#[tokio::test]
async fn a_session_served_on_its_own_listener_refuses_and_records_other_tokens() {
    let server = ModelServer::start().await.expect("start");
    let own = server.script(vec![text("own"), text("own again")]);
    let other = server.script(vec![text("other's")]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    own.serve_on(listener).expect("serve");
    let client = client();
    let here = format!("http://127.0.0.1:{port}");

    // Its own token on its own listener is served, as on the server's address.
    let (status, answer) = post(
        &client,
        &format!("{here}{}/v1/responses", own.path()),
        REQUEST,
    )
    .await;
    assert_eq!((status, answer_text(&answer)), (200, "own"));

    // Another open session's token, a wrong one, none: refused, and recorded in this session.
    let (status, error) = post(
        &client,
        &format!("{here}{}/v1/responses", other.path()),
        REQUEST,
    )
    .await;
    assert_eq!(status, 403);
    assert!(
        error["error"]["message"]
            .as_str()
            .expect("message")
            .starts_with("this address serves one run's session only"),
        "{error}"
    );
    let (status, error) = post(
        &client,
        &format!("{here}{}/v1/messages", other.path()),
        REQUEST,
    )
    .await;
    assert_eq!((status, &error["type"]), (403, &Value::from("error")));
    let (status, _) = post(&client, &format!("{here}/s/0-00/v1/responses"), REQUEST).await;
    assert_eq!(status, 403);
    let (status, _) = post(&client, &format!("{here}/v1/responses"), REQUEST).await;
    assert_eq!(status, 403);
    assert!(
        other.record().is_empty(),
        "nothing reached the other session"
    );
    assert_eq!(other.unused_steps(), 1);
    let targets: Vec<String> = own
        .record()
        .iter()
        .map(|exchange| match &exchange.outcome {
            Outcome::Unserved { status, .. } => format!("{} {status}", exchange.target()),
            Outcome::Answered { n, .. } => format!("{} answered {n}", exchange.target()),
            Outcome::Failed { .. } => panic!("{exchange:?}"),
        })
        .collect();
    assert_eq!(
        targets,
        [
            "POST /v1/responses answered 1",
            "POST /s/<not this session's token>/v1/responses 403",
            "POST /s/<not this session's token>/v1/messages 403",
            "POST /s/<not this session's token>/v1/responses 403",
            "POST /v1/responses 403",
        ]
    );
    assert_eq!(own.requests(), 1, "refused requests consume no step");
    assert!(
        !format!("{:?}", own.record()).contains(&token(&other)),
        "the other session's token is not kept"
    );

    // Dropping the session closes its listener.
    drop(own);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Err(_) => break,
            Ok(_) if std::time::Instant::now() > deadline => {
                panic!("the listener of a dropped session still accepts connections")
            }
            Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    }
}

#[tokio::test]
async fn a_session_keeps_bodies_whole_up_to_its_budget_and_digests_past_it() {
    const MIB: usize = 1 << 20;
    let server = ModelServer::start().await.expect("start");
    let mut last = text("seen");
    last.expect_input_contains = Some("the needle at the end".into());
    let mut steps: Vec<ScriptStep> = (0..11).map(|_| text("ok")).collect();
    steps.push(last);
    let session = server.script(steps);
    let client = client();
    let url = format!("{}/responses", session.base_url());
    // Twelve requests of 4 MiB: 48 MiB sent; the last one's expectation is at its very end.
    let mut sent = Vec::new();
    for i in 0..12 {
        let tail = if i == 11 { "the needle at the end" } else { "" };
        let padding = "x".repeat(4 * MIB - 64);
        let body = format!(r#"{{"model":"m","input":"{i} {padding}{tail}"}}"#);
        let (status, answer) = post(&client, &url, body.clone()).await;
        assert_eq!(status, 200, "{answer}");
        sent.push(body);
    }
    assert_eq!(session.failure(), None, "the script read every whole body");
    let record = session.record();
    assert_eq!(record.len(), 12, "every request is recorded");
    let kept: usize = record.iter().map(|exchange| exchange.body.len()).sum();
    assert!(kept <= 32 * MIB + 12 * 1024, "kept {kept} bytes");
    let mut digests = 0;
    for (exchange, body) in record.iter().zip(&sent) {
        if exchange.body.len() == body.len() {
            assert_eq!(&exchange.body[..], body.as_bytes());
            continue;
        }
        digests += 1;
        let note: Value = serde_json::from_slice(&exchange.body).expect("a JSON note");
        assert_eq!(note["not_kept"]["bytes"], body.len());
        assert_eq!(
            note["not_kept"]["sha256"],
            hex::encode(Sha256::digest(body.as_bytes()))
        );
    }
    assert!(digests >= 4, "{digests} bodies past 32 MiB kept as digests");
}
