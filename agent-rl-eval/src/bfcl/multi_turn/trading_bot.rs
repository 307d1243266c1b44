//! `TradingBot`: bfcl-eval's stock-trading class (`trading_bot.py`): orders by id, an account,
//! stock quotes, a watch list and a transaction history whose timestamps are drawn from a seeded
//! `random.Random` within the day after the class's fixed "now" (2024-09-01 10:30).
//!
//! Long-context mode pads some answers with bfcl-eval's filler data ([`LongContextData`]); without
//! the data those calls report unsupported.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::{LongContext, LongContextData};
use super::py_random::PyRandom;
use super::pyobject::{
    config_or, contains, dict_get, format, format_named, get_item, get_item_mut, hashable, lower,
    no_attribute, order, set_item, to_float, to_int,
};
use super::pyops::{self, truthy};
use super::pytime::{DateTime, strptime};
use super::value::PyValue;

mod defaults;

const METHODS: &[Method] = &[
    Method {
        name: "get_current_time",
        params: &[],
    },
    Method {
        name: "get_symbol_by_name",
        params: &[required("name")],
    },
    Method {
        name: "get_stock_info",
        params: &[required("symbol")],
    },
    Method {
        name: "get_order_details",
        params: &[required("order_id")],
    },
    Method {
        name: "cancel_order",
        params: &[required("order_id")],
    },
    Method {
        name: "place_order",
        params: &[
            required("order_type"),
            required("symbol"),
            required("price"),
            required("amount"),
        ],
    },
    Method {
        name: "withdraw_funds",
        params: &[required("amount")],
    },
    Method {
        name: "get_account_info",
        params: &[],
    },
    Method {
        name: "trading_login",
        params: &[required("username"), required("password")],
    },
    Method {
        name: "trading_get_login_status",
        params: &[],
    },
    Method {
        name: "trading_logout",
        params: &[],
    },
    Method {
        name: "fund_account",
        params: &[required("amount")],
    },
    Method {
        name: "remove_stock_from_watchlist",
        params: &[required("symbol")],
    },
    Method {
        name: "get_watchlist",
        params: &[],
    },
    Method {
        name: "get_order_history",
        params: &[],
    },
    Method {
        name: "get_transaction_history",
        params: &[optional("start_date", "None"), optional("end_date", "None")],
    },
    Method {
        name: "get_available_stocks",
        params: &[required("sector")],
    },
    Method {
        name: "filter_stocks_by_price",
        params: &[
            required("stocks"),
            required("min_price"),
            required("max_price"),
        ],
    },
    Method {
        name: "add_to_watchlist",
        params: &[required("stock")],
    },
    Method {
        name: "notify_price_change",
        params: &[required("stocks"), required("threshold")],
    },
];

/// The class's fixed "now": 2024-09-01 10:30.
const NOW: DateTime = DateTime {
    year: 2024,
    month: 9,
    day: 1,
    hour: 10,
    minute: 30,
    second: 0,
};

const DEFAULT_SEED: i64 = 1_053_520;

/// The `TradingBot` class.
#[derive(Debug, Clone)]
pub struct TradingBot {
    random: PyRandom,
    orders: PyValue,
    account_info: PyValue,
    authenticated: PyValue,
    market_status: PyValue,
    order_counter: PyValue,
    stocks: PyValue,
    watch_list: PyValue,
    transaction_history: PyValue,
    long_context: LongContext,
}

impl Default for TradingBot {
    fn default() -> Self {
        let mut bot = Self {
            random: PyRandom::new(DEFAULT_SEED),
            orders: PyValue::None,
            account_info: PyValue::None,
            authenticated: PyValue::None,
            market_status: PyValue::None,
            order_counter: PyValue::None,
            stocks: PyValue::None,
            watch_list: PyValue::None,
            transaction_history: PyValue::None,
            long_context: LongContext::Off,
        };
        // The default scenario's order keys are ints, so loading it cannot fail.
        let _ = bot.load(&PyValue::Dict(Vec::new()), &LongContext::Off);
        bot
    }
}

