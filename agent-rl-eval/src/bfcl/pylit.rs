//! Python literal lexing for [`pyparse`](super::pyparse): numbers (decimal, hex, octal, binary,
//! floats, underscores) and strings (prefixes, escapes, triple quotes, implicit concatenation).

use super::pyparse::{Parser, PyExpr};

impl Parser {
    pub(super) fn number(&mut self) -> Result<PyExpr, String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            || (self.peek().is_some_and(|c| c == '+' || c == '-')
                && self.pos > start
                && matches!(self.chars[self.pos - 1], 'e' | 'E')
                && !self.chars[start..self.pos]
                    .iter()
                    .any(|c| matches!(c, 'x' | 'X')))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        let lower = text.to_ascii_lowercase();
        let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
            .into_iter()
            .find(|(p, _)| lower.starts_with(p));
        if let Some((prefix, radix)) = radix {
            return i128::from_str_radix(&lower[prefix.len()..], radix)
                .map(PyExpr::Int)
                .map_err(|_| format!("invalid number {text:?}"));
        }
        if !lower.contains(['.', 'e']) {
            if lower.len() > 1 && lower.starts_with('0') && lower.chars().any(|c| c != '0') {
                return Err(format!("invalid number {text:?}"));
            }
            return lower
                .parse::<i128>()
                .map(PyExpr::Int)
                .map_err(|_| format!("invalid number {text:?}"));
        }
        lower
            .parse::<f64>()
            .map(PyExpr::Float)
            .map_err(|_| format!("invalid number {text:?}"))
    }

    pub(super) fn strings(&mut self) -> Result<PyExpr, String> {
        let mut joined = String::new();
        loop {
            self.skip_ws();
            let save = self.pos;
            let mut raw = false;
            while let Some(c) = self.peek().filter(|c| "rRbBuUfF".contains(*c)) {
                if c == 'f' || c == 'F' {
                    return Err("f-strings are not literals".into());
                }
                raw |= c == 'r' || c == 'R';
                self.pos += 1;
            }
            match self.peek() {
                Some(quote @ ('"' | '\'')) => joined.push_str(&self.string_body(quote, raw)?),
                _ => {
                    self.pos = save;
                    return Ok(PyExpr::Str(joined));
                }
            }
        }
    }

    fn string_body(&mut self, quote: char, raw: bool) -> Result<String, String> {
        let triple: String = [quote; 3].iter().collect();
        let is_triple = self.starts_with(&triple);
        self.pos += if is_triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err("unterminated string".into());
            };
            if is_triple && self.starts_with(&triple) {
                self.pos += 3;
                return Ok(out);
            }
            if !is_triple && c == quote {
                self.pos += 1;
                return Ok(out);
            }
            if !is_triple && c == '\n' {
                return Err("newline in string".into());
            }
            self.pos += 1;
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(next) = self.peek() else {
                return Err("unterminated string".into());
            };
            self.pos += 1;
            if raw {
                out.push('\\');
                out.push(next);
                continue;
            }
            match next {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\n' => {}
                '\\' | '\'' | '"' => out.push(next),
                'u' | 'x' => {
                    let width = if next == 'u' { 4 } else { 2 };
                    let hex: String = self.chars.iter().skip(self.pos).take(width).collect();
                    let code =
                        u32::from_str_radix(&hex, 16).map_err(|_| "bad escape".to_owned())?;
                    out.push(char::from_u32(code).ok_or("bad escape")?);
                    self.pos += width;
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }
}
