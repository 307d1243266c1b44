//! Retail `modify_pending_order_items` and `modify_pending_order_payment`.

use serde_json::{Value, json};

use super::RetailDb;
use super::orders::{
    add_balance, first_item, open_order, order, order_mut, owner_method, swap_items,
};
use crate::tau::access::{array, array_mut, contains, is_str, item, set};
use crate::tau::py::{PyNum, Raised, equal, key_text, less};
use crate::tau::pyjson::dumps;

/// `modify_pending_order_items`.
pub fn modify_items(
    db: &mut RetailDb,
    order_id: &Value,
    old: &Value,
    new: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let (key, current) = match open_order(db, order_id, "pending", "modified")? {
        Ok(found) => found,
        Err(text) => return Ok(text),
    };
    let (old, new, diff) = match swap_items(db, current, old, new)? {
        Ok(swap) => swap,
        Err(text) => return Ok(text),
    };
    let Some(method) = owner_method(db, current, payment)? else {
        return Ok("Error: payment method not found".into());
    };
    let gift_card = is_str(item(method, "source")?, "gift_card");
    if gift_card && less(item(method, "balance")?, &diff.to_value())? {
        return Ok("Error: insufficient gift card balance to pay for the new item".into());
    }
    let user_id = key_text(item(current, "user_id")?);
    let kind = if PyNum::Int(0).lt(diff) {
        "payment"
    } else {
        "refund"
    };
    let mut replacements = Vec::with_capacity(old.len());
    for (old_id, new_id) in old.iter().zip(&new) {
        let product_id = key_text(item(first_item(current, old_id)?, "product_id")?);
        let variant = item(
            item(db.products.get(&product_id).ok_or("product")?, "variants")?,
            &key_text(new_id),
        )?;
        replacements.push((
            old_id.clone(),
            new_id.clone(),
            item(variant, "price")?.clone(),
            item(variant, "options")?.clone(),
        ));
    }
    if gift_card {
        add_balance(db, &user_id, &key_text(payment), diff.negated())?;
    }
    let current = order_mut(db, &key)?;
    array_mut(current, "payment_history")?.push(json!({
        "transaction_type": kind, "amount": diff.abs().to_value(), "payment_method_id": payment}));
    for (old_id, new_id, price, options) in replacements {
        let items = array_mut(current, "items")?;
        let Some(target) = items
            .iter_mut()
            .find(|it| it.get("item_id").is_some_and(|id| equal(id, &old_id)))
        else {
            return Err("list index out of range".into());
        };
        set(target, "item_id", new_id)?;
        set(target, "price", price)?;
        set(target, "options", options)?;
    }
    set(current, "status", json!("pending (item modified)"))?;
    Ok(dumps(current))
}

/// `modify_pending_order_payment`.
pub fn modify_payment(
    db: &mut RetailDb,
    order_id: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let (key, current) = match open_order(db, order_id, "pending", "modified")? {
        Ok(found) => found,
        Err(text) => return Ok(text),
    };
    let Some(method) = owner_method(db, current, payment)? else {
        return Ok("Error: payment method not found".into());
    };
    let history = array(current, "payment_history")?;
    let first = history
        .first()
        .ok_or_else(|| "list index out of range".to_owned())?;
    if history.len() > 1 || !is_str(item(first, "transaction_type")?, "payment") {
        return Ok("Error: there should be exactly one payment for a pending order".into());
    }
    let old_method = item(first, "payment_method_id")?.clone();
    if equal(&old_method, payment) {
        return Ok("Error: the new payment method should be different from the current one".into());
    }
    let amount = item(first, "amount")?.clone();
    let gift_card = is_str(item(method, "source")?, "gift_card");
    if gift_card && less(item(method, "balance")?, &amount)? {
        return Ok("Error: insufficient gift card balance to pay for the order".into());
    }
    let user_id = key_text(item(current, "user_id")?);
    let current = order_mut(db, &key)?;
    array_mut(current, "payment_history")?.extend([
        json!({"transaction_type": "payment", "amount": amount, "payment_method_id": payment}),
        json!({"transaction_type": "refund", "amount": amount, "payment_method_id": old_method}),
    ]);
    let delta = PyNum::of(&amount).ok_or_else(|| "amount is not a number".to_owned())?;
    if gift_card {
        add_balance(db, &user_id, &key_text(payment), delta.negated())?;
    }
    if contains(&old_method, "gift_card")? {
        add_balance(db, &user_id, &key_text(&old_method), delta)?;
    }
    Ok(dumps(order(db, &key)?))
}