fn error(text: impl Into<String>) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text.into()))])
}

fn one(key: &str, value: PyValue) -> PyValue {
    PyValue::dict([(key, value)])
}

fn key(name: &str) -> PyValue {
    PyValue::str(name)
}

/// Python's `f"{x:.2f}"` for an `int` or `float`.
fn fixed2(value: &PyValue) -> Result<String, CallError> {
    match value {
        PyValue::Int(_) | PyValue::Float(_) | PyValue::Bool(_) => {
            Ok(format!("{:.2}", value.as_number().unwrap_or_default()))
        }
        other => Err(CallError::raised(format!(
            "unsupported format string passed to {}.__format__",
            other.type_name()
        ))),
    }
}

impl TradingBot {
    fn load(&mut self, config: &PyValue, long_context: &LongContext) -> Result<(), CallError> {
        let orders = config_or(config, "orders", defaults::orders());
        let PyValue::Dict(pairs) = orders else {
            return Err(no_attribute(&orders, "items"));
        };
        let mut by_id = PyValue::Dict(Vec::new());
        for (id, order) in pairs {
            let id = match &id {
                PyValue::Str(text)
                    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) =>
                {
                    PyValue::Int(to_int(&id)?)
                }
                _ => id,
            };
            set_item(&mut by_id, id, order)?;
        }
        self.orders = by_id;
        self.account_info = config_or(config, "account_info", defaults::account_info());
        self.authenticated = config_or(config, "authenticated", PyValue::Bool(false));
        self.market_status = config_or(config, "market_status", PyValue::str("Closed"));
        self.order_counter = config_or(config, "order_counter", PyValue::Int(12_446));
        self.stocks = config_or(config, "stocks", defaults::stocks());
        self.watch_list = config_or(
            config,
            "watch_list",
            PyValue::List(vec![PyValue::str("NVDA")]),
        );
        self.transaction_history =
            config_or(config, "transaction_history", PyValue::List(Vec::new()));
        self.long_context = long_context.clone();
        let seed = match config.get("random_seed") {
            Some(PyValue::Int(seed)) => *seed,
            _ => DEFAULT_SEED,
        };
        self.random = PyRandom::new(seed);
        Ok(())
    }

    /// The filler data in long-context mode (`None` otherwise).
    fn filler(&self, method: &str) -> Result<Option<&LongContextData>, CallError> {
        self.long_context.filler(&format!("TradingBot.{method}"))
    }

    fn timestamp(&mut self) -> PyValue {
        let offset = self.random.randint(0, 86_400);
        PyValue::Str(NOW.plus_seconds(offset).format())
    }

    fn balance(&self) -> Result<PyValue, CallError> {
        Ok(get_item(&self.account_info, &key("balance"))?.clone())
    }

    fn record(&mut self, kind: &str, amount: PyValue) -> Result<(), CallError> {
        let entry = PyValue::dict([
            ("type", PyValue::str(kind)),
            ("amount", amount),
            ("timestamp", self.timestamp()),
        ]);
        match &mut self.transaction_history {
            PyValue::List(items) => items.push(entry),
            other => return Err(no_attribute(other, "append")),
        }
        Ok(())
    }

    fn unauthenticated(&self, action: &str) -> Option<PyValue> {
        (!truthy(&self.authenticated)).then(|| {
            error(format!(
                "User not authenticated. Please log in to {action}."
            ))
        })
    }

    fn place_order(
        &mut self,
        order_type: PyValue,
        symbol: PyValue,
        price: PyValue,
        amount: PyValue,
    ) -> Result<PyValue, CallError> {
        if let Some(refusal) = self.unauthenticated("place an order") {
            return Ok(refusal);
        }
        if !contains(&self.stocks, &symbol)? {
            return Ok(error(format!("Invalid stock symbol: {}", format(&symbol))));
        }
        if order("<=", &price, &PyValue::Int(0))? || order("<=", &amount, &PyValue::Int(0))? {
            return Ok(error("Price and amount must be positive values."));
        }
        if lower(&order_type)? == "buy" {
            let total = PyValue::Float(to_float(&price)? * to_int(&amount)? as f64);
            let balance = dict_get(&self.account_info, &key("balance"))
                .cloned()
                .unwrap_or(PyValue::Int(0));
            if order(">", &total, &balance)? {
                return Ok(error(format!(
                    "Insufficient funds: required ${} but only ${} available.",
                    fixed2(&total)?,
                    fixed2(&balance)?
                )));
            }
        }
        let price = PyValue::Float(to_float(&price)?);
        let id = self.order_counter.clone();
        let stored = PyValue::dict([
            ("id", id.clone()),
            ("order_type", order_type.clone()),
            ("symbol", symbol),
            ("price", price.clone()),
            ("amount", amount.clone()),
            ("status", PyValue::str("Open")),
        ]);
        set_item(&mut self.orders, id.clone(), stored)?;
        self.order_counter = pyops::add(&self.order_counter, &PyValue::Int(1))?;
        Ok(PyValue::dict([
            ("order_id", id),
            ("order_type", order_type),
            ("status", PyValue::str("Pending")),
            ("price", price),
            ("amount", amount),
        ]))
    }

    fn move_funds(&mut self, amount: PyValue, deposit: bool) -> Result<PyValue, CallError> {
        let action = if deposit {
            "fund the account"
        } else {
            "make a transaction"
        };
        if let Some(refusal) = self.unauthenticated(action) {
            return Ok(refusal);
        }
        if !deposit && self.market_status != PyValue::str("Open") {
            return Ok(error("Market is closed. Transactions are not allowed."));
        }
        if order("<=", &amount, &PyValue::Int(0))? {
            return Ok(error(if deposit {
                "Funding amount must be positive."
            } else {
                "Transaction amount must be positive."
            }));
        }
        let balance = self.balance()?;
        if !deposit && order(">", &amount, &balance)? {
            return Ok(error("Insufficient funds for withdrawal."));
        }
        let updated = if deposit {
            pyops::add(&balance, &amount)?
        } else {
            pyops::sub(&balance, &amount)?
        };
        *get_item_mut(&mut self.account_info, &key("balance"))? = updated.clone();
        self.record(if deposit { "deposit" } else { "withdrawal" }, amount)?;
        Ok(PyValue::dict([
            (
                "status",
                PyValue::str(if deposit {
                    "Account funded successfully"
                } else {
                    "Withdrawal successful"
                }),
            ),
            ("new_balance", updated),
        ]))
    }

    fn transaction_history(&self, start: &PyValue, end: &PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.authenticated) {
            return Ok(PyValue::List(vec![error(
                "User not authenticated. Please log in to view transaction history.",
            )]));
        }
        let start = if truthy(start) {
            Some(strptime(start, false)?)
        } else {
            None
        };
        let end = if truthy(end) {
            Some(strptime(end, false)?)
        } else {
            None
        };
        let mut kept = Vec::new();
        for transaction in pyops::iterate(&self.transaction_history)? {
            let at = strptime(get_item(&transaction, &key("timestamp"))?, true)?;
            if start.is_none_or(|s| s <= at) && end.is_none_or(|e| at <= e) {
                kept.push(transaction);
            }
        }
        if let Some(filler) = self.filler("get_transaction_history")? {
            kept.extend(filler.transaction_history.iter().cloned());
        }
        Ok(one("transaction_history", PyValue::List(kept)))
    }

    fn filter_by_price(
        &self,
        symbols: &PyValue,
        low: &PyValue,
        high: &PyValue,
    ) -> Result<PyValue, CallError> {
        let mut kept = Vec::new();
        for symbol in pyops::iterate(symbols)? {
            hashable(&symbol)?;
            let price = |bot: &Self| {
                dict_get(&bot.stocks, &symbol)
                    .and_then(|stock| dict_get(stock, &key("price")))
                    .cloned()
                    .unwrap_or(PyValue::Int(0))
            };
            if order(">=", &price(self), low)? && order("<=", &price(self), high)? {
                kept.push(symbol);
            }
        }
        Ok(one("filtered_stocks", PyValue::List(kept)))
    }

    fn notify_price_change(
        &self,
        symbols: &PyValue,
        threshold: &PyValue,
    ) -> Result<PyValue, CallError> {
        let mut changed = Vec::new();
        for symbol in pyops::iterate(symbols)? {
            if !contains(&self.stocks, &symbol)? {
                continue;
            }
            let change = get_item(get_item(&self.stocks, &symbol)?, &key("percent_change"))?;
            let magnitude = match change {
                PyValue::Int(n) => PyValue::Int(n.abs()),
                PyValue::Bool(flag) => PyValue::Int(i64::from(*flag)),
                PyValue::Float(x) => PyValue::Float(x.abs()),
                other => {
                    return Err(CallError::raised(format!(
                        "bad operand type for abs(): '{}'",
                        other.type_name()
                    )));
                }
            };
            if order(">=", &magnitude, threshold)? {
                changed.push(symbol);
            }
        }
        if changed.is_empty() {
            return Ok(one(
                "notification",
                PyValue::str("No significant price changes in the selected stocks."),
            ));
        }
        let mut names = Vec::new();
        for symbol in &changed {
            match symbol {
                PyValue::Str(text) => names.push(text.clone()),
                other => {
                    return Err(CallError::raised(format!(
                        "sequence item {}: expected str instance, {} found",
                        names.len(),
                        other.type_name()
                    )));
                }
            }
        }
        Ok(one(
            "notification",
            PyValue::Str(format!(
                "Stocks {} have significant price changes.",
                names.join(", ")
            )),
        ))
    }
}

