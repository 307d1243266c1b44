//! `TravelAPI`: bfcl-eval's travel-booking class (`travel_booking.py`): an access token,
//! registered credit cards, bookings with invoices and insurance, fixed route costs and exchange
//! rates; tokens, card ids, balances and booking ids drawn from a seeded `random.Random`.
//!
//! Long-context mode merges bfcl-eval's filler cards and bookings ([`LongContextData`]) into the
//! scenario's and lists every route's cost in `get_flight_cost`; without the data it is reported
//! unsupported.
//!
//! Not ported (reported unsupported): a call that changes the balance of a filler card (upstream
//! the card object is shared by the model's and the ground truth's instances and by later entries
//! of the process, so the change leaks between them), and `book_flight`'s invalid-class text,
//! which prints a Python `set` whose order depends on the process's string hashing.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::LongContext;
use super::py_random::PyRandom;
use super::pyobject::{
    config_or, contains, format, get_item, get_item_mut, hashable, no_attribute, order, remove_key,
    set_item, to_float,
};
use super::pyops;
use super::pytime::{DateTime, StrptimeError, strptime};
use super::value::PyValue;

mod tables;

use tables::{AIRPORTS, CITY_AIRPORTS, EXCHANGE_RATES, ROUTES, Rate};

const METHODS: &[Method] = &[
    Method {
        name: "authenticate_travel",
        params: &[
            required("client_id"),
            required("client_secret"),
            required("refresh_token"),
            required("grant_type"),
            required("user_first_name"),
            required("user_last_name"),
        ],
    },
    Method {
        name: "travel_get_login_status",
        params: &[],
    },
    Method {
        name: "get_budget_fiscal_year",
        params: &[
            optional("lastModifiedAfter", "None"),
            optional("includeRemoved", "None"),
        ],
    },
    Method {
        name: "register_credit_card",
        params: &[
            required("access_token"),
            required("card_number"),
            required("expiration_date"),
            required("cardholder_name"),
            required("card_verification_number"),
        ],
    },
    Method {
        name: "get_flight_cost",
        params: &[
            required("travel_from"),
            required("travel_to"),
            required("travel_date"),
            required("travel_class"),
        ],
    },
    Method {
        name: "get_credit_card_balance",
        params: &[required("access_token"), required("card_id")],
    },
    Method {
        name: "book_flight",
        params: &[
            required("access_token"),
            required("card_id"),
            required("travel_date"),
            required("travel_from"),
            required("travel_to"),
            required("travel_class"),
        ],
    },
    Method {
        name: "retrieve_invoice",
        params: &[
            required("access_token"),
            optional("booking_id", "None"),
            optional("insurance_id", "None"),
        ],
    },
    Method {
        name: "get_booking_history",
        params: &[required("access_token")],
    },
    Method {
        name: "list_all_airports",
        params: &[],
    },
    Method {
        name: "cancel_booking",
        params: &[required("access_token"), required("booking_id")],
    },
    Method {
        name: "compute_exchange_rate",
        params: &[
            required("base_currency"),
            required("target_currency"),
            required("value"),
        ],
    },
    Method {
        name: "verify_traveler_information",
        params: &[
            required("first_name"),
            required("last_name"),
            required("date_of_birth"),
            required("passport_number"),
        ],
    },
    Method {
        name: "set_budget_limit",
        params: &[required("access_token"), required("budget_limit")],
    },
    Method {
        name: "get_nearest_airport_by_city",
        params: &[required("location")],
    },
    Method {
        name: "purchase_insurance",
        params: &[
            required("access_token"),
            required("insurance_type"),
            required("booking_id"),
            required("insurance_cost"),
            required("card_id"),
        ],
    },
    Method {
        name: "contact_customer_support",
        params: &[required("booking_id"), required("message")],
    },
    Method {
        name: "get_all_credit_cards",
        params: &[],
    },
];

const DEFAULT_SEED: i64 = 141_053;

/// The `TravelAPI` class.
#[derive(Debug, Clone)]
pub struct TravelApi {
    random: PyRandom,
    credit_card_list: PyValue,
    booking_record: PyValue,
    access_token: PyValue,
    token_type: PyValue,
    token_expires_in: PyValue,
    token_scope: PyValue,
    user_first_name: PyValue,
    user_last_name: PyValue,
    budget_limit: PyValue,
    long_context: bool,
    /// The card ids merged from the long-context filler data (shared objects upstream).
    filler_cards: Vec<PyValue>,
    /// `_flight_cost_lookup`: the last `get_flight_cost` query's key and cost.
    last_flight_cost: Option<(String, f64)>,
}

