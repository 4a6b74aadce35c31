//! A Korean word shown to a reader without the particle or ending written on it. Korean
//! writes particles (`를`, object; `에서`, in) and verb endings (`하는`, `하려면`) onto the word,
//! and the index keeps a word's first syllables, so the word shown is one form as written.

use scholia_index::tokenizer;

/// Particles and endings written on a Korean word, each before any ending of its own end
/// (`하는` before `는`).
const ENDINGS: &[&str] = &[
    // A noun made a verb by `하다` or `되다`, in its forms.
    "하십시오",
    "하려면",
    "한다면",
    "하세요",
    "합니다",
    "하거나",
    "됩니다",
    "되거나",
    "하여",
    "해야",
    "하지",
    "되는",
    "되면",
    "되어",
    "이에요",
    "에서는",
    "에서도",
    "으로는",
    "으로도",
    "에서",
    "으로",
    "에게",
    "에는",
    "에도",
    "에만",
    "까지",
    "부터",
    "처럼",
    "보다",
    "해요",
    "예요",
    "이나",
    "하고",
    "해서",
    "하는",
    "하기",
    "하면",
    "할",
    "한",
    "된",
    "될",
    "을",
    "를",
    "이",
    "가",
    "은",
    "는",
    "에",
    "의",
    "도",
    "로",
    "와",
    "과",
    "만",
    "나",
];

/// Of [`ENDINGS`], those that end nouns too (`길이`, length; `추가`, add; `경로`, path): taken
/// off only when the note writes the bare word. Every other is taken off whenever two syllables
/// stay: obsidian-help ko showed such an ending on a key term in 103 of 173 sections
/// (`화살표를`, `들여쓰기된`, `선호한다면`, `키보드의`) and on a shared word in 519 of 2,103
/// entries.
const NOUNS_END_WITH: &[&str] = &["예요", "보다", "이나", "이", "가", "도", "로", "만", "나"];

/// Nouns that end as an ending above does, kept whole (`제한`, limit; `역할`, role; `결과`,
/// result; `회의`, meeting), and any word ending with one (`무제한`, `검색결과`).
const NOUNS: &[&str] = &[
    "제한", "권한", "기한", "시한", "역할", "분할", "결과", "효과", "성과", "회의", "정의", "동의", "주의", "논의",
    "합의", "편의", "강의", "질의",
];

/// `word` without the particle or ending on it: when the rest is two syllables or more, and
/// it is no noun's end, or the note writes the rest bare (`written`) or with another ending
/// (`구독을`, `구독이`), or the rest is of another script (`Sync를`). `None` when nothing comes
/// off.
pub(super) fn bare(word: &str, written: &dyn Fn(&str) -> bool) -> Option<String> {
    let hangul = tokenizer::is_hangul;
    if !word.chars().last().is_some_and(hangul) {
        return None;
    }
    for ending in ENDINGS {
        let Some(stem) = word.strip_suffix(ending) else {
            continue;
        };
        let sure = !NOUNS_END_WITH.contains(ending) && !NOUNS.iter().any(|n| word.ends_with(n));
        let noun = !stem.chars().any(hangul)
            || sure
            || written(stem)
            || ENDINGS.iter().any(|e| e != ending && written(&format!("{stem}{e}")));
        if stem.chars().count() >= 2 && noun {
            return Some(stem.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::bare;

    #[test]
    fn a_korean_word_is_shown_without_its_particle_or_ending() {
        let written = ["사이트", "구독이"];
        let check = |word: &str, expected: &str| {
            let shown = bare(word, &|w| written.contains(&w)).unwrap_or_else(|| word.to_string());
            assert_eq!(shown, expected, "{word}");
        };
        // Endings no noun has: off, the bare word written or not.
        check("화살표를", "화살표");
        check("키보드의", "키보드");
        check("클립보드에", "클립보드");
        check("네트워크에서", "네트워크");
        check("선택하는", "선택");
        check("업데이트하려면", "업데이트");
        check("들여쓰기된", "들여쓰기");
        check("선호한다면", "선호");
        check("참고하세요", "참고");
        check("드래그하거나", "드래그");
        check("생성되거나", "생성");
        check("병합할", "병합");
        check("소프트웨어와", "소프트웨어");
        // Endings that end nouns too: off only when the note writes the rest.
        check("사이트가", "사이트");
        check("구독을", "구독");
        check("업로드가", "업로드가");
        check("파일경로", "파일경로");
        // Nouns kept whole.
        check("무제한", "무제한");
        check("검색결과", "검색결과");
        check("역할", "역할");
        check("사용자정의", "사용자정의");
        // Never less than two syllables: an adjective's one-syllable root stays as written.
        check("굵은", "굵은");
        check("마을", "마을");
        // Another script, always.
        check("Sync를", "Sync");
    }
}
