//! Size limits for the values a chat template builds while it renders.
//!
//! minijinja's fuel counts instructions, not bytes, and its output limit (our
//! [`BoundedWriter`](super::template)) sees only what reaches the output: a template that
//! doubles a string with `~` in a short loop, or writes into a `{% set %}…{% endset %}` capture
//! or a macro body, builds gigabytes in a few dozen instructions and aborts the process when the
//! allocator gives up. minijinja has no hook on its operators, so the template is rewritten
//! before it is compiled: every expression that makes a new value (operators, filters, calls,
//! list and map literals) and every `{{ … }}` is wrapped in [`BOUNDED`], a function that measures
//! the value and stops the rendering when
//! - one value is larger than the value limit (the output limit), or
//! - the values made so far add up to more than the total limit ([`TEMPLATE_TOTAL_LIMIT_FACTOR`] times
//!   the value limit), which also bounds the bytes written into captures and macro bodies.
//!
//! `{% set x %}` captures and `{% filter %}` blocks get the same check as a filter on their
//! body. The built-in filters and string methods whose output can be far larger than their
//! input (`replace`, `join`, `indent`, `format`, `pprint`, `tojson`) check the size of their
//! result before making it. Measuring a value stops as soon as it exceeds the limit, so it
//! costs at most the limit's worth of steps, and that much of the total budget.
//!
//! What remains unbounded by bytes: literal text of the template written into a capture in a
//! loop, which the fuel bounds (instructions × the template's length).

use std::cell::RefCell;

use minijinja::machinery::{WhitespaceConfig, ast, parse, parse_expr};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Rest, ValueKind};
use minijinja::{Environment, Error as JinjaError, ErrorKind, State, Value};

/// The function every value-making expression is wrapped in.
pub(super) const BOUNDED: &str = "__agent_rl_bounded";

/// The same check as a filter, for capture blocks.
const BOUNDED_FILTER: &str = "__agent_rl_bounded";

/// The total of all values made during one rendering may reach this many value limits.
pub const TEMPLATE_TOTAL_LIMIT_FACTOR: usize = 16;

/// Bytes counted per element of a list or map (and per nesting level, for indentation).
const ELEMENT_BYTES: usize = 16;

/// The limits and the running total of one rendering on this thread.
#[derive(Debug, Clone)]
struct Budget {
    value_limit: usize,
    total_limit: usize,
    produced: usize,
    /// Why the rendering was stopped, for a clear error (minijinja wraps ours in its context).
    exceeded: Option<String>,
}

thread_local! {
    static BUDGET: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// Sets the limits for the renderings on this thread until dropped (restoring the previous
/// ones, so that renderings may nest).
pub(super) struct BudgetGuard {
    previous: Option<Budget>,
}

impl BudgetGuard {
    /// Starts a rendering whose values may each reach `value_limit` bytes.
    pub(super) fn start(value_limit: usize) -> Self {
        let budget = Budget {
            value_limit,
            total_limit: value_limit.saturating_mul(TEMPLATE_TOTAL_LIMIT_FACTOR),
            produced: 0,
            exceeded: None,
        };
        let previous = BUDGET.with(|cell| cell.borrow_mut().replace(budget));
        Self { previous }
    }

    /// Why the limits stopped the rendering, if they did.
    pub(super) fn exceeded(&self) -> Option<String> {
        BUDGET.with(|cell| cell.borrow().as_ref().and_then(|b| b.exceeded.clone()))
    }
}

impl Drop for BudgetGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        BUDGET.with(|cell| *cell.borrow_mut() = previous);
    }
}

/// The value limit of the rendering on this thread (none outside [`BudgetGuard`]).
fn value_limit() -> Option<usize> {
    BUDGET.with(|cell| cell.borrow().as_ref().map(|b| b.value_limit))
}

fn stop(reason: String) -> JinjaError {
    BUDGET.with(|cell| {
        if let Some(budget) = cell.borrow_mut().as_mut() {
            budget.exceeded.get_or_insert_with(|| reason.clone());
        }
    });
    JinjaError::new(ErrorKind::InvalidOperation, reason)
}