impl Default for TravelApi {
    fn default() -> Self {
        Self {
            random: PyRandom::new(DEFAULT_SEED),
            credit_card_list: PyValue::Dict(Vec::new()),
            booking_record: PyValue::Dict(Vec::new()),
            access_token: PyValue::None,
            token_type: PyValue::None,
            token_expires_in: PyValue::None,
            token_scope: PyValue::None,
            user_first_name: PyValue::None,
            user_last_name: PyValue::None,
            budget_limit: PyValue::None,
            long_context: false,
            filler_cards: Vec::new(),
            last_flight_cost: None,
        }
    }
}

fn error(text: impl Into<String>) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text.into()))])
}

/// `{flag_name: False, "error": text}`.
fn refused(flag_name: &str, text: impl Into<String>) -> PyValue {
    PyValue::dict([
        (flag_name, PyValue::Bool(false)),
        ("error", PyValue::Str(text.into())),
    ])
}

fn key(name: &str) -> PyValue {
    PyValue::str(name)
}

fn text_of(value: &PyValue) -> String {
    format(value)
}

/// `_flight_cost_lookup`'s key: `f"{travel_from}|{travel_to}|{travel_class}|{travel_date}"`.
fn flight_key(from: &PyValue, to: &PyValue, class: &PyValue, date: &PyValue) -> String {
    format!(
        "{}|{}|{}|{}",
        text_of(from),
        text_of(to),
        text_of(class),
        text_of(date)
    )
}

impl TravelApi {
    fn expired(&self) -> bool {
        self.token_expires_in == PyValue::Int(0)
    }

    /// The token checks most methods start with, as the refusal to return.
    fn token_refusal(&self, access_token: &PyValue, flag_name: Option<&str>) -> Option<PyValue> {
        let text = if self.expired() {
            "Token expired"
        } else if *access_token != self.access_token {
            "Invalid access token"
        } else {
            return None;
        };
        Some(match flag_name {
            Some(flag) => refused(flag, text),
            None => error(text),
        })
    }

    fn card_ids(&self) -> PyValue {
        match &self.credit_card_list {
            PyValue::Dict(pairs) => PyValue::List(pairs.iter().map(|(k, _)| k.clone()).collect()),
            _ => PyValue::List(Vec::new()),
        }
    }

    fn register_credit_card(&mut self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [access_token, card_number, expiration, holder, cvv] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        if self.token_expires_in == PyValue::None {
            return Ok(error("Token not initialized"));
        }
        if self.expired() {
            return Ok(error("Token expired"));
        }
        if *access_token != self.access_token {
            return Ok(error("Invalid access token"));
        }
        if contains(&self.credit_card_list, card_number)? {
            return Ok(error("Card already registered"));
        }
        let card_id = PyValue::Str(
            self.random
                .randint(100_000_000_000, 999_999_999_999)
                .to_string(),
        );
        let card = PyValue::dict([
            ("card_number", card_number.clone()),
            ("expiration_date", expiration.clone()),
            ("cardholder_name", holder.clone()),
            ("card_verification_number", cvv.clone()),
            ("balance", PyValue::Int(self.random.randint(10_000, 99_999))),
        ]);
        set_item(&mut self.credit_card_list, card_id.clone(), card)?;
        Ok(PyValue::dict([("card_id", card_id)]))
    }

