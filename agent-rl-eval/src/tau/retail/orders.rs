//! Retail write tools on orders: cancel, exchange, modify items / payment / address, return.
//! Every check runs before the first mutation, in the original's order.

use serde_json::{Value, json};

use super::RetailDb;
use crate::tau::access::{
    array, array_mut, contains, count, counted_items, is_str, item, item_mut, object, set, sorted,
    truthy,
};
use crate::tau::py::{PyNum, Raised, equal, iterate, key_text, len, less, lookup, nums, to_str};
use crate::tau::pyjson::dumps;

/// The order id as a table key, or `None` when the order does not exist.
pub(super) fn order_key(db: &RetailDb, order_id: &Value) -> Result<Option<String>, Raised> {
    Ok(lookup(&db.orders, order_id)?.map(|_| key_text(order_id)))
}

pub(super) fn order<'a>(db: &'a RetailDb, key: &str) -> Result<&'a Value, Raised> {
    db.orders.get(key).ok_or_else(|| format!("'{key}'"))
}

pub(super) fn order_mut<'a>(db: &'a mut RetailDb, key: &str) -> Result<&'a mut Value, Raised> {
    db.orders.get_mut(key).ok_or_else(|| format!("'{key}'"))
}

/// The payment methods of the order's owner.
pub(super) fn owner_methods<'a>(db: &'a RetailDb, order: &Value) -> Result<&'a Value, Raised> {
    let user_id = key_text(item(order, "user_id")?);
    let user = db
        .users
        .get(&user_id)
        .ok_or_else(|| format!("'{user_id}'"))?;
    item(user, "payment_methods")
}

fn method_mut<'a>(
    db: &'a mut RetailDb,
    user_id: &str,
    method: &str,
) -> Result<&'a mut Value, Raised> {
    let user = db
        .users
        .get_mut(user_id)
        .ok_or_else(|| format!("'{user_id}'"))?;
    item_mut(item_mut(user, "payment_methods")?, method)
}

/// `method["balance"] = round(method["balance"] + delta, 2)`.
pub(super) fn add_balance(
    db: &mut RetailDb,
    user_id: &str,
    method: &str,
    delta: PyNum,
) -> Result<(), Raised> {
    let method = method_mut(db, user_id, method)?;
    let balance = item(method, "balance")?;
    let (balance, _) = nums(balance, &delta.to_value(), "+")?;
    set(method, "balance", balance.plus(delta).round2().to_value())
}

/// The multiset check shared by exchange, modify and return: `Some(bad id)` on failure.
pub(super) fn missing_item(order: &Value, item_ids: &[Value]) -> Result<Option<Value>, Raised> {
    let all: Vec<Value> = array(order, "items")?
        .iter()
        .map(|it| item(it, "item_id").cloned())
        .collect::<Result<_, _>>()?;
    Ok(item_ids
        .iter()
        .find(|id| count(item_ids, id) > count(&all, id))
        .cloned())
}

/// Pairwise variant check; returns the summed price difference (unrounded) or the error text.
pub(super) fn price_difference(
    db: &RetailDb,
    order: &Value,
    old: &[Value],
    new: &[Value],
) -> Result<Result<PyNum, String>, Raised> {
    let mut diff = PyNum::Int(0);
    for (old_id, new_id) in old.iter().zip(new) {
        let current = first_item(order, old_id)?;
        let product_id = key_text(item(current, "product_id")?);
        let product = db
            .products
            .get(&product_id)
            .ok_or_else(|| format!("'{product_id}'"))?;
        let variants = object(product, "variants")?;
        let variant = lookup(variants, new_id)?;
        let Some(variant) = variant.filter(|variant| variant.get("available").is_some_and(truthy))
        else {
            return Ok(Err(format!(
                "Error: new item {} not found or available",
                to_str(new_id)
            )));
        };
        let (new_price, old_price) = nums(item(variant, "price")?, item(current, "price")?, "-")?;
        diff = diff.plus(new_price.minus(old_price));
    }
    Ok(Ok(diff))
}

pub(super) fn first_item<'a>(order: &'a Value, item_id: &Value) -> Result<&'a Value, Raised> {
    array(order, "items")?
        .iter()
        .find(|it| it.get("item_id").is_some_and(|id| equal(id, item_id)))
        .ok_or_else(|| "list index out of range".to_owned())
}