/// The size of `value` as it would be written (string bytes, plus [`ELEMENT_BYTES`] and the
/// nesting depth per element), or `None` once it exceeds `limit`. Lazy iterables count their
/// length only (walking them could consume them).
pub(super) fn measured_size(value: &Value, limit: usize) -> Option<usize> {
    let mut total = 0usize;
    let mut stack = vec![(value.clone(), 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let own = match value.kind() {
            ValueKind::String | ValueKind::Bytes => value.as_str().map_or(0, str::len),
            ValueKind::Seq | ValueKind::Map => {
                let items = value.try_iter().ok()?;
                let mut count = 0usize;
                for item in items {
                    count += 1;
                    if value.kind() == ValueKind::Map {
                        let entry = value.get_item(&item).unwrap_or_default();
                        stack.push((entry, depth + 1));
                    }
                    stack.push((item, depth + 1));
                    if count.saturating_mul(ELEMENT_BYTES) > limit {
                        return None;
                    }
                }
                count.saturating_mul(ELEMENT_BYTES + depth)
            }
            ValueKind::Iterable => value.len().unwrap_or(0).saturating_mul(ELEMENT_BYTES),
            _ => ELEMENT_BYTES,
        };
        total = total.saturating_add(own);
        if total > limit {
            return None;
        }
    }
    Some(total)
}

/// Refuses a result of `bytes` bytes made by `what` when it exceeds the value limit.
fn check_result_size(bytes: usize, what: &str) -> Result<(), JinjaError> {
    match value_limit() {
        Some(limit) if bytes > limit => Err(stop(format!(
            "{what} would make a value of {bytes} bytes, more than the template's limit of \
             {limit} bytes"
        ))),
        _ => Ok(()),
    }
}

/// [`BOUNDED`]: passes `value` through when it and the total so far are within the limits.
fn bounded(value: Value) -> Result<Value, JinjaError> {
    let Some(limit) = value_limit() else {
        return Ok(value);
    };
    let Some(size) = measured_size(&value, limit) else {
        return Err(stop(format!(
            "a value grew past the template's limit of {limit} bytes; the template builds a \
             string or list without bound"
        )));
    };
    let over = BUDGET.with(|cell| {
        let mut cell = cell.borrow_mut();
        let budget = cell.as_mut()?;
        budget.produced = budget.produced.saturating_add(size);
        (budget.produced > budget.total_limit).then_some(budget.total_limit)
    });
    match over {
        Some(total) => Err(stop(format!(
            "the values made while rendering add up to more than {total} bytes; the template \
             builds text without bound"
        ))),
        None => Ok(value),
    }
}

fn str_arg(args: &[Value], index: usize) -> &str {
    args.get(index).and_then(Value::as_str).unwrap_or("")
}

/// The largest number written in a format string (a field width or precision).
fn largest_number(format: &str) -> usize {
    format
        .split(|c: char| !c.is_ascii_digit())
        .filter(|digits| !digits.is_empty())
        .map(|digits| digits.parse::<usize>().unwrap_or(usize::MAX))
        .max()
        .unwrap_or(0)
}

fn sizes(values: &[Value], limit: usize) -> usize {
    values
        .iter()
        .map(|value| measured_size(value, limit).unwrap_or(usize::MAX))
        .fold(0, usize::saturating_add)
}

/// The size of `text.replace(old, new)` (`count` replacements at most when given).
fn replaced_size(text: &str, old: &str, new: &str, count: Option<usize>) -> usize {
    let occurrences = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    let occurrences = count.map_or(occurrences, |count| count.min(occurrences));
    text.len()
        .saturating_add(occurrences.saturating_mul(new.len()))
}

/// Checks the result size of a built-in filter (`args[0]` is the filtered value) before it
/// runs.
fn check_filter(name: &str, args: &[Value]) -> Result<(), JinjaError> {
    let Some(limit) = value_limit() else {
        return Ok(());
    };
    let value = args.first().cloned().unwrap_or_default();
    let positional: Vec<&Value> = args.iter().filter(|arg| !arg.is_kwargs()).collect();
    let keyword = |key: &str| {
        args.iter()
            .filter(|arg| arg.is_kwargs())
            .find_map(|kwargs| kwargs.get_attr(key).ok().filter(|v| !v.is_undefined()))
    };
    let size = match name {
        "replace" => {
            let count = positional.get(3).and_then(|v| v.as_usize());
            replaced_size(str_arg(args, 0), str_arg(args, 1), str_arg(args, 2), count)
        }
        "join" => {
            let joiner = positional.get(1).and_then(|v| v.as_str()).unwrap_or("");
            let items = value.len().unwrap_or(0);
            sizes(&[value], limit).saturating_add(items.saturating_mul(joiner.len()))
        }
        "indent" => {
            let width = positional
                .get(1)
                .map(|v| (*v).clone())
                .or_else(|| keyword("width"));
            let width = width.map_or(4, |w| w.as_usize().unwrap_or_else(|| w.len().unwrap_or(0)));
            let lines = str_arg(args, 0).lines().count() + 1;
            str_arg(args, 0)
                .len()
                .saturating_add(lines.saturating_mul(width))
        }
        "format" => {
            let format = str_arg(args, 0);
            format
                .len()
                .saturating_add(sizes(&args[1.min(args.len())..], limit))
                .saturating_add(largest_number(format))
        }
        "pprint" => sizes(&[value], limit).saturating_mul(2),
        _ => 0,
    };
    check_result_size(size, &format!("the `{name}` filter"))
}

/// Replaces each built-in filter that can multiply its input with one that checks the size of
/// its result first.
fn guard_filters(env: &mut Environment<'static>) {
    use minijinja::filters;
    let originals = [
        ("replace", Value::from_function(filters::replace)),
        ("join", Value::from_function(filters::join)),
        ("indent", Value::from_function(filters::indent)),
        ("format", Value::from_function(filters::format)),
        ("pprint", Value::from_function(filters::pprint)),
    ];
    for (name, original) in originals {
        env.add_filter(name, move |state: &State, args: Rest<Value>| {
            check_filter(name, &args)?;
            original.call(state, &args)
        });
    }
}

/// Checks the result size of a string method (`replace`, `join`, `format`) before it runs.
pub(super) fn check_method(value: &Value, method: &str, args: &[Value]) -> Result<(), JinjaError> {
    let Some(limit) = value_limit() else {
        return Ok(());
    };
    let Some(text) = value.as_str() else {
        return Ok(());
    };
    let size = match method {
        "replace" => {
            let count = args.get(2).and_then(|v| v.as_usize());
            replaced_size(text, str_arg(args, 0), str_arg(args, 1), count)
        }
        "join" => {
            let items = args.first().and_then(Value::len).unwrap_or(0);
            sizes(args, limit).saturating_add(items.saturating_mul(text.len()))
        }
        "format" => text
            .len()
            .saturating_add(sizes(args, limit))
            .saturating_add(largest_number(text)),
        _ => 0,
    };
    check_result_size(size, &format!("`str.{method}`"))
}

/// Checks the size of `tojson`'s result (each nesting level indented by `indent`) before it
/// is made.
pub(super) fn check_tojson(value: &Value, indent: usize) -> Result<(), JinjaError> {
    let Some(limit) = value_limit() else {
        return Ok(());
    };
    let size = measured_size(value, limit)
        .unwrap_or(usize::MAX)
        .saturating_mul(indent.saturating_add(2));
    check_result_size(size, "the `tojson` filter")
}

/// Registers [`BOUNDED`] (function and filter) and the guarded filters on `env`.
pub(super) fn install(env: &mut Environment<'static>) {
    env.add_function(BOUNDED, bounded);
    env.add_filter(BOUNDED_FILTER, bounded);
    guard_filters(env);
}

/// Byte ranges of the expressions to wrap, and the offsets after which a capture gets the
/// bounding filter.
#[derive(Debug, Default)]
struct Rewrites {
    wrap: Vec<(usize, usize)>,
    capture_filters: Vec<usize>,
    filter_block_starts: Vec<usize>,
}

fn span_range<T>(node: &ast::Spanned<T>) -> (usize, usize) {
    let span = node.span();
    (span.start_offset as usize, span.end_offset as usize)
}

/// The node's own span: for most nodes only the tokens the parser read last (a filter's name
/// and arguments, a call's parentheses), for `if` expressions and comparisons one token too
/// early (see `expr_range`); [`expr_range`] widens it with the operands.
fn own_range(expr: &ast::Expr<'_>) -> (usize, usize) {
    match expr {
        ast::Expr::Var(n) => span_range(n),
        ast::Expr::Const(n) => span_range(n),
        ast::Expr::Slice(n) => span_range(n),
        ast::Expr::UnaryOp(n) => span_range(n),
        ast::Expr::BinOp(n) => span_range(n),
        ast::Expr::Compare(n) => span_range(n),
        ast::Expr::IfExpr(n) => span_range(n),
        ast::Expr::Filter(n) => span_range(n),
        ast::Expr::Test(n) => span_range(n),
        ast::Expr::GetAttr(n) => span_range(n),
        ast::Expr::GetItem(n) => span_range(n),
        ast::Expr::Call(n) => span_range(n),
        ast::Expr::List(n) => span_range(n),
        ast::Expr::Map(n) => span_range(n),
    }
}

fn arg_exprs<'x, 'a>(args: &'x [ast::CallArg<'a>]) -> impl Iterator<Item = &'x ast::Expr<'a>> {
    args.iter().map(|arg| match arg {
        ast::CallArg::Pos(e)
        | ast::CallArg::Kwarg(_, e)
        | ast::CallArg::PosSplat(e)
        | ast::CallArg::KwargSplat(e) => e,
    })
}

