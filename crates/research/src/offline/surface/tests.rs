use super::*;

/// The words two notes share, in a script without spaces: a word both write, or none.
#[test]
fn shared_words_are_written_by_both_notes() {
    let check = |mine: &str, theirs: &str, pairs_of: &str, expected: &[&str]| {
        let terms = tokenizer::terms(pairs_of);
        assert_eq!(
            Surface::of(mine).show_shared(&terms, 8, theirs),
            expected,
            "{mine} / {theirs}"
        );
    };
    check(
        "スナップショットを保存します。",
        "スナップショットは毎日。",
        "スナップショット",
        &["スナップショット"],
    );
    // The note's word is not theirs, theirs is within the note's: theirs.
    check(
        "コミュニティチャンネルに参加します。",
        "チャンネルで話します。",
        "チャンネル",
        &["チャンネル"],
    );
    // A pair of two words neither writes: nothing (`ショ` of snapshot and shop).
    check(
        "スナップショットを保存します。",
        "ショップで買います。",
        "ショ",
        &[] as &[&str],
    );
    // Words of spaced scripts are compared by their terms, as before.
    check("Callouts hold a callout.", "A callout here.", "callouts", &["Callouts"]);
}

/// That the words of `text`, in the language `lang`, are shown as `expected`.
fn check_shown(lang: &str, text: &str, expected: &[&str]) {
    let terms = tokenizer::terms(text);
    assert_eq!(
        Surface::of(text).in_language(lang).show(&terms, 8),
        expected,
        "{lang}: {text}"
    );
}

/// Two forms of one word, in a language that inflects by endings, are shown once; in
/// another they may be two words (`remote`, `remove`).
#[test]
fn forms_of_one_word_are_shown_once() {
    let check = check_shown;
    check(
        "pl",
        "grupy grupę tagi tagów zwinąć zwiń",
        &["grupy", "tagi", "zwinąć", "zwiń"],
    );
    check("ru", "сайт сайте новая новой", &["сайт", "новая"]);
    check("sv", "flik fliken flikar mall mallar", &["flik", "mall"]);
    check("da", "fane faner tema temaer", &["fane", "tema"]);
    check("fi", "kuva kuvan", &["kuva"]);
    check("de", "Thema Themen", &["Thema", "Themen"]);
    check("en", "remote remove", &["remote", "remove"]);
    check("cs", "stav stavu", &["stav"]);
}

/// A German verb addressing the reader is shown only when no other word is.
#[test]
fn german_verbs_addressing_the_reader_give_way() {
    let check = |lang: &str, text: &str, words: &str, expected: &[&str]| {
        let terms = tokenizer::terms(words);
        assert_eq!(
            Surface::of(text).in_language(lang).show(&terms, 8),
            expected,
            "{lang}: {text}"
        );
    };
    let text = "Wenn du die Vorlage auswählst, drückst du Eingabe.";
    check("de", text, "auswählst Vorlage drückst Eingabe", &["Vorlage", "Eingabe"]);
    check("de", text, "auswählst drückst", &["auswählst", "drückst"]);
    // Nouns, and other languages, as they are.
    check("de", "Der Dienst und die Kunst.", "Dienst Kunst", &["Dienst", "Kunst"]);
    check("en", "The fastest list.", "fastest list", &["fastest", "list"]);
}

/// A Hebrew or Arabic word is shown without the particles on its front when the note writes it
/// so, once for all its forms; Persian, in Arabic's script, keeps its words as written.
#[test]
fn particles_come_off_words_the_note_writes_bare() {
    let check = check_shown;
    check("he", "בהצפנה ההצפנה הצפנה מערך ערך", &["הצפנה", "מערך", "ערך"]);
    // No bare form written: as written.
    check("he", "לאתר האתר", &["לאתר", "האתר"]);
    check(
        "ar",
        "والمجلدات المجلدات للويب الويب كخزنة خزنة بحث حث",
        &["المجلدات", "الويب", "خزنة", "بحث", "حث"],
    );
    check("fa", "بکشید کشید", &["بکشید", "کشید"]);
}

