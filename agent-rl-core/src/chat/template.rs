//! Chat templates rendered with minijinja the way transformers renders them with Jinja2.

use minijinja::value::{Kwargs, Value as JinjaValue};
use minijinja::{Environment, Error as JinjaError, ErrorKind};
use serde_json::{Map, Value};

use super::python_json::to_python_json;
use super::template_bounds::{self, BudgetGuard};
use crate::conversation::{Message, ToolSpec};
use crate::error::CoreError;

/// Instructions one rendering may execute ([`ChatTemplate::with_limits`] changes it): far above
/// what real templates use (Qwen2.5's template spends about a hundred per message), low enough
/// that a template looping without end fails within seconds.
pub const DEFAULT_TEMPLATE_FUEL: u64 = 20_000_000;

/// Bytes one rendering may produce ([`ChatTemplate::with_limits`] changes it): far above any
/// context window, far below what exhausts memory.
pub const DEFAULT_TEMPLATE_OUTPUT_BYTES: usize = 64 << 20;

/// A compiled HF chat template.
///
/// Matches transformers' environment: `trim_blocks` and `lstrip_blocks` on, loop controls,
/// Python string/dict methods (`.strip()`, `.startswith()`, `.items()`, …), a `tojson` that
/// writes exactly what `json.dumps` writes, and the `raise_exception` / `strftime_now` helpers.
///
/// Rendering is bounded: a template that runs longer than its fuel
/// ([`DEFAULT_TEMPLATE_FUEL`] instructions), writes more than [`DEFAULT_TEMPLATE_OUTPUT_BYTES`],
/// makes a single value (a string, a list) larger than that, or makes values adding up to
/// [`TEMPLATE_TOTAL_LIMIT_FACTOR`](crate::TEMPLATE_TOTAL_LIMIT_FACTOR) times that (a string doubled in a loop, text
/// written into a capture) fails with an error naming the template instead of hanging or
/// exhausting memory. The value limits work by wrapping the template's value-making
/// expressions in a size check before compiling it (`template_bounds.rs` says how).
pub struct ChatTemplate {
    env: Environment<'static>,
    source_name: String,
    source: String,
    max_output_bytes: usize,
}

/// An in-memory writer that refuses to grow past `limit` bytes.
struct BoundedWriter {
    bytes: Vec<u8>,
    limit: usize,
    overflowed: bool,
}

impl std::io::Write for BoundedWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + data.len() > self.limit {
            self.overflowed = true;
            return Err(std::io::Error::other("chat template output limit reached"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source_name", &self.source_name)
            .finish()
    }
}

fn tojson(value: JinjaValue, kwargs: Kwargs) -> Result<String, JinjaError> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    template_bounds::check_tojson(&value, indent.unwrap_or(0))?;
    let json = serde_json::to_value(&value)
        .map_err(|err| JinjaError::new(ErrorKind::InvalidOperation, format!("tojson: {err}")))?;
    Ok(to_python_json(&json, indent, sort_keys.unwrap_or(false)))
}

