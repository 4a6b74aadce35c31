//! A Japanese word shown whole with the kana that ends it. The word shown around a pair the
//! index found is its run of kanji (`surface::unspaced_word`), and a word written with kana
//! after its kanji lost them: obsidian-help ja showed `見出` (`見出し`, heading), `箇条書`
//! (`箇条書き`, bulleted), `仕組` (`仕組み`, how it works), `公開済` (`公開済み`, published)
//! among the key terms of 9 of 173 sections, and among the words of 16 of 2,105 entries.

/// Kana that end a noun made from a verb (`書き`, `区切り`, `仕組み`, `支払い`, `受け付け`,
/// `置き換え`, `埋め`), and `し` after the kanji whose verbs make nouns so (`見出し`,
/// `長押し`). Not `し` after any kanji: `削除し`, `作成し` are "delete", "create" and a verb
/// ending.
const ENDING_KANA: [char; 10] = ['き', 'り', 'み', 'い', 'け', 'え', 'め', 'ち', 'び', 'ぎ'];
const BEFORE_SHI: &str = "出押越貸返戻消探直渡移差回隠残写試";

/// Particles after a word: the kana after its own are one of these when the word ends there.
const PARTICLES: &str = "のをがにはでともやへ";

fn is_hiragana(c: char) -> bool {
    super::script(c) == Some(1)
}

fn is_kanji(c: char) -> bool {
    super::script(c) == Some(0)
}

/// The kana that ends the word `run` (a run of kanji of `text`) everywhere `text` writes it,
/// when it is a word's end: the same kana after each of its times (twice or more), such a kana
/// (see [`ENDING_KANA`]), and at least once followed by a particle or by no kana or kanji at
/// all (`見出しの`, `見出し1`, `箇条書きリスト`), so that the word ends there.
pub(super) fn ending(text: &str, run: &str) -> Option<char> {
    let last = run.chars().last()?;
    let mut kana = None;
    let mut times = 0;
    let mut ends = false;
    for (at, _) in text.match_indices(run).take(64) {
        let mut after = text[at + run.len()..].chars();
        let k = after.next()?;
        if !is_hiragana(k) || kana.is_some_and(|seen| seen != k) {
            return None;
        }
        kana = Some(k);
        times += 1;
        ends |= after
            .next()
            .is_none_or(|c| PARTICLES.contains(c) || !(is_hiragana(c) || is_kanji(c)));
    }
    let kana = kana?;
    let ends_nouns = ENDING_KANA.contains(&kana) || (kana == 'し' && BEFORE_SHI.contains(last));
    (times >= 2 && ends && ends_nouns).then_some(kana)
}

#[cfg(test)]
mod tests {
    use super::ending;

    #[test]
    fn a_japanese_word_keeps_the_kana_that_ends_it() {
        let check =
            |text: &str, run: &str, expected: Option<char>| assert_eq!(ending(text, run), expected, "{run}: {text}");
        check("見出しを追加します。見出しの書式。", "見出", Some('し'));
        check("箇条書きリストと箇条書き。", "箇条書", Some('き'));
        check("仕組みを説明します。この仕組みで。", "仕組", Some('み'));
        // Once is not enough.
        check("見出しを追加します。", "見出", None);
        // Another kana after it somewhere: no word's end.
        check("見出しを使う。見出すこと。", "見出", None);
        // A verb's ending, not a noun's: `し` after any kanji, `く` at all.
        check("ノートを削除し、閉じます。ノートを削除し、開きます。", "削除", None);
        check("素早く開く。素早く閉じる。", "素早", None);
        // Always followed by more kana: a verb's form, not a word's end.
        check("協力いただき、協力いたします。", "協力", None);
        // Chinese has no kana.
        check("设置标题。设置页面。", "设置", None);
    }
}
