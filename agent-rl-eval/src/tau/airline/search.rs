//! Airline read tools (airports, direct and one-stop search) and `send_certificate`.

use serde_json::{Map, Value, json};

use super::AirlineDb;
use crate::tau::access::{is_str, item, object, object_mut};
use crate::tau::py::{Raised, equal, key_error, key_text, lookup, to_str, type_name};
use crate::tau::pyjson::dumps;

/// The fixed answer of `list_all_airports` (does not read the database).
pub const AIRPORTS: &str = "{\"SFO\": \"San Francisco\", \"JFK\": \"New York\", \"LAX\": \"Los Angeles\", \
\"ORD\": \"Chicago\", \"DFW\": \"Dallas\", \"DEN\": \"Denver\", \"SEA\": \"Seattle\", \"ATL\": \"Atlanta\", \
\"MIA\": \"Miami\", \"BOS\": \"Boston\", \"PHX\": \"Phoenix\", \"IAH\": \"Houston\", \"LAS\": \"Las Vegas\", \
\"MCO\": \"Orlando\", \"EWR\": \"Newark\", \"CLT\": \"Charlotte\", \"MSP\": \"Minneapolis\", \
\"DTW\": \"Detroit\", \"PHL\": \"Philadelphia\", \"LGA\": \"LaGuardia\"}";

/// The flight's fields except `dates`, followed by the fields of one date entry.
fn leg(flight: &Value, day: &Value) -> Result<Map<String, Value>, Raised> {
    let mut out: Map<String, Value> = flight
        .as_object()
        .ok_or("flight is not a dict")?
        .iter()
        .filter(|(key, _)| key.as_str() != "dates")
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    for (key, value) in day.as_object().ok_or("date entry is not a dict")? {
        out.insert(key.clone(), value.clone());
    }
    Ok(out)
}

/// The date entry when it exists and is `available`.
fn available<'a>(flight: &'a Value, date: &Value) -> Result<Option<&'a Value>, Raised> {
    Ok(lookup(object(flight, "dates")?, date)?
        .filter(|day| day.get("status").is_some_and(|s| is_str(s, "available"))))
}

/// `search_direct_flight`.
pub fn direct(
    db: &AirlineDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> Result<String, Raised> {
    let mut results = Vec::new();
    for flight in db.flights.values() {
        if equal(item(flight, "origin")?, origin)
            && equal(item(flight, "destination")?, destination)
            && let Some(day) = available(flight, date)?
        {
            results.push(Value::Object(leg(flight, day)?));
        }
    }
    Ok(dumps(&Value::Array(results)))
}

/// `"2024-05-" + str(int(date[-2:]) + 1)`, the (unpadded) next day used for overnight legs.
fn next_day(date: &Value) -> Result<Value, Raised> {
    let Value::String(text) = date else {
        return Err(format!("'{}' object is not subscriptable", type_name(date)));
    };
    let chars: Vec<char> = text.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(2)..].iter().collect();
    let day: i64 = tail.trim().parse().map_err(|_| {
        format!(
            "invalid literal for int() with base 10: {}",
            key_error(&json!(tail))
        )
    })?;
    Ok(json!(format!("2024-05-{}", day + 1)))
}

/// `search_onestop_flight`, quirks included: the second leg carries the first day's entry.
pub fn one_stop(
    db: &AirlineDb,
    origin: &Value,
    destination: &Value,
    date: &Value,
) -> Result<String, Raised> {
    let mut results = Vec::new();
    for first in db.flights.values() {
        if !equal(item(first, "origin")?, origin) {
            continue;
        }
        for second in db.flights.values() {
            if !(equal(item(second, "destination")?, destination)
                && equal(item(first, "destination")?, item(second, "origin")?))
            {
                continue;
            }
            let arrival = item(first, "scheduled_arrival_time_est")?;
            let arrival_text = arrival.as_str().unwrap_or_default();
            let second_date = if arrival_text.contains("+1") {
                next_day(date)?
            } else {
                date.clone()
            };
            let departure = item(second, "scheduled_departure_time_est")?
                .as_str()
                .unwrap_or_default();
            if arrival_text > departure {
                continue;
            }
            let (Some(day1), Some(_)) = (available(first, date)?, available(second, &second_date)?)
            else {
                continue;
            };
            let mut leg1 = leg(first, day1)?;
            leg1.insert("date".to_owned(), date.clone());
            let day2 = lookup(object(second, "dates")?, date)?.ok_or_else(|| key_error(date))?;
            let mut leg2 = leg(second, day2)?;
            leg2.insert("date".to_owned(), second_date);
            results.push(json!([leg1, leg2]));
        }
    }
    Ok(dumps(&Value::Array(results)))
}

/// `send_certificate`. When the user already holds all three certificate ids the original
/// returns `None` and its environment step fails; here that is reported as a raised error.
pub fn send_certificate(
    db: &mut AirlineDb,
    user_id: &Value,
    amount: &Value,
) -> Result<String, Raised> {
    if lookup(&db.users, user_id)?.is_none() {
        return Ok("Error: user not found".into());
    }
    let key = key_text(user_id);
    let user = db.users.get_mut(&key).ok_or_else(|| format!("'{key}'"))?;
    let methods = object_mut(user, "payment_methods")?;
    for number in [3_221_322, 3_221_323, 3_221_324] {
        let id = format!("certificate_{number}");
        if !methods.contains_key(&id) {
            methods.insert(
                id.clone(),
                json!({"source": "certificate", "amount": amount, "id": id}),
            );
            return Ok(format!(
                "Certificate {id} added to user {key} with amount {}.",
                to_str(amount)
            ));
        }
    }
    Err("send_certificate returned None (all certificate ids taken)".into())
}
