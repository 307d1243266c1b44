//! Retail read tools (user search, product types) and `modify_user_address`.

use serde_json::{Map, Value};

use super::RetailDb;
use crate::tau::access::{item, set};
use crate::tau::py::{Raised, equal, key_text, lookup, type_name};
use crate::tau::pyjson::dumps;

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
