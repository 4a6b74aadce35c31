//! Tokenizers: words for BM25, and word prefixes for symbol search.
//!
//! Words are runs of letters and digits (lower-cased here, then folded to ASCII where a
//! letter has an ASCII form; words of 64 bytes or more are skipped), except in scripts written without spaces (Chinese,
//! Japanese kana, Thai, Lao, Khmer, Myanmar) where each character is a token (in Thai, Lao,
//! Khmer and Myanmar, a letter with the marks written on it: see [`unspaced_end`]); tantivy turns a
//! multi-token query word into a phrase query, so `知识库` still matches as a sequence.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

mod prefixes;
mod scripts;
mod stopwords;
pub use prefixes::EdgePrefixes;
use scripts::{HANGUL_STEM, is_unspaced_script, unspaced_end, without_article};
pub use scripts::{hebrew_bare, is_hangul, is_written_on, least_letters};
pub use scripts::{is_vietnamese, is_vietnamese_function_syllable};
pub use stopwords::{LanguageGuess, Languages, is_stopword};

use tantivy::tokenizer::{AsciiFoldingFilter, TextAnalyzer, Token, TokenStream, Tokenizer};

pub const WORDS: &str = "scholia_words";
/// Words of note bodies: like [`WORDS`], and counts the bytes tantivy's indexing threads have
/// consumed, so the producer can hold back instead of queueing the whole vault in memory.
pub const BODY: &str = "scholia_body";
pub const PREFIXES: &str = "scholia_prefixes";
/// Longest prefix indexed for symbol search; longer query words are cut to this.
pub const MAX_PREFIX_CHARS: usize = 20;

pub fn register(manager: &tantivy::tokenizer::TokenizerManager, body_consumed: Arc<AtomicU64>) {
    manager.register(WORDS, words());
    manager.register(
        BODY,
        TextAnalyzer::builder(WordTokenizer {
            consumed: Some(body_consumed),
        })
        .filter(AsciiFoldingFilter)
        .build(),
    );
    manager.register(
        PREFIXES,
        TextAnalyzer::builder(WordTokenizer::default())
            .filter(AsciiFoldingFilter)
            .filter(EdgePrefixes {
                max_chars: MAX_PREFIX_CHARS,
            })
            .build(),
    );
}

pub fn words() -> TextAnalyzer {
    TextAnalyzer::builder(WordTokenizer::default())
        .filter(AsciiFoldingFilter)
        .build()
}

/// The normalised words of `text`, as the index sees them.
pub fn tokens(text: &str) -> Vec<String> {
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(t) = stream.next() {
        out.push(t.text.clone());
    }
    out
}

/// The words of `text` that can carry meaning, for weighing and comparing notes: its tokens,
/// except that in scripts written without spaces (where each character is a token) adjacent
/// characters are paired, since a single Thai letter or Han character says little and a pair
/// usually makes a word or most of one. In a Vietnamese text ([`is_vietnamese`]), where a word
/// is most often two syllables written apart, each two syllables with only spaces between are
/// a term too, after the second (`ghi chú` → `ghi`, `chu`, `ghi chu`), unless one is a
/// function word ([`is_vietnamese_function_syllable`]). A pair is searched as a
/// two-token phrase (see [`phrase`]).
pub fn terms(text: &str) -> Vec<String> {
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    // The previous single-character token of an unspaced script and where it ended.
    let mut prev: Option<(String, usize)> = None;
    let mut run = 0;
    // In Vietnamese, the previous syllable (letters only) and where it ended.
    let syllables = is_vietnamese(text);
    let mut syllable: Option<(String, usize)> = None;
    while let Some(t) = stream.next() {
        if !is_unspaced(&t.text) {
            if run == 1
                && let Some((p, _)) = prev.take()
            {
                out.push(p);
            }
            prev = None;
            run = 0;
            out.push(t.text.clone());
            if syllables {
                let pairs = t.text.chars().all(char::is_alphabetic)
                    && !is_vietnamese_function_syllable(&text[t.offset_from..t.offset_to].to_lowercase());
                if pairs
                    && let Some((last, end)) = &syllable
                    && text[*end..t.offset_from].chars().all(|c| c == ' ')
                {
                    out.push(format!("{last} {}", t.text));
                }
                syllable = pairs.then(|| (t.text.clone(), t.offset_to));
            }
            continue;
        }
        syllable = None;
        let joined = prev
            .as_ref()
            .is_some_and(|(_, end)| text[*end..t.offset_from].chars().all(is_unspaced_script));
        if joined {
            let (p, _) = prev.as_ref().expect("joined");
            out.push(format!("{p}{}", t.text));
            run += 1;
        } else {
            if run == 1
                && let Some((p, _)) = prev.take()
            {
                out.push(p);
            }
            run = 1;
        }
        prev = Some((t.text.clone(), t.offset_to));
    }
    if run == 1
        && let Some((p, _)) = prev
    {
        out.push(p);
    }
    out
}

