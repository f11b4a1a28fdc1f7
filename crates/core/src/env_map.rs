//! [`EnvMap`]: environment variables, name → value, sorted by name (byte order of the UTF-8
//! names) and serialized as a JSON object in that order.

use std::collections::BTreeMap;

/// Environment variables of a Command, a config or a provider request: name → value. Values may
/// be secrets.
///
/// Shape (JSON): `Record<string, string>`, keys in name order; a later duplicate key wins.
pub type EnvMap = BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::EnvMap;

    #[test]
    fn orders_by_name_and_reads_a_json_object_of_strings() {
        let pairs = [("b", "1"), ("a", "2"), ("B", "3"), ("é", "4"), ("a", "5"), ("", "6")];
        let env: EnvMap = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(serde_json::to_string(&env).unwrap(), r#"{"":"6","B":"3","a":"5","b":"1","é":"4"}"#);
        let back: EnvMap = serde_json::from_str(r#"{"z":"1","y":"2","z":"3"}"#).unwrap();
        assert_eq!(back, EnvMap::from([("y".to_owned(), "2".to_owned()), ("z".to_owned(), "3".to_owned())]));
        assert!(serde_json::from_str::<EnvMap>(r#"{"a":1}"#).is_err());
    }
}
