//! Airline update tools: baggage, flights, passengers.

use serde_json::{Value, json};

use super::AirlineDb;
use super::booking::{price_flight, reservation_key};
use crate::tau::access::{array, array_mut, is_str, item, item_mut, object, set};
use crate::tau::py::{PyNum, Raised, equal, iterate, key_text, len, less, lookup, nums};
use crate::tau::pyjson::dumps;

/// Payment checks shared by the update tools; `Some(error)` when the method cannot pay `price`.
fn check_update_payment(
    db: &AirlineDb,
    owner: &str,
    payment: &Value,
    price: PyNum,
) -> Result<Option<String>, Raised> {
    let user = db.users.get(owner).ok_or_else(|| format!("'{owner}'"))?;
    let Some(method) = lookup(object(user, "payment_methods")?, payment)? else {
        return Ok(Some("Error: payment method not found".into()));
    };
    let source = item(method, "source")?;
    if is_str(source, "certificate") {
        return Ok(Some(
            "Error: certificate cannot be used to update reservation".into(),
        ));
    }
    if is_str(source, "gift_card") && less(item(method, "amount")?, &price.to_value())? {
        return Ok(Some("Error: gift card balance is not enough".into()));
    }
    Ok(None)
}

/// Charges `price` to a gift card (`amount -= price`); other methods are not touched.
fn charge_gift_card(
    db: &mut AirlineDb,
    owner: &str,
    payment: &Value,
    price: PyNum,
) -> Result<(), Raised> {
    let user = db
        .users
        .get_mut(owner)
        .ok_or_else(|| format!("'{owner}'"))?;
    let method = item_mut(item_mut(user, "payment_methods")?, &key_text(payment))?;
    if is_str(item(method, "source")?, "gift_card") {
        let (balance, _) = nums(item(method, "amount")?, &price.to_value(), "-=")?;
        set(method, "amount", balance.minus(price).to_value())?;
    }
    Ok(())
}

/// `update_reservation_baggages`.
pub fn update_baggages(
    db: &mut AirlineDb,
    id: &Value,
    total: &Value,
    nonfree: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let Some(key) = reservation_key(db, id)? else {
        return Ok("Error: reservation not found".into());
    };
    let reservation = db.reservations.get(&key).ok_or("reservation")?;
    let (new, old) = nums(nonfree, item(reservation, "nonfree_baggages")?, "-")?;
    let extra = new.minus(old);
    let extra = if PyNum::Int(0).lt(extra) {
        extra
    } else {
        PyNum::Int(0)
    };
    let price = PyNum::Int(50).times(extra);
    let owner = key_text(item(reservation, "user_id")?);
    if let Some(error) = check_update_payment(db, &owner, payment, price)? {
        return Ok(error);
    }
    let reservation = db.reservations.get_mut(&key).ok_or("reservation")?;
    set(reservation, "total_baggages", total.clone())?;
    set(reservation, "nonfree_baggages", nonfree.clone())?;
    if !price.num_eq(PyNum::Int(0)) {
        array_mut(reservation, "payment_history")?
            .push(json!({"payment_id": payment, "amount": price.to_value()}));
    }
    charge_gift_card(db, &owner, payment, price)?;
    Ok(dumps(db.reservations.get(&key).ok_or("reservation")?))
}

/// `update_reservation_flights` (the reservation's `cabin` is left unchanged, as upstream).
pub fn update_flights(
    db: &mut AirlineDb,
    id: &Value,
    cabin: &Value,
    flights: &Value,
    payment: &Value,
) -> Result<String, Raised> {
    let Some(key) = reservation_key(db, id)? else {
        return Ok("Error: reservation not found".into());
    };
    let reservation = db.reservations.get(&key).ok_or("reservation")?;
    let passengers = len(item(reservation, "passengers")?)?;
    let count = PyNum::Int(passengers as i64);
    let old_flights = array(reservation, "flights")?;
    let same_cabin = equal(cabin, item(reservation, "cabin")?);
    let mut new_flights = iterate(flights)?;
    let mut total = PyNum::Int(0);
    for flight in &mut new_flights {
        let existing = old_flights.iter().find(|old| {
            same_cabin
                && old
                    .get("flight_number")
                    .zip(flight.get("flight_number"))
                    .is_some_and(|(a, b)| equal(a, b))
                && old
                    .get("date")
                    .zip(flight.get("date"))
                    .is_some_and(|(a, b)| equal(a, b))
        });
        if flight.get("flight_number").is_none() || flight.get("date").is_none() {
            item(flight, "flight_number")?;
            item(flight, "date")?;
        }
        if let Some(old) = existing {
            let price = item(old, "price")?.clone();
            let (unit, _) = nums(&price, &count.to_value(), "*")?;
            total = total.plus(unit.times(count));
            set(flight, "price", price)?;
            set(flight, "origin", item(old, "origin")?.clone())?;
            set(flight, "destination", item(old, "destination")?.clone())?;
            continue;
        }
        match price_flight(db, flight, cabin, item(reservation, "passengers")?)? {
            Ok(price) => total = total.plus(price),
            Err(text) => return Ok(text),
        }
    }
    let mut old_sum = PyNum::Int(0);
    for old in old_flights {
        let (sum, price) = nums(&old_sum.to_value(), item(old, "price")?, "+")?;
        old_sum = sum.plus(price);
    }
    total = total.minus(old_sum.times(count));
    let owner = key_text(item(reservation, "user_id")?);
    if let Some(error) = check_update_payment(db, &owner, payment, total)? {
        return Ok(error);
    }
    charge_gift_card(db, &owner, payment, total)?;
    let reservation = db.reservations.get_mut(&key).ok_or("reservation")?;
    let stored = if flights.is_array() {
        Value::Array(new_flights)
    } else {
        flights.clone()
    };
    set(reservation, "flights", stored)?;
    if !total.num_eq(PyNum::Int(0)) {
        array_mut(reservation, "payment_history")?
            .push(json!({"payment_id": payment, "amount": total.to_value()}));
    }
    Ok(dumps(reservation))
}

/// `update_reservation_passengers`.
pub fn update_passengers(
    db: &mut AirlineDb,
    id: &Value,
    passengers: &Value,
) -> Result<String, Raised> {
    let Some(key) = reservation_key(db, id)? else {
        return Ok("Error: reservation not found".into());
    };
    let reservation = db.reservations.get_mut(&key).ok_or("reservation")?;
    if len(passengers)? != len(item(reservation, "passengers")?)? {
        return Ok("Error: number of passengers does not match".into());
    }
    set(reservation, "passengers", passengers.clone())?;
    Ok(dumps(reservation))
}
