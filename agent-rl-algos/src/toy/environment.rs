//! The toy environment: executes the toy tools deterministically.

use agent_rl_core::{
    Action, CoreError, Environment, EnvironmentFactory, Message, StepOutcome, Task, ToolCall,
};
use serde_json::Value;

const WEATHER: [&str; 5] = ["sunny", "rainy", "cloudy", "windy", "snowy"];
const TIME_OF_DAY: [&str; 6] = ["dawn", "morning", "noon", "afternoon", "evening", "night"];

/// A small stable hash (FNV-1a), so results do not depend on the std hasher.
pub(super) fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The observation the toy environment returns for `call` in an episode with `salt`: the
/// result, or an `error: …` text for an unknown tool or bad arguments.
///
/// Weather and time depend on the city *and* the episode's salt (think: the day the question is
/// asked), which the model never sees: it cannot memorise answers and must call the tool.
pub fn execute_toy_call(call: &ToolCall, salt: u64) -> String {
    let args = call.arguments_object();
    let text = |name: &str| args.and_then(|a| a.get(name)).and_then(Value::as_str);
    let int = |name: &str| args.and_then(|a| a.get(name)).and_then(Value::as_i64);
    match call.name.as_str() {
        "get_weather" => match text("city") {
            Some(city) => {
                WEATHER[((stable_hash(city) ^ salt) % WEATHER.len() as u64) as usize].to_owned()
            }
            None => "error: get_weather needs a string `city`".to_owned(),
        },
        "get_time" => match text("city") {
            Some(city) => TIME_OF_DAY
                [((stable_hash(city) ^ salt) % TIME_OF_DAY.len() as u64) as usize]
                .to_owned(),
            None => "error: get_time needs a string `city`".to_owned(),
        },
        "add" => match (int("a"), int("b")) {
            (Some(a), Some(b)) => (a.saturating_add(b)).to_string(),
            _ => "error: add needs integers `a` and `b`".to_owned(),
        },
        other => format!("error: unknown tool `{other}`"),
    }
}

/// The salt of a toy task (`data["salt"]`, 0 when absent).
pub fn toy_salt(task: &Task) -> u64 {
    task.data.get("salt").and_then(Value::as_u64).unwrap_or(0)
}

/// Executes tool calls; a text reply ends the episode (it is the final answer).
#[derive(Debug, Clone, Copy, Default)]
pub struct ToyEnvironment {
    salt: u64,
}

impl Environment for ToyEnvironment {
    fn reset(&mut self, task: &Task) -> Result<Vec<Message>, CoreError> {
        self.salt = toy_salt(task);
        Ok(task.messages.clone())
    }

    fn step(&mut self, action: &Action) -> Result<StepOutcome, CoreError> {
        Ok(match action {
            Action::ToolCall(call) => StepOutcome {
                observation: Message::tool(call.name.clone(), execute_toy_call(call, self.salt)),
                done: false,
                reward: None,
                info: Value::Null,
            },
            Action::Respond(text) => StepOutcome {
                observation: Message::assistant(text.clone()),
                done: true,
                reward: None,
                info: Value::Null,
            },
        })
    }
}

/// A factory of fresh [`ToyEnvironment`]s (for `GrpoTrainerBuilder::with_environment`).
pub fn toy_environments() -> impl EnvironmentFactory {
    || Box::new(ToyEnvironment::default()) as Box<dyn Environment>
}
