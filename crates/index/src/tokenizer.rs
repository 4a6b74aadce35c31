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
mod stopwords;
pub use prefixes::EdgePrefixes;
pub use stopwords::{LanguageGuess, Languages, is_stopword, languages_of};

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
/// usually makes a word or most of one. A pair is searched as a two-token phrase (see
/// [`phrase`]).
pub fn terms(text: &str) -> Vec<String> {
    let mut analyzer = words();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    // The previous single-character token of an unspaced script and where it ended.
    let mut prev: Option<(String, usize)> = None;
    let mut run = 0;
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
            continue;
        }
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
/// [`STEM_CHARS`] for a Korean word: most nouns are two syllables and the particles and
/// endings that follow them (`설정을`, `설정에서`) are what a cut at five kept apart. Hidden-link
/// recall on obsidian-help ko (two-syllable words terms, [`least_letters`]): 0.693 at five,
/// 0.689 at three, **0.705 at two**, 0.694 at one (0.649 before either change).
const HANGUL_STEM: usize = 2;

/// The fewest characters a word of a spaced script needs to say what a note is about: three
/// letters, or two Hangul syllables (`설정`, `검색`: most Korean nouns; with three, recall on
/// obsidian-help ko was 0.673, with two 0.705).
pub fn least_letters(word: &str) -> usize {
    if word.chars().next().is_some_and(is_hangul) {
        2
    } else {
        3
    }
}

/// An Arabic word without the definite article and the particles written onto it (`ال`,
/// `وال`, `بال`, `فال`, `كال`, `لل`), when at least three letters are left: the article took
/// two of a stem's five letters (`الملاحظات` was `الملا`). Hidden-link recall on obsidian-help
/// ar 0.662 -> 0.681, fa 0.636 -> 0.641. (Hebrew's `ה` and the letters before it, stripped
/// alike, moved he 0.645 -> 0.647: not kept, as they also begin words.)
fn without_article(word: &str) -> &str {
    if !word.starts_with(|c: char| matches!(c as u32, 0x0621..=0x064A)) {
        return word;
    }
    for prefix in ["وال", "بال", "فال", "كال", "ال", "لل"] {
        if let Some(rest) = word.strip_prefix(prefix)
            && rest.chars().count() >= 3
        {
            return rest;
        }
    }
    word
}

/// Whether `text` is Vietnamese: among its first [`VIETNAMESE_LETTERS`] letters, one in
/// thirty is a letter only Vietnamese writes (`ơ`, `ư`, and the vowels with a tone mark of
/// Latin Extended Additional: `ế`, `ộ`, `ữ`). `ă` and `đ` are left out (Romanian, Croatian).
fn is_vietnamese(text: &str) -> bool {
    let (mut letters, mut marked) = (0usize, 0usize);
    for c in text.chars() {
        if c.is_ascii() {
            letters += usize::from(c.is_ascii_alphabetic());
        } else if matches!(c as u32, 0x1EA0..=0x1EF9 | 0x01A0 | 0x01A1 | 0x01AF | 0x01B0) {
            letters += 1;
            marked += 1;
        } else {
            letters += usize::from(c.is_alphabetic());
        }
        if letters >= VIETNAMESE_LETTERS {
            break;
        }
    }
    marked >= 5 && marked * 30 >= letters
}

/// Letters [`is_vietnamese`] reads: enough past a note's front matter, and a bounded cost per
/// note in a cold build.
const VIETNAMESE_LETTERS: usize = 600;

/// A Hangul syllable.
fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0xAC00..=0xD7A3)
}

/// The [`terms`] of `text` that can carry meaning ([`is_term`]) with each word cut to
/// [`STEM_CHARS`] (pairs of unspaced characters stay as they are): what notes are compared by
/// (`stems` in the index).
pub fn stems(text: &str) -> Vec<String> {
    let mut joined = String::new();
    push_stems(text, &mut joined);
    joined.split_whitespace().map(str::to_string).collect()
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
    while let Some(t) = stream.next() {
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

/// The tokens of a paired term from [`terms`], to search as a phrase; `None` for a word.
pub fn phrase(term: &str) -> Option<Vec<String>> {
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
    word.chars().count() >= least_letters(word) && !word.chars().all(|c| c.is_ascii_digit()) && !is_stopword(word)
}

/// Whether a term holds hiragana: in Japanese, particles and endings (`の`, `に`, `ます`) are
/// written in it, and a character pair holding one is rarely a word.
pub fn holds_hiragana(term: &str) -> bool {
    term.chars().any(|c| matches!(c as u32, 0x3040..=0x309F))
}

fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0x20000..=0x2FFFF) // CJK extensions B..
}