/// Key terms as the reader is shown them: the note's words as written, or nothing.
#[test]
fn terms_are_shown_as_the_note_writes_them() {
    let check = |text: &str, terms: &[&str], expected: &[&str]| {
        let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
        assert_eq!(Surface::of(text).show(&terms, 8), expected, "{text}");
    };
    // A Korean word without its particle, when the note writes the bare word too or no noun
    // ends so (`를`; `가` ends `추가`, add).
    let ko = |word: &str| tokenizer::terms(word).into_iter().next().unwrap_or_default();
    check(
        "사이트에서 Sync를 켜요. 사이트 설정과 Sync 기록. 업로드가 끝나요. 열기를 눌러요.",
        &[
            ko("사이트에서").as_str(),
            ko("Sync를").as_str(),
            ko("업로드가").as_str(),
            ko("열기를").as_str(),
        ],
        &["사이트", "Sync", "업로드가", "열기"],
    );
    // Or the same word with another ending.
    check("구독을 취소해요. 구독이 끝나요.", &[ko("구독을").as_str()], &["구독"]);
    // Umlauts kept, not folded.
    check(
        "Eine Einführung in die Synchronisierung.",
        &["einfuhrung"],
        &["Einführung"],
    );
    // URL-encoding fragments and icon names are no words of the note.
    check(
        "See [laws](https://example.org/three%20laws%20motion) and ![[lucide-send.svg#icon]] here.",
        &["20laws", "20motion", "lucide", "send"],
        &[] as &[&str],
    );
    // A CJK character pair is shown as the whole word it belongs to (a katakana run),
    // never as the bare pair; a hiragana pair is no word at all.
    let pair = tokenizer::terms("ゴート").into_iter().nth(1).unwrap_or_default();
    check("ゴートゥーファイル", &[pair.as_str()], &["ゴートゥーファイル"]);
    let kana = tokenizer::terms("ことば").into_iter().next().unwrap_or_default();
    check("ことばを書く", &[kana.as_str()], &[] as &[&str]);
    // A long katakana word whole, once for all its pairs (obsidian-help ja showed
    // `オープンソースプロジェ`, `プンソースプロジェクト` and `オープンソースプ` side by side).
    let pairs = tokenizer::terms("オープンソースプロジェクト");
    let pairs: Vec<&str> = pairs.iter().map(String::as_str).collect();
    check(
        "これはオープンソースプロジェクトです。",
        &pairs,
        &["オープンソースプロジェクト"],
    );
    // A kanji compound whole; in Chinese, whose runs are clauses, only a word set off
    // somewhere in the note (a heading, a list item) and never a clause or a pair cut out
    // of one (zh showed `用这个插件创建日记`, then `天的` and `板创`).
    let pair = |s: &str| tokenizer::terms(s).into_iter().next().unwrap_or_default();
    check("多要素認証を有効にします。", &[pair("要素").as_str()], &["多要素認証"]);
    check(
        "日记\n要打开当天的日记，可以使用日记插件。",
        &[pair("天的").as_str(), pair("日记").as_str(), pair("插件").as_str()],
        &["日记"],
    );
    // A run holding a word shown is not shown beside it, and a word takes the place of a
    // run shown before it: a phrase around the word (zh `在导航栏上`) or a compound (ja
    // showed `タブ、グループ、タブグループ`).
    let pairs = |s: &str| tokenizer::terms(s);
    let mut tab: Vec<String> = pairs("タブグループ");
    tab.extend(pairs("タブ"));
    tab.extend(pairs("グループ"));
    let tab: Vec<&str> = tab.iter().map(String::as_str).collect();
    check(
        "タブを開く。グループを作る。タブグループを使う。",
        &tab,
        &["タブ", "グループ"],
    );
    check(
        "导航栏\n打开设置。在导航栏上点击。",
        &[pair("航栏").as_str(), pair("导航").as_str()],
        &["导航栏"],
    );
    // Khmer (cut into syllables like Thai) shows the word around a pair, without its
    // full stop `។`; a run longer than a word (a phrase) shows nothing. Before, a Khmer
    // note's key terms were only its Latin words.
    let khmer = tokenizer::terms("ផែនទី");
    let khmer: Vec<&str> = khmer.iter().map(String::as_str).collect();
    check("ជ្រើសរើស ផែនទី ពីម៉ឺនុយ។", &khmer, &["ផែនទី"]);
    let formula = tokenizer::terms("រូបមន្ត");
    let formula: Vec<&str> = formula.iter().map(String::as_str).collect();
    check("ប្រើ រូបមន្ត។ រួចហើយ", &formula, &["រូបមន្ត"]);
    check("បង្កើតកំណត់ត្រាមួយឈ្មោះរូបមន្តថ្មី", &formula, &[] as &[&str]);
    // Plain words stay as written.
    check("Rye flour feeds the starter.", &["rye", "starter"], &["Rye", "starter"]);
    check("Rye flour feeds the starter. Whole rye is best.", &["rye"], &["rye"]);
    // Forms of one word once, the first by weight.
    check(
        "Callouts hold a callout. Eine Einführung, zwei Einführungen.",
        &["callouts", "callout", "einfuhrungen", "einfuhrung", "hold"],
        &["Callouts", "Einführungen", "hold"],
    );
    // Too short for a stem of their own, a plural is the same word (`card`, `cards`); not
    // under three letters (`bus`, `bu`).
    check(
        "A card holds cards. Bus and bu.",
        &["card", "cards", "bus", "bu"],
        &["card", "Bus", "bu"],
    );
    // Two Vietnamese syllables as written (`phong` alone would be `phòng` or `phóng`): a
    // pair takes the place of its syllable shown before it, and its syllables are not
    // shown after it.
    let vi = "Nhấp vào vòng tròn màu để chọn màu cho nhóm. Phóng to bằng con lăn chuột, phòng khi cần.";
    check(
        vi,
        &["tron", "mau", "vong tron", "phong to", "vong", "phong"],
        &["vòng tròn", "màu", "Phóng to"],
    );
    // A pair always written after (or before) the same syllable, twice or more, is shown
    // with it; once is not enough, and a function word does not join.
    let vi = "Chọn chế độ xem. Ở chế độ xem này, plugin cốt lõi và plugin cốt lõi khác. Thẻ mới và thẻ mới, đồng bộ hóa được.";
    check(
        vi,
        &["do xem", "plugin cot", "the moi", "dong bo"],
        &["chế độ xem", "plugin cốt lõi", "Thẻ mới", "đồng bộ"],
    );
    // Joined again while a syllable always stands beside the two at an end, up to four:
    // `ghi chú` and `ngẫu nhiên` are one word of four here, shown once; each written beside
    // other syllables too stays a word of two.
    let vi = "Mở ghi chú ngẫu nhiên. Ghi chú ngẫu nhiên mở một ghi chú ngẫu nhiên khác. Biểu tượng thùng rác và biểu tượng thùng rác.";
    check(
        vi,
        &["ghi chu", "ngau nhien", "tuong thung"],
        &["ghi chú ngẫu nhiên", "Biểu tượng thùng rác"],
    );
    let vi = "Tạo một ghi chú mới trong thư mục. Mở ghi chú ngẫu nhiên, rồi chọn thứ tự ngẫu nhiên.";
    check(vi, &["ghi chu", "ngau nhien"], &["ghi chú", "ngẫu nhiên"]);
    // Five syllables always together are a phrase: its first three are shown, not four.
    let vi = "Hãy mua giấy phép thương mại ngay. Bạn có thể mua giấy phép thương mại cho công ty.";
    check(vi, &["giay phep"], &["mua giấy phép"]);
    // Persian joins a word's parts with a zero-width non-joiner, where the index cuts it:
    // a part is shown as the word it is part of (obsidian-help fa showed `مارک، داون` for
    // مارک‌داون, Markdown, and the verb prefix `برمی` of برمی‌گرداند), and a part written
    // alone somewhere is shown alone.
    let fa = "متن مارک‌داون را برمی‌گرداند. این یادداشت‌ها و یک یادداشت.";
    let terms = |s: &str| tokenizer::terms(s);
    let mut wanted: Vec<String> = terms("مارک‌داون");
    wanted.extend(terms("برمی‌گرداند"));
    wanted.extend(terms("یادداشت‌ها"));
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    check(fa, &wanted, &["مارک‌داون", "برمی‌گرداند", "یادداشت"]);
    // Hostile: parts joined without end are no word; each part is shown alone, and a
    // long chain costs one pass.
    let chain = vec!["کتاب"; 20_000].join("\u{200c}");
    let book = tokenizer::terms("کتاب");
    let book: Vec<&str> = book.iter().map(String::as_str).collect();
    check(&chain, &book, &["کتاب"]);
}
