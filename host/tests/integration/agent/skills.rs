//! Agent Skills through the real agent loop: `skill_view` lists the workspace's
//! `.agents/skills`, reads a skill's SKILL.md and its other files (confined to the skill's
//! folder), says clearly what is wrong with a malformed SKILL.md, and the session log's
//! `session_skills` record holds the skills found at the start.

use crate::support::agent::{Harness, Run, call, text};
use evalhost::evidence::ToolCall;
use evalhost::internals::session::{Approve, Event, SkillProblem, SkillSummary};
use serde_json::{Value, json};

const DEPLOY: &str = "---\nname: deploy\ndescription: >\n  Deploy the service to staging.\n  Use when asked to deploy.\nlicense: MIT\n---\n# Deploy\n\nRun `scripts/check.sh` first.\n";

const HINT: &str = "Read a skill with skill_view {\"name\": NAME}, and a file of it with {\"name\": NAME, \"file\": PATH}.\n";

const SHAPE: &str = "a SKILL.md starts with a `---` line, then `name:` and `description:`, then a closing `---` line";

async fn calls(h: &Harness, arguments: &[Value]) -> (Run, Vec<ToolCall>) {
    let mut steps: Vec<_> = arguments
        .iter()
        .map(|a| call("skill_view", a.clone()))
        .collect();
    steps.push(text("done"));
    let run = h.run(Approve::None, steps).await;
    run.outcome();
    let calls = run.evidence().calls;
    (run, calls)
}

fn result(call: &ToolCall) -> (&str, &str) {
    (call.status.as_str(), call.output.as_str())
}

#[tokio::test]
async fn a_seeded_skill_is_listed_and_readable_with_its_files() {
    let h = Harness::new().await;
    h.seed(".agents/skills/deploy/SKILL.md", DEPLOY);
    h.seed(".agents/skills/deploy/scripts/check.sh", "echo ok\n");
    h.seed(".agents/skills/README.md", "not a skill: a file\n");
    let (run, calls) = calls(
        &h,
        &[
            json!({}),
            json!({"name": "deploy"}),
            json!({"name": "deploy", "file": "./scripts/check.sh"}),
        ],
    )
    .await;
    assert_eq!(
        result(&calls[0]),
        (
            "completed",
            &*format!(
                "1 skill in `.agents/skills`:\n- deploy: Deploy the service to staging. Use when asked to deploy.\n{HINT}"
            )
        )
    );
    assert_eq!(result(&calls[1]), ("completed", DEPLOY));
    assert_eq!(result(&calls[2]), ("completed", "echo ok\n"));
    assert!(calls.iter().all(|c| c.started));

    // The record comes right after session_start, before the user's message.
    assert_eq!(
        run.kinds()[..3],
        ["session_start", "session_skills", "user_message"]
    );
    let deploy = SkillSummary {
        name: "deploy".into(),
        description: "Deploy the service to staging. Use when asked to deploy.".into(),
    };
    assert_eq!(
        run.records[1].event,
        Event::SessionSkills {
            skills: vec![deploy.clone()],
            problems: vec![],
        }
    );
    // The evidence carries it: a field, and the event graders read.
    let evidence = run.evidence();
    assert_eq!(evidence.skills, [deploy]);
    let discover = evidence
        .events
        .iter()
        .find(|e| e.kind == "skill.discover")
        .expect("skill.discover event");
    assert_eq!(
        serde_json::from_str::<Value>(&discover.data).unwrap(),
        json!({
            "Skills": [{"Name": "deploy", "Description": "Deploy the service to staging. Use when asked to deploy."}],
            "Problems": [],
            "Count": 1,
        })
    );
    // The tool is offered in every request of the session.
    let tools = run.request_body(1)["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "list_files",
            "skill_view"
        ]
    );
}

