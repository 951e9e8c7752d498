//! The file tools' behaviour inside the workspace: write, read, edit (exactly one
//! occurrence), list, and the output cap.

use crate::support::agent::{Harness, call, text};
use evalhost::internals::session::Approve;
use serde_json::{Value, json};

async fn one_call(h: &Harness, tool: &str, arguments: Value) -> evalhost::evidence::ToolCall {
    let run = h
        .run(Approve::All, vec![call(tool, arguments), text("done")])
        .await;
    run.outcome();
    run.single_call()
}

#[tokio::test]
async fn write_then_read_round_trips_and_creates_parents() {
    let h = Harness::new().await;
    let write = one_call(
        &h,
        "write_file",
        json!({"path": "deep/er/greeting.txt", "content": "hello\n"}),
    )
    .await;
    assert_eq!(write.status, "completed", "{}", write.output);
    assert!(write.output.contains("6 bytes"), "{}", write.output);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("deep/er/greeting.txt")).expect("written"),
        "hello\n"
    );
    let read = one_call(&h, "read_file", json!({"path": "./deep/er/greeting.txt"})).await;
    assert_eq!(
        (read.status.as_str(), read.output.as_str()),
        ("completed", "hello\n")
    );
}

#[tokio::test]
async fn reading_what_is_not_a_file_fails_clearly() {
    let h = Harness::new().await;
    h.seed("dir/x.txt", "x");
    let missing = one_call(&h, "read_file", json!({"path": "nope.txt"})).await;
    assert_eq!(missing.status, "failed");
    assert!(
        missing.output.contains("no such file"),
        "{}",
        missing.output
    );
    let dir = one_call(&h, "read_file", json!({"path": "dir"})).await;
    assert_eq!(dir.status, "failed");
    assert!(dir.output.contains("is a directory"), "{}", dir.output);
}

#[tokio::test]
async fn edit_replaces_exactly_one_occurrence() {
    let h = Harness::new().await;
    h.seed("a.txt", "one two three two");
    let ambiguous = one_call(
        &h,
        "edit_file",
        json!({"path": "a.txt", "old_text": "two", "new_text": "2"}),
    )
    .await;
    assert_eq!(ambiguous.status, "failed");
    assert!(
        ambiguous.output.contains("occurs 2 times"),
        "{}",
        ambiguous.output
    );

    let missing = one_call(
        &h,
        "edit_file",
        json!({"path": "a.txt", "old_text": "four", "new_text": "4"}),
    )
    .await;
    assert_eq!(missing.status, "failed");
    assert!(missing.output.contains("not found"), "{}", missing.output);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("a.txt")).expect("a"),
        "one two three two",
        "failed edits change nothing"
    );

    let edit = one_call(
        &h,
        "edit_file",
        json!({"path": "a.txt", "old_text": "three two", "new_text": "3 2"}),
    )
    .await;
    assert_eq!(edit.status, "completed", "{}", edit.output);
    assert_eq!(
        std::fs::read_to_string(h.workspace.join("a.txt")).expect("a"),
        "one two 3 2"
    );
}

#[tokio::test]
async fn list_files_walks_the_tree_without_entering_git() {
    let h = Harness::new().await;
    h.seed("b.txt", "");
    h.seed("a/one.txt", "");
    h.seed("a/z/two.txt", "");
    h.seed(".git/HEAD", "ref: refs/heads/main");
    let all = one_call(&h, "list_files", json!({})).await;
    assert_eq!(all.status, "completed");
    assert_eq!(
        all.output,
        ".git/\na/\na/one.txt\na/z/\na/z/two.txt\nb.txt\n"
    );
    let sub = one_call(&h, "list_files", json!({"path": "a/z"})).await;
    assert_eq!(sub.output, "a/z/two.txt\n");
}

#[tokio::test]
async fn reading_past_the_cap_is_output_limit() {
    let h = Harness::new().await;
    let cap = 64 * 1024;
    h.seed("exact.txt", &"a".repeat(cap));
    h.seed("big.txt", &"b".repeat(cap + 1));
    let exact = one_call(&h, "read_file", json!({"path": "exact.txt"})).await;
    assert_eq!(exact.status, "completed");
    assert_eq!(exact.output.len(), cap);
    let big = one_call(&h, "read_file", json!({"path": "big.txt"})).await;
    assert_eq!(big.status, "output_limit");
    assert!(big.output.starts_with(&"b".repeat(cap)));
    assert!(!big.output.contains(&"b".repeat(cap + 1)));
    assert!(
        big.output.contains("65536-byte limit"),
        "{}",
        &big.output[cap..]
    );
}
