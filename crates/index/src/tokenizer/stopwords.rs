//! Function words, left out of what a note is about: English always, and those of 24 more
//! languages (`stopwords/*.txt`: Snowball's lists, the stop-words package's and a Greek one,
//! each under the licence in `stopwords/COPYING`) in a text whose own words say it is written
//! in one of them ([`LanguageGuess`]): `die` is a function word in German and a verb in English.

/// Common English function words, and words every note uses ("see also"), which say nothing
/// about what a note is about. Left out of key terms and of the stems notes are compared by;
/// the word index keeps them (phrases need them).
const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "and",
    "any",
    "are",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "could",
    "did",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "gets",
    "got",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "into",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "makes",
    "many",
    "may",
    "might",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "never",
    "nor",
    "not",
    "note",
    "notes",
    "now",
    "off",
    "once",
    "one",
    "only",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "see",
    "seems",
    "she",
    "should",
    "since",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "though",
    "through",
    "too",
    "under",
    "until",
    "upon",
    "use",
    "used",
    "uses",
    "using",
    "very",
    "via",
    "was",
    "way",
    "well",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Longest stopword, in bytes (all are lower-case ASCII).
const MAX_STOPWORD_LEN: usize = 16;

/// Every word indexed passes here (the stems of a note): most are ruled out by length or first
/// letter, the rest searched among the stopwords of that letter.
pub fn is_stopword(word: &str) -> bool {
    static BY_FIRST: std::sync::OnceLock<[(usize, usize); 26]> = std::sync::OnceLock::new();
    let bytes = word.as_bytes();
    let Some(&first) = bytes
        .first()
        .filter(|b| b.is_ascii_lowercase() && bytes.len() <= MAX_STOPWORD_LEN)
    else {
        return false;
    };
    let ranges = BY_FIRST.get_or_init(|| {
        let mut ranges = [(0, 0); 26];
        for (i, range) in ranges.iter_mut().enumerate() {
            let letter = b'a' + i as u8;
            let start = STOPWORDS.partition_point(|w| w.as_bytes()[0] < letter);
            let end = STOPWORDS.partition_point(|w| w.as_bytes()[0] <= letter);
            *range = (start, end);
        }
        ranges
    });
    let (start, end) = ranges[(first - b'a') as usize];
    STOPWORDS[start..end].binary_search(&word).is_ok() || more_english(word)
}

/// More English function words: stopwords-iso's that [`STOPWORDS`] lacks, less the nouns and
/// verbs a note is about (`stopwords/iso/en.txt`). English applies to every note, as
/// [`STOPWORDS`] does: the English words of another language's note are its interface's.
fn more_english(word: &str) -> bool {
    static WORDS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let words = WORDS.get_or_init(|| {
        let mut words: Vec<&str> = words_of(include_str!("stopwords/iso/en.txt")).collect();
        words.sort_unstable();
        words
    });
    words.binary_search(&word).is_ok()
}

/// The words of a list: one a line, `#` starting a comment line.
fn words_of(list: &str) -> impl Iterator<Item = &str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// A language's function words.
struct List {
    /// Its code (`de`).
    code: &'static str,
    /// Its list, whose words guess a text's language.
    words: &'static str,
    /// More of its function words: stopwords-iso's list, less the words of `words`
    /// (`stopwords/iso/*.txt`, under the licence in `stopwords/COPYING`). Left out of what a
    /// note is about, not counted when a text's language is guessed (`share` is of `words`).
    /// Snowball's lists are pronouns, articles and auxiliaries; on obsidian-help es, "entonces",
    /// "hacia", "dar", "poner" and "puedo" were words entries were related by.
    more: &'static str,
    /// One in so many of a text's words must be of `words` for the text to be guessed in it.
    share: u32,
}

/// The [`List`] of a language: `stopwords/CODE.txt` and `stopwords/iso/CODE.txt`.
macro_rules! list {
    ($code:literal, $share:literal) => {
        List {
            code: $code,
            words: include_str!(concat!("stopwords/", $code, ".txt")),
            more: include_str!(concat!("stopwords/iso/", $code, ".txt")),
            share: $share,
        }
    };
}

