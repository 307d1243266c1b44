//! A small parser for the Python expressions BFCL's prompting format uses:
//! `[func(a=1, b='x'), mod.fn(c=[1, 2], d={'k': None})]`.
//!
//! It parses literals (strings with prefixes and implicit concatenation, ints, floats, `True`,
//! `False`, `None`, `...`), names, dotted names, calls, lists, tuples, dicts, sets, subscripts,
//! unary and binary operators, into a syntax tree ([`PyExpr`]); `resolve.rs` turns the tree into
//! calls the way BFCL's decoder does.

/// A parsed Python expression.
#[derive(Debug, Clone, PartialEq)]
pub enum PyExpr {
    /// A string literal.
    Str(String),
    /// An integer literal.
    Int(i128),
    /// A float literal.
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `...`.
    Ellipsis,
    /// A bare identifier.
    Name(String),
    /// `value.attr`.
    Attribute(Box<PyExpr>, String),
    /// A unary operator (`-`, `+`, `~`, `not`) and its operand.
    Unary(String, Box<PyExpr>),
    /// A binary operator and its operands.
    Binary(String, Box<PyExpr>, Box<PyExpr>),
    /// `[a, b]`.
    List(Vec<PyExpr>),
    /// `(a, b)`.
    Tuple(Vec<PyExpr>),
    /// `{k: v}`.
    Dict(Vec<(PyExpr, PyExpr)>),
    /// `{a, b}`.
    Set(Vec<PyExpr>),
    /// `value[index]`, kept as source text.
    Subscript(String),
    /// A call: callee, positional arguments, keyword arguments, and its source text.
    Call {
        /// The callee.
        func: Box<PyExpr>,
        /// Positional arguments.
        args: Vec<PyExpr>,
        /// Keyword arguments in order.
        keywords: Vec<(String, PyExpr)>,
        /// The call's source text.
        source: String,
    },
}

/// Deepest nesting of brackets, calls and unary operators accepted: Python's own parser stops at
/// 200 parentheses, and a bound keeps the recursion far from any thread's stack limit.
pub const MAX_NESTING_DEPTH: usize = 100;

/// Longest expression text accepted, in characters (a model answer is far shorter).
pub const MAX_EXPRESSION_CHARS: usize = 1 << 20;

/// Parses `text` as one Python expression.
///
/// # Errors
/// A message saying where the syntax is wrong, or that the text is longer than
/// [`MAX_EXPRESSION_CHARS`] or nests deeper than [`MAX_NESTING_DEPTH`].
pub fn parse_expression(text: &str) -> Result<PyExpr, String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_EXPRESSION_CHARS {
        return Err(format!(
            "expression of {} characters is longer than the limit of {MAX_EXPRESSION_CHARS}",
            chars.len()
        ));
    }
    let mut parser = Parser {
        chars,
        pos: 0,
        depth: 0,
    };
    let expr = parser.expression()?;
    parser.skip_ws();
    if parser.pos != parser.chars.len() {
        return Err(format!("unexpected text at offset {}", parser.pos));
    }
    Ok(expr)
}

/// One module-level assignment `NAME = expression` of a Python source file: the name, the
/// 1-based line it starts on, and the parsed expression.
pub type Assignment = (String, usize, PyExpr);

/// Parses a Python module made only of `NAME = expression` statements (blank lines and `#`
/// comments between them allowed), as a data file of literal constants is written.
///
/// # Errors
/// A message naming the line where the text is not such a statement.
pub fn parse_assignments(text: &str) -> Result<Vec<Assignment>, String> {
    let mut parser = Parser {
        chars: text.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let line_of = |parser: &Parser, pos: usize| {
        1 + parser.chars[..pos.min(parser.chars.len())]
            .iter()
            .filter(|c| **c == '\n')
            .count()
    };
    let mut assignments = Vec::new();
    loop {
        parser.skip_ws();
        if parser.peek() == Some('#') {
            while parser.peek().is_some_and(|c| c != '\n') {
                parser.pos += 1;
            }
            continue;
        }
        if parser.peek().is_none() {
            return Ok(assignments);
        }
        let start = parser.pos;
        let line = line_of(&parser, start);
        let name = parser
            .identifier()
            .ok_or_else(|| format!("line {line}: expected `NAME = value`"))?;
        parser.skip_ws();
        if parser.peek() != Some('=') || parser.chars.get(parser.pos + 1) == Some(&'=') {
            return Err(format!("line {line}: expected `=` after `{name}`"));
        }
        parser.pos += 1;
        let value = parser
            .expression()
            .map_err(|reason| format!("line {line} (`{name}`): {reason}"))?;
        // The expression parser may have skipped the line break already: the next statement
        // must start on a later line.
        parser.skip_ws();
        let mut back = parser.pos;
        while back > start && parser.chars[back - 1].is_whitespace() {
            back -= 1;
        }
        let next_line = parser.chars[back..parser.pos].contains(&'\n');
        if !matches!(parser.peek(), None | Some('#')) && !next_line {
            let at = line_of(&parser, parser.pos);
            return Err(format!(
                "line {at}: unexpected text after the value of `{name}`"
            ));
        }
        assignments.push((name, line, value));
    }
}

/// Positional and keyword arguments of a call.
type CallArguments = (Vec<PyExpr>, Vec<(String, PyExpr)>);

pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    /// Nesting levels open now; every recursion passes through [`Parser::unary`].
    depth: usize,
}