/// Characters a word is cut to for comparing notes: a cheap stemmer for every language
/// (`einführung`, `einführungen` → `einfu`; Russian and Arabic inflections alike). Measured by
/// hidden-link recall@10 (`cargo bench --bench related -- --all`): whole words 0.639 mean,
/// four characters 0.653, five 0.658, six 0.647.
pub const STEM_CHARS: usize = 5;
/// The [`terms`] of `text` that can carry meaning ([`is_term`]) with each word cut to
/// [`STEM_CHARS`] (pairs of unspaced characters stay as they are): what notes are compared by
/// (`stems` in the index).
pub fn stems(text: &str) -> Vec<String> {
    let mut joined = String::new();
    push_stems(text, &mut joined);
    joined.split_whitespace().map(str::to_string).collect()
}

/// Katakana characters in a row that are a stem of their own besides their pairs: a
/// Japanese note writes its borrowed words in katakana (`プロパティ`, `リストビュー`), and their
/// pairs (`プロ`, `ロパ`, `パテ`) are in many other words. Hidden-link recall on obsidian-help
/// ja (both draws): 0.667 -> 0.671 with words of three characters or more, 0.667 with four.
const KATAKANA_WORD: usize = 3;
/// Longer runs are no word (a note of ten thousand `ア` is not one stem of 30 KB).
const KATAKANA_LONGEST: usize = 24;

fn is_katakana(c: char) -> bool {
    matches!(c as u32, 0x30A1..=0x30FA | 0x30FC)
}

/// [`stems`] appended to `out`, each followed by a space: one pass and no allocation per word,
/// since every note is stemmed when it is indexed. The function words of the language the
/// text is written in ([`LanguageGuess`]) are taken out again once the whole text is seen. In
/// Vietnamese ([`is_vietnamese`]), where a word is most often two syllables written apart,
/// each two adjacent syllables are a stem too (`ghi_chu`): hidden-link recall on obsidian-help
/// vi 0.632 -> 0.650 (0.631 with the pairs alone, without the syllables).
pub fn push_stems(text: &str, out: &mut String) {
    let mut guess = LanguageGuess::default();
    // Where each stem of another language's function word lies in `out`, and its languages.
    let mut function_words: Vec<(usize, usize, Languages)> = Vec::new();
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(text);
    // As in `terms`: the previous token of an unspaced script, where it ended (`None` when
    // there is none), and how many tokens its run has had.
    let mut prev = String::new();
    let mut prev_end: Option<usize> = None;
    let mut run = 0;
    let syllables = is_vietnamese(text);
    let mut last = String::new();
    let mut last_end: Option<usize> = None;
    let push_alone = |out: &mut String, run: usize, prev_end: Option<usize>, prev: &str| {
        if run == 1 && prev_end.is_some() {
            out.push_str(prev);
            out.push(' ');
        }
    };
    // The katakana word being read: where it starts and ends, and its characters.
    let mut katakana: Option<(usize, usize, usize)> = None;
    let push_katakana = |out: &mut String, word: Option<(usize, usize, usize)>| {
        if let Some((from, to, n)) = word
            && (KATAKANA_WORD..=KATAKANA_LONGEST).contains(&n)
        {
            out.push_str(&text[from..to]);
            out.push(' ');
        }
    };
    while let Some(t) = stream.next() {
        let kana = t.text.chars().next().is_some_and(is_katakana);
        katakana = match katakana {
            Some((from, to, n)) if kana && to == t.offset_from => Some((from, t.offset_to, n + 1)),
            word => {
                push_katakana(out, word);
                kana.then_some((t.offset_from, t.offset_to, 1))
            }
        };
        if !is_unspaced(&t.text) {
            push_alone(out, run, prev_end, &prev);
            prev_end = None;
            run = 0;
            if syllables {
                if let Some(end) = last_end
                    && text[end..t.offset_from].chars().all(|c| c == ' ')
                {
                    out.push_str(&last);
                    out.push('_');
                    out.push_str(&t.text);
                    out.push(' ');
                }
                last.clear();
                last.push_str(&t.text);
                last_end = Some(t.offset_to);
            }
            if is_term(&t.text) {
                let languages = guess.see(&t.text);
                let from = out.len();
                let keep = if t.text.chars().next().is_some_and(is_hangul) {
                    HANGUL_STEM
                } else {
                    STEM_CHARS
                };
                let word = without_article(&t.text);
                let end = word.char_indices().nth(keep).map_or(word.len(), |(at, _)| at);
                out.push_str(&word[..end]);
                out.push(' ');
                if languages != Languages::NONE {
                    function_words.push((from, out.len(), languages));
                }
            }
            continue;
        }
        let joined = prev_end.is_some_and(|end| text[end..t.offset_from].chars().all(is_unspaced_script));
        if joined {
            out.push_str(&prev);
            out.push_str(&t.text);
            out.push(' ');
            run += 1;
        } else {
            push_alone(out, run, prev_end, &prev);
            run = 1;
        }
        prev.clear();
        prev.push_str(&t.text);
        prev_end = Some(t.offset_to);
    }
    push_alone(out, run, prev_end, &prev);
    push_katakana(out, katakana);
    let language = guess.languages();
    let mut cut = function_words
        .into_iter()
        .filter(|(_, _, l)| l.overlaps(language))
        .peekable();
    let Some(&(first, _, _)) = cut.peek() else {
        return;
    };
    let mut kept = String::with_capacity(out.len() - first);
    let mut at = first;
    for (from, to, _) in cut {
        kept.push_str(&out[at..from]);
        at = to;
    }
    kept.push_str(&out[at..]);
    out.truncate(first);
    out.push_str(&kept);
}