/// The other languages' lists, one word per line (`#` starts a comment), with the function
/// words a list lacks that a note in the language uses everywhere added at the end; and the
/// share of a text's words (one in so many) that must be the list's for the text to be guessed
/// in the language. On obsidian-help, a German note has 12 to 45 in a hundred of three letters
/// or more, a Spanish one 7 to 30, an English one at most 5 of any Latin-script list; Russian
/// has most of its function words in one or two letters (6 to 13 in a hundred of three or
/// more), and no English word is in its list. Arabic and Hebrew write most of theirs onto the
/// next word (`و`, `ال`, `ב`, `ל`): 2 to 14 in a hundred, and no other language's text has
/// any; Turkish writes them as endings (3 to 11), Slovak and Ukrainian have the shortest lists
/// (4 to 12, 5 to 15). The first twelve are Snowball's and keep their order, which breaks ties.
const LISTS: [List; 24] = [
    list!("da", 10),
    list!("de", 10),
    list!("es", 10),
    list!("fi", 10),
    list!("fr", 10),
    list!("hu", 10),
    list!("it", 10),
    list!("nl", 10),
    list!("no", 10),
    list!("pt", 10),
    list!("ru", 20),
    list!("sv", 10),
    list!("ar", 50),
    list!("ca", 10),
    list!("cs", 10),
    list!("el", 10),
    list!("fa", 10),
    list!("he", 50),
    list!("id", 10),
    list!("pl", 10),
    list!("ro", 10),
    list!("sk", 15),
    list!("tr", 25),
    list!("uk", 15),
];

/// A set of the languages of [`LISTS`], a bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Languages(u32);

impl Languages {
    pub const NONE: Languages = Languages(0);

    /// Whether `word` (normalised, as the tokenizer gives it) is a function word of English or
    /// of one of these languages.
    pub fn is_stopword(self, word: &str) -> bool {
        is_stopword(word)
            || (self.0 != 0 && (function_word_of(word).overlaps(self) || more_function_word_of(word).overlaps(self)))
    }

    pub fn overlaps(self, other: Languages) -> bool {
        self.0 & other.0 != 0
    }

    /// The languages' codes (`de`, `fr`), for messages and tests.
    pub fn codes(self) -> Vec<&'static str> {
        LISTS
            .iter()
            .enumerate()
            .filter(|(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, list)| list.code)
            .collect()
    }
}

/// The languages `word` (normalised) is a function word of.
fn function_word_of(word: &str) -> Languages {
    static TABLE: std::sync::OnceLock<(rustc_hash::FxHashMap<String, u32>, usize)> = std::sync::OnceLock::new();
    languages_listing(&TABLE, LISTS.map(|list| list.words), word)
}

/// The languages whose [`List::more`] has `word`.
fn more_function_word_of(word: &str) -> Languages {
    static TABLE: std::sync::OnceLock<(rustc_hash::FxHashMap<String, u32>, usize)> = std::sync::OnceLock::new();
    languages_listing(&TABLE, LISTS.map(|list| list.more), word)
}

/// The languages (a bit each, in the order of `lists`) whose list has `word`, from a table
/// built on first use.
fn languages_listing(
    table: &'static std::sync::OnceLock<(rustc_hash::FxHashMap<String, u32>, usize)>,
    lists: [&str; LISTS.len()],
    word: &str,
) -> Languages {
    let (table, longest) = table.get_or_init(|| {
        use tantivy::tokenizer::{AsciiFoldingFilter, LowerCaser, RawTokenizer, TextAnalyzer};
        // Normalised as the index's words are: lower case, folded to ASCII (`für` -> `fur`).
        let mut normalise = TextAnalyzer::builder(RawTokenizer::default())
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
            .build();
        let mut table: rustc_hash::FxHashMap<String, u32> = Default::default();
        for (i, list) in lists.iter().enumerate() {
            for line in words_of(list) {
                let mut stream = normalise.token_stream(line);
                while let Some(t) = stream.next() {
                    *table.entry(comparable(&t.text).into_owned()).or_default() |= 1 << i;
                }
            }
        }
        let longest = table.keys().map(String::len).max().unwrap_or(0);
        (table, longest)
    });
    let word = comparable(word);
    if word.len() > *longest {
        return Languages::NONE;
    }
    Languages(table.get(word.as_ref()).copied().unwrap_or(0))
}