    /// `get_flight_cost`: the cost list, or the `ValueError` text.
    fn flight_cost(
        &mut self,
        from: &PyValue,
        to: &PyValue,
        date: &PyValue,
        class: &PyValue,
    ) -> Result<Result<PyValue, String>, CallError> {
        hashable(from)?;
        hashable(to)?;
        let base = ROUTES
            .iter()
            .find(|(a, b, _)| *from == PyValue::str(*a) && *to == PyValue::str(*b))
            .map(|(_, _, cost)| *cost);
        let Some(base) = base else {
            return Ok(Err("No available route for the given airports.".into()));
        };
        let factor = if *class == PyValue::str("economy") {
            1
        } else if *class == PyValue::str("business") {
            2
        } else if *class == PyValue::str("first") {
            5
        } else {
            return Ok(Err(
                "Invalid travel class. Options are: economy, business, first.".into(),
            ));
        };
        let mut digit_sum = 0u32;
        for character in pyops::iterate(date)? {
            if let PyValue::Str(text) = character {
                let c = text.chars().next().unwrap_or(' ');
                if c.is_ascii_digit() {
                    digit_sum += c.to_digit(10).unwrap_or(0);
                } else if c.is_numeric() {
                    return Err(CallError::Unsupported("non-ASCII digits in a date".into()));
                }
            } else {
                return Err(no_attribute(&character, "isdigit"));
            }
        }
        let multiplier = if digit_sum.is_multiple_of(2) { 2 } else { 1 };
        let cost = (base * factor * multiplier) as f64;
        self.last_flight_cost = Some((flight_key(from, to, class, date), cost));
        // Long-context mode lists the cost of every route (in the class's order) for the class
        // and date; the looked-up cost stays the asked route's.
        let costs = if self.long_context {
            ROUTES
                .iter()
                .map(|(_, _, base)| PyValue::Float((base * factor * multiplier) as f64))
                .collect()
        } else {
            vec![PyValue::Float(cost)]
        };
        Ok(Ok(PyValue::dict([(
            "travel_cost_list",
            PyValue::List(costs),
        )])))
    }

    /// Refuses a balance change of a card merged from the long-context filler data.
    fn check_owned_card(&self, card_id: &PyValue, method: &str) -> Result<(), CallError> {
        if self.filler_cards.contains(card_id) {
            return Err(CallError::Unsupported(format!(
                "TravelAPI.{method} changes the balance of long-context filler card {}, an \
                 object bfcl-eval shares between the model's and the ground truth's instances \
                 (and later entries): not reproduced",
                card_id.repr()
            )));
        }
        Ok(())
    }

    fn book_flight(&mut self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [access_token, card_id, date, from, to, class] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        let flag = "booking_status";
        if let Some(refusal) = self.token_refusal(access_token, Some(flag)) {
            return Ok(refusal);
        }
        if !contains(&self.credit_card_list, card_id)? {
            return Ok(refused(flag, "Card not registered"));
        }
        if !contains(get_item(&self.credit_card_list, card_id)?, &key("balance"))? {
            return Ok(refused(flag, "Balance not found"));
        }
        let airports: Vec<PyValue> = AIRPORTS.iter().map(|a| PyValue::str(*a)).collect();
        if !airports.contains(from) {
            return Ok(refused(
                flag,
                format!("Invalid departure airport code: {}", text_of(from)),
            ));
        }
        if !airports.contains(to) {
            return Ok(refused(
                flag,
                format!("Invalid destination airport code: {}", text_of(to)),
            ));
        }
        match strptime(date, false) {
            Ok(_) => {}
            Err(StrptimeError::Value(_)) => {
                return Ok(refused(flag, "Invalid date format. Use YYYY-MM-DD."));
            }
            Err(other) => return Err(other.into()),
        }
        hashable(class)?;
        if !["economy", "business", "first"]
            .iter()
            .any(|c| *class == PyValue::str(*c))
        {
            return Err(CallError::Unsupported(
                "book_flight's invalid-class text prints a set in hash order".into(),
            ));
        }
        let cost = match self.flight_cost(from, to, date, class)? {
            Err(text) => return Ok(refused(flag, text)),
            Ok(_) => match &self.last_flight_cost {
                Some((stored, cost)) if *stored == flight_key(from, to, class, date) => {
                    PyValue::Float(*cost)
                }
                _ => {
                    return Ok(refused(flag, "No available route for the given parameters"));
                }
            },
        };
        let balance =
            get_item(get_item(&self.credit_card_list, card_id)?, &key("balance"))?.clone();
        if order("<", &balance, &cost)? {
            return Ok(refused(flag, "Insufficient funds"));
        }
        if self.budget_limit != PyValue::None && order("<", &balance, &self.budget_limit)? {
            return Ok(refused(flag, "Balance is less than budget limit"));
        }
        self.check_owned_card(card_id, "book_flight")?;
        let card = get_item_mut(&mut self.credit_card_list, card_id)?;
        set_item(card, key("balance"), pyops::sub(&balance, &cost)?)?;
        let booking_id = PyValue::Str(self.random.randint(1_000_000, 9_999_999).to_string());
        let transaction_id = PyValue::Str(self.random.randint(10_000_000, 99_999_999).to_string());
        let booking = PyValue::dict([
            ("card_id", card_id.clone()),
            ("travel_date", date.clone()),
            ("travel_from", from.clone()),
            ("travel_to", to.clone()),
            ("travel_class", class.clone()),
            ("travel_cost", cost),
            ("transaction_id", transaction_id.clone()),
        ]);
        set_item(&mut self.booking_record, booking_id.clone(), booking)?;
        let history = if self.long_context {
            self.booking_record.clone()
        } else {
            PyValue::Dict(Vec::new())
        };
        Ok(PyValue::dict([
            ("booking_id", booking_id),
            ("transaction_id", transaction_id),
            ("booking_status", PyValue::Bool(true)),
            ("booking_history", history),
        ]))
    }

