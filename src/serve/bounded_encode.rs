//! Tokenizing untrusted text without spending more than the context on it.
//!
//! A tokenizer's encoding keeps ids, offsets and the token strings: a body of a few megabytes
//! costs hundreds of megabytes and seconds to encode whole, only to be refused for not fitting
//! the context. [`encode_within`] first counts a long text's tokens piece by piece and stops
//! as soon as they clearly exceed the limit, so work and memory stay proportional to the
//! context, not to the body.

use agent_rl_core::ChatTokenizer;

use super::error::ApiError;

/// Bytes encoded at a time while counting a long text's tokens.
const PIECE_BYTES: usize = 16 * 1024;

/// Tokens a cut between two pieces may add to their count (a cut at whitespace splits what
/// the tokenizer's pre-tokenizer splits anyway, up to a merged run of whitespace or a word).
const CUT_SLACK_TOKENS: usize = 8;

/// Texts up to this many bytes per allowed token are encoded whole without counting first
/// (their encoding is bounded by the context anyway).
const DIRECT_BYTES_PER_TOKEN: usize = 4;

/// The ids of `text`, or a 400 naming `param` when it has more than `max_tokens` tokens.
///
/// # Errors
/// [`ApiError::invalid`] naming `param` when the text is too long for `max_tokens` or the
/// tokenizer fails.
pub(crate) fn encode_within(
    tokenizer: &ChatTokenizer,
    text: &str,
    max_tokens: usize,
    param: &str,
) -> Result<Vec<u32>, ApiError> {
    let encode = |piece: &str| {
        tokenizer
            .encode(piece)
            .map_err(|err| ApiError::invalid(param, err.to_string()))
    };
    bounded(encode, text, max_tokens, param)
}

/// Refuses the texts that one prompt will hold (message contents, before the chat template
/// copies them) as soon as their tokens, counted piece by piece, clearly exceed `max_tokens`.
///
/// # Errors
/// [`ApiError::invalid`] naming `param` when they cannot fit or the tokenizer fails.
pub(crate) fn check_within(
    tokenizer: &ChatTokenizer,
    texts: &[&str],
    max_tokens: usize,
    param: &str,
) -> Result<(), ApiError> {
    let encode = |piece: &str| {
        tokenizer
            .encode(piece)
            .map_err(|err| ApiError::invalid(param, err.to_string()))
    };
    count_within(encode, texts, max_tokens, param)
}

/// 400 naming `param`: the prompt exceeds the context of `max_tokens`.
fn too_long(param: &str, max_tokens: usize) -> ApiError {
    ApiError::invalid(
        param,
        format!(
            "the prompt has more than {max_tokens} tokens; this model's context is \
             {max_tokens} tokens"
        ),
    )
}

/// Counts the tokens of long `texts` piece by piece, stopping with a 400 as soon as they
/// clearly exceed `max_tokens` (short ones are left to the exact encoding).
fn count_within(
    mut encode: impl FnMut(&str) -> Result<Vec<u32>, ApiError>,
    texts: &[&str],
    max_tokens: usize,
    param: &str,
) -> Result<(), ApiError> {
    let bytes: usize = texts.iter().map(|text| text.len()).sum();
    if bytes <= PIECE_BYTES.max(max_tokens.saturating_mul(DIRECT_BYTES_PER_TOKEN)) {
        return Ok(());
    }
    let mut counted = 0;
    let all = texts.iter().flat_map(|text| pieces(text, PIECE_BYTES));
    for (cuts, piece) in all.enumerate() {
        counted += encode(piece)?.len();
        if counted.saturating_sub(cuts * CUT_SLACK_TOKENS) > max_tokens {
            return Err(too_long(param, max_tokens));
        }
    }
    Ok(())
}

/// [`encode_within`] over any `encode`.
fn bounded(
    mut encode: impl FnMut(&str) -> Result<Vec<u32>, ApiError>,
    text: &str,
    max_tokens: usize,
    param: &str,
) -> Result<Vec<u32>, ApiError> {
    count_within(&mut encode, &[text], max_tokens, param)?;
    let ids = encode(text)?;
    if ids.len() > max_tokens {
        return Err(too_long(param, max_tokens));
    }
    Ok(ids)
}

/// `text` cut into pieces of at most about `bytes` bytes, each cut just before whitespace when
/// the piece holds any (else at a character boundary).
fn pieces(text: &str, bytes: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= bytes {
            return Some(std::mem::take(&mut rest));
        }
        let mut end = bytes;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let cut = rest[..end]
            .rfind(char::is_whitespace)
            .filter(|&at| at > 0)
            .unwrap_or(end);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_text_and_cut_before_whitespace() {
        let text = "ab cd é fgh ".repeat(300);
        let cut: Vec<&str> = pieces(&text, 50).collect();
        assert_eq!(cut.concat(), text);
        assert!(cut.iter().all(|piece| piece.len() <= 50));
        assert!(cut[1..].iter().all(|piece| piece.starts_with(' ')));
        let word = "é".repeat(100);
        let cut: Vec<&str> = pieces(&word, 51).collect();
        assert_eq!(cut.concat(), word);
        assert!(cut.iter().all(|piece| piece.len() <= 51));
        assert_eq!(pieces("", 8).count(), 0);
    }

    #[test]
    fn long_texts_are_refused_after_a_few_pieces_and_short_ones_encode_whole() {
        let tokenizer = agent_rl_test_support::tiny_tokenizer().unwrap();
        let short = "hello there ".repeat(10);
        assert_eq!(
            encode_within(&tokenizer, &short, 1000, "prompt").unwrap(),
            tokenizer.encode(&short).unwrap()
        );
        let whole = tokenizer.encode(&short).unwrap().len();
        let error = encode_within(&tokenizer, &short, whole - 1, "prompt").unwrap_err();
        assert_eq!(error.param.as_deref(), Some("prompt"));
        assert!(error.message.contains("context"), "{}", error.message);
        // Pieces agree with the whole encoding on a text that just fits.
        let long = "word ".repeat(20_000);
        let exact = tokenizer.encode(&long).unwrap().len();
        assert_eq!(
            encode_within(&tokenizer, &long, exact, "prompt")
                .unwrap()
                .len(),
            exact
        );
        assert!(encode_within(&tokenizer, &long, exact / 2, "prompt").is_err());
        // A body of megabytes is refused after encoding one piece of it.
        let huge = "w1 w2 w3 ".repeat(500_000);
        let mut encoded_bytes = 0;
        let counting = |piece: &str| {
            encoded_bytes += piece.len();
            Ok(tokenizer.encode(piece).unwrap())
        };
        let error = bounded(counting, &huge, 2048, "messages").unwrap_err();
        assert_eq!(error.param.as_deref(), Some("messages"));
        assert!(
            encoded_bytes <= PIECE_BYTES,
            "{encoded_bytes} bytes encoded"
        );
    }
}