/// `get_order_details` in long-context mode: a copy of the order with the filler's texts,
/// formatted with the order's symbol, as `metadata` (a formatting `KeyError` as an error answer).
fn order_with_metadata(order: &PyValue, filler: &LongContextData) -> Result<PyValue, CallError> {
    let mut order = order.clone();
    let symbol = get_item(&order, &key("symbol"))?.clone();
    let mut metadata = Vec::with_capacity(filler.order_detail.len());
    for (name, template) in &filler.order_detail {
        match format_named(template, &[("symbol", &symbol)])? {
            Ok(text) => metadata.push((name.clone(), PyValue::Str(text))),
            Err(field) => {
                return Ok(error(format!("KeyError during formatting: '{field}'")));
            }
        }
    }
    set_item(&mut order, key("metadata"), PyValue::Dict(metadata))?;
    Ok(order)
}

impl Backend for TradingBot {
    fn class_name(&self) -> &'static str {
        "TradingBot"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        long_context: &LongContext,
    ) -> Result<(), CallError> {
        self.load(config, long_context)
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let mut args = args.into_iter();
        let mut next = || args.next().unwrap_or(PyValue::None);
        match method {
            "get_current_time" => Ok(one("current_time", PyValue::str("10:30 AM"))),
            "get_symbol_by_name" => {
                let name = next();
                hashable(&name)?;
                let symbol = defaults::SYMBOLS
                    .iter()
                    .find(|(company, _)| name == PyValue::str(*company))
                    .map_or("Stock not found", |(_, symbol)| symbol);
                Ok(one("symbol", PyValue::str(symbol)))
            }
            "get_stock_info" => {
                let symbol = next();
                if !contains(&self.stocks, &symbol)? {
                    return Ok(error(format!(
                        "Stock with symbol '{}' not found.",
                        format(&symbol)
                    )));
                }
                if let Some(filler) = self.filler("get_stock_info")? {
                    let mut stock = get_item(&self.stocks, &symbol)?.clone();
                    set_item(&mut stock, key("MA(5)"), filler.ma_5.clone())?;
                    set_item(&mut stock, key("MA(20)"), filler.ma_20.clone())?;
                    return Ok(stock);
                }
                Ok(get_item(&self.stocks, &symbol)?.clone())
            }
            "get_order_details" => {
                let id = next();
                if !contains(&self.orders, &id)? {
                    let ids = match &self.orders {
                        PyValue::Dict(pairs) => {
                            PyValue::List(pairs.iter().map(|(k, _)| k.clone()).collect())
                        }
                        _ => PyValue::List(Vec::new()),
                    };
                    return Ok(error(format!(
                        "Order with ID {} not found.Here is the list of orders_id: {}",
                        format(&id),
                        ids.repr()
                    )));
                }
                if let Some(filler) = self.filler("get_order_details")? {
                    return order_with_metadata(get_item(&self.orders, &id)?, filler);
                }
                Ok(get_item(&self.orders, &id)?.clone())
            }
            "cancel_order" => {
                let id = next();
                if !contains(&self.orders, &id)? {
                    return Ok(error(format!("Order with ID {} not found.", format(&id))));
                }
                let stored = get_item_mut(&mut self.orders, &id)?;
                if *get_item(stored, &key("status"))? == PyValue::str("Completed") {
                    return Ok(error(format!(
                        "Can't cancel order {}. Order is already completed.",
                        format(&id)
                    )));
                }
                set_item(stored, key("status"), PyValue::str("Cancelled"))?;
                Ok(PyValue::dict([
                    ("order_id", id),
                    ("status", PyValue::str("Cancelled")),
                ]))
            }
            "place_order" => {
                let (kind, symbol, price, amount) = (next(), next(), next(), next());
                self.place_order(kind, symbol, price, amount)
            }
            "withdraw_funds" => self.move_funds(next(), false),
            "fund_account" => self.move_funds(next(), true),
            "get_account_info" => Ok(self
                .unauthenticated("view account information")
                .unwrap_or_else(|| self.account_info.clone())),
            "trading_login" => {
                if truthy(&self.authenticated) {
                    return Ok(one("status", PyValue::str("Already logged in")));
                }
                self.authenticated = PyValue::Bool(true);
                Ok(one("status", PyValue::str("Logged in successfully")))
            }
            "trading_get_login_status" => {
                Ok(one("status", PyValue::Bool(truthy(&self.authenticated))))
            }
            "trading_logout" => {
                if !truthy(&self.authenticated) {
                    return Ok(one(
                        "status",
                        PyValue::str("No user is currently logged in"),
                    ));
                }
                self.authenticated = PyValue::Bool(false);
                Ok(one("status", PyValue::str("Logged out successfully")))
            }
            "remove_stock_from_watchlist" => {
                let symbol = next();
                if let Some(refusal) = self.unauthenticated("modify the watchlist") {
                    return Ok(refusal);
                }
                if !contains(&self.watch_list, &symbol)? {
                    return Ok(error(format!(
                        "Stock {} not found in watchlist.",
                        format(&symbol)
                    )));
                }
                if let PyValue::List(items) = &mut self.watch_list
                    && let Some(index) = items.iter().position(|item| *item == symbol)
                {
                    items.remove(index);
                }
                Ok(one(
                    "status",
                    PyValue::Str(format!(
                        "Stock {} removed from watchlist successfully.",
                        format(&symbol)
                    )),
                ))
            }
            "get_watchlist" => {
                if !truthy(&self.authenticated) {
                    return Ok(PyValue::List(vec![PyValue::str(
                        "Error: User not authenticated. Please log in to view the watchlist.",
                    )]));
                }
                if let Some(filler) = self.filler("get_watchlist")? {
                    let mut list = pyops::iterate(&self.watch_list)?;
                    list.extend(filler.watch_list.iter().cloned());
                    return Ok(PyValue::List(list));
                }
                Ok(one("watchlist", self.watch_list.clone()))
            }
            "get_order_history" => {
                if !truthy(&self.authenticated) {
                    return Ok(PyValue::List(vec![error(
                        "User not authenticated. Please log in to view order history.",
                    )]));
                }
                let ids = match &self.orders {
                    PyValue::Dict(pairs) => pairs.iter().map(|(k, _)| k.clone()).collect(),
                    _ => Vec::new(),
                };
                Ok(one("history", PyValue::List(ids)))
            }
            "get_transaction_history" => {
                let (start, end) = (next(), next());
                self.transaction_history(&start, &end)
            }
            "get_available_stocks" => {
                let sector = next();
                hashable(&sector)?;
                let mut list: Vec<PyValue> = if sector == PyValue::str("Technology") {
                    ["AAPL", "GOOG", "MSFT", "NVDA"].map(PyValue::str).into()
                } else if sector == PyValue::str("Automobile") {
                    ["TSLA", "F", "GM"].map(PyValue::str).into()
                } else {
                    Vec::new()
                };
                if let Some(filler) = self.filler("get_available_stocks")? {
                    if sector == PyValue::str("Technology") {
                        list.extend(filler.technology.iter().cloned());
                    } else if sector == PyValue::str("Automobile") {
                        list.extend(filler.automobile.iter().cloned());
                    }
                }
                Ok(one("stock_list", PyValue::List(list)))
            }
            "filter_stocks_by_price" => {
                let (symbols, low, high) = (next(), next(), next());
                self.filter_by_price(&symbols, &low, &high)
            }
            "add_to_watchlist" => {
                let stock = next();
                if !contains(&self.watch_list, &stock)?
                    && contains(&self.stocks, &stock)?
                    && let PyValue::List(items) = &mut self.watch_list
                {
                    items.push(stock);
                }
                Ok(one("watchlist", self.watch_list.clone()))
            }
            "notify_price_change" => {
                let (symbols, threshold) = (next(), next());
                self.notify_price_change(&symbols, &threshold)
            }
            other => Err(no_attribute(&PyValue::Opaque("TradingBot".into()), other)),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("orders", self.orders.clone()),
            ("account_info", self.account_info.clone()),
            ("authenticated", self.authenticated.clone()),
            ("market_status", self.market_status.clone()),
            ("order_counter", self.order_counter.clone()),
            ("stocks", self.stocks.clone()),
            ("watch_list", self.watch_list.clone()),
            ("transaction_history", self.transaction_history.clone()),
            ("long_context", PyValue::Bool(self.long_context.is_on())),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;

    /// Results as bfcl-eval's `TradingBot` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut bot = TradingBot::default();
        call_text(
            &mut bot,
            "trading_login",
            vec![PyValue::str("u"), PyValue::str("p")],
        );
        assert_eq!(
            call_text(
                &mut bot,
                "place_order",
                vec![
                    PyValue::str("Buy"),
                    PyValue::str("AAPL"),
                    PyValue::Int(150),
                    PyValue::Int(100)
                ]
            ),
            "{\"error\": \"Insufficient funds: required $15000.00 but only $10000.00 available.\"}"
        );
        assert_eq!(
            call_text(
                &mut bot,
                "place_order",
                vec![
                    PyValue::str("Buy"),
                    PyValue::str("AAPL"),
                    PyValue::Int(150),
                    PyValue::Int(10)
                ]
            ),
            "{\"order_id\": 12446, \"order_type\": \"Buy\", \"status\": \"Pending\", \"price\": \
             150.0, \"amount\": 10}"
        );
        assert_eq!(
            call_text(&mut bot, "fund_account", vec![PyValue::Float(0.5)]),
            "{\"status\": \"Account funded successfully\", \"new_balance\": 10000.5}"
        );
        assert_eq!(
            call_text(
                &mut bot,
                "get_transaction_history",
                vec![PyValue::None, PyValue::None]
            ),
            format!(
                "{{\"transaction_history\": [{{\"type\": \"deposit\", \"amount\": 0.5, \
                 \"timestamp\": \"{PY_FIRST_TIMESTAMP}\"}}]}}"
            )
        );
        assert_eq!(
            call_text(&mut bot, "get_order_details", vec![PyValue::Int(1)]),
            "{\"error\": \"Order with ID 1 not found.Here is the list of orders_id: [12345, 12446]\"}"
        );
        assert_eq!(format!("{:.2}", 0.125), "0.12");
        assert_eq!(format!("{:.2}", 2.675), "2.67");
    }

    /// `random.Random(1053520)`: `CURRENT_TIME + timedelta(seconds=r.randint(0, 86400))`.
    const PY_FIRST_TIMESTAMP: &str = "2024-09-02 05:40:15";
}