/// The operands of `expr`.
fn operands<'x, 'a>(expr: &'x ast::Expr<'a>) -> Vec<&'x ast::Expr<'a>> {
    match expr {
        ast::Expr::Var(_) | ast::Expr::Const(_) => Vec::new(),
        ast::Expr::Slice(s) => std::iter::once(&s.expr)
            .chain([&s.start, &s.stop, &s.step].into_iter().flatten())
            .collect(),
        ast::Expr::UnaryOp(u) => vec![&u.expr],
        ast::Expr::BinOp(b) => vec![&b.left, &b.right],
        ast::Expr::Compare(c) => std::iter::once(&c.expr)
            .chain(c.ops.iter().map(|op| &op.expr))
            .collect(),
        ast::Expr::IfExpr(i) => [&i.test_expr, &i.true_expr]
            .into_iter()
            .chain(&i.false_expr)
            .collect(),
        ast::Expr::Filter(f) => f.expr.iter().chain(arg_exprs(&f.args)).collect(),
        ast::Expr::Test(t) => std::iter::once(&t.expr).chain(arg_exprs(&t.args)).collect(),
        ast::Expr::GetAttr(g) => vec![&g.expr],
        ast::Expr::GetItem(g) => vec![&g.expr, &g.subscript_expr],
        ast::Expr::Call(c) => std::iter::once(&c.expr).chain(arg_exprs(&c.args)).collect(),
        ast::Expr::List(l) => l.items.iter().collect(),
        ast::Expr::Map(m) => m.keys.iter().chain(&m.values).collect(),
    }
}

