//! Chinese words shown to a reader without what stands beside them. Chinese writes a clause
//! as one run of characters, so the word shown around a pair the index found
//! (`surface::unspaced_word`) is often a piece of a clause: a preposition or pronoun in front
//! (`在侧边栏中`, "in the sidebar"; `为您的`, "for your"), a particle or postposition after it
//! (`对话框中`, "in the dialog"; `会被登出吗`, "will … be logged out?"). obsidian-help zh and
//! zh-TW showed such a piece among the words of one entry in twenty, and among the key terms of
//! one section in three (112 of 346). The words left out are `zh.txt`'s.

use std::sync::LazyLock;

/// `zh.txt`, read once: the words left out in front of a word and after it, the words kept
/// whole though they start or end so, and the words that say nothing alone.
struct Words {
    before: Vec<&'static str>,
    after: Vec<&'static str>,
    keep: Vec<&'static str>,
    /// Every word that says nothing alone: those of `[words]`, and those left out.
    all: Vec<&'static str>,
}

static WORDS: LazyLock<Words> = LazyLock::new(|| {
    let mut words = Words {
        before: Vec::new(),
        after: Vec::new(),
        keep: Vec::new(),
        all: Vec::new(),
    };
    let mut section = "";
    for line in include_str!("zh.txt").lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name;
            continue;
        }
        match section {
            "before" => words.before.push(line),
            "after" => words.after.push(line),
            "keep" => words.keep.push(line),
            "words" => words.all.push(line),
            _ => {}
        }
    }
    // The longest first: `这里` goes before `这` is tried.
    words.before.sort_by_key(|w| std::cmp::Reverse(w.len()));
    words.after.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let left_out: Vec<&'static str> = words.before.iter().chain(&words.after).copied().collect();
    words.all.extend(left_out);
    words
});

/// Fewest characters a word shown has: what is left out never leaves less.
const MIN_CHARS: usize = 2;
/// Most characters read: a word shown is a run of at most `surface::MAX_UNSPACED_WORD`, so a
/// longer one is no word this reads (and its cost stays bounded).
const MAX_CHARS: usize = 32;

fn is_han(c: char) -> bool {
    super::script(c) == Some(0)
}

/// `word` as shown: without the words in front of it and after it that are no part of it, or
/// `None` when it is such words only (`我們的`, "our"; `什麼是`, "what is"). A word not all of
/// Chinese characters, or longer than [`MAX_CHARS`], is as it is.
pub(super) fn shown(word: &str) -> Option<String> {
    if word.chars().nth(MAX_CHARS).is_some() || !word.chars().all(is_han) {
        return Some(word.to_string());
    }
    let words = &*WORDS;
    let only = |w: &str| crate::offline::phrases::function_words_only(w, &words.all);
    if only(word) {
        return None;
    }
    let chars = |s: &str| s.chars().count();
    // The longest of `list` that `rest` starts (or ends) with, when taking it off leaves a word
    // and leaves no word of `keep` cut: a shorter one is not tried (`我們的` is not `我` and
    // `們的`).
    let off = |rest: &str, list: &[&'static str], front: bool| -> Option<usize> {
        let at = |w: &str| if front { rest.starts_with(w) } else { rest.ends_with(w) };
        let cut = list.iter().find(|w| at(w))?;
        let kept = words
            .keep
            .iter()
            .any(|k| k.len() > cut.len() && at(k) && if front { k.starts_with(*cut) } else { k.ends_with(*cut) });
        (chars(rest) - chars(cut) >= MIN_CHARS && !kept).then_some(cut.len())
    };
    let mut rest = word;
    loop {
        if let Some(n) = off(rest, &words.before, true) {
            rest = &rest[n..];
        } else if let Some(n) = off(rest, &words.after, false) {
            rest = &rest[..rest.len() - n];
        } else {
            break;
        }
    }
    (!only(rest)).then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_chinese_word_is_shown_without_the_clause_around_it() {
        let check = |word: &str, expected: Option<&str>| assert_eq!(shown(word).as_deref(), expected, "{word}");
        // Prepositions, pronouns and particles around the word come off, from both sides.
        check("在侧边栏中", Some("侧边栏"));
        check("在發佈服務中", Some("發佈服務"));
        check("对话框中", Some("对话框"));
        check("的伺服器", Some("伺服器"));
        check("备份你的", Some("备份"));
        check("会被登出吗", Some("登出"));
        check("位认证器代码", Some("认证器代码"));
        check("重新導向至", Some("重新導向"));
        check("以逗号分隔", Some("逗号分隔"));
        check("如果我退款", Some("退款"));
        check("在此处安装", Some("安装"));
        check("这里安装", Some("安装"));
        check("和块标识符", Some("块标识符"));
        check("中已弃用", Some("弃用"));
        check("该图片必须", Some("图片"));
        // Such words only: nothing to show.
        check("我們的", None);
        check("什麼是", None);
        check("您可以", None);
        check("你也可以按", None);
        check("如果您還沒有", None);
        check("这意味着", None);
        check("預設情況下", None);
        // Words that start or end so are words whole.
        check("当前日期", Some("当前日期"));
        check("在线帮助", Some("在线帮助"));
        check("位置", Some("位置"));
        check("中繼資料", Some("中繼資料"));
        check("前置信息", Some("前置信息"));
        check("欢迎来到", Some("欢迎来到"));
        check("命名规则如下", Some("命名规则"));
        check("将其加粗", Some("加粗"));
        check("中文", Some("中文"));
        check("下载附件", Some("下载附件"));
        check("下划线", Some("下划线"));
        check("后续步骤", Some("后续步骤"));
        check("实时预览", Some("实时预览"));
        check("可以找到", Some("找到"));
        // Nothing comes off that would leave less than two characters.
        check("中国", Some("中国"));
        check("上传", Some("上传"));
        // Hostile: a run far longer than a word is as it is, read no further.
        let long = "在的".repeat(50_000);
        assert_eq!(shown(&long).as_deref(), Some(long.as_str()));
        // Other scripts are as they are.
        check("Sync", Some("Sync"));
        check("リンク", Some("リンク"));
    }
}
