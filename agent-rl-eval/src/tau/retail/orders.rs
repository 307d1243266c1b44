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

/// A check that either passes with a value or ends the tool: `Ok(Err(text))` is the observation
/// the tool returns, `Err` an exception the original raises.
pub(super) type Checked<T> = Result<Result<T, String>, Raised>;

/// The key and record of order `order_id` when it exists and its status is `status`; otherwise
/// the tools' observation, `Error: order not found` or `Error: non-<status> order cannot be <verb>`.
pub(super) fn open_order<'a>(
    db: &'a RetailDb,
    order_id: &Value,
    status: &str,
    verb: &str,
) -> Checked<(String, &'a Value)> {
    if lookup(&db.orders, order_id)?.is_none() {
        return Ok(Err("Error: order not found".into()));
    }
    let key = key_text(order_id);
    let current = order(db, &key)?;
    if !is_str(item(current, "status")?, status) {
        return Ok(Err(format!("Error: non-{status} order cannot be {verb}")));
    }
    Ok(Ok((key, current)))
}

pub(super) fn order<'a>(db: &'a RetailDb, key: &str) -> Result<&'a Value, Raised> {
    db.orders.get(key).ok_or_else(|| format!("'{key}'"))
}

pub(super) fn order_mut<'a>(db: &'a mut RetailDb, key: &str) -> Result<&'a mut Value, Raised> {
    db.orders.get_mut(key).ok_or_else(|| format!("'{key}'"))
}

/// The payment method `payment` of the order's owner; `None` when the owner has no such method.
pub(super) fn owner_method<'a>(
    db: &'a RetailDb,
    order: &Value,
    payment: &Value,
) -> Result<Option<&'a Value>, Raised> {
    let user_id = key_text(item(order, "user_id")?);
    let user = db
        .users
        .get(&user_id)
        .ok_or_else(|| format!("'{user_id}'"))?;
    let methods = item(user, "payment_methods")?
        .as_object()
        .ok_or("payment_methods")?;
    lookup(methods, payment)
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

/// The item checks shared by exchange and modify-items, in the original's order: every old id
/// is in the order, the id lists have the same length, every new variant exists and is
/// available. Returns the old ids, the new ids and the summed (unrounded) price difference.
pub(super) fn swap_items(
    db: &RetailDb,
    order: &Value,
    old: &Value,
    new: &Value,
) -> Checked<(Vec<Value>, Vec<Value>, PyNum)> {
    let old = counted_items(old)?;
    if let Some(bad) = missing_item(order, &old)? {
        return Ok(Err(format!("Error: {} not found", to_str(&bad))));
    }
    if old.len() != len(new)? {
        return Ok(Err(
            "Error: the number of items to be exchanged should match".into(),
        ));
    }
    let new = iterate(new)?;
    Ok(price_difference(db, order, &old, &new)?.map(|diff| (old, new, diff)))
}

/// The multiset check shared by exchange, modify and return: `Some(bad id)` on failure.
fn missing_item(order: &Value, item_ids: &[Value]) -> Result<Option<Value>, Raised> {
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
fn price_difference(db: &RetailDb, order: &Value, old: &[Value], new: &[Value]) -> Checked<PyNum> {
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
    let (key, current) = match open_order(db, order_id, "pending", "cancelled")? {
        Ok(found) => found,
        Err(text) => return Ok(text),
    };
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
    let (key, current) = match open_order(db, order_id, "delivered", "exchanged")? {
        Ok(found) => found,
        Err(text) => return Ok(text),
    };
    let (old, new, diff) = match swap_items(db, current, old, new)? {
        Ok(swap) => swap,
        Err(text) => return Ok(text),
    };
    let diff = diff.round2();
    let Some(method) = owner_method(db, current, payment)? else {
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
    let (key, current) = match open_order(db, order_id, "delivered", "returned")? {
        Ok(found) => found,
        Err(text) => return Ok(text),
    };
    if owner_method(db, current, payment)?.is_none() {
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
    let key = match open_order(db, order_id, "pending", "modified")? {
        Ok((key, _)) => key,
        Err(text) => return Ok(text),
    };
    let current = order_mut(db, &key)?;
    set(current, "address", super::address(fields))?;
    Ok(dumps(current))
}