/// The source range of `expr` with all its operands (see [`own_range`]).
fn expr_range(expr: &ast::Expr<'_>) -> (usize, usize) {
    let (own_start, own_end) = own_range(expr);
    // Comparisons (single ones are parsed as `BinOp`) and `if` expressions start their span at
    // the token before them; their first operand says where they start.
    let early_start = matches!(
        expr,
        ast::Expr::Compare(_) | ast::Expr::IfExpr(_) | ast::Expr::BinOp(_)
    );
    let mut range = (if early_start { usize::MAX } else { own_start }, own_end);
    for operand in operands(expr) {
        let (start, end) = expr_range(operand);
        range = (range.0.min(start), range.1.max(end));
    }
    if range.0 == usize::MAX {
        range.0 = own_start;
    }
    range
}

/// Widens `range` over whitespace to the parentheses its text leaves unbalanced (an operand
/// written in parentheses), then checks that it holds one expression.
fn balanced(source: &str, (mut start, mut end): (usize, usize)) -> Option<(usize, usize)> {
    let bytes = source.as_bytes();
    let text = source.get(start..end)?;
    let mut depth = 0i64;
    let mut missing_open = 0i64;
    for byte in text.bytes() {
        match byte {
            b'(' => depth += 1,
            b')' if depth == 0 => missing_open += 1,
            b')' => depth -= 1,
            _ => {}
        }
    }
    while missing_open > 0 {
        while start > 0 && bytes[start - 1].is_ascii_whitespace() {
            start -= 1;
        }
        (start > 0 && bytes[start - 1] == b'(').then_some(())?;
        start -= 1;
        missing_open -= 1;
    }
    while depth > 0 {
        while end < bytes.len() && bytes[end].is_ascii_whitespace() {
            end += 1;
        }
        (end < bytes.len() && bytes[end] == b')').then_some(())?;
        end += 1;
        depth -= 1;
    }
    parse_expr(source.get(start..end)?).ok()?;
    Some((start, end))
}