/// Where a token of an unspaced script that starts with `first` at `start` ends: after the
/// character for Han and kana; in Thai, Lao, Khmer and Myanmar, after the marks written on the
/// letter (vowel signs, tone marks) and, past a Khmer coeng or a Myanmar virama, the letter
/// stacked under it; in Thai and Lao, a vowel written before its consonant with the consonant,
/// and a vowel written after one (`า`) with it. A token is then a syllable or most of one
/// (`ស្វែ`, `ไม่`, `ค่า`), where each code point alone made pairs of a letter and its vowel
/// sign, and tone marks split words. Hidden-link recall on obsidian-help: km 0.595 -> 0.622;
/// th 0.632 -> 0.653 with the marks, 0.682 with the vowels before and after.
fn unspaced_end(text: &str, start: usize, first: char) -> usize {
    let mut end = start + first.len_utf8();
    if !matches!(first as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF) {
        return end;
    }
    let mut prev = first;
    // A Thai or Lao vowel written before its consonant takes the consonant; a vowel written
    // after one (`า`, `ะ`, `ำ`) ends the syllable.
    let mut wants_consonant = matches!(first as u32, 0x0E40..=0x0E44 | 0x0EC0..=0x0EC4);
    for c in text[end..].chars() {
        let stacked = matches!(prev as u32, 0x17D2 | 0x1039) && is_unspaced_script(c);
        let consonant = wants_consonant && matches!(c as u32, 0x0E01..=0x0E2E | 0x0E81..=0x0EAE);
        let after =
            !wants_consonant && matches!(c as u32, 0x0E30 | 0x0E32 | 0x0E33 | 0x0E45 | 0x0EB0 | 0x0EB2 | 0x0EB3);
        if !(is_written_on(c) || stacked || consonant || after) {
            break;
        }
        end += c.len_utf8();
        prev = c;
        wants_consonant = false;
        if after {
            break;
        }
    }
    end
}

/// The combining marks of Thai, Lao, Myanmar and Khmer (Unicode's Mn and Mc in those blocks).
fn is_written_on(c: char) -> bool {
    matches!(c as u32,
        0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E                    // Thai
        | 0x0EB1 | 0x0EB4..=0x0EBC | 0x0EC8..=0x0ECE                   // Lao
        | 0x102B..=0x103E | 0x1056..=0x1059 | 0x105E..=0x1060 | 0x1062..=0x1064
        | 0x1067..=0x106D | 0x1071..=0x1074 | 0x1082..=0x108D | 0x108F
        | 0x109A..=0x109D                                              // Myanmar
        | 0x17B4..=0x17D3 | 0x17DD) // Khmer
}

/// Longer words are not indexed (hashes, base64): tantivy's RemoveLongFilter limit.
const MAX_WORD_BYTES: usize = 64;

/// `word` lower-cased character by character into `out` (replacing it), as tantivy's
/// LowerCaser does; characters of scripts without case are copied without a table look-up.
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
        } else {
            out.push(c);
        }
    }
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

