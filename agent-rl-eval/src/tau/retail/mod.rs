//! The retail domain: users, orders and products, and its 16 tools.

mod lookup;
mod modify;
mod orders;

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

/// Names of the retail tools, in the order of `tools.json`.
pub const TOOL_NAMES: [&str; 16] = [
    "calculate",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
    "think",
    "transfer_to_human_agents",
];

/// The retail database. Each table maps an id to its record; records stay ordered JSON objects
/// because the agent sees them through Python's `json.dumps` (key order varies per record, and
/// tools append keys such as `cancel_reason`), and the reward distinguishes `1` from `1.0`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RetailDb {
    /// Orders by order id (`#W…`).
    pub orders: Map<String, Value>,
    /// Products by product id, each with `variants` by item id.
    pub products: Map<String, Value>,
    /// Users by user id.
    pub users: Map<String, Value>,
}

impl RetailDb {
    /// Loads `orders.json`, `products.json` and `users.json` from the retail folder.
    ///
    /// # Errors
    /// [`crate::EvalError::Io`] or [`crate::EvalError::Record`] naming the file.
    pub fn load(dir: &Path) -> Result<Self> {
        Ok(Self {
            orders: load_table(&dir.join("orders.json"))?,
            products: load_table(&dir.join("products.json"))?,
            users: load_table(&dir.join("users.json"))?,
        })
    }

    /// τ-bench's hash of this database (SHA-256 of `str(to_hashable(data))`).
    pub fn data_hash(&self) -> String {
        tables_hash(&[
            ("orders", &self.orders),
            ("products", &self.products),
            ("users", &self.users),
        ])
    }

    /// Calls tool `name` with JSON keyword arguments. `None` when no such tool exists;
    /// `Some(Err(text))` when the original would raise (observation `Error: <text>`).
    pub fn invoke(&mut self, name: &str, args: &Value) -> Option<Result<String, Raised>> {
        let params: &[&str] = match name {
            "calculate" => &["expression"],
            "cancel_pending_order" => &["order_id", "reason"],
            "exchange_delivered_order_items" | "modify_pending_order_items" => {
                &["order_id", "item_ids", "new_item_ids", "payment_method_id"]
            }
            "find_user_id_by_email" => &["email"],
            "find_user_id_by_name_zip" => &["first_name", "last_name", "zip"],
            "get_order_details" => &["order_id"],
            "modify_pending_order_payment" => &["order_id", "payment_method_id"],
            "get_product_details" => &["product_id"],
            "get_user_details" => &["user_id"],
            "list_all_product_types" => &[],
            "modify_pending_order_address" => ADDRESS_ORDER,
            "modify_user_address" => ADDRESS_USER,
            "return_delivered_order_items" => &["order_id", "item_ids", "payment_method_id"],
            "think" => &["thought"],
            "transfer_to_human_agents" => &["summary"],
            _ => return None,
        };
        Some(bind(name, params, args).and_then(|values| self.call(name, &values)))
    }

    fn call(&mut self, name: &str, args: &[&Value]) -> Result<String, Raised> {
        match (name, args) {
            ("calculate", [expression]) => calculate_tool(expression),
            ("cancel_pending_order", [order_id, reason]) => orders::cancel(self, order_id, reason),
            ("exchange_delivered_order_items", [order_id, old, new, payment]) => {
                orders::exchange(self, order_id, old, new, payment)
            }
            ("modify_pending_order_items", [order_id, old, new, payment]) => {
                modify::modify_items(self, order_id, old, new, payment)
            }
            ("modify_pending_order_payment", [order_id, payment]) => {
                modify::modify_payment(self, order_id, payment)
            }
            ("return_delivered_order_items", [order_id, items, payment]) => {
                orders::return_items(self, order_id, items, payment)
            }
            ("modify_pending_order_address", [order_id, rest @ ..]) => {
                orders::modify_address(self, order_id, rest)
            }
            ("find_user_id_by_email", [email]) => lookup::find_by_email(self, email),
            ("find_user_id_by_name_zip", [first, last, zip]) => {
                lookup::find_by_name_zip(self, first, last, zip)
            }
            ("get_order_details", [order_id]) => details(&self.orders, order_id, "order"),
            ("get_product_details", [id]) => details(&self.products, id, "product"),
            ("get_user_details", [user_id]) => details(&self.users, user_id, "user"),
            ("list_all_product_types", []) => Ok(lookup::list_product_types(self)),
            ("modify_user_address", [user_id, rest @ ..]) => {
                lookup::modify_user_address(self, user_id, rest)
            }
            ("think", [_]) => Ok(String::new()),
            ("transfer_to_human_agents", [_]) => Ok("Transfer successful".to_owned()),
            _ => Err(format!("{name}: unexpected arguments")),
        }
    }
}

const ADDRESS_ORDER: &[&str] = &[
    "order_id", "address1", "address2", "city", "state", "country", "zip",
];
const ADDRESS_USER: &[&str] = &[
    "user_id", "address1", "address2", "city", "state", "country", "zip",
];

/// The address object the tools build: keys address1, address2, city, state, country, zip.
fn address(values: &[&Value]) -> Value {
    let keys = ["address1", "address2", "city", "state", "country", "zip"];
    let map: Map<String, Value> = keys
        .iter()
        .zip(values)
        .map(|(key, value)| ((*key).to_owned(), (*value).clone()))
        .collect();
    Value::Object(map)
}
