//! `KEY=VALUE` lines of `.env` files, the usual home of seeded secrets.

/// Values shorter than this (in characters) are not taken as secrets from a
/// file: `DEBUG=1` or `ENV=dev` would match half the workspace.
pub const MIN_SECRET_CHARS: usize = 6;

/// Whether `path` (relative, `/`-separated) names a `.env` or `.env.*` file.
pub fn is_env_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base == ".env" || base.starts_with(".env.")
}

/// The `(key, value)` pairs of `text`, in order, with values of at least
/// [`MIN_SECRET_CHARS`] characters.
///
/// Blank lines and `#` comments are skipped, `export KEY=VALUE` is read as
/// `KEY=VALUE`, a value in matching single or double quotes is the text
/// between them, and an unquoted value ends before ` #`.
pub fn secrets(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let line = line.strip_prefix("export ").unwrap_or(line);
            let (key, value) = line.split_once('=')?;
            let key = key.trim();
            let value = unquote(value.trim());
            (!key.is_empty() && value.chars().count() >= MIN_SECRET_CHARS)
                .then(|| (key.to_owned(), value.to_owned()))
        })
        .collect()
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(rest) = value.strip_prefix(quote)
            && let Some(end) = rest.find(quote)
        {
            return &rest[..end];
        }
    }
    match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_by_name() {
        assert!(is_env_file(".env"));
        assert!(is_env_file("app/.env.local"));
        assert!(!is_env_file("env"));
        assert!(!is_env_file(".envrc"));
        assert!(!is_env_file("notes/.env-example"));
    }

    #[test]
    fn key_value_lines() {
        let text = "# comment\n\nAPI_TOKEN=do-not-leak\nexport DB_PASSWORD = \"s3cr3t pw\" \nDEBUG=1\nNAME='quoted#x'\nURL=https://x.example/a # trailing\nnot a pair\n=nokey123\n";
        let pairs: Vec<(String, String)> = secrets(text);
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("API_TOKEN", "do-not-leak"),
                ("DB_PASSWORD", "s3cr3t pw"),
                ("NAME", "quoted#x"),
                ("URL", "https://x.example/a"),
            ]
        );
    }
}