#[tokio::test]
async fn malformed_skills_get_a_clear_message_and_the_run_goes_on() {
    let h = Harness::new().await;
    h.seed(".agents/skills/deploy/SKILL.md", DEPLOY);
    h.seed(
        ".agents/skills/broken/SKILL.md",
        "# Broken\nNo front matter.\n",
    );
    h.seed(
        ".agents/skills/mismatch/SKILL.md",
        "---\nname: other\ndescription: x\n---\n",
    );
    h.seed(
        ".agents/skills/nodesc/SKILL.md",
        "---\nname: nodesc\n---\nbody\n",
    );
    h.seed(
        ".agents/skills/huge/SKILL.md",
        &format!(
            "---\nname: huge\ndescription: x\n---\n{}",
            "x".repeat(40_000)
        ),
    );
    std::fs::create_dir_all(h.workspace.join(".agents/skills/empty")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("SKILL.md"),
        "---\nname: escape\ndescription: x\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), h.workspace.join(".agents/skills/escape")).unwrap();
    // A symlinked folder inside the workspace is a skill; a symlink to a file is not one.
    h.seed(
        "shared/linked/SKILL.md",
        "---\nname: linked\ndescription: Shared.\n---\n",
    );
    std::os::unix::fs::symlink(
        "../../shared/linked",
        h.workspace.join(".agents/skills/linked"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../notes.txt",
        h.workspace.join(".agents/skills/notes.md"),
    )
    .unwrap();
    h.seed("notes.txt", "notes\n");
    let (run, calls) = calls(
        &h,
        &[
            json!({}),
            json!({"name": "broken"}),
            json!({"name": "broken", "file": "SKILL.md"}),
            json!({"name": "huge"}),
            json!({"name": "nope"}),
        ],
    )
    .await;
    let problems = [
        (
            "broken",
            format!("has no front matter: {SHAPE}"),
        ),
        ("empty", "is missing: a skill folder needs a SKILL.md".to_owned()),
        (
            "escape",
            "leads outside the workspace (through a symlink or `..`)".to_owned(),
        ),
        (
            "huge",
            "is larger than 32768 bytes (32 KiB), the most a SKILL.md may be; move details into other files of the skill".to_owned(),
        ),
        (
            "mismatch",
            "line 2: name \"other\" does not match the skill's folder name \"mismatch\"".to_owned(),
        ),
        (
            "nodesc",
            format!("the front matter has no `description`; {SHAPE}"),
        ),
    ];
    let mut listing = "2 skills in `.agents/skills`:\n- deploy: Deploy the service to staging. Use when asked to deploy.\n- linked: Shared.\nNot loaded:\n".to_owned();
    for (name, message) in &problems {
        listing.push_str(&format!("- .agents/skills/{name}/SKILL.md: {message}\n"));
    }
    listing.push_str(HINT);
    assert_eq!(result(&calls[0]), ("completed", listing.as_str()));
    let broken = format!(
        "Skill `broken` cannot be loaded: .agents/skills/broken/SKILL.md: has no front matter: {SHAPE}"
    );
    assert_eq!(result(&calls[1]), ("failed", broken.as_str()));
    assert_eq!(result(&calls[2]), ("failed", broken.as_str()));
    assert_eq!(
        result(&calls[3]),
        (
            "failed",
            "Skill `huge` cannot be loaded: .agents/skills/huge/SKILL.md: is larger than 32768 bytes (32 KiB), the most a SKILL.md may be; move details into other files of the skill"
        )
    );
    assert_eq!(
        result(&calls[4]),
        (
            "failed",
            "No skill `nope` in `.agents/skills`. Skills: deploy, linked."
        )
    );
    assert_eq!(run.outcome().final_text, "done");

    let Event::SessionSkills {
        skills,
        problems: recorded,
    } = &run.records[1].event
    else {
        panic!("no session_skills record: {:?}", run.kinds());
    };
    assert_eq!(skills.len(), 2);
    let expected: Vec<SkillProblem> = problems
        .iter()
        .map(|(name, message)| SkillProblem {
            path: format!(".agents/skills/{name}/SKILL.md"),
            message: message.clone(),
        })
        .collect();
    assert_eq!(recorded, &expected);
}

#[tokio::test]
async fn a_skill_reads_only_files_inside_its_own_folder() {
    let h = Harness::new().await;
    h.seed(".agents/skills/deploy/SKILL.md", DEPLOY);
    h.seed(
        ".agents/skills/other/SKILL.md",
        "---\nname: other\ndescription: y\n---\n",
    );
    h.seed("notes.txt", "workspace file\n");
    h.seed(".agents/skills/deploy/.env", "TOKEN=do-not-leak\n");
    std::os::unix::fs::symlink(
        "../../../notes.txt",
        h.workspace.join(".agents/skills/deploy/notes-link"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "/etc/hostname",
        h.workspace.join(".agents/skills/deploy/abs-link"),
    )
    .unwrap();
    let (_, calls) = calls(
        &h,
        &[
            json!({"name": "deploy", "file": "../other/SKILL.md"}),
            json!({"name": "deploy", "file": "/etc/passwd"}),
            json!({"name": "deploy", "file": "notes-link"}),
            json!({"name": "deploy", "file": "abs-link"}),
            json!({"name": "deploy", "file": ".env"}),
            json!({"name": "deploy", "file": "scripts"}),
        ],
    )
    .await;
    assert_eq!(
        result(&calls[0]),
        (
            "failed",
            "File `../other/SKILL.md` is outside the skill `deploy`: `..` climbs above `.agents/skills/deploy/`."
        )
    );
    assert_eq!(
        result(&calls[1]),
        (
            "failed",
            "File `/etc/passwd` is outside the skill `deploy`: absolute paths are not allowed; give a path relative to `.agents/skills/deploy/`."
        )
    );
    let escape = |link: &str| {
        format!(
            "File `{link}` leads outside the skill `deploy` (through a symlink or `..`); skill_view reads only files inside `.agents/skills/deploy/`."
        )
    };
    assert_eq!(result(&calls[2]), ("failed", &*escape("notes-link")));
    assert_eq!(result(&calls[3]), ("failed", &*escape("abs-link")));
    // Protected paths are refused by policy, in a skill as anywhere.
    assert_eq!(calls[4].status, "denied");
    assert!(
        calls[4].output.starts_with(
            "Blocked by policy: `.agents/skills/deploy/.env` is a protected path (`.env`)."
        ),
        "{}",
        calls[4].output
    );
    assert_eq!(
        result(&calls[5]),
        (
            "failed",
            "Cannot read `scripts`: no such file or directory."
        )
    );
}

#[tokio::test]
async fn arguments_that_name_no_skill_are_invalid() {
    let h = Harness::new().await;
    h.seed(".agents/skills/deploy/SKILL.md", DEPLOY);
    let (_, calls) = calls(
        &h,
        &[
            json!({"file": "SKILL.md"}),
            json!({"name": "../deploy"}),
            json!({"name": "deploy", "path": "x"}),
        ],
    )
    .await;
    let usage = "Expected {\"name\"?: string, \"file\"?: string}.";
    assert_eq!(
        result(&calls[0]),
        (
            "invalid_arguments",
            &*format!(
                "Invalid arguments for `skill_view`: `file` needs `name`, the skill it belongs to. {usage}"
            )
        )
    );
    assert_eq!(
        result(&calls[1]),
        (
            "invalid_arguments",
            &*format!(
                "Invalid arguments for `skill_view`: \"../deploy\" is not a valid skill name: a skill name is 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen, without `--`. {usage}"
            )
        )
    );
    assert_eq!(calls[2].status, "invalid_arguments");
    assert!(calls.iter().all(|c| !c.started));
}

#[tokio::test]
async fn without_a_skills_directory_there_is_no_record_and_no_tool() {
    let h = Harness::new().await;
    h.seed("notes.txt", "no skills here\n");
    let (run, calls) = calls(&h, &[json!({})]).await;
    assert_eq!(
        result(&calls[0]),
        (
            "unknown_tool",
            "Tool `skill_view` does not exist. Available tools: bash, read_file, write_file, edit_file, list_files."
        )
    );
    assert!(
        !run.kinds().contains(&"session_skills"),
        "{:?}",
        run.kinds()
    );
    assert!(run.evidence().skills.is_empty());
    let tools = run.request_body(1)["tools"].clone();
    assert_eq!(tools.as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn an_empty_skills_directory_is_recorded_as_no_skills() {
    let h = Harness::new().await;
    std::fs::create_dir_all(h.workspace.join(".agents/skills")).unwrap();
    let (run, calls) = calls(&h, &[json!({})]).await;
    assert_eq!(
        result(&calls[0]),
        ("completed", "No skills in `.agents/skills`.\n")
    );
    assert_eq!(
        run.records[1].event,
        Event::SessionSkills {
            skills: vec![],
            problems: vec![],
        }
    );
}