    fn retrieve_invoice(
        &self,
        access_token: &PyValue,
        booking_id: &PyValue,
    ) -> Result<PyValue, CallError> {
        if let Some(refusal) = self.token_refusal(access_token, None) {
            return Ok(refusal);
        }
        if !contains(&self.booking_record, booking_id)? {
            return Ok(error("Booking not found"));
        }
        let booking = get_item(&self.booking_record, booking_id)?;
        let mut invoice = vec![("booking_id", booking_id.clone())];
        for field in [
            "travel_date",
            "travel_from",
            "travel_to",
            "travel_class",
            "travel_cost",
            "transaction_id",
        ] {
            invoice.push((field, get_item(booking, &key(field))?.clone()));
        }
        Ok(PyValue::dict([("invoice", PyValue::dict(invoice))]))
    }

    fn cancel_booking(
        &mut self,
        access_token: &PyValue,
        booking_id: &PyValue,
    ) -> Result<PyValue, CallError> {
        let flag = "cancel_status";
        if let Some(refusal) = self.token_refusal(access_token, Some(flag)) {
            return Ok(refusal);
        }
        if !contains(&self.booking_record, booking_id)? {
            return Ok(refused(flag, "Booking not found"));
        }
        let booking = get_item(&self.booking_record, booking_id)?;
        let card_id = get_item(booking, &key("card_id"))?.clone();
        let cost = get_item(booking, &key("travel_cost"))?.clone();
        self.check_owned_card(&card_id, "cancel_booking")?;
        let card = get_item_mut(&mut self.credit_card_list, &card_id)?;
        let balance = get_item(card, &key("balance"))?.clone();
        set_item(card, key("balance"), pyops::add(&balance, &cost)?)?;
        remove_key(&mut self.booking_record, booking_id);
        Ok(PyValue::dict([(flag, PyValue::Bool(true))]))
    }

    fn compute_exchange_rate(
        &self,
        base: &PyValue,
        target: &PyValue,
        value: &PyValue,
    ) -> Result<PyValue, CallError> {
        for (from, to, rate) in EXCHANGE_RATES {
            let rate = match rate {
                Rate::Int(n) => PyValue::Int(n),
                Rate::Float(x) => PyValue::Float(x),
            };
            if *base == PyValue::str(from) && *target == PyValue::str(to) {
                let product = pyops::mul(value, &rate)?;
                return Ok(PyValue::dict([(
                    "exchanged_value",
                    PyValue::Float(to_float(&product)?),
                )]));
            }
            if *base == PyValue::str(to) && *target == PyValue::str(from) {
                let quotient = pyops::truediv(value, &rate)?;
                let x = quotient.as_number().unwrap_or(f64::NAN);
                if !x.is_finite() {
                    return Err(CallError::Unsupported(
                        "round() of a non-finite float".into(),
                    ));
                }
                // `round(x, 2)` rounds the exact binary value half-to-even, as fixed-precision
                // formatting does.
                let rounded: f64 = format!("{x:.2}").parse().unwrap_or(x);
                return Ok(PyValue::dict([(
                    "exchanged_value",
                    PyValue::Float(rounded),
                )]));
            }
        }
        Err(CallError::raised(
            "No available exchange rate for the given currencies.",
        ))
    }