/// The tokens of a paired term from [`terms`] (two characters of a script without spaces, or
/// two Vietnamese syllables), to search as a phrase; `None` for a word.
pub fn phrase(term: &str) -> Option<Vec<String>> {
    if let Some((a, b)) = term.split_once(' ') {
        return Some(vec![a.to_string(), b.to_string()]);
    }
    if !is_unspaced(term) {
        return None;
    }
    let parts = tokens(term);
    (parts.len() == 2).then_some(parts)
}

/// Whether a token (or a term of [`terms`]) is of a script written without spaces: a Han or
/// kana character, a Thai, Lao, Khmer or Myanmar syllable, or a pair of them.
pub fn is_unspaced(token: &str) -> bool {
    token.chars().next().is_some_and(is_unspaced_script)
}

/// Whether a word can say what a note is about: [`least_letters`] or more (in a script written
/// without spaces, a character or a pair), not a number, not a stopword.
pub fn is_term(word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    if word.chars().all(is_unspaced_script) {
        return true;
    }
    is_word_term(word, Languages::NONE)
}

/// The languages whose function words `words` (normalised tokens or terms) are written in, as
/// [`LanguageGuess`] finds them, counting the words [`push_stems`] counts: the stems and the key
/// terms of a note are guessed alike.
pub fn languages_of<'a>(words: impl IntoIterator<Item = &'a str>) -> Languages {
    let mut guess = LanguageGuess::default();
    for w in words.into_iter().filter(|w| is_word_term(w, Languages::NONE)) {
        guess.see(w);
    }
    guess.languages()
}

/// Whether a word of a spaced script can say what a note is about: [`least_letters`] or more,
/// not a number, not a function word of English or of `language`. A token of an unspaced
/// script is none (a character or a syllable says little alone).
pub fn is_word_term(word: &str, language: Languages) -> bool {
    !is_unspaced(word)
        && word.chars().count() >= least_letters(word)
        && !word.chars().all(|c| c.is_ascii_digit())
        && !language.is_stopword(word)
}

/// Whether a term holds hiragana: in Japanese, particles and endings (`の`, `に`, `ます`) are
/// written in it, and a character pair holding one is rarely a word.
pub fn holds_hiragana(term: &str) -> bool {
    term.chars().any(|c| matches!(c as u32, 0x3040..=0x309F))
}

/// Longer words are not indexed (hashes, base64): tantivy's RemoveLongFilter limit.
const MAX_WORD_BYTES: usize = 64;

/// `word` lower-cased character by character into `out` (replacing it), as tantivy's
/// LowerCaser does; characters of scripts without case are copied without a table look-up.
/// Arabic-script vowel marks and the tatweel are left out ([`is_arabic_mark`]), unless the
/// word is nothing else.
fn push_lowercase(out: &mut String, word: &str) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if has_lowercase(c) {
            out.extend(c.to_lowercase());
        } else if !is_arabic_mark(c) {
            out.push(c);
        }
    }
    if out.is_empty() {
        out.push_str(word);
    }
}

