//! The backends by Python class name.

use super::backend::Backend;
use super::file_system::GorillaFileSystem;
use super::math_api::MathApi;
use super::message_api::MessageApi;
use super::ticket_api::TicketApi;
use super::trading_bot::TradingBot;
use super::travel_api::TravelApi;
use super::twitter_api::TwitterApi;
use super::vehicle_control::VehicleControlApi;

/// Every class name BFCL's multi-turn entries involve, with whether it is ported.
pub const CLASSES: [(&str, bool); 8] = [
    ("GorillaFileSystem", true),
    ("MathAPI", true),
    ("MessageAPI", true),
    ("TwitterAPI", true),
    ("TicketAPI", true),
    ("TradingBot", true),
    ("TravelAPI", true),
    ("VehicleControlAPI", true),
];

/// A fresh instance of the class, when it is ported.
pub fn new_backend(class_name: &str) -> Option<Box<dyn Backend>> {
    match class_name {
        "MathAPI" => Some(Box::new(MathApi)),
        "GorillaFileSystem" => Some(Box::<GorillaFileSystem>::default()),
        "MessageAPI" => Some(Box::<MessageApi>::default()),
        "TwitterAPI" => Some(Box::<TwitterApi>::default()),
        "TicketAPI" => Some(Box::<TicketApi>::default()),
        "TradingBot" => Some(Box::<TradingBot>::default()),
        "TravelAPI" => Some(Box::<TravelApi>::default()),
        "VehicleControlAPI" => Some(Box::<VehicleControlApi>::default()),
        _ => None,
    }
}

/// True for classes upstream never loads a scenario into (`STATELESS_CLASSES`).
pub fn is_stateless(class_name: &str) -> bool {
    class_name == "MathAPI"
}

/// True when every class of `involved_classes` is ported.
pub fn all_supported(involved_classes: &[String]) -> bool {
    involved_classes
        .iter()
        .all(|class| new_backend(class).is_some())
}
