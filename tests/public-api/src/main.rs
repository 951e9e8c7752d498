//! `evalhost-public-api RUSTDOC_JSON`: the public items of the crate rustdoc described, one per
//! line, sorted, without the impls every type gets (blanket and auto-trait impls), so the
//! listing changes only when evalhost's own API does.

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(json) = std::env::args_os().nth(1) else {
        eprintln!("usage: evalhost-public-api RUSTDOC_JSON");
        return ExitCode::from(2);
    };
    let api = public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .build();
    match api {
        Ok(api) => {
            for item in api.items() {
                println!("{item}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{}: {error}", json.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}