impl Rewrites {
    fn body(&mut self, stmts: &[ast::Stmt<'_>]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &ast::Stmt<'_>) {
        match stmt {
            ast::Stmt::Template(t) => self.body(&t.children),
            ast::Stmt::EmitExpr(e) => self.expr(&e.expr, true),
            ast::Stmt::EmitRaw(_) | ast::Stmt::Continue(_) | ast::Stmt::Break(_) => {}
            ast::Stmt::ForLoop(f) => {
                self.expr(&f.iter, false);
                if let Some(filter) = &f.filter_expr {
                    self.expr(filter, false);
                }
                self.body(&f.body);
                self.body(&f.else_body);
            }
            ast::Stmt::IfCond(i) => {
                self.expr(&i.expr, false);
                self.body(&i.true_body);
                self.body(&i.false_body);
            }
            ast::Stmt::WithBlock(w) => {
                for (_, value) in &w.assignments {
                    self.expr(value, false);
                }
                self.body(&w.body);
            }
            ast::Stmt::Set(s) => self.expr(&s.expr, false),
            ast::Stmt::SetBlock(s) => {
                self.capture_filters.push(expr_range(&s.target).1);
                if let Some(filter) = &s.filter {
                    self.filter_args(filter);
                }
                self.body(&s.body);
            }
            ast::Stmt::AutoEscape(a) => {
                self.expr(&a.enabled, false);
                self.body(&a.body);
            }
            ast::Stmt::FilterBlock(f) => {
                self.filter_block_starts.push(expr_range(&f.filter).0);
                self.filter_args(&f.filter);
                self.body(&f.body);
            }
            ast::Stmt::Block(b) => self.body(&b.body),
            ast::Stmt::Import(i) => self.expr(&i.expr, false),
            ast::Stmt::FromImport(i) => self.expr(&i.expr, false),
            ast::Stmt::Extends(e) => self.expr(&e.name, false),
            ast::Stmt::Include(i) => self.expr(&i.name, false),
            ast::Stmt::Macro(m) => {
                for default in &m.defaults {
                    self.expr(default, false);
                }
                self.body(&m.body);
            }
            ast::Stmt::CallBlock(c) => {
                self.call_parts(&c.call);
                self.body(&c.macro_decl.body);
            }
            ast::Stmt::Do(d) => self.call_parts(&d.call),
        }
    }

    fn call_parts(&mut self, call: &ast::Call<'_>) {
        self.expr(&call.expr, false);
        self.args(&call.args);
    }

    fn args(&mut self, args: &[ast::CallArg<'_>]) {
        for arg in args {
            match arg {
                ast::CallArg::Pos(e)
                | ast::CallArg::Kwarg(_, e)
                | ast::CallArg::PosSplat(e)
                | ast::CallArg::KwargSplat(e) => self.expr(e, false),
            }
        }
    }

    /// The arguments of a block's filter chain (`{% filter a(x)|b %}`), whose innermost filter
    /// has no value.
    fn filter_args(&mut self, filter: &ast::Expr<'_>) {
        if let ast::Expr::Filter(f) = filter {
            if let Some(inner) = &f.expr {
                self.filter_args(inner);
            }
            self.args(&f.args);
        } else {
            self.expr(filter, false);
        }
    }

    /// Walks `expr`, wrapping it when it makes a new value (or when `always`, for `{{ … }}`).
    fn expr(&mut self, expr: &ast::Expr<'_>, always: bool) {
        let makes_value = match expr {
            ast::Expr::Var(_) | ast::Expr::Const(_) => false,
            ast::Expr::Slice(s) => {
                self.expr(&s.expr, false);
                for part in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(part, false);
                }
                false
            }
            ast::Expr::UnaryOp(u) => {
                self.expr(&u.expr, false);
                false
            }
            ast::Expr::BinOp(b) => {
                self.expr(&b.left, false);
                self.expr(&b.right, false);
                true
            }
            ast::Expr::Compare(c) => {
                self.expr(&c.expr, false);
                for op in &c.ops {
                    self.expr(&op.expr, false);
                }
                false
            }
            ast::Expr::IfExpr(i) => {
                self.expr(&i.test_expr, false);
                self.expr(&i.true_expr, false);
                if let Some(other) = &i.false_expr {
                    self.expr(other, false);
                }
                false
            }
            ast::Expr::Filter(f) => {
                if let Some(inner) = &f.expr {
                    self.expr(inner, false);
                }
                self.args(&f.args);
                f.expr.is_some()
            }
            ast::Expr::Test(t) => {
                self.expr(&t.expr, false);
                self.args(&t.args);
                false
            }
            ast::Expr::GetAttr(g) => {
                self.expr(&g.expr, false);
                false
            }
            ast::Expr::GetItem(g) => {
                self.expr(&g.expr, false);
                self.expr(&g.subscript_expr, false);
                false
            }
            ast::Expr::Call(c) => {
                self.call_parts(c);
                true
            }
            ast::Expr::List(l) => {
                for item in &l.items {
                    self.expr(item, false);
                }
                true
            }
            ast::Expr::Map(m) => {
                for (key, value) in m.keys.iter().zip(&m.values) {
                    self.expr(key, false);
                    self.expr(value, false);
                }
                true
            }
        };
        if makes_value || always {
            self.wrap.push(expr_range(expr));
        }
    }
}

/// `source` with every value-making expression wrapped in [`BOUNDED`] and every capture block
/// filtered through it (see the module docs), or `None` when the source does not parse (the
/// caller then compiles the source unchanged and reports minijinja's own error).
pub(super) fn bounded_source(source: &str) -> Option<String> {
    rewrite(source).map(|(rewritten, _)| rewritten)
}

/// [`bounded_source`], with the number of expressions that could not be wrapped.
pub(super) fn rewrite(source: &str) -> Option<(String, usize)> {
    let whitespace = WhitespaceConfig {
        keep_trailing_newline: false,
        lstrip_blocks: true,
        trim_blocks: true,
    };
    let tree = parse(source, "chat", SyntaxConfig, whitespace).ok()?;
    let mut rewrites = Rewrites::default();
    rewrites.stmt(&tree);
    // Each wrapped range must be one expression by itself, or the rewrite would change its
    // meaning: a range that is not (parentheses and string literals can confuse `balanced`)
    // is left unwrapped.
    let wrap: Vec<(usize, usize)> = rewrites
        .wrap
        .iter()
        .filter_map(|&range| balanced(source, range))
        .collect();
    let skipped = rewrites.wrap.len() - wrap.len();
    if skipped > 0 {
        tracing::debug!(
            skipped,
            "chat template: expressions left without a size check"
        );
    }
    // Insertions: (offset, order, text). At one offset closing parentheses come first (the
    // inner range's before the outer's), then openings (the outer range's before the inner's).
    let mut inserts: Vec<(usize, u8, usize, String)> = Vec::new();
    for &(start, end) in &wrap {
        inserts.push((end, 0, usize::MAX - (end - start), ")".into()));
        inserts.push((start, 1, usize::MAX - (end - start), format!("{BOUNDED}(")));
    }
    for &offset in &rewrites.capture_filters {
        inserts.push((offset, 0, 0, format!("|{BOUNDED_FILTER}")));
    }
    for &offset in &rewrites.filter_block_starts {
        inserts.push((offset, 1, 0, format!("{BOUNDED_FILTER}|")));
    }
    inserts.sort_by(|a, b| {
        (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| match a.1 {
            0 => b.2.cmp(&a.2),
            _ => a.2.cmp(&b.2),
        })
    });
    let mut out = String::with_capacity(source.len() + inserts.len() * 24);
    let mut at = 0;
    for (offset, _, _, text) in inserts {
        out.push_str(source.get(at..offset)?);
        out.push_str(&text);
        at = offset;
    }
    out.push_str(&source[at..]);
    Some((out, skipped))
}