fn raise_exception(message: String) -> Result<String, JinjaError> {
    Err(JinjaError::new(ErrorKind::InvalidOperation, message))
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// `strftime_now(format)` for the directives templates use (%Y %m %d %b %B %H %M %S %%), UTC.
fn strftime_now(format: String) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let of_day = secs.rem_euclid(86_400);
    let name = MONTHS[(month - 1) as usize];
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Y') => out.push_str(&year.to_string()),
            Some('m') => out.push_str(&format!("{month:02}")),
            Some('d') => out.push_str(&format!("{day:02}")),
            Some('b') => out.push_str(&name[..3]),
            Some('B') => out.push_str(name),
            Some('H') => out.push_str(&format!("{:02}", of_day / 3600)),
            Some('M') => out.push_str(&format!("{:02}", of_day % 3600 / 60)),
            Some('S') => out.push_str(&format!("{:02}", of_day % 60)),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Rewrites HF's `{% generation %}…{% endgeneration %}` blocks (transformers' assistant-mask
/// extension; they render their body unchanged) as `{% if true %}…{% endif %}`, keeping the
/// whitespace-control dashes.
fn rewrite_generation_blocks(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(start) = rest.find("{%") {
        out.push_str(&rest[..start]);
        let tag = &rest[start..];
        let Some(end) = tag.find("%}") else {
            out.push_str(tag);
            return out;
        };
        let inner = &tag[2..end];
        let left = if inner.starts_with('-') { "-" } else { "" };
        let right = if inner.ends_with('-') { "-" } else { "" };
        match inner.trim_matches('-').trim() {
            "generation" => out.push_str(&format!("{{%{left} if true {right}%}}")),
            "endgeneration" => out.push_str(&format!("{{%{left} endif {right}%}}")),
            _ => out.push_str(&tag[..end + 2]),
        }
        rest = &tag[end + 2..];
    }
    out.push_str(rest);
    out
}

impl ChatTemplate {
    /// Compiles `source`; `source_name` is used in error messages (e.g. the file path).
    ///
    /// # Errors
    /// [`CoreError::ChatTemplate`] with minijinja's message when the template does not compile.
    pub fn new(source: &str, source_name: impl Into<String>) -> Result<Self, CoreError> {
        Self::compile(source, source_name.into(), true)
    }

    /// Compiles `source`, with the value size limits when `bounds` (always, outside tests).
    fn compile(source: &str, source_name: String, bounds: bool) -> Result<Self, CoreError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        env.set_unknown_method_callback(|state, value, method, args| {
            template_bounds::check_method(value, method, args)?;
            minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
        });
        env.add_filter("tojson", tojson);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.set_fuel(Some(DEFAULT_TEMPLATE_FUEL));
        template_bounds::install(&mut env);
        let plain = rewrite_generation_blocks(source);
        let bounded = bounds
            .then(|| template_bounds::bounded_source(&plain))
            .flatten()
            .filter(|bounded| env.add_template_owned("chat", bounded.clone()).is_ok());
        if bounded.is_none() {
            // minijinja's own error for a template that does not compile; a template that
            // compiles but cannot be rewritten keeps only the fuel and output limits.
            env.add_template_owned("chat", plain)
                .map_err(|err| CoreError::ChatTemplate {
                    source_name: source_name.clone(),
                    reason: format!("{err:#}"),
                })?;
            if bounds {
                tracing::warn!(
                    template = %source_name,
                    "chat template: value size limits not applied; fuel and output limits only"
                );
            }
        }
        Ok(Self {
            env,
            source_name,
            source: source.to_owned(),
            max_output_bytes: DEFAULT_TEMPLATE_OUTPUT_BYTES,
        })
    }

    /// The same template with other rendering limits: `fuel` instructions and
    /// `max_output_bytes` of output per rendering.
    #[must_use]
    pub fn with_limits(mut self, fuel: u64, max_output_bytes: usize) -> Self {
        self.env.set_fuel(Some(fuel));
        self.max_output_bytes = max_output_bytes;
        self
    }

    /// The template's Jinja source, as given to [`ChatTemplate::new`].
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Renders a conversation as `apply_chat_template(messages, tools=tools or None,
    /// add_generation_prompt=…, tokenize=False, **extra)` does.
    ///
    /// `extra` holds the other template variables (`bos_token`, `eos_token`, …).
    ///
    /// # Errors
    /// [`CoreError::ChatTemplate`] when rendering fails (including `raise_exception`), runs out
    /// of fuel or exceeds the output limit.
    pub fn render(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
        add_generation_prompt: bool,
        extra: &Map<String, Value>,
    ) -> Result<String, CoreError> {
        let fail = |reason: String| CoreError::ChatTemplate {
            source_name: self.source_name.clone(),
            reason,
        };
        let mut context = extra.clone();
        let messages = serde_json::to_value(messages).map_err(|err| fail(err.to_string()))?;
        context.insert("messages".into(), messages);
        let tools = if tools.is_empty() {
            Value::Null
        } else {
            Value::Array(tools.iter().map(ToolSpec::to_json).collect())
        };
        context.insert("tools".into(), tools);
        context.insert(
            "add_generation_prompt".into(),
            Value::Bool(add_generation_prompt),
        );
        let template = self
            .env
            .get_template("chat")
            .map_err(|err| fail(format!("{err:#}")))?;
        let mut out = BoundedWriter {
            bytes: Vec::new(),
            limit: self.max_output_bytes,
            overflowed: false,
        };
        let budget = BudgetGuard::start(self.max_output_bytes);
        let rendered = template.render_captured_to(JinjaValue::from_serialize(&context), &mut out);
        if let Some(reason) = budget.exceeded() {
            return Err(fail(reason));
        }
        drop(budget);
        if out.overflowed {
            return Err(fail(format!(
                "the rendering exceeds {} bytes; the template writes without bound",
                self.max_output_bytes
            )));
        }
        match rendered {
            Ok(_) => String::from_utf8(out.bytes).map_err(|err| fail(err.to_string())),
            Err(err) if err.kind() == ErrorKind::OutOfFuel => Err(fail(format!(
                "rendering did not finish within its fuel of instructions; the template loops \
                 without bound or far too long ({err})"
            ))),
            Err(err) => Err(fail(format!("{err:#}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_blocks_render_their_body() {
        let source = "a{%- generation %} b {% endgeneration -%} c{% if x %}{% endif %}";
        assert_eq!(
            rewrite_generation_blocks(source),
            "a{%- if true %} b {% endif -%} c{% if x %}{% endif %}"
        );
        let template = ChatTemplate::new(source, "inline").expect("compiles");
        assert_eq!(
            template
                .render(&[], &[], false, &Map::new())
                .expect("renders"),
            "a b c"
        );
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn raise_exception_is_a_template_error() {
        let template = ChatTemplate::new("{{ raise_exception('no system role') }}", "inline")
            .expect("compiles");
        let err = template
            .render(&[], &[], false, &Map::new())
            .expect_err("raises");
        assert!(err.to_string().contains("no system role"), "{err}");
    }

    #[test]
    fn endless_loops_run_out_of_fuel() {
        let source = "{% for a in range(100000) %}{% for b in range(100000) %}\
                      {% for c in range(100000) %}{% endfor %}{% endfor %}{% endfor %}";
        let template = ChatTemplate::new(source, "loops.jinja").expect("compiles");
        let started = std::time::Instant::now();
        let err = template
            .render(&[], &[], false, &Map::new())
            .expect_err("out of fuel");
        let text = err.to_string();
        assert!(
            text.contains("loops.jinja") && text.contains("fuel"),
            "{text}"
        );
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }

    #[test]
    fn unbounded_output_is_refused() {
        // 1 MB per iteration, well within fuel: only the output limit stops it.
        let source = "{% set s = 'x' * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}";
        let template = ChatTemplate::new(source, "big.jinja")
            .expect("compiles")
            .with_limits(1_000_000, 1 << 20);
        let err = template
            .render(&[], &[], false, &Map::new())
            .expect_err("too much output");
        let text = err.to_string();
        assert!(
            text.contains("big.jinja") && text.contains("exceeds"),
            "{text}"
        );
    }

    /// Renders `source` with a 1 MiB value limit (16 MiB in total).
    fn render_small(source: &str) -> Result<String, CoreError> {
        ChatTemplate::new(source, "grow.jinja")
            .expect("compiles")
            .with_limits(DEFAULT_TEMPLATE_FUEL, 1 << 20)
            .render(&[], &[], false, &Map::new())
    }

    fn assert_stopped(source: &str) {
        let err = render_small(source).expect_err("unbounded growth is stopped");
        let text = err.to_string();
        assert!(
            text.contains("grow.jinja") && text.contains("bytes"),
            "{source}: {text}"
        );
    }

    #[test]
    fn string_doubled_in_a_loop_is_stopped() {
        // 2^28 bytes built while the output stays a few bytes long.
        assert_stopped(
            "{% set ns = namespace(s='x') %}{% for i in range(28) %}\
             {% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
        );
        assert_stopped(
            "{% set ns = namespace(s='x') %}{% for i in range(28) %}\
             {% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}",
        );
        let unrolled = format!(
            "{{% set s = 'x' %}}{}{{{{ s|length }}}}",
            "{% set s = s ~ s %}".repeat(28)
        );
        assert_stopped(&unrolled);
    }

    #[test]
    fn growth_through_macros_lists_and_captures_is_stopped() {
        assert_stopped(
            "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% else %}{{ s|length }}\
             {% endif %}{% endmacro %}{{ d('x', 28)|length }}",
        );
        assert_stopped(
            "{% set ns = namespace(l=['x']) %}{% for i in range(28) %}\
             {% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
        );
        assert_stopped(
            "{% set ns = namespace(l=['x']) %}{% for i in range(60) %}\
             {% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ (ns.l|string)|length }}",
        );
        assert_stopped(
            "{% set s = 'x' * 1000 %}{% set big %}{% for i in range(50000) %}{{ s }}\
             {% endfor %}{% endset %}{{ big|length }}",
        );
        assert_stopped(
            "{% set s = 'x' * 1000 %}{% filter upper %}{% for i in range(50000) %}{{ s }}\
             {% endfor %}{% endfilter %}",
        );
    }

    #[test]
    fn multiplying_filters_and_methods_are_checked_first() {
        assert_stopped("{{ ('x' * 20000)|replace('', 'y' * 20000)|length }}");
        assert_stopped("{{ ('x' * 20000).replace('x', 'y' * 20000)|length }}");
        assert_stopped("{{ ('a\n' * 1000)|indent(width=1000000)|length }}");
        assert_stopped("{{ ('x' * 1000)|join('y' * 100000)|length }}");
        assert_stopped("{{ ('y' * 100000).join('x' * 1000)|length }}");
        assert_stopped("{{ '%2000000000s'|format('x')|length }}");
        assert_stopped("{{ ['x' * 1000] * 1000000 }}");
        assert_stopped("{{ {'a': 'x' * 10000}|tojson(indent=1000)|length }}");
    }

    #[test]
    fn limits_leave_ordinary_templates_unchanged() {
        let source = "{%- set ns = namespace(text='', n=0) -%}\
            {% macro tag(name, body='') -%}<{{ name }}>{{ body }}</{{ name }}>{%- endmacro %}\
            {% for m in messages if m.role != 'skip' %}\
            {%- set ns.text = ns.text ~ m.content|trim ~ '|' -%}\
            {%- set ns.n = ns.n + 1 -%}\
            {{ tag(m.role, m.content.replace('a', 'b')) }}{{ loop.index }}/{{ loop.length }}\
            {{ loop.cycle('x', 'y') }}{% if not loop.last %}, {% endif %}\
            {% endfor %}\
            {% set pairs = [(1, 'one'), (2, 'two')] %}{% for k, v in pairs %}{{ k }}={{ v }};{% endfor %}\
            {% set captured | upper %}captured {{ ns.n }}{% endset %}{{ captured }}\
            {% filter lower %}LOWER {{ ns.text[:-1] }}{% endfilter %}\
            {% macro wrap() %}[{{ caller() }}]{% endmacro %}{% call wrap() %}in {{ ns.n }}{% endcall %}\
            {{ {'b': [1, 2.5, none, true], 'a': 'q\"'}|tojson(indent=2) }}\
            {{ tools|tojson if tools is not none else 'no tools' }}\
            {{ [3, 1, 2]|sort|join(',') }} {{ 'a,b'.split(',')|length }} {{ '%s-%d'|format('x', 3) }}\
            {{ '  x  '.strip() ~ ('y' * 3) }}{{ messages|map(attribute='role')|join('+') }}\
            {{ (messages|selectattr('role', 'equalto', 'user')|list|length) > 0 }}\
            {{ 'x'|indent(2) }}{{ range(3)|list }}{{ messages[-1]['content'][::-1] }}\
            {%- if add_generation_prompt %}<start>{% endif %}";
        let messages = [
            Message::system("sys a"),
            Message::user("hello a"),
            Message::assistant("answer a"),
        ];
        let plain = ChatTemplate::compile(source, "plain".into(), false).expect("compiles");
        let bounded = ChatTemplate::new(source, "bounded").expect("compiles");
        let (rewritten, skipped) = template_bounds::rewrite(source).expect("parses");
        assert_eq!(skipped, 0, "every expression is wrapped: {rewritten}");
        for generation in [false, true] {
            let want = plain
                .render(&messages, &[], generation, &Map::new())
                .expect("renders");
            let got = bounded
                .render(&messages, &[], generation, &Map::new())
                .expect("renders");
            assert_eq!(got, want);
        }
    }

    #[test]
    fn bad_template_names_its_source() {
        let err = ChatTemplate::new("{% for %}", "my/template.jinja").expect_err("syntax");
        assert!(err.to_string().contains("my/template.jinja"), "{err}");
    }
}
