//! Graders beyond the seeds' assertion kinds: JSON Schema checks on tool
//! arguments and the final text, the workspace diff against the seeded files,
//! and a scan for leaked secrets.

mod dotenv;
mod json_schema;
pub mod schema;
mod secret_leak;
mod sha256;
pub mod validate;
mod walk;
mod workspace_diff;

pub use json_schema::JsonSchema;
pub use secret_leak::NoSecretLeak;
pub use workspace_diff::WorkspaceDiff;

#[cfg(test)]
mod tests {
    use evalhost_sdk::__private::Guest;

    #[test]
    fn the_component_registers_them() {
        let names: Vec<String> = crate::__EvalhostGraders::list_graders()
            .into_iter()
            .map(|g| g.name)
            .collect();
        for name in ["json_schema", "workspace_diff", "no_secret_leak"] {
            assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
        }
    }
}
