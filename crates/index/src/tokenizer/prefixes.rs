//! Edge prefixes: each token's first 1..=n characters, at the token's position, for
//! search-as-you-type on titles and headings.

use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Emits every prefix (1..=`max_chars` characters) of each token, at the token's position.
#[derive(Clone)]
pub struct EdgePrefixes {
    pub max_chars: usize,
}

impl TokenFilter for EdgePrefixes {
    type Tokenizer<T: Tokenizer> = EdgePrefixTokenizer<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> EdgePrefixTokenizer<T> {
        EdgePrefixTokenizer {
            inner,
            max_chars: self.max_chars,
        }
    }
}

#[derive(Clone)]
pub struct EdgePrefixTokenizer<T> {
    inner: T,
    max_chars: usize,
}

impl<T: Tokenizer> Tokenizer for EdgePrefixTokenizer<T> {
    type TokenStream<'a> = EdgePrefixStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        EdgePrefixStream {
            tail: self.inner.token_stream(text),
            max_chars: self.max_chars,
            full: String::new(),
            ends: Vec::new(),
            token: Token::default(),
        }
    }
}

pub struct EdgePrefixStream<S> {
    tail: S,
    max_chars: usize,
    full: String,
    /// Byte ends of the prefixes still to emit, longest first (popped from the back).
    ends: Vec<usize>,
    token: Token,
}

impl<S: TokenStream> TokenStream for EdgePrefixStream<S> {
    fn advance(&mut self) -> bool {
        loop {
            if let Some(end) = self.ends.pop() {
                self.token.text.clear();
                self.token.text.push_str(&self.full[..end]);
                return true;
            }
            if !self.tail.advance() {
                return false;
            }
            let t = self.tail.token();
            self.full.clear();
            self.full.push_str(&t.text);
            self.token = t.clone();
            self.ends = self
                .full
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take(self.max_chars)
                .collect();
            self.ends.reverse();
        }
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}
