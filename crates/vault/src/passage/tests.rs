use super::*;

/// Words, and each character of a script without spaces, as the index tokenises them.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        match w.is_ascii() {
            true => out.push(w.to_lowercase()),
            false => out.extend(w.chars().map(String::from)),
        }
    }
    out
}

#[test]
fn passages_are_sentences_of_the_note() {
    let check = |text: &str, terms: &[&str], expected: &[&str]| {
        let weights: HashMap<String, f32> = terms.iter().map(|t| (t.to_string(), 1.0)).collect();
        assert_eq!(best(text, &weights, 2, words), expected, "{text}");
    };
    // The heading is not glued to the sentence under it.
    check(
        "## Bread log 2026-03-02\nFed the starter with rye flour at noon. It doubled by six.\n",
        &["starter", "rye"],
        &["Fed the starter with rye flour at noon."],
    );
    // Best sentence first; ties in order; two at most.
    check(
        "Yeast eats sugar and makes gas today. Starter yeast and rye flour ferment slowly here. Rye is strong stuff.",
        &["yeast", "rye", "starter"],
        &[
            "Starter yeast and rye flour ferment slowly here.",
            "Yeast eats sugar and makes gas today.",
        ],
    );
    // A table cell is quoted only when it is a sentence: a hotkey table's action and keys
    // are a label and a value (en Editing shortcuts quoted `` `Ctrl` (+ `Shift` in Source
    // Mode) ``; the reader met `Strg (+ Shift in der Quellcode-Ansicht)`).
    check(
        "| Action | Hotkey |\n| --- | --- |\n| Move the cursor up one page | `Ctrl` (+ `Shift` in Source Mode) |\n| Fold | The cursor folds the heading it is on. |\n",
        &["cursor", "page", "shift", "ctrl", "fold"],
        &["The cursor folds the heading it is on."],
    );
    // Bold markers CommonMark left as text (no bold closes between `…` and a letter) go,
    // also in a sentence holding code; the code keeps its own.
    check(
        "その他のアクション（`•••`）をクリックし、**ノートブックをエクスポート…**を選択します。`a**b` はノートの**太字**の書き方です。",
        &["ク", "ノ"],
        &[
            "その他のアクション（`•••`）をクリックし、ノートブックをエクスポート…を選択します。",
            "`a**b` はノートの太字の書き方です。",
        ],
    );
    // Abbreviations do not end sentences; list items are blocks.
    check(
        "- Use a flour, e.g. rye or spelt, for the starter.\n- Keep it warm.\n",
        &["starter"],
        &["Use a flour, e.g. rye or spelt, for the starter."],
    );
    // Nor "z. B.", "d. h." or "bzw.": the sentence is whole, not cut after "z.".
    check(
        "Manche Funktionen (z. B. das Aktualisieren von Links) brauchen eine Erweiterung. Andere d. h. die meisten nicht bzw. selten.\n",
        &["aktualisieren", "meisten"],
        &[
            "Manche Funktionen (z. B. das Aktualisieren von Links) brauchen eine Erweiterung.",
            "Andere d. h. die meisten nicht bzw. selten.",
        ],
    );
    // An abbreviation before a capital, inside brackets: no sentence ends there.
    check(
        "Použite prehliadač (napr. Windows Explorer alebo Finder v macOS) a presuňte súbory. Hotovo je to rýchlo.\n",
        &["finder"],
        &["Použite prehliadač (napr. Windows Explorer alebo Finder v macOS) a presuňte súbory."],
    );
    // Two sentences inside brackets end where they end; the last does not close what it did
    // not open.
    check(
        "`C:\\Vaults` (OneDrive가 파일을 제거하지 않도록 설정하세요. OneDrive는 덜 공격적으로 작동해요.)\n",
        &["설", "작"],
        &[
            "`C:\\Vaults` (OneDrive가 파일을 제거하지 않도록 설정하세요.",
            "OneDrive는 덜 공격적으로 작동해요.",
        ],
    );
    // An abbreviation of any language: the next word, in small letters, goes on.
    check(
        "Utilisez un service (p. ex. iCloud, Dropbox) et un seul. Ne mélangez pas (par ex. un pour mobile) les deux.\n",
        &["service", "mobile"],
        &[
            "Utilisez un service (p. ex. iCloud, Dropbox) et un seul.",
            "Ne mélangez pas (par ex. un pour mobile) les deux.",
        ],
    );
    // A day or a rank written with a period ends no sentence; a number ending one does.
    check(
        "Wenn du am 1. Januar 2024 eine Notiz erstellst, heißt sie nach der Zeit.\n",
        &["notiz"],
        &["Wenn du am 1. Januar 2024 eine Notiz erstellst, heißt sie nach der Zeit."],
    );
    check(
        "Overskrifter på 2. niveau får en streg under sig i noten.\n",
        &["streg"],
        &["Overskrifter på 2. niveau får en streg under sig i noten."],
    );
    check(
        "Verlinkung gibt uns die Nummer 2. Wir sind uns bei der Nummer 3 noch unsicher.\n",
        &["nummer"],
        &[
            "Verlinkung gibt uns die Nummer 2.",
            "Wir sind uns bei der Nummer 3 noch unsicher.",
        ],
    );
    // A callout's title line and a list item's parent are not glued to what follows.
    check(
        "> [!note] Useful advice\n> Feed the starter with rye every day.\n",
        &["starter", "advice"],
        &["Feed the starter with rye every day."],
    );
    check(
        "- Starter guide\n\t- Feed the starter with rye every day.\n",
        &["starter"],
        &["Feed the starter with rye every day."],
    );
    // Fragments too short to stand alone are not quoted.
    check("Starter.\n\nSee starter.\n", &["starter"], &[] as &[&str]);
    // A Japanese label (a list item, a table cell: no 。 at its end) is no sentence unless
    // it is long (obsidian-help ja quoted 「ノートコンポーザー」 and 「選択範囲を上に拡張」).
    check(
        "- プラグインコンポーザー\n- プラグインを上に拡張\n\n接続を選択してプラグインを使います。\n\n両方の条件が真である必要があるプラグインの設定項目\n",
        &["プ"],
        &[
            "接続を選択してプラグインを使います。",
            "両方の条件が真である必要があるプラグインの設定項目",
        ],
    );
    // Chinese: sentences end at 。
    check(
        "属性是笔记的元数据字段。标签也可以用于分类和整理笔记内容。",
        &["属"],
        &["属性是笔记的元数据字段。"],
    );
    // A Chinese sentence naming something in Latin letters is still a sentence.
    check(
        "使用 Obsidian 同步笔记到所有设备。",
        &["同"],
        &["使用 Obsidian 同步笔记到所有设备。"],
    );
    // Khmer: sentences end at ។, and the spaces between its phrases do not make it a
    // fragment (obsidian-help's km notes had no passage for most related notes).
    check(
        "រាល់កម្មវិធីជំនួយ និងរូបរាងទាំងអស់មានទំព័របញ្ជីសាធារណៈ។ ទំព័រនេះនឹងជួយអ្នកយល់ពីអ្វីដែលផ្នែកនីមួយៗធ្វើ។",
        &["ទ"],
        &[
            "រាល់កម្មវិធីជំនួយ និងរូបរាងទាំងអស់មានទំព័របញ្ជីសាធារណៈ។",
            "ទំព័រនេះនឹងជួយអ្នកយល់ពីអ្វីដែលផ្នែកនីមួយៗធ្វើ។",
        ],
    );
    // Thai: phrases parted by a space; a short label still is not a sentence.
    check(
        "การซิงค์ข้อมูล ทำให้โน้ตของคุณตรงกันในทุกอุปกรณ์\n\nซิงค์\n",
        &["ซ"],
        &["การซิงค์ข้อมูล ทำให้โน้ตของคุณตรงกันในทุกอุปกรณ์"],
    );
    // Two Cyrillic words are a label, not a sentence.
    check("Настройки синхронизации\n", &["н"], &[] as &[&str]);
}