    fn verify_traveler(&self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [first, last, birth, passport] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        let flag = "verification_status";
        let failure = |text: String| {
            PyValue::dict([
                (flag, PyValue::Bool(false)),
                ("verification_failure", PyValue::Str(text)),
            ])
        };
        if self.user_first_name != *first || self.user_last_name != *last {
            return Ok(failure(format!(
                "Cannot book flight information for another user.Expected {} {}, got {} {}",
                text_of(&self.user_first_name),
                text_of(&self.user_last_name),
                text_of(first),
                text_of(last)
            )));
        }
        let birth = match strptime(birth, false) {
            Ok(date) => date,
            Err(StrptimeError::Value(_)) => {
                return Ok(failure(
                    "Invalid date of birth format. Please use YYYY-MM-DD.".into(),
                ));
            }
            Err(other) => return Err(other.into()),
        };
        let today = DateTime::today();
        let before_birthday = (today.month, today.day) < (birth.month, birth.day);
        let age = today.year - birth.year - i64::from(before_birthday);
        if age < 18 {
            return Ok(failure("Traveler must be at least 18 years old.".into()));
        }
        let PyValue::Str(passport) = passport else {
            return Err(no_attribute(passport, "startswith"));
        };
        if !passport.starts_with("US") {
            return Ok(failure(
                "Passport must be issued by the United States.".into(),
            ));
        }
        Ok(PyValue::dict([(flag, PyValue::Bool(true))]))
    }

    fn purchase_insurance(&mut self, args: &[PyValue]) -> Result<PyValue, CallError> {
        let [access_token, _kind, booking_id, cost, card_id] = args else {
            return Err(CallError::Unsupported("argument count".into()));
        };
        let flag = "insurance_status";
        if let Some(refusal) = self.token_refusal(access_token, Some(flag)) {
            return Ok(refusal);
        }
        if self.budget_limit != PyValue::None && order("<", &self.budget_limit, cost)? {
            return Ok(refused(flag, "Exceeded budget limit"));
        }
        if !contains(&self.booking_record, booking_id)? {
            return Ok(refused(flag, "Booking not found"));
        }
        if !contains(&self.credit_card_list, card_id)? {
            return Ok(refused(flag, "Credit card not registered"));
        }
        self.check_owned_card(card_id, "purchase_insurance")?;
        let card = get_item_mut(&mut self.credit_card_list, card_id)?;
        let balance = get_item(card, &key("balance"))?.clone();
        set_item(card, key("balance"), pyops::sub(&balance, cost)?)?;
        let insurance_id = self.random.randint(100_000_000, 999_999_999).to_string();
        Ok(PyValue::dict([
            ("insurance_id", PyValue::Str(insurance_id)),
            (flag, PyValue::Bool(true)),
        ]))
    }
}

