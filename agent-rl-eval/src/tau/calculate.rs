//! The `calculate` tool shared by both domains: Python arithmetic (`+ - * / // **`, unary signs,
//! parentheses) on int and float literals, then `str(round(float(result), 2))`.

use serde_json::Value;

use super::py::{PyNum, Raised, iterate, type_name};
use super::pyjson::{float_repr, round2};

const ALLOWED: &str = "0123456789+-*/(). ";
const SYNTAX_ERROR: &str = "invalid syntax (<string>, line 1)";

/// Evaluates `expression` as the original tool does and returns its observation string.
pub fn calculate(expression: &str) -> String {
    if !expression.chars().all(|ch| ALLOWED.contains(ch)) {
        return "Error: invalid characters in expression".to_owned();
    }
    match Parser::new(expression).parse() {
        Ok(value) => float_repr(round2(value.as_f64())),
        Err(message) => format!("Error: {message}"),
    }
}

/// The `calculate` tool on its JSON argument: [`calculate`] for a string, otherwise the error
/// the original raises.
pub fn calculate_tool(expression: &Value) -> Result<String, Raised> {
    if let Value::String(text) = expression {
        return Ok(calculate(text));
    }
    // A list or dict is iterated (`char in ALLOWED` is a substring test), then `eval` refuses it.
    for element in iterate(expression)? {
        match element {
            Value::String(text) if ALLOWED.contains(text.as_str()) => {}
            Value::String(_) => return Ok("Error: invalid characters in expression".into()),
            other => {
                return Err(format!(
                    "'in <string>' requires string as left operand, not {}",
                    type_name(&other)
                ));
            }
        }
    }
    Err("eval() arg 1 must be a string, bytes or code object".into())
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(PyNum),
    Plus,
    Minus,
    Star,
    Slash,
    FloorDiv,
    Power,
    Open,
    Close,
}

/// Deepest chain of unary operators CPython 3.11's parser accepts before a `MemoryError`
/// (whose text is empty); also keeps our recursion far from the stack limit.
const MAX_UNARY_DEPTH: usize = 2993;
/// CPython's tokenizer limit on nested parentheses.
const MAX_PAREN_DEPTH: usize = 200;

struct Parser {
    tokens: Result<Vec<Token>, String>,
    position: usize,
    depth: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut index = 0;
    while index < chars.len() {
        if chars[index] == ' ' {
            index += 1;
            continue;
        }
        if let Some((token, width)) = operator(chars[index], chars.get(index + 1).copied()) {
            tokens.push(token);
            index += width;
            continue;
        }
        let start = index;
        while index < chars.len() && (chars[index].is_ascii_digit() || chars[index] == '.') {
            index += 1;
        }
        let literal: String = chars[start..index].iter().collect();
        tokens.push(Token::Number(number_literal(&literal)?));
    }
    Ok(tokens)
}

/// The operator or bracket starting with `ch` (followed by `next`) and its width in characters.
fn operator(ch: char, next: Option<char>) -> Option<(Token, usize)> {
    Some(match (ch, next) {
        ('*', Some('*')) => (Token::Power, 2),
        ('/', Some('/')) => (Token::FloorDiv, 2),
        ('+', _) => (Token::Plus, 1),
        ('-', _) => (Token::Minus, 1),
        ('*', _) => (Token::Star, 1),
        ('/', _) => (Token::Slash, 1),
        ('(', _) => (Token::Open, 1),
        (')', _) => (Token::Close, 1),
        _ => return None,
    })
}

fn number_literal(literal: &str) -> Result<PyNum, String> {
    if literal == "." || literal.matches('.').count() > 1 {
        return Err(SYNTAX_ERROR.to_owned());
    }
    if literal.contains('.') {
        return literal
            .parse::<f64>()
            .map(PyNum::Float)
            .map_err(|_| SYNTAX_ERROR.to_owned());
    }
    if literal.len() > 1 && literal.starts_with('0') && literal.chars().any(|ch| ch != '0') {
        return Err(
            "leading zeros in decimal integer literals are not permitted; use an 0o \
                    prefix for octal integers (<string>, line 1)"
                .to_owned(),
        );
    }
    match literal.parse::<i64>() {
        Ok(int) => Ok(PyNum::Int(int)),
        Err(_) => literal
            .parse::<f64>()
            .map(PyNum::Float)
            .map_err(|_| SYNTAX_ERROR.to_owned()),
    }
}

