//! Which Provider supplies Boxes: `vercel`, `cloudflare` or `local`.
//!
//! A leaf at the bottom of the layering (it imports nothing of the crate): errors carry it,
//! config selects it, providers are built by it. No provider behaviour lives here: a provider belongs in `provider/<name>/`.

use serde::{Deserialize, Serialize};

/// The Provider that supplies Boxes for a Run.
///
/// Shape (serde, lowercase): `"vercel" | "cloudflare" | "local"`.
///
/// Source: DESIGN.md §4 (Providers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Vercel Sandbox, spoken over REST v2/v3 (`vercel-sandbox-protocol.md`).
    Vercel,
    /// Cloudflare Sandbox, reached through a Durable Object stub's `fetch`.
    Cloudflare,
    /// The local Box host on 127.0.0.1 (speaks the Vercel REST subset).
    Local,
}

impl ProviderKind {
    /// Every Provider, in the order messages and generated types list them.
    pub const ALL: [ProviderKind; 3] = [ProviderKind::Vercel, ProviderKind::Cloudflare, ProviderKind::Local];

    /// The names of every Provider for a message: `` `vercel`, `cloudflare` or `local` ``.
    pub fn names_for_message() -> String {
        let names: Vec<String> = ProviderKind::ALL.iter().map(|kind| format!("`{kind}`")).collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }

    /// The stable lowercase name: `"vercel"`, `"cloudflare"` or `"local"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Vercel => "vercel",
            ProviderKind::Cloudflare => "cloudflare",
            ProviderKind::Local => "local",
        }
    }

    /// Parses the exact lowercase name (as returned by [`ProviderKind::as_str`]).
    ///
    /// Returns `None` for anything else (no trimming, no case folding).
    pub fn parse(s: &str) -> Option<ProviderKind> {
        match s {
            "vercel" => Some(ProviderKind::Vercel),
            "cloudflare" => Some(ProviderKind::Cloudflare),
            "local" => Some(ProviderKind::Local),
            _ => None,
        }
    }
}

impl std::fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in ProviderKind::ALL {
            assert_eq!(ProviderKind::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<ProviderKind>(&json).unwrap(), kind);
        }
        assert_eq!(ProviderKind::names_for_message(), "`vercel`, `cloudflare` or `local`");
        assert_eq!(ProviderKind::parse("Vercel"), None);
        assert_eq!(ProviderKind::parse(""), None);
    }
}