/// Arabic-script marks a writer may or may not put on a word: the vowel marks (fatha, damma,
/// kasra, their tanween, shadda, sukun and the rest of U+064B-U+065F), the superscript alef
/// and the tatweel. `مكوّن` and `مكون` are one word, `أيضًا` and `أيضا` too.
fn is_arabic_mark(c: char) -> bool {
    matches!(c as u32, 0x064B..=0x065F | 0x0670 | 0x0640)
}

/// Whether `c` lower-cases to something else (a bitmap for the Basic Multilingual Plane).
#[inline]
fn has_lowercase(c: char) -> bool {
    let i = c as u32;
    if i >= 0x10000 {
        return !c.to_lowercase().eq(std::iter::once(c));
    }
    static BMP: std::sync::OnceLock<Box<[u64; 1024]>> = std::sync::OnceLock::new();
    let bits = BMP.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for i in 0..0x10000u32 {
            if char::from_u32(i).is_some_and(|c| !c.to_lowercase().eq(std::iter::once(c))) {
                bits[(i >> 6) as usize] |= 1 << (i & 63);
            }
        }
        bits
    });
    bits[(i >> 6) as usize] >> (i & 63) & 1 == 1
}

/// Whether `c` is part of a word: `char::is_alphanumeric` (from a bitmap for the Basic
/// Multilingual Plane: the Unicode tables' search was the tokenizer's largest cost), and the
/// marks of the Indic scripts.
#[inline]
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    let i = c as u32;
    if i >= 0x10000 {
        return c.is_alphanumeric();
    }
    // The scripts of India and Sri Lanka join letters with a virama and mark them with a nukta,
    // neither of which is alphabetic: `ইনস্টল` was two words, `ইনস` and `টল`, and Bengali
    // sections showed such halves as key terms. Only the dandas end a word there.
    if (0x0900..=0x0DFF).contains(&i) {
        return !matches!(i, 0x0964 | 0x0965 | 0x0970 | 0x0DF4);
    }
    static BMP: std::sync::OnceLock<Box<[u64; 1024]>> = std::sync::OnceLock::new();
    let bits = BMP.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for i in 0..0x10000u32 {
            if char::from_u32(i).is_some_and(char::is_alphanumeric) {
                bits[(i >> 6) as usize] |= 1 << (i & 63);
            }
        }
        bits
    });
    bits[(i >> 6) as usize] >> (i & 63) & 1 == 1
}

#[derive(Clone, Default)]
pub struct WordTokenizer {
    consumed: Option<Arc<AtomicU64>>,
}

pub struct WordStream<'a> {
    text: &'a str,
    offset: usize,
    token: Token,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        if let Some(c) = &self.consumed {
            c.fetch_add(text.len() as u64, Ordering::Relaxed);
        }
        WordStream {
            text,
            offset: 0,
            token: Token {
                position: usize::MAX,
                ..Token::default()
            },
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        let bytes = self.text.as_bytes();
        loop {
            // ASCII is decided by the byte; only other characters are decoded.
            let mut at = self.offset;
            let first = loop {
                let Some(&b) = bytes.get(at) else {
                    self.offset = self.text.len();
                    return false;
                };
                if b.is_ascii() {
                    if b.is_ascii_alphanumeric() {
                        break b as char;
                    }
                    at += 1;
                    continue;
                }
                let c = self.text[at..].chars().next().expect("in bounds");
                if is_word_char(c) {
                    break c;
                }
                at += c.len_utf8();
            };
            let start = at;
            let end = if is_unspaced_script(first) {
                unspaced_end(self.text, start, first)
            } else {
                let mut end = start + first.len_utf8();
                while let Some(&b) = bytes.get(end) {
                    if b.is_ascii() {
                        if !b.is_ascii_alphanumeric() {
                            break;
                        }
                        end += 1;
                        continue;
                    }
                    let c = self.text[end..].chars().next().expect("in bounds");
                    if !is_word_char(c) || is_unspaced_script(c) {
                        break;
                    }
                    end += c.len_utf8();
                }
                end
            };
            self.offset = end;
            self.token.position = self.token.position.wrapping_add(1);
            // What tantivy's RemoveLongFilter did: a long word keeps its position, unseen.
            if end - start >= MAX_WORD_BYTES {
                continue;
            }
            push_lowercase(&mut self.token.text, &self.text[start..end]);
            self.token.offset_from = start;
            self.token.offset_to = end;
            self.token.position_length = 1;
            return true;
        }
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests;
