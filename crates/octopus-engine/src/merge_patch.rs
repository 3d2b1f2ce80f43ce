//! JSON merge patch (RFC 7386): an object patch replaces the members it names,
//! recursing into objects; `null` removes a member; anything else replaces whole.

use serde_json::Value;

pub fn apply(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                apply(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn follows_rfc_7386_examples() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        apply(&mut doc, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}}));

        let mut doc = json!({"a": [1, 2]});
        apply(&mut doc, &json!({"a": [3]}));
        assert_eq!(doc, json!({"a": [3]}));

        let mut doc = json!("scalar");
        apply(&mut doc, &json!({"x": 1}));
        assert_eq!(doc, json!({"x": 1}));
    }
}
