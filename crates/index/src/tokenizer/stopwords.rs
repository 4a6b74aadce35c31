//! English function words, left out of what a note is about.

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
const MAX_STOPWORD_LEN: usize = 10;

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
    STOPWORDS[start..end].binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!is_stopword("") && !is_stopword("Über") && !is_stopword("themselvesx"));
    }
}