/// A word as function words are compared (the index's folding leaves Greek and Arabic letters
/// as they are):
/// - Greek without its accent and diaeresis (`αυτόν` → `αυτον`): stopwords-iso writes 735 of
///   its 807 Greek words without them, and Greek text always has them, so el sections showed
///   `αυτόν` (him), `ίσως` (maybe) and `οπότε` (so) as what two notes share;
/// - Arabic with the hamza on an alef written as a plain alef (`فإن` → `فان`, as Snowball's
///   list writes it), and without the marks the tokenizer takes off a text's words
///   ([`super::is_arabic_mark`]), which stopwords-iso writes (`لَيْسَ`).
fn comparable(word: &str) -> std::borrow::Cow<'_, str> {
    let bare = |c: char| match c {
        'ά' => Some('α'),
        'έ' => Some('ε'),
        'ή' => Some('η'),
        'ί' | 'ϊ' | 'ΐ' => Some('ι'),
        'ό' => Some('ο'),
        'ύ' | 'ϋ' | 'ΰ' => Some('υ'),
        'ώ' => Some('ω'),
        'أ' | 'إ' | 'آ' => Some('ا'),
        c if super::is_arabic_mark(c) => None,
        c => Some(c),
    };
    if word.chars().any(|c| bare(c) != Some(c)) {
        word.chars().filter_map(bare).collect::<String>().into()
    } else {
        word.into()
    }
}

/// Which languages' function words to leave out of a text, guessed from its words as they
/// come: the language whose function words are most of them, when they are at least
/// [`MIN_HITS`] and the list's share of the words seen (see [`LISTS`]), and any language found at least
/// half as often (Danish and Norwegian share most of theirs). An English text's `come`,
/// `door` or `van` stay words: they are too few to make it Italian, Dutch or Hungarian.
#[derive(Default)]
pub struct LanguageGuess {
    hits: [u32; LISTS.len()],
    words: u32,
}

const MIN_HITS: u32 = 3;

impl LanguageGuess {
    /// Counts `word` (normalised, not an English stopword) and says which languages it is a
    /// function word of.
    pub fn see(&mut self, word: &str) -> Languages {
        self.words += 1;
        let found = function_word_of(word);
        if found.0 != 0 {
            for (i, hits) in self.hits.iter_mut().enumerate() {
                *hits += found.0 >> i & 1;
            }
        }
        found
    }

