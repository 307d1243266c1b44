//! Airline write tools: book, cancel, and update flights / baggage / passengers.

use serde_json::{Map, Value, json};

use super::AirlineDb;
use crate::tau::access::{array, array_mut, is_str, item, item_mut, object, set};
use crate::tau::py::{PyNum, Raised, index, iterate, key_text, len, less, lookup, nums, to_str};
use crate::tau::pyjson::dumps;

/// Validates one new flight as booking does and fills in `price`, `origin`, `destination`.
/// Returns the price, or the tool's error string.
pub(super) fn price_flight(
    db: &AirlineDb,
    flight: &mut Value,
    cabin: &Value,
    passengers: &Value,
) -> Result<Result<PyNum, String>, Raised> {
    let number = item(flight, "flight_number")?.clone();
    let Some(data) = lookup(&db.flights, &number)? else {
        return Ok(Err(format!("Error: flight {} not found", to_str(&number))));
    };
    let date = item(flight, "date")?.clone();
    let Some(day) = lookup(object(data, "dates")?, &date)? else {
        return Ok(Err(format!(
            "Error: flight {} not found on date {}",
            to_str(&number),
            to_str(&date)
        )));
    };
    if !is_str(item(day, "status")?, "available") {
        return Ok(Err(format!(
            "Error: flight {} not available on date {}",
            to_str(&number),
            to_str(&date)
        )));
    }
    let seats = index(object(day, "available_seats")?, cabin)?;
    let passengers = len(passengers)?;
    if less(seats, &json!(passengers))? {
        return Ok(Err(format!(
            "Error: not enough seats on flight {}",
            to_str(&number)
        )));
    }
    let price = index(object(day, "prices")?, cabin)?.clone();
    set(flight, "price", price.clone())?;
    set(flight, "origin", item(data, "origin")?.clone())?;
    set(flight, "destination", item(data, "destination")?.clone())?;
    let (price, count) = nums(&price, &json!(passengers), "*")?;
    Ok(Ok(price.times(count)))
}

/// `book_reservation`.
pub fn book(db: &mut AirlineDb, args: &[&Value]) -> Result<String, Raised> {
    let [
        user_id,
        origin,
        destination,
        flight_type,
        cabin,
        flights,
        passengers,
        payments,
        total_bags,
        nonfree,
        insurance,
    ] = args
    else {
        return Err("book_reservation: wrong number of arguments".into());
    };
    let Some(user) = lookup(&db.users, user_id)? else {
        return Ok("Error: user not found".into());
    };
    let user_key = key_text(user_id);
    let mut reservation_id = "HATHAT";
    if db.reservations.contains_key(reservation_id) {
        reservation_id = "HATHAU";
        if db.reservations.contains_key(reservation_id) {
            reservation_id = "HATHAV";
        }
    }
    let mut new_flights = iterate(flights)?;
    let mut total = PyNum::Int(0);
    for flight in &mut new_flights {
        match price_flight(db, flight, cabin, passengers)? {
            Ok(price) => total = total.plus(price),
            Err(text) => return Ok(text),
        }
    }
    if is_str(insurance, "yes") {
        total = total.plus(PyNum::Int(30).times(PyNum::Int(len(passengers)? as i64)));
    }
    let (_, bags) = nums(&json!(50), nonfree, "*")?;
    total = total.plus(PyNum::Int(50).times(bags));
    let payment_list = iterate(payments)?;
    let methods = object(user, "payment_methods")?;
    let mut paid = PyNum::Int(0);
    for payment in &payment_list {
        let id = item(payment, "payment_id")?;
        let amount = item(payment, "amount")?;
        let Some(method) = lookup(methods, id)? else {
            return Ok(format!("Error: payment method {} not found", to_str(id)));
        };
        let source = item(method, "source")?;
        if (is_str(source, "gift_card") || is_str(source, "certificate"))
            && less(item(method, "amount")?, amount)?
        {
            return Ok(format!(
                "Error: not enough balance in payment method {}",
                to_str(id)
            ));
        }
    }
    for payment in &payment_list {
        let (sum, amount) = nums(&paid.to_value(), item(payment, "amount")?, "+")?;
        paid = sum.plus(amount);
    }
    if !paid.num_eq(total) {
        return Ok(format!(
            "Error: payment amount does not add up, total price is {}, but paid {}",
            total.to_py_string(),
            paid.to_py_string()
        ));
    }
    let user = db
        .users
        .get_mut(&user_key)
        .ok_or_else(|| format!("'{user_key}'"))?;
    for payment in &payment_list {
        let id = key_text(item(payment, "payment_id")?);
        let amount = item(payment, "amount")?;
        let methods = item_mut(user, "payment_methods")?
            .as_object_mut()
            .ok_or("payment_methods")?;
        let method = methods.get_mut(&id).ok_or_else(|| format!("'{id}'"))?;
        if is_str(item(method, "source")?, "gift_card") {
            let (balance, amount) = nums(item(method, "amount")?, amount, "-=")?;
            set(method, "amount", balance.minus(amount).to_value())?;
        } else if is_str(item(method, "source")?, "certificate") {
            methods.shift_remove(&id);
        }
    }
    let mut reservation = Map::new();
    for (key, value) in [
        ("reservation_id", json!(reservation_id)),
        ("user_id", (*user_id).clone()),
        ("origin", (*origin).clone()),
        ("destination", (*destination).clone()),
        ("flight_type", (*flight_type).clone()),
        ("cabin", (*cabin).clone()),
        (
            "flights",
            if flights.is_array() {
                Value::Array(new_flights)
            } else {
                (*flights).clone()
            },
        ),
        ("passengers", (*passengers).clone()),
        ("payment_history", (*payments).clone()),
        ("created_at", json!("2024-05-15T15:00:00")),
        ("total_baggages", (*total_bags).clone()),
        ("nonfree_baggages", (*nonfree).clone()),
        ("insurance", (*insurance).clone()),
    ] {
        reservation.insert(key.to_owned(), value);
    }
    let reservation = Value::Object(reservation);
    let text = dumps(&reservation);
    db.reservations
        .insert(reservation_id.to_owned(), reservation);
    array_mut(user, "reservations")?.push(json!(reservation_id));
    Ok(text)
}

pub(super) fn reservation_key(db: &AirlineDb, id: &Value) -> Result<Option<String>, Raised> {
    Ok(lookup(&db.reservations, id)?.map(|_| key_text(id)))
}

/// `cancel_reservation`: appends a negative copy of every payment; no policy checks.
pub fn cancel(db: &mut AirlineDb, id: &Value) -> Result<String, Raised> {
    let Some(key) = reservation_key(db, id)? else {
        return Ok("Error: reservation not found".into());
    };
    let reservation = db.reservations.get_mut(&key).ok_or("reservation")?;
    let mut refunds = Vec::new();
    for payment in array(reservation, "payment_history")? {
        let amount = PyNum::of(item(payment, "amount")?).ok_or("bad operand type for unary -")?;
        refunds.push(
            json!({"payment_id": item(payment, "payment_id")?, "amount": amount.negated().to_value()}),
        );
    }
    array_mut(reservation, "payment_history")?.extend(refunds);
    set(reservation, "status", json!("cancelled"))?;
    Ok(dumps(reservation))
}
