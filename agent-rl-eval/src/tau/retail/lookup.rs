//! Retail read tools (user search, details, product types) and `modify_user_address`.

use serde_json::{Map, Value};

use super::RetailDb;
use crate::tau::access::{item, set};
use crate::tau::calculate::calculate;
use crate::tau::py::{Raised, equal, iterate, key_text, lookup, type_name};
use crate::tau::pyjson::dumps;

/// `calculate(expression)`, also used by the airline domain.
pub fn calculate_tool(expression: &Value) -> Result<String, Raised> {
    const ALLOWED: &str = "0123456789+-*/(). ";
    if let Value::String(text) = expression {
        return Ok(calculate(text));
    }
    // A list or dict is iterated (`char in ALLOWED` is a substring test), then `eval` refuses it.
    for element in iterate(expression)? {
        match element {
            Value::String(text) if ALLOWED.contains(text.as_str()) => {}
            Value::String(_) => return Ok("Error: invalid characters in expression".into()),
            other => {
                return Err(format!(
                    "'in <string>' requires string as left operand, not {}",
                    type_name(&other)
                ));
            }
        }
    }
    Err("eval() arg 1 must be a string, bytes or code object".into())
}

/// Python `text.lower()` on an argument; `AttributeError` text for a non-string.
fn lower(value: &Value) -> Result<String, Raised> {
    value
        .as_str()
        .map(str::to_lowercase)
        .ok_or_else(|| format!("'{}' object has no attribute 'lower'", type_name(value)))
}

/// `find_user_id_by_email`.
pub fn find_by_email(db: &RetailDb, email: &Value) -> Result<String, Raised> {
    for (user_id, profile) in &db.users {
        if lower(item(profile, "email")?)? == lower(email)? {
            return Ok(user_id.clone());
        }
    }
    Ok("Error: user not found".into())
}

/// `find_user_id_by_name_zip`.
pub fn find_by_name_zip(
    db: &RetailDb,
    first: &Value,
    last: &Value,
    zip: &Value,
) -> Result<String, Raised> {
    for (user_id, profile) in &db.users {
        let name = item(profile, "name")?;
        if lower(item(name, "first_name")?)? == lower(first)?
            && lower(item(name, "last_name")?)? == lower(last)?
            && equal(item(item(profile, "address")?, "zip")?, zip)
        {
            return Ok(user_id.clone());
        }
    }
    Ok("Error: user not found".into())
}

/// `get_*_details`: JSON of the record, or `Error: <what> not found`.
pub fn details(table: &Map<String, Value>, id: &Value, what: &str) -> Result<String, Raised> {
    Ok(match lookup(table, id)? {
        Some(record) => dumps(record),
        None => format!("Error: {what} not found"),
    })
}

/// `list_all_product_types`: `{name: product_id}` sorted by name.
pub fn list_product_types(db: &RetailDb) -> String {
    let mut by_name: Map<String, Value> = Map::new();
    for product in db.products.values() {
        let name = product.get("name").map(key_text).unwrap_or_default();
        let id = product.get("product_id").cloned().unwrap_or(Value::Null);
        by_name.insert(name, id);
    }
    let mut entries: Vec<(String, Value)> = by_name.into_iter().collect();
    entries.sort_by(|left, right| left.0.cmp(&right.0));
    dumps(&Value::Object(entries.into_iter().collect()))
}

/// `modify_user_address`.
pub fn modify_user_address(
    db: &mut RetailDb,
    user_id: &Value,
    fields: &[&Value],
) -> Result<String, Raised> {
    if lookup(&db.users, user_id)?.is_none() {
        return Ok("Error: user not found".into());
    }
    let key = key_text(user_id);
    let user = db.users.get_mut(&key).ok_or_else(|| format!("'{key}'"))?;
    set(user, "address", super::address(fields))?;
    Ok(dumps(user))
}