const BINARY_LEVELS: [&[&str]; 2] = [&["+", "-"], &["*", "/", "//", "%", "@"]];

impl Parser {
    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    pub(super) fn starts_with(&self, token: &str) -> bool {
        token
            .chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.pos + i) == Some(&c))
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.starts_with(token) {
            self.pos += token.chars().count();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<(), String> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(format!("expected {token:?} at offset {}", self.pos))
        }
    }

    fn expression(&mut self) -> Result<PyExpr, String> {
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<PyExpr, String> {
        let operand = |parser: &mut Self| {
            if level + 1 < BINARY_LEVELS.len() {
                parser.binary(level + 1)
            } else {
                parser.unary()
            }
        };
        let mut left = operand(self)?;
        loop {
            self.skip_ws();
            if self.starts_with("**") || (level == 1 && self.starts_with("*=")) {
                return Ok(left);
            }
            let found = BINARY_LEVELS[level]
                .iter()
                .filter(|op| self.starts_with(op))
                .max_by_key(|op| op.len())
                .copied();
            let Some(op) = found else { return Ok(left) };
            self.pos += op.len();
            let right = operand(self)?;
            left = PyExpr::Binary(op.to_owned(), Box::new(left), Box::new(right));
        }
    }

    /// A unary expression, one nesting level deeper: every recursive path of the grammar
    /// (brackets, call arguments, subscripts, unary operators, `**`) comes through here.
    fn unary(&mut self) -> Result<PyExpr, String> {
        if self.depth >= MAX_NESTING_DEPTH {
            return Err(format!(
                "nested deeper than {MAX_NESTING_DEPTH} levels at offset {}",
                self.pos
            ));
        }
        self.depth += 1;
        let expr = self.unary_operand();
        self.depth -= 1;
        expr
    }

    fn unary_operand(&mut self) -> Result<PyExpr, String> {
        self.skip_ws();
        for op in ["-", "+", "~"] {
            if self.starts_with(op) {
                self.pos += 1;
                let operand = self.unary()?;
                return Ok(PyExpr::Unary(op.to_owned(), Box::new(operand)));
            }
        }
        let base = self.postfix()?;
        if self.eat("**") {
            let exponent = self.unary()?;
            return Ok(PyExpr::Binary(
                "**".into(),
                Box::new(base),
                Box::new(exponent),
            ));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<PyExpr, String> {
        self.skip_ws();
        let start = self.pos;
        let mut expr = self.atom()?;
        loop {
            self.skip_ws();
            match self.peek() {
                Some('.') if !self.starts_with("...") => {
                    self.pos += 1;
                    self.skip_ws();
                    let name = self.identifier().ok_or("expected an attribute name")?;
                    expr = PyExpr::Attribute(Box::new(expr), name);
                }
                Some('(') => {
                    self.pos += 1;
                    let (args, keywords) = self.call_arguments()?;
                    let source: String = self.chars[start..self.pos].iter().collect();
                    expr = PyExpr::Call {
                        func: Box::new(expr),
                        args,
                        keywords,
                        source,
                    };
                }
                Some('[') => {
                    self.pos += 1;
                    self.expression()?;
                    while self.eat(":") || self.eat(",") {
                        self.skip_ws();
                        if !self.starts_with("]") {
                            self.expression()?;
                        }
                    }
                    self.expect("]")?;
                    expr = PyExpr::Subscript(self.chars[start..self.pos].iter().collect());
                }
                _ => return Ok(expr),
            }
        }
    }

    fn call_arguments(&mut self) -> Result<CallArguments, String> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        loop {
            if self.eat(")") {
                return Ok((args, keywords));
            }
            self.skip_ws();
            let save = self.pos;
            if self.eat("**") {
                // `**mapping`: Python's keyword with no name, which JSON spells "null"
                keywords.retain(|(existing, _)| existing != "null");
                keywords.push(("null".to_owned(), self.expression()?));
            } else if self.eat("*") {
                // `*iterable` is positional, and positional arguments are dropped
                args.push(self.expression()?);
            } else if let Some(name) = self.identifier() {
                self.skip_ws();
                if self.peek() == Some('=') && self.chars.get(self.pos + 1) != Some(&'=') {
                    self.pos += 1;
                    // a repeated keyword keeps its first position and its last value, as
                    // the official decoder's dict does
                    let value = self.expression()?;
                    match keywords.iter_mut().find(|(existing, _)| existing == &name) {
                        Some(slot) => slot.1 = value,
                        None => keywords.push((name, value)),
                    }
                } else {
                    self.pos = save;
                    args.push(self.expression()?);
                }
            } else {
                args.push(self.expression()?);
            }
            if !self.eat(",") {
                self.expect(")")?;
                return Ok((args, keywords));
            }
        }
    }

    fn identifier(&mut self) -> Option<String> {
        let first = self.peek()?;
        if !(first.is_alphabetic() || first == '_') {
            return None;
        }
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        Some(self.chars[start..self.pos].iter().collect())
    }

    fn sequence(&mut self, close: &str) -> Result<(Vec<PyExpr>, bool), String> {
        let mut items = Vec::new();
        let mut trailing_comma = false;
        loop {
            if self.eat(close) {
                return Ok((items, trailing_comma));
            }
            items.push(self.expression()?);
            trailing_comma = self.eat(",");
            if !trailing_comma {
                self.expect(close)?;
                return Ok((items, false));
            }
        }
    }

    fn atom(&mut self) -> Result<PyExpr, String> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err("unexpected end of input".into());
        };
        if self.starts_with("...") {
            self.pos += 3;
            return Ok(PyExpr::Ellipsis);
        }
        match c {
            '[' => {
                self.pos += 1;
                Ok(PyExpr::List(self.sequence("]")?.0))
            }
            '(' => {
                self.pos += 1;
                let (items, trailing_comma) = self.sequence(")")?;
                if items.len() == 1 && !trailing_comma {
                    Ok(items.into_iter().next().unwrap_or(PyExpr::None))
                } else {
                    Ok(PyExpr::Tuple(items))
                }
            }
            '{' => {
                self.pos += 1;
                self.dict_or_set()
            }
            '0'..='9' | '.' => self.number(),
            '"' | '\'' => self.strings(),
            _ => {
                let save = self.pos;
                let name = self
                    .identifier()
                    .ok_or_else(|| format!("unexpected {c:?} at offset {}", self.pos))?;
                if self.peek().is_some_and(|q| q == '"' || q == '\'')
                    && name.chars().all(|p| "rRbBuUfF".contains(p))
                    && name.len() <= 2
                {
                    self.pos = save;
                    return self.strings();
                }
                Ok(match name.as_str() {
                    "True" => PyExpr::Bool(true),
                    "False" => PyExpr::Bool(false),
                    "None" => PyExpr::None,
                    "not" => PyExpr::Unary("not".into(), Box::new(self.unary()?)),
                    _ => PyExpr::Name(name),
                })
            }
        }
    }

    fn dict_or_set(&mut self) -> Result<PyExpr, String> {
        if self.eat("}") {
            return Ok(PyExpr::Dict(Vec::new()));
        }
        let first = self.expression()?;
        if self.eat(":") {
            let mut pairs = vec![(first, self.expression()?)];
            while self.eat(",") {
                if self.eat("}") {
                    return Ok(PyExpr::Dict(pairs));
                }
                let key = self.expression()?;
                self.expect(":")?;
                pairs.push((key, self.expression()?));
            }
            self.expect("}")?;
            Ok(PyExpr::Dict(pairs))
        } else {
            let mut items = vec![first];
            if self.eat(",") {
                items.extend(self.sequence("}")?.0);
            } else {
                self.expect("}")?;
            }
            Ok(PyExpr::Set(items))
        }
    }
}
