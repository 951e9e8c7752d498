//! `--help` of every command: examples and exit codes; shell completions.

use crate::support::evalhost::Evalhost;

/// The subcommands a `--help` text lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        // A command's line is indented by two spaces; wrapped summaries by more.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_has_examples_and_exit_codes_in_its_help() {
    let output = Evalhost::new().args(["--help"]).run();
    output.assert_code(0);
    let top = output.stdout();
    assert!(
        top.contains("Exit status:\n  0  every case passed"),
        "{top}"
    );
    let mut pending: Vec<Vec<String>> = subcommands(top).into_iter().map(|c| vec![c]).collect();
    assert!(pending.len() >= 10, "{top}");
    let mut checked = 0;
    let mut missing = Vec::new();
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let output = Evalhost::new().args(args).run();
        output.assert_code(0);
        let help = output.stdout();
        let nested = subcommands(help);
        let command = format!("evalhost {}", path.join(" "));
        if !help.contains("\nExamples:\n  evalhost ") {
            missing.push(format!("`{command}`: no Examples section"));
        }
        if nested.is_empty() && !help.contains("Exit status:") {
            missing.push(format!("`{command}`: no Exit status"));
        }
        for sub in nested {
            let mut deeper = path.clone();
            deeper.push(sub);
            pending.push(deeper);
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} commands checked");
    missing.sort();
    assert!(
        missing.is_empty(),
        "every command's --help ends with examples and its exit status (clap `after_help`):\n{}",
        missing.join("\n")
    );
}

#[test]
fn completions_cover_the_subcommands() {
    let output = Evalhost::new().args(["completions", "bash"]).run();
    output.assert_code(0);
    let bash = output.stdout();
    for word in [
        "_evalhost()",
        "complete -F _evalhost",
        "list",
        "check",
        "run",
        "--color",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let output = Evalhost::new().args(["completions", shell]).run();
        output.assert_code(0);
        let script = output.stdout();
        assert!(
            script.contains("evalhost") && script.contains("check"),
            "{shell}: {script}"
        );
    }
    let output = Evalhost::new().args(["completions", "tcsh"]).run();
    output.assert_code(2);
}
