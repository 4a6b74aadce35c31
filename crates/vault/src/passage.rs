//! Passages of a note that can be quoted as its own sentences: whole sentences of its
//! paragraphs and list items (never a heading glued to the text after it, never cut
//! mid-word), chosen for the words they share with another note.

use std::collections::HashMap;

use super::parse::parse;

/// Longest passage; a longer sentence is cut at a word boundary and marked with `…`.
pub const MAX_CHARS: usize = 240;
/// Shorter sentences say too little to quote ("See also.").
const MIN_WORDS: usize = 4;
const MIN_UNSPACED_CHARS: usize = 8;

/// The sentences of `text` (Markdown) that carry most of `weights` (normalised words as the
/// index tokenises them → weight), best first, at most `n`, each a readable sentence.
pub fn best(text: &str, weights: &HashMap<String, f32>, n: usize, tokens: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let parsed = parse(text, "");
    let headings: std::collections::HashSet<&str> = parsed.headings.iter().map(|h| h.text.as_str()).collect();
    // As a reader reads the note: code stays code, links are their visible text.
    let reading = reading(text);
    let mut scored: Vec<(f32, usize, String)> = Vec::new();
    for (i, sentence) in sentences(&reading, &headings).into_iter().enumerate() {
        let mut seen = std::collections::HashSet::new();
        let score: f32 = tokens(&sentence)
            .into_iter()
            .filter_map(|t| {
                let w = weights.get(&t)?;
                seen.insert(t).then_some(*w)
            })
            .sum();
        if score > 0.0 {
            scored.push((score, i, sentence));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::with_capacity(n);
    for (_, _, s) in scored {
        let s = cut(&s, MAX_CHARS);
        // The same sentence twice (a note repeating itself) is quoted once.
        if out.len() == n {
            break;
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The lines of `text` a passage may come from, as a reader reads them: every block but a
/// table cell that ends no sentence (a hotkey table's `Ctrl (+ Shift in Source Mode)` or
/// `Move the cursor up one page` is a label or a value, not a sentence to quote).
fn reading(text: &str) -> String {
    crate::reading::blocks_and_cells(text)
        .into_iter()
        .filter(|(line, cell)| !cell || ends_a_sentence(line))
        .map(|(line, _)| line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Marks that end a sentence wherever they stand: Chinese and Japanese, Devanagari and Bengali,
/// Urdu, Khmer, Myanmar (`.`, `!` and `?` end one only before a space, see [`sentences`]).
pub const FULL_STOPS: [char; 8] = ['。', '！', '？', '।', '۔', '។', '៕', '။'];

/// Whether `line` ends with a sentence's full stop, question or exclamation mark (in any
/// script the sentences below know), before any closing quote or bracket.
fn ends_a_sentence(line: &str) -> bool {
    let line = line.trim_end_matches(['"', '\'', '”', '’', '»', ')', '）', '」', '』', '*', '_', ' ']);
    line.ends_with(FULL_STOPS) || line.ends_with(['.', '!', '?', '…'])
}

/// Every sentence of `text` (Markdown) that could be quoted, in order, each cut at
/// [`MAX_CHARS`]; at most `n`.
pub fn quotable(text: &str, n: usize) -> Vec<String> {
    let parsed = parse(text, "");
    let headings: std::collections::HashSet<&str> = parsed.headings.iter().map(|h| h.text.as_str()).collect();
    let reading = reading(text);
    let mut out: Vec<String> = Vec::new();
    for s in sentences(&reading, &headings) {
        let s = cut(&s, MAX_CHARS);
        if out.len() == n {
            break;
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The sentences of a note's plain text: its lines are blocks (headings, paragraphs, items,
/// cells); headings and fragments too short to stand alone are skipped.
pub fn sentences(plain: &str, headings: &std::collections::HashSet<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for line in plain.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        // Headings and callout titles (`[!note] Title`) are labels, not sentences.
        if line.is_empty() || headings.contains(line.as_str()) || line.starts_with("[!") {
            continue;
        }
        let mut start = 0;
        let mut in_code = false;
        // Brackets opened and not closed: inside them a sentence ends only after a word too
        // long for an abbreviation (`(napr. Windows Explorer …)`, `(par ex. Extraits CSS,
        // Thèmes)`: an abbreviation before a capital; ko `(… 설정하세요. OneDrive는 …)` holds
        // two sentences).
        let mut open = 0usize;
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        for (k, &(i, c)) in chars.iter().enumerate() {
            let next = chars.get(k + 1).map(|&(_, c)| c);
            let prev = k.checked_sub(1).map(|p| chars[p].1);
            if c == '`' {
                in_code = !in_code;
            }
            if !in_code {
                match c {
                    '(' | '（' => open += 1,
                    ')' | '）' => open = open.saturating_sub(1),
                    _ => {}
                }
            }
            let ends = !in_code
                && (open == 0 || !abbreviated(&line[start..i]))
                && match c {
                    c if FULL_STOPS.contains(&c) => true,
                    '.' | '!' | '?' => {
                        // A sentence starts with no small letter: what follows `(p. ex. iCloud`,
                        // `(např. současné` or `(bijv. één` is the same sentence (34 languages'
                        // sections held 85 passages cut so).
                        let goes_on = c == '.'
                            && (ordinal(&line[start..i], &line[i + 1..])
                                || chars.get(k + 2).is_some_and(|&(_, c)| c.is_lowercase()));
                        next.is_none_or(char::is_whitespace) && !abbreviation(&line[start..i]) && !goes_on
                    }
                    _ => false,
                }
                // Two sentences a lost line break glued together: `basis.Example`.
                || (c == '.'
                    && !in_code
                    && prev.is_some_and(char::is_lowercase)
                    && next.is_some_and(char::is_uppercase)
                    && chars.get(k + 2).is_some_and(|&(_, c)| c.is_lowercase()));
            if ends {
                push_sentence(&mut out, &line[start..i + c.len_utf8()]);
                start = i + c.len_utf8();
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, s: &str) {
    let cleaned = clean(s);
    let s = without_unopened_close(cleaned.trim());
    // A sentence introducing a list stands only with the list: not quoted alone (Khmer's
    // colon is `៖`).
    if s.ends_with([':', '：', '៖']) {
        return;
    }
    if needs_escapes(s) {
        return;
    }
    let words = s.split_whitespace().count();
    // In a script without spaces between words a space parts phrases (Thai, Khmer) or sets
    // off a foreign name: its letters count, not its spaces.
    let unspaced = s.chars().filter(|&c| unspaced_script(c) && c.is_alphabetic()).count();
    if words >= MIN_WORDS {
        out.push(s.to_string());
        return;
    }
    // Chinese and Japanese end a sentence with 。: without it, a short line is a label.
    let han_kana = s.chars().filter(|&c| han_or_kana(c)).count();
    let ended = s.ends_with(['。', '！', '？', '.', '!', '?']);
    let label = han_kana > 0 && !ended && han_kana < MIN_UNENDED_HAN_KANA;
    if unspaced >= MIN_UNSPACED_CHARS && !label {
        out.push(s.to_string());
    }
}

/// Whether quoting `s` inert needs a backslash a reader reads past, outside code: a sentence
/// about Markdown's own marks (obsidian-help vi quoted `\*This text will not be italicized*.`,
/// which the note shows with its asterisks). Another sentence says it as well.
fn needs_escapes(s: &str) -> bool {
    let prose = |t: &str| t.split('`').step_by(2).any(|p| p.contains('\\'));
    !prose(s) && prose(&crate::contain::quote(s))
}

/// Chinese or Japanese letters a line needs to be quoted without a sentence's end.
const MIN_UNENDED_HAN_KANA: usize = 16;

/// Han characters and Japanese kana.
fn han_or_kana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Letters of scripts written without spaces between words.
fn unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF       // Thai, Lao
        | 0x1000..=0x109F     // Myanmar
        | 0x1780..=0x17FF     // Khmer
        | 0x3040..=0x30FF     // Japanese kana
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK
        | 0xF900..=0xFAFF)
}

/// A sentence as a reader sees it in the note: no image or icon file names (what an embedded
/// icon leaves in the text), no footnote markers, no bold
/// markers the parser left as text, no `#` that would make a word a tag where the passage is
/// quoted. Code is left as written.
fn clean(s: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    // Inside a code span that started in an earlier word.
    let mut in_code = false;
    for word in s.split_whitespace() {
        let ticks = word.matches('`').count();
        // A word in code or holding code (`#tag`, (`#`)) is quoted as written, but for bold
        // markers outside its code: a Japanese sentence is one word (`（`•••`）をクリックし、
        // **ノートブックをエクスポート…**を`).
        let code = in_code || ticks > 0;
        if code {
            let mut inside = in_code;
            let parts: Vec<String> = word
                .split('`')
                .enumerate()
                .map(|(i, part)| {
                    if i > 0 {
                        inside = !inside;
                    }
                    if inside {
                        part.to_string()
                    } else {
                        part.replace("**", "")
                    }
                })
                .collect();
            in_code ^= ticks % 2 == 1;
            out.push(parts.join("`"));
            continue;
        }
        in_code ^= ticks % 2 == 1;
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        if crate::paths::is_image(bare) {
            continue;
        }
        // `**` left as text: CommonMark closes no bold between a bracket and a letter
        // (`**暗号化（デフォルト）**は`), Obsidian shows it bold.
        let mut w = strip_footnotes(word).replace("**", "");
        if let Some(tagless) = w.strip_prefix('#').filter(|t| t.starts_with(char::is_alphanumeric)) {
            w = tagless.to_string();
        }
        // A link to a heading reads as Obsidian shows it: `Note › Heading`, not `Note#Heading`
        // (a `#` between letters; C# keeps its own).
        if !w.contains("://") {
            w = heading_marks(&w);
        }
        if !w.is_empty() {
            out.push(w);
        }
    }
    out.join(" ")
}

/// `Note#Heading` as `Note › Heading`: each `#` with a letter or digit on both sides.
fn heading_marks(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    for (i, &c) in chars.iter().enumerate() {
        let joins = c == '#'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if joins {
            out.push_str(" › ");
        } else {
            out.push(c);
        }
    }
    out
}

/// `word` without footnote markers (`[^2]`).
fn strip_footnotes(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find("[^") {
        out.push_str(&rest[..at]);
        match rest[at..].find(']') {
            Some(end) => rest = &rest[at + end + 1..],
            None => {
                rest = &rest[at..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A number of one or two digits with its period, as German, the Nordic languages, Czech or
/// Hungarian write a day or a rank (`am 1. Januar`, `1. januar`, `2. szintű`): no end when a
/// lower-case word or a month follows. (`nr 2. Wir sind` ends a sentence.)
fn ordinal(before: &str, after: &str) -> bool {
    let last = before.rsplit(char::is_whitespace).next().unwrap_or("");
    if last.is_empty() || last.len() > 2 || !last.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let next = after.split_whitespace().next().unwrap_or("");
    next.starts_with(char::is_lowercase) || MONTHS.contains(&next.trim_end_matches([',', ';']))
}

/// Month names written capitalised after a day's number (German).
const MONTHS: &[&str] = &[
    "Januar",
    "Jänner",
    "Februar",
    "März",
    "April",
    "Mai",
    "Juni",
    "Juli",
    "August",
    "September",
    "Oktober",
    "November",
    "Dezember",
];

/// `s` without the bracket it closes at its end when the sentence did not open it (the last
/// of two sentences in brackets: `OneDrive는 … 작동해요.)`).
fn without_unopened_close(s: &str) -> &str {
    let (mut opened, mut closed) = (0usize, 0usize);
    for part in s.split('`').step_by(2) {
        opened += part.matches(['(', '（']).count();
        closed += part.matches([')', '）']).count();
    }
    match s.strip_suffix([')', '）']) {
        Some(rest) if closed > opened => rest.trim_end(),
        _ => s,
    }
}

/// Whether the last word of `before` may be an abbreviation of any language: four letters or
/// fewer (`napr`, `esim`, `bijv`, `ex`), or holding a period (`f.eks`, `π.χ`).
fn abbreviated(before: &str) -> bool {
    let last = last_word(before);
    last.contains('.') || last.chars().count() <= 4
}

/// The last word of `before`, without a bracket or quote in front.
fn last_word(before: &str) -> &str {
    let last = before.rsplit(char::is_whitespace).next().unwrap_or("");
    last.trim_start_matches(['(', '（', '"', '\''])
}

/// "e.g." and "Dr." end no sentence, nor a word of one letter: German writes "z. B." and
/// "d. h." with a space (de quoted "B. das Aktualisieren von Links…" eight times), French
/// "p. ex.", Spanish "p. ej.".
fn abbreviation(before: &str) -> bool {
    let last = last_word(before);
    let mut letters = last.chars();
    let one_letter = letters.next().is_some_and(char::is_alphabetic) && letters.next().is_none();
    one_letter
        || last.len() <= 3
            && (last.contains('.') || last.chars().next().is_some_and(char::is_uppercase) && last.len() <= 2)
        || ABBREVIATIONS.contains(&last)
}

/// Abbreviations that end no sentence ("usw.", which ends German sentences as often as not,
/// is not here; "etc." is, as it was: a sentence cut after one leaves a fragment).
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "Mr", "Mrs", "Dr", "St", "bzw", "ggf", "vgl", "bspw", "bzgl", "inkl", "evtl", "ca",
    "Nr", "bijv",
];

/// `s` cut to at most `max` characters at a word boundary, with `…` when cut. Text in a
/// script without spaces may be cut between any two characters.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let end = s.char_indices().nth(max).map(|(i, _)| i).unwrap_or(s.len());
    let head = &s[..end];
    let at = match head.rfind(char::is_whitespace) {
        Some(i) if i > end / 2 => i,
        _ => {
            // No space in the second half: a script without spaces, or one very long word.
            let last = head.chars().last().unwrap_or(' ');
            if last.is_ascii_alphanumeric() {
                head.rfind(|c: char| !c.is_alphanumeric()).unwrap_or(end)
            } else {
                end
            }
        }
    };
    format!("{}…", s[..at].trim_end_matches([' ', ',', ';', ':']))
}

#[cfg(test)]
mod tests;