/// Whether `c` is part of a word: `char::is_alphanumeric`, from a bitmap for the Basic
/// Multilingual Plane (the Unicode tables' search was the tokenizer's largest cost).
#[inline]
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    let i = c as u32;
    if i >= 0x10000 {
        return c.is_alphanumeric();
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
mod tests {
    /// The tokenizer lower-cases and skips long words exactly as tantivy's filters did.
    #[test]
    fn the_same_tokens_as_tantivys_filters() {
        use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, TextAnalyzer, TokenStream};
        let mut reference = TextAnalyzer::builder(super::WordTokenizer::default())
            .filter(RemoveLongFilter::limit(64))
            .filter(LowerCaser)
            .filter(tantivy::tokenizer::AsciiFoldingFilter)
            .build();
        let long = "Ä".repeat(40);
        for text in [
            "Über ÉCOLE straße İstanbul ΣΊΣΥΦΟΣ Ꭰ 𐐀 ǅ",
            "Синхронизация настроек — ВАЖНО",
            "设置 同步 ＡＢＣ ｱｲｳ ไทย ខ្មែរ 한국어 العربية",
            &format!("a {long} b {} c", "x".repeat(64)),
        ] {
            let mut ours = super::words();
            let mut a = ours.token_stream(text);
            let mut b = reference.token_stream(text);
            loop {
                let (x, y) = (a.next().cloned(), b.next().cloned());
                assert_eq!(
                    x.as_ref().map(|t| (&t.text, t.position, t.offset_from)),
                    y.as_ref().map(|t| (&t.text, t.position, t.offset_from)),
                    "{text}"
                );
                if x.is_none() {
                    break;
                }
            }
        }
    }

    /// The words as the char-by-char scan found them, before ASCII was decided by the byte:
    /// `(lower-cased text, position, start, end)`.
    fn reference_words(text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut out = Vec::new();
        let mut offset = 0;
        let mut position = usize::MAX;
        loop {
            let rest = &text[offset..];
            let Some((skip, first)) = rest.char_indices().find(|&(_, c)| super::is_word_char(c)) else {
                return out;
            };
            let start = offset + skip;
            let end = if super::is_unspaced_script(first) {
                super::unspaced_end(text, start, first)
            } else {
                let word = &text[start..];
                start
                    + word
                        .char_indices()
                        .find(|&(_, c)| !super::is_word_char(c) || super::is_unspaced_script(c))
                        .map_or(word.len(), |(i, _)| i)
            };
            offset = end;
            position = position.wrapping_add(1);
            if end - start < super::MAX_WORD_BYTES {
                let mut lower = String::new();
                super::push_lowercase(&mut lower, &text[start..end]);
                out.push((lower, position, start, end));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_byte_scan_finds_the_reference_words(
            text in "[a-zA-Z0-9 .,\\-_\u{e9}\u{c4}\u{3a3}\u{416}\u{4e00}\u{306e}\u{e01}\u{e31}\u{301}\u{ff21}\u{1f600}\u{10400}\u{a0}\u{3002}]{0,40}"
        ) {
            use tantivy::tokenizer::{TokenStream, Tokenizer};
            let mut tokenizer = super::WordTokenizer::default();
            let mut stream = tokenizer.token_stream(&text);
            let mut ours = Vec::new();
            while stream.advance() {
                let t = stream.token();
                ours.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
            }
            proptest::prop_assert_eq!(ours, reference_words(&text));
        }
    }

    #[test]
    fn the_word_bitmap_is_unicodes() {
        for i in (0..0x11000u32)
            .step_by(7)
            .chain([0x4E00, 0xAC00, 0x0E01, 0x00E9, 0x0301])
        {
            if let Some(c) = char::from_u32(i) {
                assert_eq!(super::is_word_char(c), c.is_alphanumeric(), "U+{i:04X}");
            }
        }
    }

    #[test]
    fn stems_cut_words_and_keep_pairs() {
        // The same as `terms` filtered and cut, on every script.
        for text in [
            "知识库 gardens 的 vault",
            "知。识 Straße",
            "ທ ທາ Einführung",
            "a 知 b 识库 ok",
        ] {
            let expected: Vec<String> = terms(text)
                .into_iter()
                .filter(|t| is_term(t))
                .map(|t| t.chars().take(STEM_CHARS).collect())
                .collect();
            assert_eq!(stems(text), expected, "{text}");
        }
        assert_eq!(stems("Einführungen in Bases 2026"), ["einfu", "bases"]);
        assert_eq!(stems("Настройки настройка"), ["настр", "настр"]);
        assert_eq!(stems("설정을 설정에서 열기"), ["설정", "설정", "열기"]);
        // The Arabic article goes before the cut; a short word keeps it.
        assert_eq!(stems("الملاحظات ملاحظة والملاحظات الحب"), ["ملاحظ", "ملاحظ", "ملاحظ", "الحب"]);
        assert_eq!(stems("知识库 gardens"), ["知识", "识库", "garde"]);
    }

    #[test]
    fn syllables_of_thai_lao_khmer_and_myanmar_are_tokens() {
        let check = |text: &str, expected: &[&str]| assert_eq!(tokens(text), expected, "{text}");
        // Khmer: vowel signs and the coeng's stacked letter stay on their letter.
        check("ស្វែងរក", &["ស្វែ", "ង", "រ", "ក"]);
        check("ការកំណត់", &["កា", "រ", "កំ", "ណ", "ត់"]);
        // Thai: tone marks no longer split a word; a vowel written before its consonant takes
        // it, one written after ends the syllable.
        check("ไม่ยาก", &["ไม่", "ยา", "ก"]);
        check("ตั้งค่า", &["ตั้", "ง", "ค่า"]);
        check("เปิดใช้งาน", &["เปิ", "ด", "ใช้", "งา", "น"]);
        // Lao and Myanmar.
        check("ຄົ້ນຫາ", &["ຄົ້", "ນ", "ຫາ"]);
        check("မြန်မာစာ", &["မြ", "န်", "မာ", "စာ"]);
        // Han and kana stay a character each; a mark alone is a token of its own.
        check("知识 カナ", &["知", "识", "カ", "ナ"]);
        check("ก\u{0E48}\u{0E48}\u{0E48} ok", &["ก\u{0E48}\u{0E48}\u{0E48}", "ok"]);
        // Hostile: ten thousand marks on one letter are one long word, skipped like any.
        check(&format!("ก{} ok", "\u{0E48}".repeat(10_000)), &["ok"]);
        // Pairs of syllables are the terms, searched as two-token phrases.
        assert_eq!(terms("ស្វែងរក"), ["ស្វែង", "ងរ", "រក"]);
        assert_eq!(phrase("ស្វែង"), Some(vec!["ស្វែ".to_string(), "ង".to_string()]));
        assert_eq!(phrase("ស្វែ"), None);
        assert_eq!(stems("ไม่ยาก"), ["ไม่ยา", "ยาก"]);
    }

    #[test]
    fn vietnamese_syllables_pair_in_stems() {
        // Adjacent syllables of a Vietnamese text are stems too, as `a_b`; punctuation ends a pair.
        let vi = "Giới thiệu về Obsidian. Nền tảng ghi chú của bạn được lưu trên thiết bị.";
        assert!(is_vietnamese(vi));
        let stems = stems(vi);
        for pair in ["gioi_thieu", "nen_tang", "ghi_chu", "thiet_bi"] {
            assert!(stems.iter().any(|s| s == pair), "{pair} in {stems:?}");
        }
        assert!(!stems.iter().any(|s| s == "obsidian_nen"), "{stems:?}");
        // Other languages with a few of these letters, and short texts, are not Vietnamese.
        for text in [
            "Această notă și această bază de date sunt în același dosar, împreună cu șablonul.",
            "Đorđe je otvorio bilješku i pročitao ju do kraja, pa je zatvorio aplikaciju.",
            "Notes about the café and the naïve résumé, written in English.",
            "Ếch",
        ] {
            assert!(!is_vietnamese(text), "{text}");
            assert!(!super::stems(text).iter().any(|s| s.contains('_')), "{text}");
        }
    }

    #[test]
    fn stems_leave_out_the_function_words_of_the_texts_language() {
        let check = |text: &str, expected: &[&str]| assert_eq!(stems(text), expected, "{text}");
        check(
            "Drücke die Taste und wähle dann den Befehl aus der Liste",
            &["druck", "taste", "wahle", "befeh", "liste"],
        );
        // `die` is an English word: an English text keeps it.
        check(
            "Plants die in winter without water and light",
            &["plant", "die", "winte", "water", "light"],
        );
        // Words of the other languages in the text stay; pairs of unspaced scripts too.
        check(
            "Die Notiz über 知识库 und die Tags, der Tresor und das Plugin",
            &["notiz", "知识", "识库", "tags", "treso", "plugi"],
        );
    }

    #[test]
    fn terms_pair_characters_of_unspaced_scripts() {
        let check = |text: &str, expected: &[&str]| assert_eq!(terms(text), expected, "{text}");
        check("Sourdough starter", &["sourdough", "starter"]);
        check("知识库 notes", &["知识", "识库", "notes"]);
        check("知。识", &["知", "识"]);
        check("的 vault", &["的", "vault"]);
        assert_eq!(phrase("知识"), Some(vec!["知".to_string(), "识".to_string()]));
        assert_eq!(phrase("vault"), None);
        assert!(is_term("知识") && is_term("知") && !is_term("of") && !is_term("2026"));
    }

    use super::*;

    fn analyze(mut a: TextAnalyzer, text: &str) -> Vec<(String, usize)> {
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = s.next() {
            out.push((t.text.clone(), t.position));
        }
        out
    }

    #[test]
    fn words_and_scripts() {
        let check = |text: &str, expected: &[&str]| assert_eq!(tokens(text), expected, "{text:?}");
        check("Hello, World!", &["hello", "world"]);
        check("Café-crème 2024", &["cafe", "creme", "2024"]);
        check("知识库", &["知", "识", "库"]);
        check("Obsidian的笔记", &["obsidian", "的", "笔", "记"]);
        // A Thai vowel sign written on its letter stays with it.
        check("สวัสดี", &["ส", "วั", "ส", "ดี"]);
        check("Привет мир", &["привет", "мир"]);
        check("", &[]);
        check("   ...  ", &[]);
    }

    #[test]
    fn prefixes() {
        let manager = tantivy::tokenizer::TokenizerManager::default();
        register(&manager, Default::default());
        let got = analyze(manager.get(PREFIXES).unwrap(), "Go Déjà");
        let expected: Vec<(String, usize)> = [("g", 0), ("go", 0), ("d", 1), ("de", 1), ("dej", 1), ("deja", 1)]
            .iter()
            .map(|(s, p)| (s.to_string(), *p))
            .collect();
        assert_eq!(got, expected);
        let long = analyze(manager.get(PREFIXES).unwrap(), "abcdefghijklmnopqrstuvwxyz");
        assert_eq!(long.len(), MAX_PREFIX_CHARS);
    }
}
