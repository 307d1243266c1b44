//! The airline domain: flights, reservations and users, and its 14 tools.

mod booking;
mod search;
mod update;

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::access::details;
use super::args::bind;
use super::calculate::calculate_tool;
use super::data::load_table;
use super::py::Raised;
use super::pyjson::tables_hash;
use crate::Result;

/// Names of the airline tools, in the order of `tools.json`.
pub const TOOL_NAMES: [&str; 14] = [
    "book_reservation",
    "calculate",
    "cancel_reservation",
    "get_reservation_details",
    "get_user_details",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
    "send_certificate",
    "think",
    "transfer_to_human_agents",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
];

/// The airline database; records stay ordered JSON objects (see [`super::retail::RetailDb`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AirlineDb {
    /// Flights by flight number, with per-date status, seats and prices.
    pub flights: Map<String, Value>,
    /// Reservations by 6-character id.
    pub reservations: Map<String, Value>,
    /// Users by user id.
    pub users: Map<String, Value>,
}

const BOOK_PARAMS: &[&str] = &[
    "user_id",
    "origin",
    "destination",
    "flight_type",
    "cabin",
    "flights",
    "passengers",
    "payment_methods",
    "total_baggages",
    "nonfree_baggages",
    "insurance",
];

impl AirlineDb {
    /// Loads `flights.json`, `reservations.json` and `users.json` from the airline folder.
    ///
    /// # Errors
    /// [`crate::EvalError::Io`] or [`crate::EvalError::Record`] naming the file.
    pub fn load(dir: &Path) -> Result<Self> {
        Ok(Self {
            flights: load_table(&dir.join("flights.json"))?,
            reservations: load_table(&dir.join("reservations.json"))?,
            users: load_table(&dir.join("users.json"))?,
        })
    }

    /// τ-bench's hash of this database.
    pub fn data_hash(&self) -> String {
        tables_hash(&[
            ("flights", &self.flights),
            ("reservations", &self.reservations),
            ("users", &self.users),
        ])
    }

    /// Calls tool `name` with JSON keyword arguments. `None` when no such tool exists;
    /// `Some(Err(text))` when the original would raise.
    pub fn invoke(&mut self, name: &str, args: &Value) -> Option<Result<String, Raised>> {
        let params: &[&str] = match name {
            "book_reservation" => BOOK_PARAMS,
            "calculate" => &["expression"],
            "cancel_reservation" | "get_reservation_details" => &["reservation_id"],
            "get_user_details" => &["user_id"],
            "list_all_airports" => &[],
            "search_direct_flight" | "search_onestop_flight" => &["origin", "destination", "date"],
            "send_certificate" => &["user_id", "amount"],
            "think" => &["thought"],
            "transfer_to_human_agents" => &["summary"],
            "update_reservation_baggages" => &[
                "reservation_id",
                "total_baggages",
                "nonfree_baggages",
                "payment_id",
            ],
            "update_reservation_flights" => &["reservation_id", "cabin", "flights", "payment_id"],
            "update_reservation_passengers" => &["reservation_id", "passengers"],
            _ => return None,
        };
        Some(bind(name, params, args).and_then(|values| self.call(name, &values)))
    }

    fn call(&mut self, name: &str, args: &[&Value]) -> Result<String, Raised> {
        match (name, args) {
            ("book_reservation", _) => booking::book(self, args),
            ("calculate", [expression]) => calculate_tool(expression),
            ("cancel_reservation", [id]) => booking::cancel(self, id),
            // Upstream reports a missing reservation as `Error: user not found`.
            ("get_reservation_details", [id]) => details(&self.reservations, id, "user"),
            ("get_user_details", [id]) => details(&self.users, id, "user"),
            ("list_all_airports", []) => Ok(search::AIRPORTS.to_owned()),
            ("search_direct_flight", [origin, destination, date]) => {
                search::direct(self, origin, destination, date)
            }
            ("search_onestop_flight", [origin, destination, date]) => {
                search::one_stop(self, origin, destination, date)
            }
            ("send_certificate", [user_id, amount]) => {
                search::send_certificate(self, user_id, amount)
            }
            ("think", [_]) => Ok(String::new()),
            ("transfer_to_human_agents", [_]) => Ok("Transfer successful".to_owned()),
            ("update_reservation_baggages", [id, total, nonfree, payment]) => {
                update::update_baggages(self, id, total, nonfree, payment)
            }
            ("update_reservation_flights", [id, cabin, flights, payment]) => {
                update::update_flights(self, id, cabin, flights, payment)
            }
            ("update_reservation_passengers", [id, passengers]) => {
                update::update_passengers(self, id, passengers)
            }
            _ => Err(format!("{name}: unexpected arguments")),
        }
    }
}
