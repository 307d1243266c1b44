//! Keyword-argument binding with CPython's `TypeError` texts, as when the environment calls a
//! tool's `invoke(data, **kwargs)`.

use serde_json::Value;

use super::py::{Raised, type_name};

/// The class name of a tool (`get_user_details` → `GetUserDetails`), as in CPython's messages.
pub fn class_name(tool: &str) -> String {
    tool.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// Binds keyword arguments to a tool's parameters like CPython calling `invoke(data, **kwargs)`:
/// an unexpected name is reported first, then all missing names.
///
/// # Errors
/// The `TypeError` text CPython would raise.
pub fn bind<'a>(tool: &str, params: &[&str], args: &'a Value) -> Result<Vec<&'a Value>, Raised> {
    let class = class_name(tool);
    let Value::Object(map) = args else {
        return Err(format!(
            "{class}.invoke() argument after ** must be a mapping, not {}",
            type_name(args)
        ));
    };
    for key in map.keys() {
        if key == "data" {
            return Err(format!(
                "{class}.invoke() got multiple values for argument 'data'"
            ));
        }
        if !params.contains(&key.as_str()) {
            return Err(format!(
                "{class}.invoke() got an unexpected keyword argument '{key}'"
            ));
        }
    }
    let missing: Vec<String> = params
        .iter()
        .filter(|name| !map.contains_key(**name))
        .map(|name| format!("'{name}'"))
        .collect();
    if !missing.is_empty() {
        let names = match missing.len() {
            1 => missing[0].clone(),
            2 => format!("{} and {}", missing[0], missing[1]),
            count => format!(
                "{}, and {}",
                missing[..count - 1].join(", "),
                missing[count - 1]
            ),
        };
        let plural = if missing.len() == 1 { "" } else { "s" };
        return Err(format!(
            "{class}.invoke() missing {} required positional argument{plural}: {names}",
            missing.len()
        ));
    }
    Ok(params.iter().filter_map(|name| map.get(*name)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn binding_reports_like_cpython() {
        let params = ["order_id", "reason", "extra"];
        assert_eq!(
            bind("cancel_pending_order", &params, &json!({}))
                .err()
                .as_deref(),
            Some(
                "CancelPendingOrder.invoke() missing 3 required positional arguments: 'order_id', 'reason', and 'extra'"
            )
        );
        assert_eq!(
            bind(
                "cancel_pending_order",
                &params[..2],
                &json!({"order_id": 1, "x": 2})
            )
            .err()
            .as_deref(),
            Some("CancelPendingOrder.invoke() got an unexpected keyword argument 'x'")
        );
    }
}
