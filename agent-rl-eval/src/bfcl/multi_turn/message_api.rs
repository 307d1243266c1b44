//! `MessageAPI`: bfcl-eval's workspace messaging class (`message_api.py`): users by name, an
//! inbox of one-entry `{receiver_id: message}` dicts, message ids drawn from a seeded
//! `random.Random`.
//!
//! `generated_ids` is a Python `set`; its state value here is the sorted list of the ids, whose
//! equality is the set's.

use super::backend::{Backend, CallError, Method, required};
use super::long_context::LongContext;
use super::py_random::PyRandom;
use super::pyobject::{config_or, contains, format, lower};
use super::pyops::{self, truthy};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "list_users",
        params: &[],
    },
    Method {
        name: "get_user_id",
        params: &[required("user")],
    },
    Method {
        name: "message_login",
        params: &[required("user_id")],
    },
    Method {
        name: "message_get_login_status",
        params: &[],
    },
    Method {
        name: "send_message",
        params: &[required("receiver_id"), required("message")],
    },
    Method {
        name: "delete_message",
        params: &[required("receiver_id")],
    },
    Method {
        name: "view_messages_sent",
        params: &[],
    },
    Method {
        name: "add_contact",
        params: &[required("user_name")],
    },
    Method {
        name: "search_messages",
        params: &[required("keyword")],
    },
    Method {
        name: "get_message_stats",
        params: &[],
    },
];

const DEFAULT_SEED: i64 = 200_191;

/// The `MessageAPI` class.
#[derive(Debug, Clone)]
pub struct MessageApi {
    random: PyRandom,
    generated_ids: Vec<i64>,
    user_count: PyValue,
    user_map: PyValue,
    inbox: PyValue,
    message_count: PyValue,
    current_user: PyValue,
}

impl Default for MessageApi {
    fn default() -> Self {
        let mut api = Self {
            random: PyRandom::new(DEFAULT_SEED),
            generated_ids: Vec::new(),
            user_count: PyValue::None,
            user_map: PyValue::None,
            inbox: PyValue::None,
            message_count: PyValue::None,
            current_user: PyValue::None,
        };
        api.load(&PyValue::Dict(Vec::new()));
        api
    }
}

fn default_users() -> PyValue {
    PyValue::dict([
        ("Alice", PyValue::str("USR001")),
        ("Bob", PyValue::str("USR002")),
        ("Catherine", PyValue::str("USR003")),
        ("Daniel", PyValue::str("USR004")),
    ])
}

fn default_inbox() -> PyValue {
    PyValue::List(vec![
        PyValue::dict([(
            "USR002",
            PyValue::str("My name is Alice. I want to connect."),
        )]),
        PyValue::dict([("USR003", PyValue::str("Could you upload the file?"))]),
        PyValue::dict([("USR004", PyValue::str("Could you upload the file?"))]),
    ])
}

fn error(text: String) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text))])
}

fn not_logged_in() -> PyValue {
    error("No user is currently logged in.".into())
}

/// `list(message.items())[0]` of an inbox entry.
fn first_item(message: &PyValue) -> Result<(PyValue, PyValue), CallError> {
    match message {
        PyValue::Dict(pairs) => pairs
            .first()
            .cloned()
            .ok_or_else(|| CallError::raised("list index out of range")),
        other => Err(super::pyobject::no_attribute(other, "items")),
    }
}

fn items(list: &PyValue) -> Result<Vec<PyValue>, CallError> {
    pyops::iterate(list)
}