/// What the obsidian-help vault left in passages (the defect as the input, the passage as
/// it must read).
#[test]
fn passages_read_as_the_note_shows_them() {
    let check = |text: &str, expected: &[&str]| {
        let weights: HashMap<String, f32> = [("sync", 1.0), ("plugin", 1.0), ("share", 1.0)]
            .iter()
            .map(|(t, w)| (t.to_string(), *w))
            .collect();
        assert_eq!(best(text, &weights, 3, words), expected, "{text}");
    };
    // An icon embedded in the sentence leaves no file name.
    check(
        "Select ![[lucide-send.svg#icon]] **Share** to send the plugin note to a friend.
",
        &["Select Share to send the plugin note to a friend."],
    );
    // A sentence introducing a list is not quoted without it.
    check(
        "To share a plugin note you have these options:

- Copy the link.
",
        &[] as &[&str],
    );
    // Khmer's colon too (km: "To open today's daily note, you can៖").
    check(
        "ដើម្បីបើក plugin Sync សម្រាប់ share កំណត់ចំណាំប្រចាំថ្ងៃរបស់ថ្ងៃនេះ អ្នកអាច៖

- ចុច Sync។
",
        &[] as &[&str],
    );
    // No footnote markers; `#Sync` would become a tag where the passage is quoted.
    check(
        "Turn on #Sync to keep the plugin settings everywhere.[^2]

[^2]: A footnote.
",
        &["Turn on Sync to keep the plugin settings everywhere."],
    );
    // A wikilink to a heading, flattened to its target, reads as Obsidian shows it.
    check(
        "Install a plugin from [[Community plugins#Install a community plugin]] to share notes.\n",
        &["Install a plugin from Community plugins › Install a community plugin to share notes."],
    );
    // Code is quoted as written: a `#` in it is no tag and no heading link (obsidian-help
    // de showed `#tag1` as ` › tag1` and `[[#` as `[[ › `), nor is the `#` of C#.
    check(
        "The plugin file has the tag `#tag1` or `#tag2`, in C# or F#.\n\nType `[[#` in the plugin for the headings of this note.\n\nAdd a hash (`#`) to the end of the plugin link.\n",
        &[
            "The plugin file has the tag `#tag1` or `#tag2`, in C# or F#.",
            "Type `[[#` in the plugin for the headings of this note.",
            "Add a hash (`#`) to the end of the plugin link.",
        ],
    );
    // Bold the parser left as text (its closing `**` between a bracket and a Japanese
    // letter) reads as the words, not as `\**`; an icon's empty brackets are dropped.
    check(
        "- **Sync暗号化（デフォルト）**は plugin のパスワードを使います。\n",
        &["Sync暗号化（デフォルト）は plugin のパスワードを使います。"],
    );
    check(
        "リボンで**変更をパブリッシュ**（ ![[lucide-send.svg#icon]] ）をクリックして plugin を開きます。\n\nSelect Publish changes ( ![[lucide-send.svg#icon]] ) in the plugin ribbon.\n\nノートの上部にあるオプション（![[lucide-more-vertical.svg#icon]]）を選択して plugin を使います。\n",
        &[
            "リボンで変更をパブリッシュをクリックして plugin を開きます。",
            "Select Publish changes in the plugin ribbon.",
            "ノートの上部にあるオプションを選択して plugin を使います。",
        ],
    );
    // Table cells are cells, never glued to their neighbours.
    check(
        "| Feature | What it does |\n| --- | --- |\n| Sync | Sync keeps the plugin settings in step everywhere. |\n",
        &["Sync keeps the plugin settings in step everywhere."],
    );
    // A sentence whose marks would need a backslash to stay inert is not quoted; in code
    // they need none.
    check(
        "\\*This plugin text will not be italicized\\*.\n\nThe plugin keeps `*stars*` in code.\n",
        &["The plugin keeps `*stars*` in code."],
    );
    // The same sentence twice is quoted once.
    check(
        "Sync keeps the plugin settings in step.

Sync keeps the plugin settings in step.
",
        &["Sync keeps the plugin settings in step."],
    );
}

#[test]
fn long_sentences_are_cut_between_words() {
    let long = "word ".repeat(80);
    let cut_text = cut(long.trim(), 50);
    assert!(cut_text.ends_with("word…"), "{cut_text}");
    assert!(cut_text.chars().count() <= 51);
    let han = "属".repeat(100);
    assert_eq!(cut(&han, 10).chars().count(), 11);
    assert_eq!(cut("short", 10), "short");
    let glued = format!("a {}", "x".repeat(100));
    assert_eq!(cut(&glued, 20), "a…");
}
