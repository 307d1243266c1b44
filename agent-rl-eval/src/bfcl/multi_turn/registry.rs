//! The backends by Python class name.

use super::backend::Backend;
use super::file_system::GorillaFileSystem;
use super::math_api::MathApi;

/// Every class name BFCL's multi-turn entries involve, with whether it is ported.
pub const CLASSES: [(&str, bool); 8] = [
    ("GorillaFileSystem", true),
    ("MathAPI", true),
    ("MessageAPI", false),
    ("TwitterAPI", false),
    ("TicketAPI", false),
    ("TradingBot", false),
    ("TravelAPI", false),
    ("VehicleControlAPI", false),
];

/// A fresh instance of the class, when it is ported.
pub fn new_backend(class_name: &str) -> Option<Box<dyn Backend>> {
    match class_name {
        "MathAPI" => Some(Box::new(MathApi)),
        "GorillaFileSystem" => Some(Box::<GorillaFileSystem>::default()),
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
