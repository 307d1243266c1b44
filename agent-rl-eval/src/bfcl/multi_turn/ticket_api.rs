//! `TicketAPI`: bfcl-eval's support-ticket class (`ticket_api.py`): a queue of ticket dicts,
//! a counter for new ids and the logged-in user.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::LongContext;
use super::pyobject::{config_or, format, get_item, hashable, lower, no_attribute, order};
use super::pyops::{self, truthy};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "create_ticket",
        params: &[
            required("title"),
            optional("description", "''"),
            optional("priority", "1"),
        ],
    },
    Method {
        name: "get_ticket",
        params: &[required("ticket_id")],
    },
    Method {
        name: "close_ticket",
        params: &[required("ticket_id")],
    },
    Method {
        name: "resolve_ticket",
        params: &[required("ticket_id"), required("resolution")],
    },
    Method {
        name: "edit_ticket",
        params: &[required("ticket_id"), required("updates")],
    },
    Method {
        name: "ticket_login",
        params: &[required("username"), required("password")],
    },
    Method {
        name: "ticket_get_login_status",
        params: &[],
    },
    Method {
        name: "logout",
        params: &[],
    },
    Method {
        name: "get_user_tickets",
        params: &[optional("status", "None")],
    },
];

const EDITABLE: [&str; 4] = ["title", "description", "status", "priority"];

/// The `TicketAPI` class.
#[derive(Debug, Clone)]
pub struct TicketApi {
    ticket_queue: PyValue,
    ticket_counter: PyValue,
    current_user: PyValue,
}

impl Default for TicketApi {
    fn default() -> Self {
        Self {
            ticket_queue: PyValue::List(Vec::new()),
            ticket_counter: PyValue::Int(1),
            current_user: PyValue::None,
        }
    }
}

fn error(text: String) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text))])
}

fn status(text: String) -> PyValue {
    PyValue::dict([("status", PyValue::Str(text))])
}

fn success(flag: bool) -> PyValue {
    PyValue::dict([("success", PyValue::Bool(flag))])
}

fn key(name: &str) -> PyValue {
    PyValue::str(name)
}

impl TicketApi {
    fn queue(&self) -> Result<Vec<PyValue>, CallError> {
        pyops::iterate(&self.ticket_queue)
    }

    /// `_find_ticket`: the index of the first ticket whose `id` equals `ticket_id`.
    fn find(&self, ticket_id: &PyValue) -> Result<Option<usize>, CallError> {
        for (index, ticket) in self.queue()?.iter().enumerate() {
            if get_item(ticket, &key("id"))? == ticket_id {
                return Ok(Some(index));
            }
        }
        Ok(None)
    }

    fn ticket_mut(&mut self, index: usize) -> &mut PyValue {
        match &mut self.ticket_queue {
            PyValue::List(items) => &mut items[index],
            _ => unreachable!("find only returns indices into a list queue"),
        }
    }

    /// `if not ticket` on a found ticket: an empty dict counts as not found.
    fn found(&self, ticket_id: &PyValue) -> Result<Option<usize>, CallError> {
        let queue = self.queue()?;
        Ok(self.find(ticket_id)?.filter(|&index| truthy(&queue[index])))
    }

    fn create_ticket(
        &mut self,
        title: PyValue,
        description: PyValue,
        priority: PyValue,
    ) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(error(
                "User not authenticated. Please log in to create a ticket.".into(),
            ));
        }
        if order("<", &priority, &PyValue::Int(1))? || order(">", &priority, &PyValue::Int(5))? {
            return Ok(error(
                "Invalid priority. Priority must be between 1 and 5.".into(),
            ));
        }
        let ticket = PyValue::dict([
            ("id", self.ticket_counter.clone()),
            ("title", title),
            ("description", description),
            ("status", PyValue::str("Open")),
            ("priority", priority),
            ("created_by", self.current_user.clone()),
        ]);
        match &mut self.ticket_queue {
            PyValue::List(items) => items.push(ticket.clone()),
            other => return Err(no_attribute(other, "append")),
        }
        self.ticket_counter = pyops::add(&self.ticket_counter, &PyValue::Int(1))?;
        Ok(ticket)
    }

    fn set_status(
        &mut self,
        ticket_id: &PyValue,
        new_status: &str,
        resolution: Option<PyValue>,
    ) -> Result<PyValue, CallError> {
        let Some(index) = self.found(ticket_id)? else {
            return Ok(error(format!(
                "Ticket with ID {} not found.",
                format(ticket_id)
            )));
        };
        let ticket = self.ticket_mut(index);
        if *get_item(ticket, &key("status"))? == PyValue::str(new_status) {
            return Ok(error(format!(
                "Ticket with ID {} is already {}.",
                format(ticket_id),
                new_status.to_lowercase()
            )));
        }
        super::pyobject::set_item(ticket, key("status"), PyValue::str(new_status))?;
        let verb = if let Some(resolution) = resolution {
            super::pyobject::set_item(ticket, key("resolution"), resolution)?;
            "resolved"
        } else {
            "closed"
        };
        Ok(status(format!(
            "Ticket {} has been {verb} successfully.",
            format(ticket_id)
        )))
    }

    fn edit_ticket(
        &mut self,
        ticket_id: &PyValue,
        updates: &PyValue,
    ) -> Result<PyValue, CallError> {
        let Some(index) = self.found(ticket_id)? else {
            return Ok(error(format!(
                "Ticket with ID {} not found.",
                format(ticket_id)
            )));
        };
        let PyValue::Dict(pairs) = updates else {
            return Err(no_attribute(updates, "keys"));
        };
        let mut invalid = Vec::new();
        for (name, _) in pairs {
            hashable(name)?;
            if !EDITABLE.iter().any(|field| *name == PyValue::str(*field)) {
                invalid.push(name.to_py_str());
            }
        }
        if !invalid.is_empty() {
            if invalid.len() > 1 {
                // The text joins a Python set, whose order follows string hashes that change
                // per process; only a single invalid field has a fixed text.
                return Err(CallError::Unsupported(
                    "edit_ticket with several invalid fields (set order)".into(),
                ));
            }
            return Ok(error(format!(
                "Invalid fields for update: {}",
                invalid.join(", ")
            )));
        }
        let ticket = self.ticket_mut(index);
        for (name, value) in pairs {
            if *value != PyValue::None {
                super::pyobject::set_item(ticket, name.clone(), value.clone())?;
            }
        }
        Ok(status(format!(
            "Ticket {} has been updated successfully.",
            format(ticket_id)
        )))
    }

    fn get_user_tickets(&self, wanted: &PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.current_user) {
            return Ok(PyValue::List(vec![error(
                "User not authenticated. Please log in to view tickets.".into(),
            )]));
        }
        let mut tickets = Vec::new();
        for ticket in self.queue()? {
            if *get_item(&ticket, &key("created_by"))? == self.current_user {
                tickets.push(ticket);
            }
        }
        if truthy(wanted) {
            let wanted = lower(wanted)?;
            let mut kept = Vec::new();
            for ticket in tickets {
                if lower(get_item(&ticket, &key("status"))?)? == wanted {
                    kept.push(ticket);
                }
            }
            tickets = kept;
        }
        Ok(PyValue::List(tickets))
    }
}