/// The values of a dict (`d.values()`).
fn values(dict: &PyValue) -> Vec<PyValue> {
    match dict {
        PyValue::Dict(pairs) => pairs.iter().map(|(_, v)| v.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Python's `str.zfill(width)`.
fn zfill(text: &str, width: usize) -> String {
    let length = text.chars().count();
    if length >= width {
        return text.to_owned();
    }
    let (sign, digits) = match text.chars().next() {
        Some(c @ ('+' | '-')) => (c.to_string(), &text[1..]),
        _ => (String::new(), text),
    };
    format!("{sign}{}{digits}", "0".repeat(width - length))
}

impl MessageApi {
    fn load(&mut self, config: &PyValue) {
        let seed = match config.get("random_seed") {
            Some(PyValue::Int(seed)) => *seed,
            _ => DEFAULT_SEED,
        };
        self.random = PyRandom::new(seed);
        self.generated_ids = Vec::new();
        self.user_count = config_or(config, "user_count", PyValue::Int(4));
        self.user_map = config_or(config, "user_map", default_users());
        self.inbox = config_or(config, "inbox", default_inbox());
        self.message_count = config_or(config, "message_count", PyValue::Int(3));
        self.current_user = config_or(config, "current_user", PyValue::None);
    }

    fn generate_id(&mut self) -> PyValue {
        let mut id = self.random.randint(10_000, 99_999);
        while self.generated_ids.contains(&id) {
            id = self.random.randint(10_000, 99_999);
        }
        self.generated_ids.push(id);
        PyValue::dict([("new_id", PyValue::Int(id))])
    }

    fn inbox_mut(&mut self) -> Result<&mut Vec<PyValue>, CallError> {
        match &mut self.inbox {
            PyValue::List(items) => Ok(items),
            other => Err(super::pyobject::no_attribute(other, "append")),
        }
    }

    fn send_message(&mut self, receiver: PyValue, message: PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(not_logged_in());
        }
        if !values(&self.user_map).contains(&receiver) {
            return Ok(error(format!(
                "Receiver ID '{}' not found.",
                format(&receiver)
            )));
        }
        let message_id = self.generate_id();
        let text = format!("Message sent to '{}' successfully.", format(&receiver));
        self.inbox_mut()?
            .push(PyValue::Dict(vec![(receiver, message)]));
        self.message_count = pyops::add(&self.message_count, &PyValue::Int(1))?;
        Ok(PyValue::dict([
            ("sent_status", PyValue::Bool(true)),
            ("message_id", message_id),
            ("message", PyValue::Str(text)),
        ]))
    }

    fn delete_message(&mut self, receiver_id: &PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(not_logged_in());
        }
        let inbox = items(&self.inbox)?;
        for message in inbox.iter().rev() {
            let (receiver, _) = first_item(message)?;
            if receiver == *receiver_id {
                // `list.remove` drops the first entry equal to this one.
                let list = self.inbox_mut()?;
                if let Some(index) = list.iter().position(|m| m == message) {
                    list.remove(index);
                }
                return Ok(PyValue::dict([
                    ("deleted_status", PyValue::Bool(true)),
                    ("receiver_id", receiver),
                    (
                        "message",
                        PyValue::Str(format!(
                            "Receiver {}'s latest message deleted successfully.",
                            format(receiver_id)
                        )),
                    ),
                ]));
            }
        }
        Ok(error(format!(
            "Receiver ID {} not found.",
            format(receiver_id)
        )))
    }

    fn view_messages_sent(&self) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(not_logged_in());
        }
        let mut sent = PyValue::Dict(Vec::new());
        for message in items(&self.inbox)? {
            let (receiver, content) = first_item(&message)?;
            super::pyobject::hashable(&receiver)?;
            if let PyValue::Dict(pairs) = &mut sent {
                match pairs.iter_mut().find(|(k, _)| *k == receiver) {
                    Some((_, PyValue::List(list))) => list.push(content),
                    _ => pairs.push((receiver, PyValue::List(vec![content]))),
                }
            }
        }
        Ok(PyValue::dict([("messages", sent)]))
    }

    fn add_contact(&mut self, user_name: PyValue) -> Result<PyValue, CallError> {
        if contains(&self.user_map, &user_name)? {
            return Ok(error(format!(
                "User name '{}' already exists.",
                format(&user_name)
            )));
        }
        self.user_count = pyops::add(&self.user_count, &PyValue::Int(1))?;
        let user_id = PyValue::Str(format!("USR{}", zfill(&format(&self.user_count), 3)));
        if values(&self.user_map).contains(&user_id) {
            return Ok(error(format!(
                "User ID '{}' already exists.",
                format(&user_id)
            )));
        }
        super::pyobject::set_item(&mut self.user_map, user_name.clone(), user_id.clone())?;
        Ok(PyValue::dict([
            ("added_status", PyValue::Bool(true)),
            ("user_id", user_id),
            (
                "message",
                PyValue::Str(format!(
                    "Contact '{}' added successfully.",
                    format(&user_name)
                )),
            ),
        ]))
    }

    fn search_messages(&self, keyword: &PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(not_logged_in());
        }
        let keyword = lower(keyword)?;
        let mut results = Vec::new();
        for message in items(&self.inbox)? {
            let (receiver, content) = first_item(&message)?;
            if lower(&content)?.contains(&keyword) {
                results.push(PyValue::dict([
                    ("receiver_id", receiver),
                    ("message", content),
                ]));
            }
        }
        Ok(PyValue::dict([("results", PyValue::List(results))]))
    }

    fn get_message_stats(&self) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(not_logged_in());
        }
        let inbox = items(&self.inbox)?;
        let mut contacts: Vec<PyValue> = Vec::new();
        for message in &inbox {
            let (receiver, _) = first_item(message)?;
            super::pyobject::hashable(&receiver)?;
            if !contacts.contains(&receiver) {
                contacts.push(receiver);
            }
        }
        Ok(PyValue::dict([(
            "stats",
            PyValue::dict([
                ("received_count", PyValue::Int(inbox.len() as i64)),
                ("total_contacts", PyValue::Int(contacts.len() as i64)),
            ]),
        )]))
    }
}