impl Parser {
    fn new(text: &str) -> Self {
        Self {
            tokens: tokenize(text),
            position: 0,
            depth: 0,
        }
    }

    fn parse(&mut self) -> Result<PyNum, String> {
        let tokens = self.tokens.as_ref().map_err(Clone::clone)?;
        let count = tokens.len();
        if count == 0 {
            return Err("invalid syntax (<string>, line 0)".to_owned());
        }
        check_brackets(tokens)?;
        let value = self.expr()?;
        if self.position != count {
            return Err(SYNTAX_ERROR.to_owned());
        }
        Ok(value)
    }

    fn peek(&self) -> Option<Token> {
        self.tokens
            .as_ref()
            .ok()
            .and_then(|tokens| tokens.get(self.position).cloned())
    }

    fn expr(&mut self) -> Result<PyNum, String> {
        let mut value = self.term()?;
        while let Some(token @ (Token::Plus | Token::Minus)) = self.peek() {
            self.position += 1;
            let right = self.term()?;
            value = if token == Token::Plus {
                value.plus(right)
            } else {
                value.minus(right)
            };
        }
        Ok(value)
    }

    fn term(&mut self) -> Result<PyNum, String> {
        let mut value = self.factor()?;
        while let Some(token @ (Token::Star | Token::Slash | Token::FloorDiv)) = self.peek() {
            self.position += 1;
            let right = self.factor()?;
            value = match token {
                Token::Star => value.times(right),
                Token::Slash => divide(value, right)?,
                _ => floor_divide(value, right)?,
            };
        }
        Ok(value)
    }

    fn factor(&mut self) -> Result<PyNum, String> {
        self.depth += 1;
        if self.depth > MAX_UNARY_DEPTH + 1 {
            return Err(String::new());
        }
        let value = self.unary();
        self.depth -= 1;
        value
    }

