//! The facts the JS glue and the TypeScript declarations share with the core, defined here once:
//! error codes with their statuses, transfer limits with their defaults, the Definition limits,
//! the env variables the core reads, the never-shipped names and the entry names.
//!
//! Pure. The build writes them into the npm package (`facts.mjs`, and the generated blocks of
//! `index.d.ts`) from [`shared_facts`]; a test fails when a copy drifts.

use serde::Serialize;

use vite_hub_sandbox_core::definition::{
    ExcludedNames, DEFAULT_TIMEOUT_MS, ENTRY_NAMES, EXCLUDED, MAX_DEFINITION_BYTES, MAX_TIMEOUT_MS,
};
use vite_hub_sandbox_core::error::ErrorCode;
use vite_hub_sandbox_core::provider_kind::ProviderKind;
use vite_hub_sandbox_core::transfer::limits::MAX_LIMIT_VALUE;
use vite_hub_sandbox_core::transfer::TransferLimits;

/// One error code: its status for input-side and output-side failures (DESIGN.md §5).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorCodeFact {
    /// The stable `SANDBOX_*` code.
    pub code: &'static str,
    /// HTTP status (input side, the only side for most codes).
    pub status: u16,
    /// HTTP status when the value travelled out of the Box (500 for serialization and transfer
    /// limits), else the same as `status`.
    pub output_status: u16,
    /// The public message used when an error has none of its own.
    pub summary: &'static str,
}

/// One limit with its default.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitFact {
    /// The camelCase name used in config and in error `details.limit`.
    pub name: &'static str,
    /// Default value.
    pub default: u64,
    /// Largest accepted value.
    pub maximum: u64,
    /// `bytes`, `levels`, `count` or `ms`.
    pub unit: &'static str,
}

/// Everything [`shared_facts`] returns.
///
/// Shape (JSON): `{ errorCodes: [{ code, status, outputStatus, summary }], transferLimits: [{ name,
/// default, maximum, unit }], definitionLimits: [...], limitNames: string[], envNames: string[], excluded: {
/// directories, files, filePrefixes, rootFiles }, entryNames: string[], providerNames: string[] }`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SharedFacts {
    /// Every error code, in [`ErrorCode::ALL`] order.
    pub error_codes: Vec<ErrorCodeFact>,
    /// `configureSandbox({ transfer })` limits.
    pub transfer_limits: Vec<LimitFact>,
    /// Limits of a Definition (`maxDefinitionBytes`, `timeout`).
    pub definition_limits: Vec<LimitFact>,
    /// The names an error's `details.limit` can carry (every transfer limit, `maxDefinitionBytes`).
    pub limit_names: Vec<&'static str>,
    /// The env variables the core reads; the glue hands over exactly these.
    pub env_names: Vec<&'static str>,
    /// Never-shipped names.
    pub excluded: ExcludedNames,
    /// Entry file names of a package Definition, in lookup order.
    pub entry_names: Vec<&'static str>,
    /// The Providers' names ([`ProviderKind::ALL`]): the `SandboxProviderName` type.
    pub provider_names: Vec<&'static str>,
}

/// The shared facts (see [`SharedFacts`]).
pub fn shared_facts() -> SharedFacts {
    let error_codes = ErrorCode::ALL
        .into_iter()
        .map(|code| {
            let output = vite_hub_sandbox_core::error::Error::new(code, "").for_output().http_status();
            ErrorCodeFact {
                code: code.as_str(),
                status: code.http_status(),
                output_status: output,
                summary: code.default_message(),
            }
        })
        .collect();
    let transfer_limits: Vec<LimitFact> = TransferLimits::default()
        .named()
        .into_iter()
        .map(|(name, default)| LimitFact { name, default, maximum: MAX_LIMIT_VALUE, unit: limit_unit(name) })
        .collect();
    let definition_limits = vec![
        LimitFact {
            name: "maxDefinitionBytes",
            default: MAX_DEFINITION_BYTES,
            maximum: MAX_DEFINITION_BYTES,
            unit: "bytes",
        },
        LimitFact {
            name: "timeout",
            default: u64::from(DEFAULT_TIMEOUT_MS),
            maximum: u64::from(MAX_TIMEOUT_MS),
            unit: "ms",
        },
    ];
    let limit_names = transfer_limits.iter().map(|l: &LimitFact| l.name).chain(["maxDefinitionBytes"]).collect();
    SharedFacts {
        error_codes,
        transfer_limits,
        definition_limits,
        limit_names,
        env_names: vite_hub_sandbox_core::config::env_names(),
        excluded: EXCLUDED,
        entry_names: ENTRY_NAMES.to_vec(),
        provider_names: ProviderKind::ALL.iter().map(|kind| kind.as_str()).collect(),
    }
}

fn limit_unit(name: &str) -> &'static str {
    match name {
        "maxDepth" => "levels",
        "maxSidecars" => "count",
        _ => "bytes",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_and_limit_is_listed_with_its_status() {
        let facts = shared_facts();
        assert_eq!(facts.error_codes.len(), ErrorCode::ALL.len());
        let status =
            |code: &str| facts.error_codes.iter().find(|f| f.code == code).map(|f| (f.status, f.output_status));
        assert_eq!(status("SANDBOX_TIMEOUT"), Some((504, 504)));
        assert_eq!(status("SANDBOX_TRANSFER_LIMIT"), Some((413, 500)));
        assert_eq!(status("SANDBOX_SERIALIZATION_ERROR"), Some((400, 500)));
        let names: Vec<&str> = facts.transfer_limits.iter().chain(&facts.definition_limits).map(|l| l.name).collect();
        assert_eq!(
            names,
            [
                "maxInputBytes",
                "maxOutputBytes",
                "maxDepth",
                "maxSidecars",
                "maxSidecarBytes",
                "maxDefinitionBytes",
                "timeout"
            ]
        );
        assert!(facts.env_names.contains(&"VERCEL_OIDC_TOKEN") && facts.env_names.contains(&"NODE_ENV"));
    }

    #[test]
    fn the_excluded_names_are_the_ones_the_rule_applies() {
        for name in EXCLUDED.directories {
            assert!(vite_hub_sandbox_core::definition::is_excluded_path(&format!("a/{name}/b")));
        }
        for name in EXCLUDED.files {
            assert!(vite_hub_sandbox_core::definition::is_excluded_path(&format!("a/{}", name.to_ascii_uppercase())));
        }
        for name in EXCLUDED.root_files {
            assert!(
                vite_hub_sandbox_core::definition::is_excluded_path(name)
                    && !vite_hub_sandbox_core::definition::is_excluded_path(&format!("a/{name}"))
            );
        }
        assert!(
            vite_hub_sandbox_core::definition::is_excluded_path(".env.local")
                && !vite_hub_sandbox_core::definition::is_excluded_path("prod.env")
        );
    }
}
