//! A light syntax check of Java/JavaScript argument source text.
//!
//! The official decoder parses prompting output with tree-sitter and fails the entry on any
//! syntax error. A full grammar is out of scope; this check rejects the errors models actually
//! make in argument values: free text (`John Doe`: two operands in a row), stray characters
//! (`employee:1234`, `#`, backslashes) and unbalanced brackets or quotes.

const KEYWORDS: [&str; 8] = [
    "new",
    "instanceof",
    "typeof",
    "in",
    "of",
    "await",
    "void",
    "delete",
];

#[derive(Clone, Copy, PartialEq)]
enum Token {
    Operand,
    Keyword,
    Other,
}

/// True when `text` could be one Java (or, with `javascript`, JavaScript) expression.
pub fn is_plausible_expression(text: &str, javascript: bool) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let mut index = 0;
    let mut depth: Vec<char> = Vec::new();
    let mut previous = Token::Other;
    let mut ternary = 0usize;
    while index < chars.len() {
        let c = chars[index];
        let token = if c.is_whitespace() {
            index += 1;
            continue;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = index;
            while index < chars.len()
                && (chars[index].is_alphanumeric() || matches!(chars[index], '_' | '$' | '.'))
            {
                index += 1;
            }
            let word: String = chars[start..index].iter().collect();
            // a number has at most one decimal point (`1.2.3` is not an expression)
            if c.is_ascii_digit() && word.matches('.').count() > 1 {
                return false;
            }
            if KEYWORDS.contains(&word.as_str()) {
                Token::Keyword
            } else {
                Token::Operand
            }
        } else if c == '"' || c == '\'' || (javascript && c == '`') {
            index += 1;
            while index < chars.len() && chars[index] != c {
                index += if chars[index] == '\\' { 2 } else { 1 };
            }
            if index >= chars.len() {
                return false;
            }
            index += 1;
            Token::Operand
        } else {
            index += 1;
            match c {
                '(' | '[' | '{' => depth.push(c),
                ')' | ']' | '}' => {
                    let open = match c {
                        ')' => '(',
                        ']' => '[',
                        _ => '{',
                    };
                    if depth.pop() != Some(open) {
                        return false;
                    }
                    previous = Token::Operand;
                    continue;
                }
                '?' => ternary += 1,
                ':' if javascript && depth.last() == Some(&'{') => {}
                ':' if ternary > 0 => ternary -= 1,
                ':' if chars.get(index) == Some(&':') => index += 1,
                '.' | ',' | ';' | '=' | '+' | '-' | '*' | '/' | '%' | '!' | '<' | '>' | '&'
                | '|' | '^' | '~' | '@' => {}
                _ => return false,
            }
            Token::Other
        };
        if token == Token::Operand && previous == Token::Operand {
            return false;
        }
        previous = token;
    }
    depth.is_empty()
}
