//! `evalhost view` over plain HTTP on a store the real binary recorded: every page answers,
//! and the security properties hold: the Host it serves only (DNS rebinding), read-only, no
//! path reaching the file system, everything a run wrote escaped, the headers that forbid
//! external loads and sniffing; loopback only.

use super::store::{GREETING, HOSTILE_PROMPT, HOSTILE_REPLY, Store, View};
use crate::support::evalhost::Evalhost;

#[test]
fn pages_answer_and_the_server_refuses_what_it_must() {
    let store = Store::new();
    let view = View::start(&store.db, &[]);

    // Every page, with the headers every response carries.
    for target in [
        "/".to_owned(),
        format!("/runs/{}", store.first),
        format!("/runs/{}?status=fail", store.first),
        format!("/runs/{}/cases/greet", store.first),
        "/cases/flipper".to_owned(),
        format!("/compare?a={}&b={}", store.first, store.second),
        format!("/compare/case?a={}&b=latest&name=flipper", store.first),
        "/compare".to_owned(),
        "/assets/view.css".to_owned(),
    ] {
        let response = view.get(&target);
        assert_eq!(response.status, 200, "{target}: {response:?}");
        let csp = response
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{target}: no CSP: {response:?}"));
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
        // No script at all, and nothing loaded from elsewhere.
        assert!(!response.body.contains("<script"), "{target}: {response:?}");
        assert!(!response.body.contains("src=\"http"), "{target}");
        assert!(!response.body.contains("href=\"http"), "{target}");
    }
    assert_eq!(view.request("HEAD", "/", None).status, 200);

    // The runs list, newest first; the run's cases failures first; the case's transcript.
    let runs = view.get("/").body;
    let (second, first, mino) = (
        runs.find(&format!("data-run=\"{}", store.second)).unwrap(),
        runs.find(&format!("data-run=\"{}", store.first)).unwrap(),
        runs.find(&format!("data-run=\"{}", store.mino)).unwrap(),
    );
    assert!(second < first && first < mino, "{runs}");
    let run = view.get(&format!("/runs/{}", store.second)).body;
    let failing = run.find("data-case=\"flipper\"").unwrap();
    let passing = run.find("data-case=\"greet\"").unwrap();
    assert!(failing < passing, "failures first: {run}");
    let only_failed = view.get(&format!("/runs/{}?status=fail", store.first)).body;
    assert!(only_failed.contains("data-case=\"markup\""));
    assert!(
        !only_failed.contains("data-case=\"greet\""),
        "{only_failed}"
    );
    let case = view.get(&format!("/runs/{}/cases/greet", store.first)).body;
    assert!(case.contains(GREETING), "{case}");
    let history = view.get("/cases/flipper").body;
    assert!(history.contains("1 flip<"), "{history}");
    assert!(history.contains("<svg id=\"trend\""), "{history}");
    let compare = view
        .get(&format!("/compare?a={}&b={}", store.first, store.second))
        .body;
    let rows: Vec<&str> = compare.split("<tr class=\"compared").skip(1).collect();
    assert!(
        rows[0].contains("data-case=\"flipper\""),
        "changed first: {compare}"
    );

    // DNS rebinding: another name for this address is refused; localhost is served.
    for host in [
        format!("evil.example:{}", view.port),
        format!("127.0.0.1:{}", view.port + 1),
        "127.0.0.1".to_owned(),
    ] {
        let response = view.request("GET", "/", Some(&host));
        assert_eq!(response.status, 421, "Host {host}: {response:?}");
        assert!(!response.body.contains("evalhost view</a>"), "{response:?}");
    }
    assert_eq!(
        view.request("GET", "/", Some(&format!("localhost:{}", view.port)))
            .status,
        200
    );

    // Read-only.
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
        let response = view.request(method, "/", None);
        assert_eq!(response.status, 405, "{method}: {response:?}");
        assert_eq!(response.header("allow"), Some("GET, HEAD"));
    }

    // No path reaches the file system.
    for target in [
        "/../../etc/passwd",
        "/assets/../../../../etc/passwd",
        "/assets/..%2f..%2f..%2f..%2fetc%2fpasswd",
        "/assets/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/runs/..%2f..%2fetc%2fpasswd",
        "/assets/report.css",
        "/host/src/view/mod.rs",
    ] {
        let response = view.get(target);
        assert_eq!(response.status, 404, "{target}: {response:?}");
        assert!(!response.body.contains("root:x:0"), "{target}");
    }
    let missing = view.get("/runs/ffffffff");
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("no run `ffffffff`"), "{missing:?}");
    let no_case = view.get(&format!("/runs/{}/cases/nope", store.first));
    assert_eq!(no_case.status, 404);
    assert!(no_case.body.contains("no case named"), "{no_case:?}");
    assert_eq!(view.get("/runs/latest?status=maybe").status, 400);

    // What an agent wrote is escaped wherever it is shown.
    let markup = view
        .get(&format!("/runs/{}/cases/markup", store.first))
        .body;
    assert!(
        markup.contains("&lt;/script&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;"),
        "the prompt, escaped: {markup}"
    );
    assert!(
        markup.contains("Done &lt;b id=&quot;pwned&quot;&gt;bold&lt;/b&gt;"),
        "the reply, escaped"
    );
    for raw in [
        HOSTILE_PROMPT,
        HOSTILE_REPLY,
        "<img src=x",
        "<b id=\"pwned\">",
    ] {
        assert!(!markup.contains(raw), "{raw} unescaped");
    }
    let side_by_side = view
        .get(&format!(
            "/compare/case?a={}&b={}&name=markup",
            store.first, store.second
        ))
        .body;
    assert!(!side_by_side.contains("<b id=\"pwned\">"));
    assert!(side_by_side.contains("&lt;b id=&quot;pwned&quot;&gt;"));
    let named = view.get("/cases/%3Cb%3Ex");
    assert_eq!(named.status, 404);
    assert!(named.body.contains("&lt;b&gt;x") && !named.body.contains("<b>x"));
}

#[test]
fn only_loopback_and_an_existing_store_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    Evalhost::new()
        .args(["view", "--bind", "0.0.0.0", "--history"])
        .arg(&missing)
        .run()
        .assert_code(2)
        .assert_stderr_contains("loopback address only");
    Evalhost::new()
        .args(["view", "--history"])
        .arg(&missing)
        .run()
        .assert_code(2)
        .assert_stderr_contains("does not exist");
    assert!(!missing.exists(), "view creates no store");
}