    pub fn languages(&self) -> Languages {
        let Some((at, &best)) = self
            .hits
            .iter()
            .enumerate()
            .max_by_key(|(i, hits)| (**hits, std::cmp::Reverse(*i)))
        else {
            return Languages::NONE;
        };
        if best < MIN_HITS || best * LISTS[at].share < self.words {
            return Languages::NONE;
        }
        let mut set = 0u32;
        for (i, &hits) in self.hits.iter().enumerate() {
            if hits * 2 >= best {
                set |= 1 << i;
            }
        }
        Languages(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::languages_of;

    #[test]
    fn stopwords_are_sorted() {
        assert!(
            STOPWORDS.windows(2).all(|w| w[0] < w[1]),
            "binary search needs a sorted list"
        );
        assert!(
            STOPWORDS
                .iter()
                .all(|w| w.len() <= MAX_STOPWORD_LEN && w.bytes().all(|b| b.is_ascii_lowercase())),
            "the fast path needs short lower-case ASCII"
        );
        for w in STOPWORDS {
            assert!(is_stopword(w), "{w}");
        }
        assert!(is_stopword("also") && is_stopword("the") && !is_stopword("yeast"));
        // stopwords-iso's English list, less a vault's nouns and other languages' nouns.
        for w in words_of(include_str!("stopwords/iso/en.txt")) {
            assert!(
                w.len() <= MAX_STOPWORD_LEN && w.bytes().all(|b| b.is_ascii_lowercase()),
                "{w}"
            );
            assert!(is_stopword(w), "{w}");
        }
        for w in ["onto", "regardless", "recently", "notwithstanding"] {
            assert!(is_stopword(w), "{w}");
        }
        for w in ["site", "group", "page", "text", "taken", "gave", "comes"] {
            assert!(!is_stopword(w), "{w}");
        }
        assert!(!is_stopword("") && !is_stopword("Über") && !is_stopword("themselvesx"));
    }

    fn guess(text: &str) -> Vec<&'static str> {
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
            .collect();
        languages_of(words.iter().map(String::as_str)).codes()
    }

    #[test]
    fn a_text_is_guessed_by_its_function_words() {
        let check = |text: &str, expected: &[&str]| assert_eq!(guess(text), expected, "{text}");
        check(
            "Drücke Strg und wähle dann den Befehl aus, der die Notiz mit einer Vorlage füllt.",
            &["de"],
        );
        check(
            "Ouvrez la palette de commandes et choisissez une commande pour les notes du coffre.",
            &["fr"],
        );
        // English: words that are function words elsewhere (Dutch `door`, `van`, `want`,
        // `men`; German `die`, `war`) make no language at the rate prose has them.
        check(
            "Plants die when nobody waters them during the summer holidays, so ask a neighbour \
             to look after them and leave a spare key under the mat by the back door. Most \
             houseplants recover from a dry week; ferns and seedlings rarely do.",
            &[],
        );
        // A line made of them is another language's, as far as words can tell.
        check("door van want men door van", &["nl"]);
        // Too few words to say.
        check("die Notiz", &[]);
        check("", &[]);
        // Scripts of their own, and function words written onto the next word: a few are
        // enough (`يمكنك` "you can", `التي` "which", `על` "on", `את`, `και` "and").
        check(
            "يمكنك إنشاء ملاحظة جديدة من خلال لوحة الأوامر التي تظهر على الشاشة.",
            &["ar"],
        );
        check(
            "ניתן לפתוח את לוח הפקודות באמצעות קיצור מקלדת כדי ליצור הערה חדשה על המסך.",
            &["he"],
        );
        check(
            "Μπορείτε να ανοίξετε τις ρυθμίσεις από την πλαϊνή μπάρα και να επιλέξετε ένα θέμα.",
            &["el"],
        );
        check(
            "Ви можете відкрити налаштування або створити нотатку за допомогою палітри команд, якщо потрібно.",
            &["uk"],
        );
        check(
            "Pots obrir la paleta d'ordres i triar una ordre per a totes les notes de la cambra forta sense sortir.",
            &["ca"],
        );
        // Danish and Norwegian share most function words: both lists apply.
        let nordic = guess("Hvis du vil have det, kan du gøre det med en note som er lavet af mig og ham.");
        assert!(nordic.contains(&"da") && nordic.contains(&"no"), "{nordic:?}");
    }

    #[test]
    fn function_words_are_normalised_as_the_index_words() {
        let de = languages_of(["wahle", "uber", "notiz", "fur", "die", "und", "mit"]);
        assert_eq!(de.codes(), ["de"]);
        // Folded to ASCII and lower-cased as the tokenizer gives them: `für`, `daß`.
        assert!(de.is_stopword("fur") && de.is_stopword("dass") && de.is_stopword("falls"));
        assert!(!de.is_stopword("notiz") && !de.is_stopword("für"));
        // English stopwords stay stopwords in every language; `die` only in German.
        assert!(Languages::NONE.is_stopword("the") && !Languages::NONE.is_stopword("die"));
        assert!(de.is_stopword("the") && de.is_stopword("die"));
        // Greek with its accents, whichever way its list writes them (`αυτόν`, `ίσως`, `οπότε`
        // are in stopwords-iso as `αυτον`, `ισως`, `οποτε`; `αυτό` in Snowball's with it).
        let el = languages_of(["μπορείτε", "να", "την", "και", "από", "στο"]);
        assert_eq!(el.codes(), ["el"]);
        for word in ["αυτόν", "ίσως", "οπότε", "αυτό", "αυτο"] {
            assert!(el.is_stopword(word), "{word}");
        }
        assert!(!el.is_stopword("ρυθμίσεις") && !el.is_stopword("θησαυροφυλάκιο"));
        // Arabic whatever hamza its alef is written with, as the tokenizer gives its words
        // (without vowel marks: `أيضا`), against lists that write them (`لَيْسَ`) or not.
        let ar = languages_of(["يمكنك", "من", "في", "التي", "على", "هذه"]);
        assert_eq!(ar.codes(), ["ar"]);
        for word in ["فإن", "أيضا", "إما", "ليس", "فان"] {
            assert!(ar.is_stopword(word), "{word}");
        }
        assert!(!ar.is_stopword("الخزنة") && !ar.is_stopword("مزامنة"));
    }
}
