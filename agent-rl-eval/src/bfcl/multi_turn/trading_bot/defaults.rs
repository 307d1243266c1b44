//! `TradingBot`'s default scenario (used for keys an entry's `initial_config` leaves out) and
//! its company-name → symbol table.

use super::PyValue;

/// Company names `get_symbol_by_name` knows, with their symbols.
pub(super) const SYMBOLS: [(&str, &str); 13] = [
    ("Apple", "AAPL"),
    ("Google", "GOOG"),
    ("Tesla", "TSLA"),
    ("Microsoft", "MSFT"),
    ("Nvidia", "NVDA"),
    ("Zeta Corp", "ZETA"),
    ("Alpha Tech", "ALPH"),
    ("Omega Industries", "OMEG"),
    ("Quasar Ltd.", "QUAS"),
    ("Neptune Systems", "NEPT"),
    ("Synex Solutions", "SYNX"),
    ("Amazon", "AMZN"),
    ("Gorilla", "GORI"),
];

/// Default quotes: symbol, price, percent change, volume, 5-day and 20-day moving averages.
const QUOTES: [(&str, f64, f64, f64, f64, f64); 11] = [
    ("AAPL", 227.16, 0.17, 2.552, 227.11, 227.09),
    ("GOOG", 2840.34, 0.24, 1.123, 2835.67, 2842.15),
    ("TSLA", 667.92, -0.12, 1.654, 671.15, 668.2),
    ("MSFT", 310.23, 0.09, 3.234, 309.88, 310.11),
    ("NVDA", 220.34, 0.34, 1.234, 220.45, 220.67),
    ("ALPH", 1320.45, -0.08, 1.567, 1321.12, 1325.78),
    ("OMEG", 457.23, 0.12, 2.345, 456.78, 458.12),
    ("QUAS", 725.89, -0.03, 1.789, 726.45, 728.0),
    ("NEPT", 88.34, 0.19, 0.654, 88.21, 88.67),
    ("SYNX", 345.67, 0.11, 2.112, 345.34, 346.12),
    ("ZETA", 22.09, -0.05, 0.789, 22.12, 22.34),
];

/// The default `stocks` dict.
pub(super) fn stocks() -> PyValue {
    PyValue::dict(
        QUOTES
            .iter()
            .map(|&(symbol, price, change, volume, ma5, ma20)| {
                (
                    symbol,
                    PyValue::dict([
                        ("price", PyValue::Float(price)),
                        ("percent_change", PyValue::Float(change)),
                        ("volume", PyValue::Float(volume)),
                        ("MA(5)", PyValue::Float(ma5)),
                        ("MA(20)", PyValue::Float(ma20)),
                    ]),
                )
            }),
    )
}

fn order(id: i64, kind: &str, symbol: &str, price: f64, amount: i64, status: &str) -> PyValue {
    PyValue::dict([
        ("id", PyValue::Int(id)),
        ("order_type", PyValue::str(kind)),
        ("symbol", PyValue::str(symbol)),
        ("price", PyValue::Float(price)),
        ("amount", PyValue::Int(amount)),
        ("status", PyValue::str(status)),
    ])
}

/// The default `orders` dict (int keys).
pub(super) fn orders() -> PyValue {
    PyValue::Dict(vec![
        (
            PyValue::Int(12_345),
            order(12_345, "Buy", "AAPL", 210.65, 10, "Completed"),
        ),
        (
            PyValue::Int(12_446),
            order(12_446, "Sell", "GOOG", 2840.56, 5, "Pending"),
        ),
    ])
}

/// The default `account_info` dict.
pub(super) fn account_info() -> PyValue {
    PyValue::dict([
        ("account_id", PyValue::Int(12_345)),
        ("balance", PyValue::Float(10_000.0)),
        ("binding_card", PyValue::Int(1_974_202_140_965_533)),
    ])
}