impl Backend for TicketApi {
    fn class_name(&self) -> &'static str {
        "TicketAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        _long_context: &LongContext,
    ) -> Result<(), CallError> {
        self.ticket_queue = config_or(config, "ticket_queue", PyValue::List(Vec::new()));
        self.ticket_counter = config_or(config, "ticket_counter", PyValue::Int(1));
        self.current_user = config_or(config, "current_user", PyValue::None);
        Ok(())
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let mut args = args.into_iter();
        let mut next = || args.next().unwrap_or(PyValue::None);
        match method {
            "create_ticket" => {
                let (title, description, priority) = (next(), next(), next());
                self.create_ticket(title, description, priority)
            }
            "get_ticket" => {
                let ticket_id = next();
                match self.found(&ticket_id)? {
                    Some(index) => Ok(self.queue()?[index].clone()),
                    None => Ok(error(format!(
                        "Ticket with ID {} not found.",
                        format(&ticket_id)
                    ))),
                }
            }
            "close_ticket" => self.set_status(&next(), "Closed", None),
            "resolve_ticket" => {
                let (ticket_id, resolution) = (next(), next());
                self.set_status(&ticket_id, "Resolved", Some(resolution))
            }
            "edit_ticket" => {
                let (ticket_id, updates) = (next(), next());
                self.edit_ticket(&ticket_id, &updates)
            }
            "ticket_login" => {
                let (username, password) = (next(), next());
                if truthy(&username) && truthy(&password) {
                    self.current_user = username;
                    return Ok(success(true));
                }
                Ok(success(false))
            }
            "ticket_get_login_status" => Ok(PyValue::dict([(
                "login_status",
                PyValue::Bool(truthy(&self.current_user)),
            )])),
            "logout" => {
                if truthy(&self.current_user) {
                    self.current_user = PyValue::None;
                    return Ok(success(true));
                }
                Ok(success(false))
            }
            "get_user_tickets" => self.get_user_tickets(&next()),
            other => Err(no_attribute(&PyValue::Opaque("TicketAPI".into()), other)),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("ticket_queue", self.ticket_queue.clone()),
            ("ticket_counter", self.ticket_counter.clone()),
            ("current_user", self.current_user.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;
    use crate::bfcl::multi_turn::result_text;

    /// Results as bfcl-eval's `TicketAPI` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut api = TicketApi::default();
        let text = PyValue::str;
        call_text(&mut api, "ticket_login", vec![text("ann"), text("pw")]);
        assert_eq!(
            call_text(
                &mut api,
                "create_ticket",
                vec![text("T"), text(""), PyValue::Int(7)]
            ),
            "{\"error\": \"Invalid priority. Priority must be between 1 and 5.\"}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "create_ticket",
                vec![text("T"), text("d"), PyValue::Int(2)]
            ),
            "{\"id\": 1, \"title\": \"T\", \"description\": \"d\", \"status\": \"Open\", \
             \"priority\": 2, \"created_by\": \"ann\"}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "resolve_ticket",
                vec![PyValue::Int(1), text("ok")]
            ),
            "{\"status\": \"Ticket 1 has been resolved successfully.\"}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "resolve_ticket",
                vec![PyValue::Int(1), text("ok")]
            ),
            "{\"error\": \"Ticket with ID 1 is already resolved.\"}"
        );
        assert_eq!(
            call_text(
                &mut api,
                "edit_ticket",
                vec![PyValue::Int(1), PyValue::dict([("owner", text("x"))])]
            ),
            "{\"error\": \"Invalid fields for update: owner\"}"
        );
        assert_eq!(
            call_text(&mut api, "get_user_tickets", vec![text("RESOLVED")]),
            "[{'id': 1, 'title': 'T', 'description': 'd', 'status': 'Resolved', 'priority': 2, \
             'created_by': 'ann', 'resolution': 'ok'}]"
        );
        assert_eq!(
            result_text(
                &api.call("create_ticket", vec![text("T"), text(""), text("high")])
                    .map_err(|e| PyValue::str(format!("{e:?}")))
                    .unwrap_or_else(|e| e)
            ),
            "Raised(\"'<' not supported between instances of 'str' and 'int'\")"
        );
    }
}