impl Backend for TravelApi {
    fn class_name(&self) -> &'static str {
        "TravelAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        long_context: &LongContext,
    ) -> Result<(), CallError> {
        let filler = long_context.filler("TravelAPI loading")?;
        let seed = match config.get("random_seed") {
            Some(PyValue::Int(seed)) => *seed,
            _ => DEFAULT_SEED,
        };
        *self = Self {
            random: PyRandom::new(seed),
            credit_card_list: config_or(config, "credit_card_list", PyValue::Dict(Vec::new())),
            booking_record: config_or(config, "booking_record", PyValue::Dict(Vec::new())),
            access_token: config_or(config, "access_token", PyValue::None),
            token_type: config_or(config, "token_type", PyValue::None),
            token_expires_in: config_or(config, "token_expires_in", PyValue::None),
            token_scope: config_or(config, "token_scope", PyValue::None),
            user_first_name: config_or(config, "user_first_name", PyValue::None),
            user_last_name: config_or(config, "user_last_name", PyValue::None),
            budget_limit: config_or(config, "budget_limit", PyValue::None),
            long_context: long_context.is_on(),
            filler_cards: Vec::new(),
            last_flight_cost: None,
        };
        if let Some(filler) = filler {
            // `_add_credit_cards` / `_add_booking_records`: ids already in the scenario win.
            for (id, card) in &filler.credit_cards {
                if !contains(&self.credit_card_list, id)? {
                    set_item(&mut self.credit_card_list, id.clone(), card.clone())?;
                    self.filler_cards.push(id.clone());
                }
            }
            for (id, booking) in &filler.booking_records {
                if !contains(&self.booking_record, id)? {
                    set_item(&mut self.booking_record, id.clone(), booking.clone())?;
                }
            }
        }
        Ok(())
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let arg = |index: usize| args.get(index).cloned().unwrap_or(PyValue::None);
        match method {
            "authenticate_travel" => {
                self.token_expires_in = PyValue::Int(2);
                self.access_token = PyValue::Str(self.random.randint(100_000, 999_999).to_string());
                self.token_type = PyValue::str("Bearer");
                self.token_scope = arg(3);
                self.user_first_name = arg(4);
                self.user_last_name = arg(5);
                Ok(PyValue::dict([
                    ("expires_in", PyValue::Int(2)),
                    ("access_token", self.access_token.clone()),
                    ("token_type", PyValue::str("Bearer")),
                    ("scope", arg(3)),
                ]))
            }
            "travel_get_login_status" => {
                let logged_out = self.token_expires_in == PyValue::None || self.expired();
                Ok(PyValue::dict([("status", PyValue::Bool(!logged_out))]))
            }
            "get_budget_fiscal_year" => Ok(PyValue::dict([(
                "budget_fiscal_year",
                PyValue::str("2018"),
            )])),
            "register_credit_card" => self.register_credit_card(&args),
            "get_flight_cost" => match self.flight_cost(&arg(0), &arg(1), &arg(2), &arg(3))? {
                Ok(costs) => Ok(costs),
                Err(text) => Err(CallError::Raised(text)),
            },
            "get_credit_card_balance" => {
                let (access_token, card_id) = (arg(0), arg(1));
                if let Some(refusal) = self.token_refusal(&access_token, None) {
                    return Ok(refusal);
                }
                if !contains(&self.credit_card_list, &card_id)? {
                    return Ok(error(format!(
                        "Card not registered. Here are a list of card_id's: {}",
                        self.card_ids().repr()
                    )));
                }
                let card = get_item(&self.credit_card_list, &card_id)?;
                Ok(PyValue::dict([(
                    "card_balance",
                    get_item(card, &key("balance"))?.clone(),
                )]))
            }
            "book_flight" => self.book_flight(&args),
            "retrieve_invoice" => self.retrieve_invoice(&arg(0), &arg(1)),
            "get_booking_history" => {
                if let Some(refusal) = self.token_refusal(&arg(0), None) {
                    return Ok(refusal);
                }
                Ok(PyValue::dict([(
                    "booking_history",
                    self.booking_record.clone(),
                )]))
            }
            "list_all_airports" => Ok(PyValue::List(
                AIRPORTS.iter().map(|a| PyValue::str(*a)).collect(),
            )),
            "cancel_booking" => self.cancel_booking(&arg(0), &arg(1)),
            "compute_exchange_rate" => self.compute_exchange_rate(&arg(0), &arg(1), &arg(2)),
            "verify_traveler_information" => self.verify_traveler(&args),
            "set_budget_limit" => {
                if let Some(refusal) = self.token_refusal(&arg(0), None) {
                    return Ok(refusal);
                }
                let limit = PyValue::Float(to_float(&arg(1))?);
                self.budget_limit = limit.clone();
                Ok(PyValue::dict([("budget_limit", limit)]))
            }
            "get_nearest_airport_by_city" => {
                let location = arg(0);
                hashable(&location)?;
                let airport = CITY_AIRPORTS
                    .iter()
                    .find(|(city, _)| location == PyValue::str(*city))
                    .map_or("Unknown", |(_, code)| code);
                Ok(PyValue::dict([("nearest_airport", PyValue::str(airport))]))
            }
            "purchase_insurance" => self.purchase_insurance(&args),
            "contact_customer_support" => {
                if !contains(&self.booking_record, &arg(0))? {
                    return Ok(error("Booking not found"));
                }
                Ok(PyValue::dict([(
                    "customer_support_message",
                    PyValue::str(
                        "Thank you for contacting customer support. Your message has been \
                         received and we will get back to you shortly.",
                    ),
                )]))
            }
            "get_all_credit_cards" => Ok(PyValue::dict([(
                "credit_card_list",
                self.credit_card_list.clone(),
            )])),
            other => Err(no_attribute(&PyValue::Opaque("TravelAPI".into()), other)),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("credit_card_list", self.credit_card_list.clone()),
            ("booking_record", self.booking_record.clone()),
            ("access_token", self.access_token.clone()),
            ("token_type", self.token_type.clone()),
            ("token_expires_in", self.token_expires_in.clone()),
            ("token_scope", self.token_scope.clone()),
            ("user_first_name", self.user_first_name.clone()),
            ("user_last_name", self.user_last_name.clone()),
            ("budget_limit", self.budget_limit.clone()),
            ("long_context", PyValue::Bool(self.long_context)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;
    use crate::bfcl::multi_turn::result_text;

    /// Long-context mode merges the filler's cards and bookings, lists every route's cost, and
    /// refuses (unsupported) a balance change of a filler card; without the data, loading in
    /// long-context mode is unsupported.
    #[test]
    fn long_context_merges_filler_cards_and_bookings() {
        use crate::bfcl::multi_turn::long_context::{LongContextData, SAMPLE};
        use std::sync::Arc;
        let data = LongContextData::parse(SAMPLE, std::path::Path::new("lc.py")).expect("parses");
        let mode = LongContext::On(Some(Arc::new(data)));
        let s = PyValue::str;
        let config = PyValue::dict([
            ("access_token", s("tok")),
            ("token_expires_in", PyValue::Int(5)),
            (
                "credit_card_list",
                PyValue::dict([("2222", PyValue::dict([("balance", PyValue::Float(9e3))]))]),
            ),
        ]);
        let mut api = TravelApi::default();
        api.load_scenario(&config, &mode).expect("loads");
        let cards = api.credit_card_list.repr();
        assert!(
            cards.starts_with("{'2222': ") && cards.contains("'1111': {"),
            "{cards}"
        );
        assert!(api.booking_record.repr().contains("'booking_1'"));
        let costs = api
            .call(
                "get_flight_cost",
                vec![s("SFO"), s("LAX"), s("2024-11-15"), s("economy")],
            )
            .expect("costs");
        let Some(PyValue::List(costs)) = costs.get("travel_cost_list") else {
            panic!("{costs:?}");
        };
        assert_eq!(costs.len(), ROUTES.len());
        assert_eq!(costs[0], PyValue::Float(400.0));
        let book = |api: &mut TravelApi, card: &str| {
            let text = PyValue::str;
            api.call(
                "book_flight",
                vec![
                    text("tok"),
                    text(card),
                    text("2024-11-15"),
                    text("SFO"),
                    text("LAX"),
                    text("economy"),
                ],
            )
        };
        let booked = book(&mut api, "2222").expect("books");
        assert!(
            booked.repr().contains("'booking_history': {'booking_1'"),
            "{booked:?}"
        );
        assert!(matches!(
            book(&mut api, "1111"),
            Err(CallError::Unsupported(reason)) if reason.contains("filler card '1111'")
        ));
        let missing = TravelApi::default().load_scenario(&config, &LongContext::On(None));
        assert!(
            matches!(missing, Err(CallError::Unsupported(reason)) if reason.contains("TravelAPI loading"))
        );
    }

    /// Results as bfcl-eval's `TravelAPI` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut api = TravelApi::default();
        let s = PyValue::str;
        let login = call_text(
            &mut api,
            "authenticate_travel",
            vec![
                s("id"),
                s("secret"),
                s("token"),
                s("read_write"),
                s("Ann"),
                s("Lee"),
            ],
        );
        assert_eq!(
            login,
            format!(
                "{{\"expires_in\": 2, \"access_token\": \"{PY_TOKEN}\", \"token_type\": \
                 \"Bearer\", \"scope\": \"read_write\"}}"
            )
        );
        assert_eq!(
            call_text(
                &mut api,
                "get_flight_cost",
                vec![s("SFO"), s("LAX"), s("2024-11-15"), s("business")]
            ),
            "{\"travel_cost_list\": [800.0]}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "compute_exchange_rate",
                vec![s("RMB"), s("USD"), PyValue::Int(100)]
            ),
            "{\"exchanged_value\": 14.29}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "compute_exchange_rate",
                vec![s("USD"), s("EUR"), PyValue::Int(3)]
            ),
            "{\"exchanged_value\": 2.4000000000000004}"
        );
        assert_eq!(
            result_text(
                &api.call(
                    "get_flight_cost",
                    vec![s("SFO"), s("XXX"), s("1"), s("first")]
                )
                .err()
                .map_or(PyValue::None, |e| PyValue::str(format!("{e:?}")))
            ),
            "Raised(\"No available route for the given airports.\")"
        );
    }

    /// `str(random.Random(141053).randint(100000, 999999))`.
    const PY_TOKEN: &str = "251675";
}