impl Backend for MessageApi {
    fn class_name(&self) -> &'static str {
        "MessageAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        _long_context: &LongContext,
    ) -> Result<(), CallError> {
        self.load(config);
        Ok(())
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let mut args = args.into_iter();
        let mut next = || args.next().unwrap_or(PyValue::None);
        match method {
            "list_users" => Ok(PyValue::dict([(
                "user_list",
                match &self.user_map {
                    PyValue::Dict(pairs) => {
                        PyValue::List(pairs.iter().map(|(k, _)| k.clone()).collect())
                    }
                    other => return Err(super::pyobject::no_attribute(other, "keys")),
                },
            )])),
            "get_user_id" => {
                let user = next();
                if !contains(&self.user_map, &user)? {
                    return Ok(error(format!(
                        "User '{}' not found in the workspace.",
                        format(&user)
                    )));
                }
                let id = super::pyobject::dict_get(&self.user_map, &user).cloned();
                Ok(PyValue::dict([("user_id", id.unwrap_or(PyValue::None))]))
            }
            "message_login" => {
                let user_id = next();
                if !values(&self.user_map).contains(&user_id) {
                    return Ok(PyValue::dict([
                        ("login_status", PyValue::Bool(false)),
                        (
                            "message",
                            PyValue::Str(format!("User ID '{}' not found.", format(&user_id))),
                        ),
                    ]));
                }
                let text = format!("User '{}' logged in successfully.", format(&user_id));
                self.current_user = user_id;
                Ok(PyValue::dict([
                    ("login_status", PyValue::Bool(true)),
                    ("message", PyValue::Str(text)),
                ]))
            }
            "message_get_login_status" => Ok(PyValue::dict([(
                "login_status",
                PyValue::Bool(truthy(&self.current_user)),
            )])),
            "send_message" => {
                let receiver = next();
                let message = next();
                self.send_message(receiver, message)
            }
            "delete_message" => self.delete_message(&next()),
            "view_messages_sent" => self.view_messages_sent(),
            "add_contact" => self.add_contact(next()),
            "search_messages" => self.search_messages(&next()),
            "get_message_stats" => self.get_message_stats(),
            other => Err(super::pyobject::no_attribute(
                &PyValue::Opaque("MessageAPI".into()),
                other,
            )),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("generated_ids", {
                let mut ids = self.generated_ids.clone();
                ids.sort_unstable();
                PyValue::List(ids.into_iter().map(PyValue::Int).collect())
            }),
            ("user_count", self.user_count.clone()),
            ("user_map", self.user_map.clone()),
            ("inbox", self.inbox.clone()),
            ("message_count", self.message_count.clone()),
            ("current_user", self.current_user.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;

    /// Results as bfcl-eval's `MessageAPI` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut api = MessageApi::default();
        assert_eq!(
            call_text(
                &mut api,
                "send_message",
                vec![PyValue::str("USR002"), PyValue::str("hi")]
            ),
            "{\"error\": \"No user is currently logged in.\"}"
        );
        call_text(&mut api, "message_login", vec![PyValue::str("USR001")]);
        assert_eq!(
            call_text(
                &mut api,
                "send_message",
                vec![PyValue::str("USR002"), PyValue::str("hi")]
            ),
            "{\"sent_status\": true, \"message_id\": {\"new_id\": 67410}, \"message\": \
             \"Message sent to 'USR002' successfully.\"}"
        );
        assert_eq!(
            call_text(&mut api, "add_contact", vec![PyValue::str("Eve")]),
            "{\"added_status\": true, \"user_id\": \"USR005\", \"message\": \
             \"Contact 'Eve' added successfully.\"}"
        );
        assert_eq!(
            call_text(&mut api, "delete_message", vec![PyValue::str("USR002")]),
            "{\"deleted_status\": true, \"receiver_id\": \"USR002\", \"message\": \
             \"Receiver USR002's latest message deleted successfully.\"}"
        );
        assert_eq!(
            call_text(&mut api, "get_message_stats", vec![]),
            "{\"stats\": {\"received_count\": 3, \"total_contacts\": 3}}"
        );
        assert_eq!(
            call_text(&mut api, "search_messages", vec![PyValue::str("UPLOAD")]),
            "{\"results\": [{\"receiver_id\": \"USR003\", \"message\": \"Could you upload \
             the file?\"}, {\"receiver_id\": \"USR004\", \"message\": \"Could you upload the \
             file?\"}]}"
        );
        assert_eq!(zfill("7", 3), "007");
        assert_eq!(zfill("-7", 3), "-07");
        assert_eq!(zfill("1234", 3), "1234");
    }
}