    fn unary(&mut self) -> Result<PyNum, String> {
        match self.peek() {
            Some(Token::Plus) => {
                self.position += 1;
                self.factor()
            }
            Some(Token::Minus) => {
                self.position += 1;
                Ok(self.factor()?.negated())
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<PyNum, String> {
        let base = self.atom()?;
        if self.peek() == Some(Token::Open) {
            // `2(3)` parses as a call; calling a number fails at run time.
            self.position += 1;
            if self.peek() != Some(Token::Close) {
                self.expr()?;
            }
            if self.peek() != Some(Token::Close) {
                return Err(SYNTAX_ERROR.to_owned());
            }
            let kind = if matches!(base, PyNum::Int(_)) {
                "int"
            } else {
                "float"
            };
            return Err(format!("'{kind}' object is not callable"));
        }
        if self.peek() == Some(Token::Power) {
            self.position += 1;
            let exponent = self.factor()?;
            return power(base, exponent);
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<PyNum, String> {
        match self.peek() {
            Some(Token::Number(value)) => {
                self.position += 1;
                Ok(value)
            }
            Some(Token::Open) => {
                self.position += 1;
                if self.peek() == Some(Token::Close) {
                    return Err(
                        "float() argument must be a string or a real number, not 'tuple'"
                            .to_owned(),
                    );
                }
                let value = self.expr()?;
                if self.peek() != Some(Token::Close) {
                    return Err(SYNTAX_ERROR.to_owned());
                }
                self.position += 1;
                Ok(value)
            }
            _ => Err(SYNTAX_ERROR.to_owned()),
        }
    }
}

/// The tokenizer's bracket errors, which Python reports before any syntax error.
fn check_brackets(tokens: &[Token]) -> Result<(), String> {
    let mut depth = 0usize;
    for token in tokens {
        match token {
            Token::Open if depth == MAX_PAREN_DEPTH => {
                return Err("too many nested parentheses (<string>, line 1)".to_owned());
            }
            Token::Open => depth += 1,
            Token::Close if depth == 0 => {
                return Err("unmatched ')' (<string>, line 1)".to_owned());
            }
            Token::Close => depth -= 1,
            _ => {}
        }
    }
    if depth > 0 {
        return Err("'(' was never closed (<string>, line 1)".to_owned());
    }
    Ok(())
}

fn divide(left: PyNum, right: PyNum) -> Result<PyNum, String> {
    if right.as_f64() == 0.0 {
        return Err(match (left, right) {
            (PyNum::Int(_), PyNum::Int(_)) => "division by zero",
            _ => "float division by zero",
        }
        .to_owned());
    }
    Ok(PyNum::Float(left.as_f64() / right.as_f64()))
}

fn floor_divide(left: PyNum, right: PyNum) -> Result<PyNum, String> {
    match (left, right) {
        (PyNum::Int(_), PyNum::Int(0)) => Err("integer division or modulo by zero".to_owned()),
        (PyNum::Int(a), PyNum::Int(b)) => {
            let quotient = a.wrapping_div(b);
            let inexact = a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0));
            Ok(PyNum::Int(quotient - i64::from(inexact)))
        }
        _ if right.as_f64() == 0.0 => Err("float floor division by zero".to_owned()),
        _ => Ok(PyNum::Float((left.as_f64() / right.as_f64()).floor())),
    }
}

fn power(base: PyNum, exponent: PyNum) -> Result<PyNum, String> {
    if base.as_f64() == 0.0 && exponent.as_f64() < 0.0 {
        return Err("0.0 cannot be raised to a negative power".to_owned());
    }
    if let (PyNum::Int(b), PyNum::Int(e)) = (base, exponent)
        && e >= 0
        && let Some(value) = u32::try_from(e).ok().and_then(|e| b.checked_pow(e))
    {
        return Ok(PyNum::Int(value));
    }
    if base.as_f64() < 0.0 && exponent.as_f64().fract() != 0.0 {
        return Err("float() argument must be a string or a real number, not 'complex'".to_owned());
    }
    Ok(PyNum::Float(base.as_f64().powf(exponent.as_f64())))
}

#[cfg(test)]
mod tests {
    use super::calculate;

    #[test]
    fn evaluates_like_python() {
        assert_eq!(calculate("3131.1 + 4777.75 + 367.38"), "8276.23");
        assert_eq!(calculate("135.24 - 153.23"), "-17.99");
        assert_eq!(calculate("2 ** 3"), "8.0");
        assert_eq!(calculate("-2 ** 2"), "-4.0");
        assert_eq!(calculate("7 // 2"), "3.0");
        assert_eq!(calculate("-7 // 2"), "-4.0");
        assert_eq!(calculate("10 ** 16"), "1e+16");
        assert_eq!(calculate("1 / 0"), "Error: division by zero");
        assert_eq!(
            calculate("2 + x"),
            "Error: invalid characters in expression"
        );
        assert_eq!(calculate("1 +"), "Error: invalid syntax (<string>, line 1)");
        assert_eq!(calculate(" "), "Error: invalid syntax (<string>, line 0)");
        assert_eq!(
            calculate("((1)"),
            "Error: '(' was never closed (<string>, line 1)"
        );
        assert_eq!(calculate("(1))"), "Error: unmatched ')' (<string>, line 1)");
        assert_eq!(calculate("1(2)"), "Error: 'int' object is not callable");
        let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(calculate(&nested(200)), "1.0");
        assert_eq!(
            calculate(&nested(201)),
            "Error: too many nested parentheses (<string>, line 1)"
        );
        assert_eq!(calculate(&format!("{}1", "-".repeat(2993))), "-1.0");
        assert_eq!(calculate(&format!("{}1", "-".repeat(2994))), "Error: ");
    }
}