/// `cancel_pending_order`.
pub fn cancel(db: &mut RetailDb, order_id: &Value, reason: &Value) -> Result<String, Raised> {
    let Some(key) = order_key(db, order_id)? else {
        return Ok("Error: order not found".into());
    };
    let current = order(db, &key)?;
    if !is_str(item(current, "status")?, "pending") {
        return Ok("Error: non-pending order cannot be cancelled".into());
    }
    if !(is_str(reason, "no longer needed") || is_str(reason, "ordered by mistake")) {
        return Ok("Error: invalid reason".into());
    }
    let user_id = key_text(item(current, "user_id")?);
    let payments = array(current, "payment_history")?.clone();
    let mut refunds = Vec::with_capacity(payments.len());
    for payment in &payments {
        let method = item(payment, "payment_method_id")?;
        let amount = item(payment, "amount")?;
        refunds.push(
            json!({"transaction_type": "refund", "amount": amount, "payment_method_id": method}),
        );
        if contains(method, "gift_card")? {
            let delta = PyNum::of(amount).ok_or_else(|| "amount is not a number".to_owned())?;
            add_balance(db, &user_id, &key_text(method), delta)?;
        }
    }
    let current = order_mut(db, &key)?;
    set(current, "status", json!("cancelled"))?;
    set(current, "cancel_reason", reason.clone())?;
    array_mut(current, "payment_history")?.extend(refunds);
    Ok(dumps(current))
}

/// `exchange_delivered_order_items`.
pub fn exchange(
    db: &mut RetailDb,
    order_id: &Value,
    old: &Value,
    new: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let Some(key) = order_key(db, order_id)? else {
        return Ok("Error: order not found".into());
    };
    let current = order(db, &key)?;
    if !is_str(item(current, "status")?, "delivered") {
        return Ok("Error: non-delivered order cannot be exchanged".into());
    }
    let old = counted_items(old)?;
    if let Some(bad) = missing_item(current, &old)? {
        return Ok(format!("Error: {} not found", to_str(&bad)));
    }
    if old.len() != len(new)? {
        return Ok("Error: the number of items to be exchanged should match".into());
    }
    let new = iterate(new)?;
    let diff = match price_difference(db, current, &old, &new)? {
        Ok(diff) => diff.round2(),
        Err(text) => return Ok(text),
    };
    let Some(method) = lookup(
        owner_methods(db, current)?
            .as_object()
            .ok_or("payment_methods")?,
        payment,
    )?
    else {
        return Ok("Error: payment method not found".into());
    };
    if is_str(item(method, "source")?, "gift_card")
        && less(item(method, "balance")?, &diff.to_value())?
    {
        return Ok("Error: insufficient gift card balance to pay for the price difference".into());
    }
    let (old, new) = (sorted(old)?, sorted(new)?);
    let current = order_mut(db, &key)?;
    set(current, "status", json!("exchange requested"))?;
    set(current, "exchange_items", Value::Array(old))?;
    set(current, "exchange_new_items", Value::Array(new))?;
    set(current, "exchange_payment_method_id", payment.clone())?;
    set(current, "exchange_price_difference", diff.to_value())?;
    Ok(dumps(current))
}

/// `return_delivered_order_items` (payment is checked before the items, as in the original).
pub fn return_items(
    db: &mut RetailDb,
    order_id: &Value,
    items: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let Some(key) = order_key(db, order_id)? else {
        return Ok("Error: order not found".into());
    };
    let current = order(db, &key)?;
    if !is_str(item(current, "status")?, "delivered") {
        return Ok("Error: non-delivered order cannot be returned".into());
    }
    if lookup(
        owner_methods(db, current)?
            .as_object()
            .ok_or("payment_methods")?,
        payment,
    )?
    .is_none()
    {
        return Ok("Error: payment method not found".into());
    }
    let original = item(
        array(current, "payment_history")?
            .first()
            .ok_or("list index out of range")?,
        "payment_method_id",
    )?;
    if !contains(payment, "gift_card")? && !equal(payment, original) {
        return Ok(
            "Error: payment method should be either the original payment method or a gift card"
                .into(),
        );
    }
    let items = counted_items(items)?;
    if missing_item(current, &items)?.is_some() {
        return Ok("Error: some item not found".into());
    }
    let items = sorted(items)?;
    let current = order_mut(db, &key)?;
    set(current, "status", json!("return requested"))?;
    set(current, "return_items", Value::Array(items))?;
    set(current, "return_payment_method_id", payment.clone())?;
    Ok(dumps(current))
}

/// `modify_pending_order_address`.
pub fn modify_address(
    db: &mut RetailDb,
    order_id: &Value,
    fields: &[&Value],
) -> Result<String, Raised> {
    let Some(key) = order_key(db, order_id)? else {
        return Ok("Error: order not found".into());
    };
    let current = order_mut(db, &key)?;
    if !is_str(item(current, "status")?, "pending") {
        return Ok("Error: non-pending order cannot be modified".into());
    }
    set(current, "address", super::address(fields))?;
    Ok(dumps(current))
}
