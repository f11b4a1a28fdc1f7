//! [`EnvMap`]: environment variables, name → value, kept sorted by name (byte order of the
//! UTF-8 names, as a `BTreeMap<String, String>` orders them).
//!
//! A `Vec` of pairs searched by binary search rather than a `BTreeMap`: the env of a Command, of
//! a config and of a provider request holds a handful of names, and the B-tree's insert, clone,
//! drop and search code cost the runtime wasm about 5 KB (docs/internals.md "Runtime size").
//! Serialized as a JSON object in name order, as the `BTreeMap` it replaces was.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// Environment variables, sorted by name, each name once (a later [`EnvMap::insert`] of a name
/// replaces its value). Values may be secrets: the `Debug` form is the derive's, so never log
/// one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvMap(Vec<(String, String)>);

impl EnvMap {
    /// An empty map.
    pub const fn new() -> EnvMap {
        EnvMap(Vec::new())
    }

    /// Sets `name` to `value`, replacing the value it had.
    pub fn insert(&mut self, name: String, value: String) {
        match self.0.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
            Ok(at) => self.0[at].1 = value,
            Err(at) => self.0.insert(at, (name, value)),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&String> {
        self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok().map(|at| &self.0[at].1)
    }

    /// Whether `name` is set.
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Whether no name is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many names are set.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The `(name, value)` pairs in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(n, v)| (n, v))
    }
}

impl FromIterator<(String, String)> for EnvMap {
    /// Inserts each pair in turn (a later pair of the same name wins, as in a `BTreeMap`).
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> EnvMap {
        let mut map = EnvMap::new();
        for (name, value) in pairs {
            map.insert(name, value);
        }
        map
    }
}

impl<const N: usize> From<[(String, String); N]> for EnvMap {
    fn from(pairs: [(String, String); N]) -> EnvMap {
        pairs.into_iter().collect()
    }
}

impl Serialize for EnvMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for EnvMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<EnvMap, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = EnvMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<EnvMap, A::Error> {
                let mut map = EnvMap::new();
                while let Some((name, value)) = access.next_entry::<String, String>()? {
                    map.insert(name, value);
                }
                Ok(map)
            }
        }
        deserializer.deserialize_map(Pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::EnvMap;
    use std::collections::BTreeMap;

    #[test]
    fn orders_replaces_and_serializes_like_a_btreemap() {
        let pairs = [("b", "1"), ("a", "2"), ("B", "3"), ("é", "4"), ("a", "5"), ("", "6")];
        let ours: EnvMap = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let theirs: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(ours.iter().collect::<Vec<_>>(), theirs.iter().collect::<Vec<_>>());
        assert_eq!(ours.len(), 5);
        assert_eq!(ours.get("a").map(String::as_str), Some("5"));
        assert!(ours.get("c").is_none() && !ours.contains_key("c") && ours.contains_key(""));
        assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
        let back: EnvMap = serde_json::from_str(r#"{"z":"1","y":"2","z":"3"}"#).unwrap();
        assert_eq!(back, EnvMap::from([("y".to_owned(), "2".to_owned()), ("z".to_owned(), "3".to_owned())]));
        assert!(serde_json::from_str::<EnvMap>(r#"{"a":1}"#).is_err());
        assert!(EnvMap::new().is_empty());
    }
}
